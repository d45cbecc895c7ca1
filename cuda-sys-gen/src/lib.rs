//! The command-line front end of cuda-sys-gen, shared by the `cuda-sys-gen` binary (for other
//! repositories) and this repository's `cargo xtask` (which fixes the paths).

pub mod min_driver;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use codegen::diff::toolkits::{self, DiffConfig};
use codegen::diff::{self, Verdict};
use codegen::emit::EmitOptions;
use codegen::fetch::Fetcher;
use codegen::locate::ToolkitSpec;
use codegen::manifest::Manifest;
use codegen::pipeline::{self, Config};
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
}

/// The options of `diff`.
#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The older toolkit: a pinned version (12.9) or the path of a local toolkit.
    #[arg(long, value_name = "VERSION|PATH")]
    pub from: ToolkitSpec,
    /// The newer toolkit: a pinned version (13.0) or the path of a local toolkit.
    #[arg(long, value_name = "VERSION|PATH")]
    pub to: ToolkitSpec,
    /// Print the report as JSON, for tools, instead of markdown.
    #[arg(long)]
    pub json: bool,
    /// Which changes make the exit status non-zero: `breaking` lets additions pass (exit 0);
    /// `additive` fails on any change (2 or 3), as does leaving the option out.
    #[arg(long, value_enum, value_name = "KIND")]
    pub fail_on: Option<FailOn>,
    /// Never run pip: use only the cache.
    #[arg(long)]
    pub offline: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Any change fails: 2 for additions only, 3 for breaking changes.
    Additive,
    /// Only breaking changes fail (3); additions exit 0.
    Breaking,
}

