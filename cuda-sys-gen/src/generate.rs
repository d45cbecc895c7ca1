//! `generate`: the pipeline run with the command line's options and its summary printed; with
//! `--add-toolkit`, a toolkit pinned first and its diff against the previous newest printed
//! after. The checks before any work are the pipeline's ([`pipeline::check_before_work`]),
//! run once, here as in the library.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use codegen::diff;
use codegen::emit::EmitOptions;
use codegen::fetch::Fetcher;
use codegen::locate::ToolkitSpec;
use codegen::pipeline::{self, Checked, Config};
use codegen::write::Mode;

/// The options every `generate` takes.
#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    /// A local CUDA toolkit (root, include/ folder, or pip layout); may be repeated.
    /// Without it, $CUDA_PATH, $CUDA_HOME and /usr/local/cuda are tried.
    #[arg(long = "toolkit", value_name = "PATH")]
    pub toolkits: Vec<PathBuf>,
    /// Use only the pinned toolkits, even if a local one is installed.
    #[arg(long, conflicts_with = "toolkits")]
    pub pinned_only: bool,
    /// Change nothing; exit non-zero if the generated crate is not what the inputs produce.
    #[arg(long)]
    pub check: bool,
    /// Never run pip: use only the cache.
    #[arg(long)]
    pub offline: bool,
    /// Print every header warning, ABI drift and per-toolkit count, not only the summary.
    #[arg(long, short)]
    pub verbose: bool,
    /// First pin a new toolkit in the manifest: a version (13.6: the newest patch of that minor
    /// on PyPI, downloaded and hashed) or a local toolkit (its cuda.h names the version). Then
    /// regenerate, and print the diff against the previous newest toolkit.
    #[arg(long, value_name = "VERSION|PATH", conflicts_with = "check")]
    pub add_toolkit: Option<ToolkitSpec>,
    /// Write only the crate's C header (include/cuda_pfn.h: every ABI at its exact version, for C
    /// and C++ programs) to FILE, and not the crate. FILE is replaced only if cuda-sys-gen wrote it.
    #[arg(long, value_name = "FILE", conflicts_with = "add_toolkit")]
    pub c_header: Option<PathBuf>,
}

/// `cuda-sys-gen generate`'s own options: where things are, which `cargo xtask generate`
/// fixes for this repository.
#[derive(Debug, Clone, Args)]
pub struct StandaloneArgs {
    #[command(flatten)]
    pub args: GenerateArgs,
    /// The headers manifest.
    #[arg(long, default_value = "headers-manifest.toml")]
    pub manifest: PathBuf,
    /// The folder of the generated crate; everything in it belongs to the generator.
    #[arg(long, default_value = "generated")]
    pub out: PathBuf,
    /// The generated crate's package name (at most 58 characters: its types package, in
    /// OUT/types, is named CRATE_NAME-types).
    #[arg(long, default_value = "cuda-driver-pfn")]
    pub crate_name: String,
    /// Where wheels and extracted headers are cached.
    #[arg(long, default_value = "target/cuda-headers")]
    pub cache: PathBuf,
    /// The command quoted in the generated files' headers. Default: `cuda-sys-gen generate` with
    /// the --manifest, --out and --crate-name given (paths relative to the working folder).
    #[arg(long, value_name = "COMMAND")]
    pub regenerate_command: Option<String>,
}

/// `generate`'s exit statuses, for `--help`.
pub const EXIT_STATUSES: &[(u8, &str)] = &[
    (0, "the crate was written, or (with `--check`) is what the inputs produce"),
    (
        1,
        "error: bad arguments or input, a failed download, an output folder holding what the generator did not \
         write; with `--check`, a stale crate (its files are named, with the command that fixes them)",
    ),
];

/// `generate --help`'s closing text.
pub fn exit_status_help() -> String {
    crate::exit::exit_status_help(
        EXIT_STATUSES,
        "\nThe generator in your repository, its manifest and a CI workflow: docs/generator.md in cuda-sys-gen's \
         repository.",
    )
}

/// Where things are: fixed by `cargo xtask`, options of `cuda-sys-gen`.
#[derive(Debug, Clone)]
pub struct Paths {
    pub manifest: PathBuf,
    pub out: PathBuf,
    pub cache: PathBuf,
    pub crate_name: String,
    /// Quoted in every generated file's header.
    pub command: String,
    /// The command as it was run, options and all, less `--check`: what a failed check says
    /// to run ([`rerun_command`]).
    pub rerun: String,
}

impl StandaloneArgs {
    /// The options and the paths they name; `rerun` as [`rerun_command`] gives it.
    pub fn split(self, rerun: String) -> (GenerateArgs, Paths) {
        let command = self.regenerate_command.clone().unwrap_or_else(|| self.default_command());
        let StandaloneArgs { args, manifest, out, crate_name, cache, .. } = self;
        (args, Paths { manifest, out, cache, crate_name, command, rerun })
    }

    /// The command the generated files quote when --regenerate-command is not given:
    /// `cuda-sys-gen generate` and the options that decide what is written where (--manifest,
    /// --out, --crate-name), where they are not the defaults. Nothing of the machine: no
    /// --toolkit, --cache, --offline or --verbose, and each path relative to the working folder
    /// (an absolute one is rewritten so), so that every checkout writes the same bytes.
    pub fn default_command(&self) -> String {
        let mut words = vec!["cuda-sys-gen".to_owned(), "generate".to_owned()];
        let defaults = [("--manifest", "headers-manifest.toml"), ("--out", "generated")];
        for ((option, default), path) in defaults.into_iter().zip([&self.manifest, &self.out]) {
            let path = relative_to_cwd(path);
            // A control character cannot stand in a comment line of the files: such a path is
            // left out of the quoted command rather than break them.
            if path != default && !path.chars().any(char::is_control) {
                words.extend([option.to_owned(), shell_quote(&path)]);
            }
        }
        if self.crate_name != "cuda-driver-pfn" && !self.crate_name.chars().any(char::is_control) {
            words.extend(["--crate-name".to_owned(), shell_quote(&self.crate_name)]);
        }
        words.join(" ")
    }
}