/// `diff --help`'s closing text: [`diff::EXIT_STATUSES`] (the README's table is tested against
/// the same), and the `--fail-on` policy.
pub fn diff_exit_status() -> String {
    let mut s = String::from("Exit status:\n");
    for (code, meaning) in diff::EXIT_STATUSES {
        s.push_str(&format!("  {code}  {}\n", meaning.replace('`', "")));
    }
    s.push_str(
        "Without --fail-on every change is a failure exit (2 or 3), as with diff(1); --fail-on additive\n\
         says so explicitly; --fail-on breaking lets additions through with 0.",
    );
    s
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
pub fn generate(args: GenerateArgs, paths: Paths) -> Result<()> {
    // Before any work, --add-toolkit's change to the manifest included.
    codegen::crate_name::check(&paths.crate_name)?;
    if !args.check {
        // A killed --add-toolkit first: its manifest and crate made to agree again.
        if let Some(note) = codegen::pin::recover(&paths.manifest)? {
            eprintln!("note: {note}");
        }
        codegen::output_folder::check_output_folder(&paths.out, &paths.manifest, &paths.cache)?;
    }
    match args.add_toolkit.clone() {
        Some(spec) => add_toolkit(&spec, args, paths),
        None => run_generate(args, paths).map(drop),
    }
}

/// The pipeline's configuration for these options (local toolkits announced on stderr).
fn config(args: &GenerateArgs, paths: &Paths) -> Config {
    let mut toolkits = args.toolkits.clone();
    if toolkits.is_empty() && !args.pinned_only {
        toolkits.extend(codegen::locate::discover_local_toolkit());
    }
    for p in &toolkits {
        eprintln!("using the local toolkit at {}", p.display());
    }
    Config {
        manifest: paths.manifest.clone(),
        out_dir: paths.out.clone(),
        cache_dir: paths.cache.clone(),
        local_toolkits: toolkits,
        mode: if args.check { Mode::Check } else { Mode::Write },
        emit: EmitOptions { crate_name: paths.crate_name.clone(), command: paths.command.clone() },
        offline: args.offline,
        progress: Some(stderr_progress()),
    }
}

fn run_generate(args: GenerateArgs, paths: Paths) -> Result<codegen::report::Report> {
    let cfg = config(&args, &paths);
    let start = std::time::Instant::now();
    // A stale crate is fixed by running this very command again without --check, whatever the
    // files' headers quote (--regenerate-command).
    let generated = pipeline::generate(&cfg).map_err(|e| match e {
        codegen::Error::Stale { files, .. } => codegen::Error::Stale { files, command: paths.rerun.clone() },
        e => e,
    });
    let journal = codegen::pin::journal_path(&paths.manifest);
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
    print!("{}", report.summary(cfg.mode, &paths.out, start.elapsed(), args.verbose));
    Ok(report)
}

/// Progress lines on stderr, each with the seconds since the run began: downloads and clang
/// runs, the steps that take a while on a fresh machine (a warm run has none).
pub fn stderr_progress() -> codegen::fetch::Progress {
    let start = std::time::Instant::now();
    codegen::fetch::Progress::new(move |line| eprintln!("[{:>5.1} s] {line}", start.elapsed().as_secs_f64()))
}

/// `generate --add-toolkit`: pin, regenerate, report. The crate of the new manifest is rendered
/// in memory first; then both are written as one change ([`codegen::pin::commit`]), so that a
/// pin is only ever added together with the crate it produces, whatever stops the run.
fn add_toolkit(spec: &ToolkitSpec, args: GenerateArgs, paths: Paths) -> Result<()> {
    let manifest_path = paths.manifest.clone();
    let manifest = Manifest::load(&manifest_path)?;
    let mut fetcher = Fetcher::new(paths.cache.clone(), &manifest);
    fetcher.offline = args.offline;
    fetcher.progress = Some(stderr_progress());
    let unchanged =
        || format!("could not add CUDA {spec}; {} and {} are unchanged", manifest_path.display(), paths.out.display());
    let new = codegen::pin::prepare(&manifest_path, &fetcher, spec).with_context(unchanged)?;
    codegen::fault::point("pin:prepared");
    let old = std::fs::read_to_string(&manifest_path)
        .with_context(|| format!("could not read {}", manifest_path.display()))?;
    let new_manifest = Manifest::parse(&manifest_path, &new.text).with_context(unchanged)?;
    let cfg = config(&args, &paths);
    let start = std::time::Instant::now();
    let (files, mut report) = pipeline::render(&cfg, &new_manifest).with_context(unchanged)?;
    report.write = codegen::pin::commit(&manifest_path, &paths.out, &old, &new, &files, &paths.command)
        .with_context(|| format!("could not add CUDA {spec}"))?;
    for p in &new.pin.packages {
        eprintln!("pinned CUDA {}: {} {} ({}, sha256 {})", new.pin.version, p.name, p.version, p.file, p.sha256);
    }
    print!("{}", report.summary(Mode::Write, &paths.out, start.elapsed(), args.verbose));
    for n in &new.notes {
        eprintln!("note: {n}");
    }
    if let Some(previous) = new.previous {
        let d = diff::diff(&report.model, previous, new.pin.version).context("could not compare the new toolkit")?;
        println!("\n{}", diff::markdown::render(&d));
    }
    Ok(())
}

/// `diff`: one model over both toolkits, the report on stdout (markdown or JSON), and the
/// exit status of [`diff_exit_status`].
pub fn diff(args: DiffArgs, manifest: &Path, cache: &Path) -> Result<u8> {
    let cfg = DiffConfig {
        manifest: manifest.to_owned(),
        cache_dir: cache.to_owned(),
        from: args.from.clone(),
        to: args.to.clone(),
        offline: args.offline,
        progress: Some(stderr_progress()),
    };
    let run =
        toolkits::diff_toolkits(&cfg).with_context(|| format!("could not compare {} with {}", args.from, args.to))?;
    for w in merge_toolkit_warnings(&run.built.warnings) {
        eprintln!("warning: {w}");
    }
    let d = &run.diff;
    if d.from.version > d.to.version {
        eprintln!(
            "note: --from {} is newer than --to {}: the report reads as a downgrade, what moving back to {} changes \
             (removals are then the newer toolkit's additions); swap them for what {} brings",
            d.from.version, d.to.version, d.to.version, d.from.version
        );
    }
    if args.json {
        print!("{}", diff::json(d).context("could not write the report as JSON")?);
    } else {
        print!("{}", diff::markdown::render(d));
    }
    let status = match (args.fail_on, d.verdict) {
        (Some(FailOn::Breaking), Verdict::Additive) => 0,
        (_, v) => v.exit_status(),
    };
    eprintln!("CUDA {} -> {}: {} (exit status {status})", d.from.version, d.to.version, d.verdict.as_str());
    Ok(status)
}

/// Header warnings of a diff's two sides, one line each: a warning both toolkits give
/// (`CUDA 12.9: X` and `CUDA 13.0: X`) is said once, with both versions (`CUDA 12.9, 13.0: X`).
pub fn merge_toolkit_warnings(warnings: &[String]) -> Vec<String> {
    let mut merged: Vec<(Vec<&str>, &str)> = Vec::new();
    for w in warnings {
        let split = w.strip_prefix("CUDA ").and_then(|r| r.split_once(": "));
        let Some((version, rest)) = split.filter(|(v, _)| !v.contains(' ')) else {
            merged.push((Vec::new(), w));
            continue;
        };
        match merged.iter_mut().find(|(vs, r)| !vs.is_empty() && *r == rest) {
            Some((vs, _)) if !vs.contains(&version) => vs.push(version),
            Some(_) => {}
            None => merged.push((vec![version], rest)),
        }
    }
    merged
        .into_iter()
        .map(|(vs, rest)| if vs.is_empty() { rest.to_owned() } else { format!("CUDA {}: {rest}", vs.join(", ")) })
        .collect()
}

/// Parses the command line; a usage error exits 1 (clap's own 2 is `diff`'s "additions
/// only"), `--help` and `--version` exit 0.
pub fn parse_args<T: Parser>() -> Result<T, std::process::ExitCode> {
    parse_from(std::env::args_os())
}

/// [`parse_args`] of the given arguments (the first is the program's name).
pub fn parse_from<T: Parser, I: IntoIterator<Item = A>, A: Into<std::ffi::OsString> + Clone>(
    args: I,
) -> Result<T, std::process::ExitCode> {
    T::try_parse_from(args).map_err(|e| {
        let _ = e.print();
        if e.use_stderr() {
            std::process::ExitCode::FAILURE
        } else {
            std::process::ExitCode::SUCCESS
        }
    })
}

/// An error and its causes, `a: b: c`, each cause said once: a cause whose text is already
/// in what was said (an I/O error its path's message quotes) is left out.
pub fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// `main` for both binaries: runs `f`, prints an error chain the way rustc would.
pub fn exit_code(result: Result<()>) -> std::process::ExitCode {
    exit_status(result.map(|()| 0))
}

/// The same for commands with exit statuses of their own (`diff`); errors exit 1.
pub fn exit_status(result: Result<u8>) -> std::process::ExitCode {
    match result {
        Ok(code) => std::process::ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The `cuda-sys-gen` command line (its `--help` is the reference the README is tested against).
#[derive(Parser)]
#[command(name = "cuda-sys-gen", version, about = "Versioned CUDA driver entry point types from NVIDIA's headers")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Write (or, with --check, verify) the generated crate.
    Generate {
        #[command(flatten)]
        args: GenerateArgs,
        /// The headers manifest.
        #[arg(long, default_value = "headers-manifest.toml")]
        manifest: PathBuf,
        /// The folder of the generated crate; everything in it belongs to the generator.
        #[arg(long, default_value = "generated")]
        out: PathBuf,
        /// The generated crate's package name (at most 58 characters: its types package, in
        /// <out>/types, is named <crate-name>-types).
        #[arg(long, default_value = "cuda-driver-pfn")]
        crate_name: String,
        /// Where wheels and extracted headers are cached.
        #[arg(long, default_value = "target/cuda-headers")]
        cache: PathBuf,
        /// The command quoted in the generated files' headers.
        #[arg(long, default_value = "cuda-sys-gen generate")]
        regenerate_command: String,
    },
    /// Report what changed in the driver entry points between two toolkits (markdown, or --json).
    #[command(after_help = diff_exit_status())]
    Diff {
        #[command(flatten)]
        args: DiffArgs,
        /// The headers manifest (pinned versions are looked up in it).
        #[arg(long, default_value = "headers-manifest.toml")]
        manifest: PathBuf,
        /// Where wheels and extracted headers are cached.
        #[arg(long, default_value = "target/cuda-headers")]
        cache: PathBuf,
    },
    /// The oldest driver that runs a program: every entry point its Rust sources name
    /// (`entries::`, `api::`, `cu!(..)`, `aliases::cuda_X_Y::`, `symbols::`), every kernel they
    /// embed (PTX, cubins, fatbins), and the driver to install for it.
    ///
    /// Given a compiled program (ELF or PE), it reads that instead, exactly for the code it
    /// links: the records the generated crate leaves of each lookup, the libcuda functions it
    /// imports, the CUDA runtime it links and the kernels it embeds (docs/min-driver.md). The
    /// sources' answer below is the estimate before a build.
    ///
    /// Every token is read, macro bodies and invocations included: each identifier or string
    /// that is a name of the crate's registry counts, a name of several meanings (a C name:
    /// every toolkit's meaning, both stream modes) as the highest of them, so the floor is never
    /// lower than the truth. Only `aliases::cuda_X_Y::name` and `symbols::name` narrow it, where
    /// the path provably starts at the crate. What cannot be read (a module file that is not
    /// there, a kernel the build makes, identifiers pasted together) is listed, and the floor
    /// is then "at least". Code under every `#[cfg(..)]` counts, even `#[cfg(any())]`:
    /// min-driver cannot know which features and targets you build. Build scripts are not
    /// counted: they run where the program is built.
    #[command(after_help = min_driver_exit_status())]
    MinDriver {
        #[command(flatten)]
        args: MinDriverArgs,
    },
}

/// `min-driver`'s options.
#[derive(Debug, Args)]
pub struct MinDriverArgs {
    /// Compiled programs or libraries (ELF, PE); or Rust files, or folders searched for them
    /// (hidden folders, and the target/ folder beside a Cargo.toml, skipped; path dependencies
    /// and workspace members of the packages found followed).
    #[arg(required = true, value_name = "PATH")]
    pub sources: Vec<PathBuf>,
    /// The generated crate's registry.json.
    #[arg(long, default_value = "generated/registry.json")]
    pub registry: PathBuf,
    /// Does the program run on this driver? A driver version (`535.104.05`) or a CUDA version
    /// (`12.2`); what it lacks is listed with its line.
    #[arg(long, value_name = "VERSION")]
    pub driver: Option<String>,
    /// Fail (exit 3) when the floor is above this CUDA version (`12.2`): a CI gate.
    #[arg(long, value_name = "CUDA")]
    pub max: Option<String>,
    /// The GPU the program runs on (`sm_90`): of each fatbin, only the entry the driver loads
    /// there counts (a cubin for it, else the PTX it JIT-compiles); the others are listed as
    /// unused there, and a fatbin with no entry for it is said.
    #[arg(long, value_name = "SM")]
    pub arch: Option<String>,
    /// Whose driver numbers `--driver` reads (the report names both platforms' drivers).
    #[arg(long, value_enum, default_value = "linux")]
    pub platform: DriverPlatform,
    /// The report as JSON (schema in the README).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DriverPlatform {
    /// Linux x86-64 driver numbers (`555.42.02`).
    Linux,
    /// Windows x86-64 driver numbers (`555.85`).
    Windows,
}

/// `min-driver`'s exit statuses, for `--help` and the README (tested against each other).
pub const MIN_DRIVER_EXIT_STATUSES: &[(u8, &str)] = &[
    (0, "the report was made; with `--driver` or `--max`, the program is within it"),
    (1, "error: bad arguments, an unreadable file or registry, a file that is not Rust tokens"),
    (
        2,
        "with `--driver` or `--max`: within it as far as could be read, but something could not be read (the floor is \"at least\")",
    ),
    (3, "with `--driver` or `--max`: above it; the offending entries and kernels are listed with their lines"),
];

/// `min-driver --help`'s closing text.
pub fn min_driver_exit_status() -> String {
    let mut s = String::from("Exit status:\n");
    for (code, meaning) in MIN_DRIVER_EXIT_STATUSES {
        s.push_str(&format!("  {code}  {}\n", meaning.replace('`', "")));
    }
    s.trim_end().to_owned()
}

/// `main` of the `cuda-sys-gen` binary.
pub fn run(cli: Cli) -> std::process::ExitCode {
    match cli.command {
        Command::Generate { args, manifest, out, crate_name, cache, regenerate_command } => {
            let rerun = rerun_command("cuda-sys-gen", std::env::args_os());
            exit_code(generate(args, Paths { manifest, out, cache, crate_name, command: regenerate_command, rerun }))
        }
        Command::Diff { args, manifest, cache } => exit_status(diff(args, &manifest, &cache)),
        Command::MinDriver { args } => exit_status(min_driver::run(&args)),
    }
}