/// `path` as written relative to the working folder, `/`-separated, without `./`: an absolute
/// path made relative (with `..` where it is outside), a relative one tidied.
fn relative_to_cwd(path: &std::path::Path) -> String {
    use std::path::Component;
    let parts = |p: &std::path::Path| -> Vec<String> {
        p.components()
            .filter(|c| !matches!(c, Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect()
    };
    let relative = match std::env::current_dir() {
        Ok(cwd) if path.is_absolute() => {
            let (to, from) = (parts(path), parts(&cwd));
            let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
            let mut out = vec!["..".to_owned(); from.len() - common];
            out.extend(to[common..].iter().cloned());
            out
        }
        _ => parts(path),
    };
    if relative.is_empty() {
        ".".to_owned()
    } else {
        relative.join("/")
    }
}

/// The command line that was run, as a user would type it again without `--check`: `program`
/// (`cuda-sys-gen`, `cargo xtask`), then every argument after the program's own name, each
/// quoted for a POSIX shell where it needs it. A failed `--check` quotes it, so that the fix it
/// names writes the crate that was checked (the same --manifest, --out, --crate-name, ...).
pub fn rerun_command<I: IntoIterator<Item = std::ffi::OsString>>(program: &str, args: I) -> String {
    let mut words = vec![program.to_owned()];
    for a in args.into_iter().skip(1) {
        let a = a.to_string_lossy().into_owned();
        if a != "--check" {
            words.push(shell_quote(&a));
        }
    }
    words.join(" ")
}

/// `word` as a POSIX shell reads it back: as it is when it holds nothing the shell would act
/// on, else in single quotes.
fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Runs the pipeline and prints its summary; with `--add-toolkit`, pins the toolkit first and
/// prints its diff against the previous newest one after.
pub fn run(args: GenerateArgs, paths: Paths) -> Result<()> {
    if let Some(file) = args.c_header.clone() {
        return c_header(&args, &paths, &file);
    }
    let cfg = config(&args, &paths);
    // Before any work, --add-toolkit's change to the manifest included.
    let mut checked = pipeline::check_before_work(&cfg)?;
    for note in checked.notes.drain(..) {
        crate::say!("note: {note}");
    }
    match args.add_toolkit.clone() {
        Some(spec) => add_toolkit(&spec, &args, &paths, &cfg, checked),
        None => run_generate(&args, &paths, &cfg, checked),
    }
}

/// The pipeline's configuration for these options (local toolkits announced on stderr).
fn config(args: &GenerateArgs, paths: &Paths) -> Config {
    let mut toolkits = args.toolkits.clone();
    if toolkits.is_empty() && !args.pinned_only {
        toolkits.extend(codegen::locate::discover_local_toolkit());
    }
    for p in &toolkits {
        crate::say!("using the local toolkit at {}", p.display());
    }
    Config {
        manifest: paths.manifest.clone(),
        out_dir: paths.out.clone(),
        cache_dir: paths.cache.clone(),
        local_toolkits: toolkits,
        mode: if args.check { Mode::Check } else { Mode::Write },
        emit: EmitOptions::new(&paths.crate_name, &paths.command),
        offline: args.offline,
        progress: Some(stderr_progress()),
    }
}

fn run_generate(args: &GenerateArgs, paths: &Paths, cfg: &Config, checked: Checked) -> Result<()> {
    let start = std::time::Instant::now();
    // A stale crate is fixed by running this very command again without --check, whatever the
    // files' headers quote (--regenerate-command).
    let generated = pipeline::generate_checked(cfg, checked).map_err(|e| match e {
        codegen::Error::Stale { files, generator, .. } => {
            codegen::Error::Stale { files, command: paths.rerun.clone(), generator }
        }
        e => e,
    });
    let journal = codegen::add_toolkit::journal_path(&paths.manifest);
    let report = generated.with_context(|| {
        let mut s = format!("generation failed; {} is unchanged", paths.out.display());
        if args.check && journal.exists() {
            s.push_str(&format!(
                " (an interrupted `generate --add-toolkit` left {}: a run without --check finishes or undoes it)",
                journal.display()
            ));
        }
        s
    })?;
    crate::exit::out(format_args!("{}", report.summary(cfg.mode, &paths.out, start.elapsed(), args.verbose)));
    Ok(())
}

/// `generate --c-header FILE`: the crate rendered in memory, its C header written alone (the
/// output folder untouched), quoting this very command as the one that regenerates it.
fn c_header(args: &GenerateArgs, paths: &Paths, file: &std::path::Path) -> Result<()> {
    // Before any work: a file that is not the generator's stops the run here.
    codegen::write::check_file(file)?;
    let mut cfg = config(args, paths);
    codegen::input::check_header_text("the command line", &paths.rerun)?;
    cfg.emit.command = paths.rerun.clone();
    let manifest = codegen::manifest::Manifest::load(&paths.manifest)?;
    let unchanged = || format!("the C header was not written; {} is unchanged", file.display());
    let (files, _) = pipeline::render(&cfg, &manifest).with_context(unchanged)?;
    let bytes = files.get(codegen::emit::C_HEADER).context("the crate has no C header")?;
    let done = codegen::write::write_file(file, bytes, cfg.mode, &paths.rerun).with_context(unchanged)?;
    match (cfg.mode, done) {
        (Mode::Check, _) => println!("{}: up to date", file.display()),
        (_, codegen::write::FileOutcome::Unchanged) => println!("{}: unchanged", file.display()),
        (_, codegen::write::FileOutcome::Written) => println!("{}: written", file.display()),
    }
    Ok(())
}

/// Progress lines on stderr, each with the seconds since the run began: downloads and clang
/// runs, the steps that take a while on a fresh machine (a warm run has none).
pub fn stderr_progress() -> codegen::fetch::Progress {
    let start = std::time::Instant::now();
    codegen::fetch::Progress::new(move |line| crate::say!("[{:>5.1} s] {line}", start.elapsed().as_secs_f64()))
}

/// `generate --add-toolkit`: pin, regenerate, report. The crate of the new manifest is rendered
/// in memory first; then both are written as one change ([`codegen::add_toolkit::commit`]), so that a
/// pin is only ever added together with the crate it produces, whatever stops the run.
fn add_toolkit(spec: &ToolkitSpec, args: &GenerateArgs, paths: &Paths, cfg: &Config, checked: Checked) -> Result<()> {
    let manifest = checked.manifest();
    let mut fetcher = Fetcher::new(paths.cache.clone(), manifest);
    fetcher.offline = args.offline;
    fetcher.progress = cfg.progress.clone();
    let unchanged =
        || format!("could not add CUDA {spec}; {} and {} are unchanged", paths.manifest.display(), paths.out.display());
    let new = codegen::add_toolkit::prepare(manifest, &fetcher, spec).with_context(unchanged)?;
    codegen::fault::point("pin:prepared");
    let new_manifest = codegen::manifest::Manifest::parse(&paths.manifest, &new.text).with_context(unchanged)?;
    let start = std::time::Instant::now();
    let (files, mut report) = pipeline::render(cfg, &new_manifest).with_context(unchanged)?;
    report.write = codegen::add_toolkit::commit(&new.change(manifest), &paths.out, &files, &paths.command)
        .with_context(|| format!("could not add CUDA {spec}"))?;
    for p in &new.pin.packages {
        crate::say!("pinned CUDA {}: {} {} ({}, sha256 {})", new.pin.version, p.name, p.version, p.file, p.sha256);
    }
    crate::exit::out(format_args!("{}", report.summary(Mode::Write, &paths.out, start.elapsed(), args.verbose)));
    for n in new.notes.iter().cloned().chain(releases_note(new.pin.version)) {
        crate::say!("note: {n}");
    }
    if let Some(previous) = new.previous {
        let d = diff::diff(&report.model, previous, new.pin.version).context("could not compare the new toolkit")?;
        crate::outln!("\n{}", diff::markdown::render(&d));
    }
    Ok(())
}

/// What a newly pinned toolkit needs of min-driver's table of NVIDIA's releases
/// (`min-driver/cuda-releases.toml`, built into min-driver): its driver row, where the table
/// has none, and where that row comes from. `None`: the row is there.
pub fn releases_note(version: codegen::version::ToolkitVersion) -> Option<String> {
    let releases = min_driver::releases::Releases::load().ok()?;
    let has = releases.driver.iter().any(|d| d.cuda == version.to_string());
    (!has).then(|| {
        format!(
            "min-driver's table of NVIDIA's releases (min-driver/cuda-releases.toml in cuda-sys-gen's repository) has no \
             driver row for CUDA {version}: until one is added, a floor of CUDA {version} prints \"driver: not known\". \
             Add `[[driver]] cuda = \"{version}\"` with `linux` (and `windows`) from the table \"CUDA Toolkit and \
             Corresponding Driver Versions\" of CUDA {version}'s release notes \
             (https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/), its source named in the row's comment"
        )
    })
}

/// `cuda-sys-gen init`'s options.
#[derive(Debug, Clone, Args)]
pub struct InitArgs {
    /// The toolkits to pin: versions (13.5: the newest patch of that minor on PyPI), `latest`
    /// (the newest minor), or local toolkits. None: `latest`.
    #[arg(value_name = "VERSION|latest|PATH")]
    pub toolkits: Vec<ToolkitSpec>,
    /// The manifest to write; an existing file is never replaced.
    #[arg(long, default_value = "headers-manifest.toml")]
    pub manifest: PathBuf,
    /// Where wheels and extracted headers are cached.
    #[arg(long, default_value = "target/cuda-headers")]
    pub cache: PathBuf,
    /// Never run pip: pin the wheels the cache holds (the newest patch there of each version).
    #[arg(long)]
    pub offline: bool,
}

/// `init`'s exit statuses, for `--help`.
pub const INIT_EXIT_STATUSES: &[(u8, &str)] = &[
    (0, "the manifest was written"),
    (
        1,
        "error: bad arguments, a file already at --manifest (never replaced), a version PyPI (or, with --offline, the \
         cache) does not have, a failed download",
    ),
];

/// `init --help`'s closing text.
pub fn init_exit_status_help() -> String {
    crate::exit::exit_status_help(
        INIT_EXIT_STATUSES,
        "\nNext: cuda-sys-gen generate --pinned-only --out DIR --crate-name NAME, and CI: docs/generator.md in \
         cuda-sys-gen's repository.",
    )
}

/// `cuda-sys-gen init`: a new manifest, its pins said on stderr and the next step on stdout.
pub fn run_init(args: &InitArgs) -> Result<()> {
    let done = codegen::add_toolkit::init(&args.manifest, &args.cache, args.offline, &args.toolkits)
        .with_context(|| format!("{} was not written", args.manifest.display()))?;
    for pin in &done.pins {
        for p in &pin.packages {
            crate::say!("pinned CUDA {}: {} {} ({}, sha256 {})", pin.version, p.name, p.version, p.file, p.sha256);
        }
    }
    for n in done.notes.iter().cloned().chain(done.pins.iter().filter_map(|p| releases_note(p.version))) {
        crate::say!("note: {n}");
    }
    let versions: Vec<String> = done.pins.iter().map(|p| p.version.to_string()).collect();
    let manifest = args.manifest.display();
    crate::outln!(
        "{manifest}: written, pinning CUDA {}\nnext: cuda-sys-gen generate --pinned-only --manifest {manifest} --out \
         cuda-pfn --crate-name my-cuda-pfn (then commit both; CI: docs/generator.md)",
        versions.join(", ")
    );
    Ok(())
}
