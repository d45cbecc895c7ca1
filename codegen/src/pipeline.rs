//! The whole job: fetch or locate headers, run bindgen, parse, merge, emit, write.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::clang::{self, BindgenOutput, SourceLine};
use crate::emit::{self, EmitOptions};
use crate::fetch::{self, Fetcher, Origin, ToolkitHeaders};
use crate::header_text;
use crate::locate;
use crate::manifest::{HeaderSpec, Manifest, ToolkitPin};
use crate::model::{Declaration, HeaderCount, Model, ToolkitInput};
use crate::parse;
use crate::platform::Platform;
use crate::prereq;
use crate::version::ToolkitVersion;
use crate::write::{self, Mode, WriteReport};
use crate::Error;

#[derive(Debug, Clone)]
pub struct Config {
    pub manifest: PathBuf,
    /// The generated crate's folder.
    pub out_dir: PathBuf,
    /// Downloaded wheels and extracted headers.
    pub cache_dir: PathBuf,
    /// Local toolkits to use (`--toolkit`): roots, include folders or pip layouts.
    pub local_toolkits: Vec<PathBuf>,
    pub mode: Mode,
    pub emit: EmitOptions,
    /// Use only the cache; never run pip.
    pub offline: bool,
    /// Told of downloads and of translation units read by clang (none when all is cached).
    pub progress: Option<fetch::Progress>,
}

/// What a run did, for the summary.
#[derive(Debug)]
pub struct Report {
    pub model: Model,
    pub libclang: String,
    pub write: WriteReport,
    /// Per toolkit: one line of counts.
    pub toolkit_lines: Vec<String>,
    /// Local toolkits added or used instead of a pin, and how they compare.
    pub notes: Vec<String>,
    /// NVIDIA header problems worth a look (broken aliases, unversioned typedefs).
    pub warnings: Vec<String>,
}

impl Report {
    /// The run's summary, as printed by the command-line tools: a few lines (notes on local
    /// toolkits, libclang, what was read, what was written); with `verbose`, every warning,
    /// the per-toolkit counts and each ABI drift too.
    pub fn summary(&self, mode: Mode, out: &Path, elapsed: std::time::Duration, verbose: bool) -> String {
        let mut s = String::new();
        if verbose {
            for w in &self.warnings {
                s.push_str(&format!("warning: {w}\n"));
            }
            for line in &self.toolkit_lines {
                s.push_str(&format!("{line}\n"));
            }
            for d in &self.model.drift {
                let param = d.param.as_deref().unwrap_or("parameter list");
                s.push_str(&format!(
                    "ABI drift: {} {} -> {}: {param}: {} -> {}\n",
                    d.pfn, d.from, d.to, d.before, d.after
                ));
            }
        }
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        s.push_str(&format!("{}\n", self.libclang));
        let versions: Vec<ToolkitVersion> = self.model.toolkits.iter().map(|t| t.version).collect();
        let range = match (versions.first(), versions.last()) {
            (Some(a), Some(b)) if a != b => format!(" ({a} to {b})"),
            (Some(a), _) => format!(" ({a})"),
            _ => String::new(),
        };
        s.push_str(&format!(
            "{} toolkits{range}: {} entries of {} symbols; every type their signatures name is defined (the crate builds with every feature)\n",
            versions.len(),
            self.model.entries.len(),
            self.model.symbols().len(),
        ));
        if !verbose && (!self.model.drift.is_empty() || !self.warnings.is_empty()) {
            s.push_str(&format!(
                "{} ABI drift notes and {} warnings about the headers: --verbose lists them\n",
                self.model.drift.len(),
                self.warnings.len()
            ));
        }
        let secs = elapsed.as_secs_f64();
        match mode {
            Mode::Check => s.push_str(&format!("{}: up to date ({secs:.1} s)\n", out.display())),
            Mode::Write => s.push_str(&format!(
                "{}: {} files written, {} removed, {} unchanged ({secs:.1} s)\n",
                out.display(),
                self.write.written.len(),
                self.write.removed.len(),
                self.write.unchanged
            )),
        }
        s
    }
}

pub fn generate(cfg: &Config) -> Result<Report, Error> {
    check_before_work(cfg)?;
    let manifest = Manifest::load(&cfg.manifest)?;
    let (files, mut report) = render(cfg, &manifest)?;
    report.write = write::sync_tree(&cfg.out_dir, &files, cfg.mode, &cfg.emit.command, &generator_wrote)?;
    Ok(report)
}

/// Everything [`generate`] does but the write, for `manifest` (which need not be on disk
/// yet: `--add-toolkit` renders the crate of the manifest it is about to write): the crate's
/// files, and the report (its `write` empty).
pub fn render(cfg: &Config, manifest: &Manifest) -> Result<(emit::Files, Report), Error> {
    let mut fetcher = Fetcher::new(cfg.cache_dir.clone(), manifest);
    fetcher.offline = cfg.offline;
    fetcher.progress = cfg.progress.clone();
    // Everything pinned is read (a local toolkit of a pinned version is compared with its pin).
    let pins: Vec<&ToolkitPin> = manifest.toolkits.iter().collect();
    fetcher.planned = prereq::check(manifest, &fetcher, &pins)?.downloads.len();
    clang::ensure_libclang(manifest, &fetcher)?;
    let (toolkits, notes) = collect_toolkits(manifest, &fetcher, &cfg.local_toolkits)?;
    let mut built = build_model(manifest, &fetcher, &toolkits)?;
    let (libclang, toolkit_lines, warnings) = (
        std::mem::take(&mut built.libclang),
        std::mem::take(&mut built.toolkit_lines),
        std::mem::take(&mut built.warnings),
    );
    let ToEmit { model, types, module_types } = built.newest_types(&manifest.headers)?;
    let modules: Vec<emit::ModuleSpec> = manifest.headers.iter().map(emit::ModuleSpec::from_manifest).collect();
    let files = emit::emit(&model, &types, &module_types, &modules, &cfg.emit)?;
    let write = WriteReport::default();
    Ok((files, Report { model, libclang, write, toolkit_lines, notes, warnings }))
}

/// What is checked before any work: the crate name, and, where the run may write, that the
/// output folder holds nothing but the generator's own files ([`check_output_folder`]).
pub fn check_before_work(cfg: &Config) -> Result<(), Error> {
    crate::crate_name::check(&cfg.emit.crate_name)?;
    if cfg.mode == Mode::Write {
        check_output_folder(&cfg.out_dir, &cfg.manifest, &cfg.cache_dir)?;
    }
    Ok(())
}

/// Refuses an output folder that is, holds or is inside the manifest or the cache, is inside
/// a crate the generator wrote, or holds a `.git` or any file the generator did not write: one
/// whose name is neither one [`emit::file_names`] gives for this manifest nor in the folder's
/// record, or without the marker ([`write::check_replaceable`]). The refusal offers a folder
/// the same check accepts, where one is near.
pub fn check_output_folder(out: &Path, manifest: &Path, cache: &Path) -> Result<(), Error> {
    match output_folder_refusal(out, manifest, cache) {
        Err(Error::NotOurs { out: shown, reason, .. }) => {
            Err(Error::NotOurs { out: shown, reason, instead: instead_of(out, manifest, cache) })
        }
        other => other,
    }
}

fn output_folder_refusal(out: &Path, manifest: &Path, cache: &Path) -> Result<(), Error> {
    let keep = [(manifest, "the headers manifest"), (cache, "the header cache")];
    // The names this manifest's crate has; only read where there is a folder to judge.
    let names = if out.is_dir() {
        let rows = Manifest::load(manifest)?.headers;
        emit::file_names(&rows.iter().map(emit::ModuleSpec::from_manifest).collect::<Vec<_>>())
    } else {
        BTreeSet::new()
    };
    write::check_replaceable(out, &keep, &names, &generator_wrote)
}

/// A folder to offer instead of a refused `out`: `cuda-pfn` in `out` or in one of the folders
/// above it, the first that [`check_output_folder`]'s rules accept and that is a place for a
/// crate (not in a build folder, nor in a git repository's own folder). Shown relative to the
/// working directory where it is under it. None for a crate of ours that holds a file of
/// yours: moving that file is the fix.
fn instead_of(out: &Path, manifest: &Path, cache: &Path) -> Option<String> {
    let canonical = write::canonical_lenient(out).ok()?;
    // A crate of ours refused for a file of yours in it: the fix is moving that file, not
    // another folder.
    if write::generated_crate(&canonical, &generator_wrote).is_some() {
        return None;
    }
    let cwd = std::env::current_dir().ok().and_then(|d| d.canonicalize().ok());
    let start = if canonical.is_dir() { canonical.as_path() } else { canonical.parent()? };
    for folder in start.ancestors().take(4) {
        if folder.components().any(|c| c.as_os_str() == ".git") || in_cargo_target(folder) {
            continue;
        }
        let candidate = folder.join("cuda-pfn");
        if candidate == canonical || output_folder_refusal(&candidate, manifest, cache).is_err() {
            continue;
        }
        let shown = match &cwd {
            Some(cwd) => candidate.strip_prefix(cwd).map(Path::to_owned).unwrap_or_else(|_| candidate.clone()),
            None => candidate.clone(),
        };
        return Some(shown.display().to_string());
    }
    None
}

/// Whether `folder` is in a build folder: one tagged with `CACHEDIR.TAG` (as cargo tags its
/// target/), or one named `target` (cargo's, and where the header cache is by default).
/// `cargo clean` would take a crate there.
fn in_cargo_target(folder: &Path) -> bool {
    folder.ancestors().any(|a| a.join("CACHEDIR.TAG").is_file() || a.file_name().is_some_and(|n| n == "target"))
}

/// Whether a file of an output folder is one the generator writes: every file it writes
/// carries the marker in its first lines, except the licence texts (copies of this
/// repository's), recognised by name and first line.
pub fn generator_wrote(rel: &str, head: &[u8]) -> bool {
    const MARKER: &[u8] = b"@generated by cuda-sys-gen";
    if head.windows(MARKER.len()).any(|w| w == MARKER) {
        return true;
    }
    let first_line = |t: &[u8]| t.split(|&b| b == b'\n').next().map(|l| l.to_vec()).unwrap_or_default();
    // The emitter's licence files (emit/krate.rs), which are this repository's.
    const LICENSES: [(&str, &str); 2] =
        [("LICENSE-MIT", include_str!("../../LICENSE-MIT")), ("LICENSE-APACHE", include_str!("../../LICENSE-APACHE"))];
    LICENSES.iter().any(|(path, text)| *path == rel && first_line(head) == first_line(text.as_bytes()))
}

/// A model of some toolkits and what building it found; nothing emitted or written.
#[derive(Debug)]
pub struct Built {
    pub model: Model,
    pub libclang: String,
    /// Per toolkit: one line of counts.
    pub toolkit_lines: Vec<String>,
    /// NVIDIA header problems worth a look (broken aliases, unversioned typedefs).
    pub warnings: Vec<String>,
    /// The types of the newest toolkit's Linux unit, less the `PFN_` typedefs, and of the
    /// newest Windows unit (the newest toolkit that has Windows headers: a local Linux toolkit
    /// newer than every pin has none) with where each was declared: what the emitter passes
    /// through.
    newest: NewestTypes,
    /// The newest toolkit's comment on each `CUresult` code (cuda.h), for the types' docs.
    result_docs: BTreeMap<String, String>,
    /// The manifest's path, for messages.
    manifest: PathBuf,
}

/// [`header_text::result_code_docs`] of the newest toolkit's first API header (cuda.h);
/// empty where it cannot be read (bindgen, reading the same file, said what failed).
fn newest_result_docs(manifest: &Manifest, toolkits: &[ToolkitHeaders]) -> BTreeMap<String, String> {
    let first_api = manifest.headers.first().map_or("cuda.h", |h| h.api.as_str());
    let Some(newest) = toolkits.iter().max_by_key(|t| t.version) else { return BTreeMap::new() };
    let text = newest
        .include_dirs_for(Platform::Linux)
        .iter()
        .map(|d| d.join(first_api))
        .find_map(|p| std::fs::read(p).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    header_text::result_code_docs(&text)
}

/// Puts each code's comment on its constant in `impl cudaError_enum`, as rustdoc.
fn document_result_codes(types: &mut syn::File, docs: &BTreeMap<String, String>) {
    for item in &mut types.items {
        let syn::Item::Impl(imp) = item else { continue };
        let syn::Type::Path(p) = &*imp.self_ty else { continue };
        if !p.path.is_ident("cudaError_enum") {
            continue;
        }
        for ii in &mut imp.items {
            let syn::ImplItem::Const(c) = ii else { continue };
            if let Some(doc) = docs.get(&c.ident.to_string()) {
                let doc = format!(" {doc}");
                c.attrs.push(syn::parse_quote!(#[doc = #doc]));
            }
        }
    }
}

/// A translation unit's types (bindgen's output less the `PFN_` typedefs), with where each
/// was declared.
#[derive(Debug)]
struct UnitTypes {
    types: syn::File,
    locations: BTreeMap<String, SourceLine>,
}

/// The model and what the emitter renders from it: the newest Linux types, and the newest
/// Windows unit's own types per module.
pub struct ToEmit {
    pub model: Model,
    pub types: syn::File,
    pub module_types: BTreeMap<String, Vec<syn::Item>>,
}

impl Built {
    /// The newest toolkit's types, less the `PFN_` typedefs: the Linux unit's, and the Windows
    /// unit's own per module.
    pub fn newest_types(self, headers: &[HeaderSpec]) -> Result<ToEmit, Error> {
        let (mut linux, windows) = self.newest.ok_or(Error::NoToolkits { manifest: self.manifest })?;
        document_result_codes(&mut linux, &self.result_docs);
        let module_types = match windows {
            Some(w) => split_by_module(headers, w.types, &w.locations, &linux),
            None => BTreeMap::new(),
        };
        Ok(ToEmit { model: self.model, types: linux, module_types })
    }
}

/// The per-toolkit steps and the merge: bindgen and the parser over each toolkit's headers,
/// then [`Model::build`] over all of them. Used by [`generate`] and by `diff`.
pub fn build_model(manifest: &Manifest, fetcher: &Fetcher, toolkits: &[ToolkitHeaders]) -> Result<Built, Error> {
    if toolkits.is_empty() {
        return Err(Error::NoToolkits { manifest: manifest.path.clone() });
    }
    let libclang = clang::ensure_libclang(manifest, fetcher)?;
    let (parsed, newest) = parse_all(&manifest.headers, toolkits, &fetcher.cache, fetcher.progress.as_ref())?;
    let mut warnings = Vec::new();
    let mut inputs = Vec::new();
    for p in parsed {
        warnings.extend(p.warnings);
        inputs.push(p.input);
    }
    let mut model = Model::build(inputs);
    model.restrict_arch(&manifest.arch_only);
    model.apply_driver_floors(&manifest.driver_floors);
    warnings.extend(model.warnings.iter().cloned());
    if let Some(u) = model.unresolved_c_names.first() {
        return Err(Error::UnresolvedCName {
            toolkit: u.toolkit,
            c_name: u.c_name.clone(),
            exported: u.exported.clone(),
            per_thread: u.per_thread,
            more: model.unresolved_c_names.len() - 1,
        });
    }
    let toolkit_lines = summary_lines(&model);
    let result_docs = newest_result_docs(manifest, toolkits);
    Ok(Built { model, libclang, toolkit_lines, warnings, newest, result_docs, manifest: manifest.path.clone() })
}

/// Pinned toolkits, with local ones replacing a pin of the same version or added beside.
fn collect_toolkits(
    manifest: &Manifest,
    fetcher: &Fetcher,
    local: &[PathBuf],
) -> Result<(Vec<ToolkitHeaders>, Vec<String>), Error> {
    let mut notes = Vec::new();
    let mut locals: BTreeMap<ToolkitVersion, ToolkitHeaders> = BTreeMap::new();
    for path in local {
        let tk = local_toolkit(manifest, path)?;
        let version = tk.version;
        if let Some(prev) = locals.get(&version) {
            if let Origin::Local(p) = &prev.origin {
                return Err(Error::ToolkitNotFound {
                    path: path.clone(),
                    detail: format!("it is CUDA {version}, like {}: give each toolkit once", p.display()),
                });
            }
        }
        locals.insert(version, tk);
    }
    let mut out = Vec::new();
    for pin in &manifest.toolkits {
        match locals.remove(&pin.version) {
            Some(l) => {
                let (used, note) = compare_with_pin(manifest, fetcher, pin, l);
                notes.push(note);
                out.push(used);
            }
            None => out.push(fetcher.toolkit(pin)?),
        }
    }
    let windows_rows: Vec<&str> =
        manifest.headers.iter().filter(|h| h.target == Platform::Windows).map(|h| h.name.as_str()).collect();
    let newest_windows = out.iter().filter(|t| !t.windows_include_dirs.is_empty()).map(|t| t.version).max();
    for (version, l) in locals {
        if let Origin::Local(p) = &l.origin {
            notes.push(format!(
                "CUDA {version} from {} is not pinned in the manifest: added to the inputs",
                p.display()
            ));
            if l.windows_include_dirs.is_empty() && !windows_rows.is_empty() {
                let kept = match newest_windows {
                    Some(v) => format!("keep what CUDA {v}, the newest toolkit with them, declares"),
                    None => "are empty".to_owned(),
                };
                notes.push(format!(
                    "CUDA {version} from {} has no Windows headers: the modules {} {kept}",
                    p.display(),
                    windows_rows.join(", ")
                ));
            }
        }
        out.push(l);
    }
    out.sort_by_key(|t| t.version);
    if out.is_empty() {
        return Err(Error::NoToolkits { manifest: manifest.path.clone() });
    }
    Ok((out, notes))
}

/// [`local_toolkit`] for a toolkit a user named where a version would do too (`diff --from`,
/// `--add-toolkit`): a path that does not exist may be a version written wrong (`12.x`), and
/// the error says what a version looks like.
pub fn named_toolkit(manifest: &Manifest, path: &Path) -> Result<ToolkitHeaders, Error> {
    match local_toolkit(manifest, path) {
        Err(Error::ToolkitNotFound { path: p, detail }) if !path.exists() => Err(Error::ToolkitNotFound {
            path: p,
            detail: format!("{detail} (and it is not a toolkit version of the form major.minor, such as 12.9)"),
        }),
        other => other,
    }
}

/// A toolkit on this machine (a root, its include/ folder or a pip layout), its version read
/// off its cuda.h.
pub fn local_toolkit(manifest: &Manifest, path: &Path) -> Result<ToolkitHeaders, Error> {
    let include = locate::locate_toolkit(path)?;
    let version = locate::read_cuda_version(&include)?;
    let source = "a local toolkit".to_owned();
    // A toolkit folder holding the Windows typedef headers too (a Windows install, or a
    // fixture) feeds both translation units.
    let windows_rows = manifest.headers.iter().filter(|h| h.target == Platform::Windows);
    let has_windows =
        windows_rows.clone().count() > 0 && windows_rows.clone().all(|h| include.join(&h.typedefs).is_file());
    let windows_include_dirs = if has_windows { vec![include.clone()] } else { Vec::new() };
    Ok(ToolkitHeaders {
        version,
        include_dirs: vec![include.clone()],
        windows_include_dirs,
        origin: Origin::Local(include),
        source,
    })
}

/// A local toolkit of a pinned version, compared with the pinned packages where they are at
/// hand: the toolkit to read, and a note for the summary. Headers identical to the pin's give
/// the pin itself, so that the same input gives the same tree (registry.json names the pin's
/// packages, not "a local toolkit"). A local Linux toolkit has no Windows headers: those still
/// come from the pin.
fn compare_with_pin(
    manifest: &Manifest,
    fetcher: &Fetcher,
    pin: &ToolkitPin,
    mut local: ToolkitHeaders,
) -> (ToolkitHeaders, String) {
    let Origin::Local(path) = local.origin.clone() else { return (local, String::new()) };
    let pinned = match fetcher.toolkit(pin) {
        Ok(p) => p,
        Err(e) => {
            let note =
                format!("CUDA {} from {} replaces the pinned package (not compared: {e})", pin.version, path.display());
            return (local, note);
        }
    };
    local.windows_include_dirs = pinned.windows_include_dirs.clone();
    let mut differ = Vec::new();
    for h in manifest.headers.iter().filter(|h| h.target == Platform::Linux) {
        for file in [&h.api, &h.typedefs] {
            let read = |dirs: &[PathBuf]| dirs.iter().find_map(|d| std::fs::read(d.join(file)).ok());
            if read(&local.include_dirs) != read(&pinned.include_dirs) {
                differ.push(file.as_str());
            }
        }
    }
    if differ.is_empty() {
        (
            pinned,
            format!(
                "CUDA {} at {} has the pinned headers, byte for byte: read as the pin",
                pin.version,
                path.display()
            ),
        )
    } else {
        let note = format!(
            "CUDA {} from {} replaces the pinned package; these headers differ from it: {}",
            pin.version,
            path.display(),
            differ.join(", ")
        );
        (local, note)
    }
}

/// What clang (or [`crate::unit_cache`]) gave for one toolkit: bindgen's output per target.
struct Units {
    outputs: Vec<(Platform, BindgenOutput)>,
    /// The C-name runs, Linux unit first: (per-thread mode, output).
    c_names: Vec<(bool, BindgenOutput)>,
    warnings: Vec<String>,
    /// Whether clang ran (not every unit came from the cache).
    ran_clang: bool,
}

/// What one toolkit gives the model, and its units' types (the emitter wants the newest).
struct Parsed {
    input: ToolkitInput,
    types: Vec<(Platform, syn::File, BTreeMap<String, SourceLine>)>,
    warnings: Vec<String>,
}

/// The newest toolkit's Linux types and the newest Windows types, as [`Built`] keeps them.
type NewestTypes = Option<(syn::File, Option<UnitTypes>)>;

/// bindgen (or its cached output) over every toolkit, a few at a time on worker threads, and
/// the parser over each toolkit's output on this thread as it arrives: syn's trees are not
/// `Send`, so bindgen's output is read once, here, and only the newest types are kept.
fn parse_all(
    headers: &[HeaderSpec],
    toolkits: &[ToolkitHeaders],
    cache: &Path,
    progress: Option<&fetch::Progress>,
) -> Result<(Vec<Parsed>, NewestTypes), Error> {
    let standins = crate::standins::standins_in(cache)?;
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<Result<Parsed, Error>>> = (0..toolkits.len()).map(|_| None).collect();
    // The newest of each target so far.
    let mut newest: [Option<(ToolkitVersion, UnitTypes)>; 2] = [None, None];
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..workers.min(toolkits.len()) {
            let tx = tx.clone();
            let (next, standins) = (&next, standins.path());
            s.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(tk) = toolkits.get(i) else { break };
                let start = std::time::Instant::now();
                let units = run_units(headers, tk, standins, cache);
                if tx.send((i, units, start.elapsed())).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (done, (i, units, took)) in rx.into_iter().enumerate() {
            let tk = &toolkits[i];
            if let (Some(progress), Ok(Units { ran_clang: true, .. })) = (progress, &units) {
                progress.say(&format!(
                    "clang [{}/{}] read CUDA {} in {:.1} s",
                    done + 1,
                    toolkits.len(),
                    tk.version,
                    took.as_secs_f64()
                ));
            }
            let mut parsed = units.and_then(|u| parse_toolkit(headers, tk, u));
            if let Ok(p) = &mut parsed {
                for (target, types, locations) in std::mem::take(&mut p.types) {
                    let slot = &mut newest[target as usize];
                    if slot.as_ref().is_none_or(|(v, _)| *v < tk.version) {
                        *slot = Some((tk.version, UnitTypes { types, locations }));
                    }
                }
            }
            results[i] = Some(parsed);
        }
    });
    let parsed = results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                Err(Error::Bindgen {
                    toolkit: ToolkitVersion { major: 0, minor: 0 },
                    message: "worker thread died".into(),
                })
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let [linux, windows] = newest;
    let newest = linux.map(|(_, unit)| (unit.types, windows.map(|(_, unit)| unit)));
    Ok((parsed, newest))
}

/// Both translation units of one toolkit through bindgen (or the unit cache).
fn run_units(headers: &[HeaderSpec], tk: &ToolkitHeaders, standins: &Path, cache: &Path) -> Result<Units, Error> {
    let mut units = Units { outputs: Vec::new(), c_names: Vec::new(), warnings: Vec::new(), ran_clang: false };
    let first_api = headers.first().map_or("cuda.h", |h| h.api.as_str());
    for target in [Platform::Linux, Platform::Windows] {
        let rows: Vec<&HeaderSpec> = headers.iter().filter(|h| h.target == target).collect();
        if rows.is_empty() {
            continue;
        }
        let dirs = tk.include_dirs_for(target);
        if dirs.is_empty() {
            let names: Vec<&str> = rows.iter().map(|h| h.typedefs.as_str()).collect();
            units.warnings.push(format!(
                "CUDA {}: no Windows headers for this toolkit; not read: {}",
                tk.version,
                names.join(", ")
            ));
            continue;
        }
        let unit = clang::Unit { toolkit: tk.version, target, first_api, headers: rows, include_dirs: dirs };
        let (out, source) = crate::unit_cache::run_bindgen(&unit, standins, cache)?;
        units.ran_clang |= source == crate::unit_cache::Source::Bindgen;
        units.outputs.push((target, out));
        let candidates = c_name_candidates(&unit);
        for per_thread in [false, true] {
            let (out, source) = crate::unit_cache::run_c_names(&unit, per_thread, &candidates, standins, cache)?;
            units.ran_clang |= source == crate::unit_cache::Source::Bindgen;
            units.c_names.push((per_thread, out));
        }
    }
    Ok(units)
}

/// One C program of the C-name runs, for checking their answers another way: each pinned
/// toolkit, target and stream mode, with the wrapper that includes its headers, clang's
/// arguments and the candidate names.
#[derive(Debug, Clone)]
pub struct CProgram {
    pub toolkit: ToolkitVersion,
    pub target: Platform,
    pub per_thread: bool,
    pub wrapper: String,
    pub args: Vec<String>,
    pub candidates: Vec<String>,
}

/// Every pinned toolkit's [`CProgram`]s (headers from the cache, fetched if missing), and the
/// stand-in folder their arguments name, which lives as long as the returned guard.
pub fn c_programs(manifest: &Path, cache: &Path) -> Result<(crate::scratch::Scratch, Vec<CProgram>), Error> {
    let manifest = Manifest::load(manifest)?;
    let fetcher = Fetcher::new(cache.to_owned(), &manifest);
    let standins = crate::standins::standins_in(cache)?;
    let first_api = manifest.headers.first().map_or("cuda.h", |h| h.api.as_str());
    let mut out = Vec::new();
    for pin in &manifest.toolkits {
        let tk = fetcher.toolkit(pin)?;
        for target in [Platform::Linux, Platform::Windows] {
            let rows: Vec<&HeaderSpec> = manifest.headers.iter().filter(|h| h.target == target).collect();
            let dirs = tk.include_dirs_for(target);
            if rows.is_empty() || dirs.is_empty() {
                continue;
            }
            let unit = clang::Unit { toolkit: tk.version, target, first_api, headers: rows, include_dirs: dirs };
            let candidates = c_name_candidates(&unit);
            for per_thread in [false, true] {
                out.push(CProgram {
                    toolkit: tk.version,
                    target,
                    per_thread,
                    wrapper: clang::wrapper_source(first_api, &unit.headers),
                    args: clang::c_program_args(&unit, per_thread, standins.path()),
                    candidates: candidates.clone(),
                });
            }
        }
    }
    Ok((standins, out))
}

/// The C-name candidates of a unit: read from the text of its API headers (cuda.h first).
fn c_name_candidates(unit: &clang::Unit<'_>) -> Vec<String> {
    let apis = std::iter::once(unit.first_api).chain(unit.headers.iter().map(|h| h.api.as_str()));
    let mut all = std::collections::BTreeSet::new();
    for api in apis {
        let Some(path) = unit.include_dirs.iter().map(|d| d.join(api)).find(|p| p.is_file()) else { continue };
        // Unreadable text leaves no candidates; bindgen, reading the same file, says what failed.
        let text = std::fs::read(&path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
        all.extend(header_text::c_name_candidates(&text));
    }
    all.into_iter().collect()
}

/// One toolkit's units, read and merged into its model input.
fn parse_toolkit(headers: &[HeaderSpec], tk: &ToolkitHeaders, units: Units) -> Result<Parsed, Error> {
    let mut acc = Accumulated { warnings: units.warnings, ..Accumulated::default() };
    let mut types = Vec::new();
    for (target, out) in units.outputs {
        let rows: Vec<&HeaderSpec> = headers.iter().filter(|h| h.target == target).collect();
        let parsed = acc.add_unit(tk.version, &rows, tk.include_dirs_for(target), &out)?;
        types.push((target, parsed, out.locations));
    }
    let mut c_names: BTreeMap<String, crate::model::CNameExports> = BTreeMap::new();
    let mut unnamed = std::collections::BTreeSet::new();
    for (per_thread, out) in &units.c_names {
        let read =
            parse::parse_c_names(&out.rust).map_err(|message| Error::BindgenOutput { toolkit: tk.version, message })?;
        for (c, exported) in read.names {
            let slot = c_names.entry(c).or_default();
            let mode = if *per_thread { &mut slot.per_thread } else { &mut slot.default };
            mode.get_or_insert(exported);
        }
        unnamed.extend(read.unnamed.into_iter().map(|n| (*per_thread, n)));
    }
    for (per_thread, name) in unnamed {
        acc.warnings.push(format!(
            "CUDA {}: {name} is declared{} but no C name expands to it (C reaches it another way, such as \
             cuda.h's inline cuGetProcAddress_v2_ptsz wrapper): it has no C-name function in that mode",
            tk.version,
            if per_thread { " with CUDA_API_PER_THREAD_DEFAULT_STREAM" } else { "" }
        ));
    }
    let input = ToolkitInput {
        version: tk.version,
        source: tk.source.clone(),
        declarations: acc.declarations,
        aliases: acc.aliases,
        counts: acc.counts,
        c_names,
    };
    Ok(Parsed { input, types, warnings: acc.warnings })
}

/// One toolkit's declarations, gathered over its translation units.
#[derive(Default)]
struct Accumulated {
    declarations: Vec<Declaration>,
    aliases: BTreeMap<String, header_text::AliasTarget>,
    counts: BTreeMap<String, HeaderCount>,
    warnings: Vec<String>,
}

impl Accumulated {
    /// Adds one unit's declarations; returns its types (everything but the `PFN_` typedefs).
    fn add_unit(
        &mut self,
        version: ToolkitVersion,
        rows: &[&HeaderSpec],
        dirs: &[PathBuf],
        out: &BindgenOutput,
    ) -> Result<syn::File, Error> {
        let parsed = parse::parse_bindgen(&out.rust, &out.locations)
            .map_err(|message| Error::BindgenOutput { toolkit: version, message })?;
        if let Some((name, loc, why)) = parsed.malformed.first() {
            let more = match parsed.malformed.len() - 1 {
                0 => String::new(),
                n => format!(
                    " (and {n} more: {})",
                    parsed.malformed[1..].iter().map(|m| m.0.as_str()).collect::<Vec<_>>().join(", ")
                ),
            };
            let message = format!("CUDA {version}: typedef {name} is malformed: {why}{more}");
            return Err(match loc {
                Some(l) => Error::HeaderContents { path: l.file.clone(), line: l.line, message },
                None => Error::BindgenOutput { toolkit: version, message },
            });
        }
        let find = |file: &str| dirs.iter().map(|d| d.join(file)).find(|p| p.is_file()).unwrap_or_default();
        let mut names: BTreeSet<&str> = parsed.typedefs.iter().map(|t| t.pfn.as_str()).collect();
        names.extend(parsed.unversioned.iter().chain(&parsed.unnameable).map(|(n, _)| n.as_str()));
        let symbols: BTreeSet<&str> = parsed.typedefs.iter().map(|t| t.symbol.as_str()).collect();
        // Per typedef header: the lines under the INTERNAL guard, and its alias macros.
        let mut guards: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
        for h in rows {
            let path = find(&h.typedefs);
            let bytes = std::fs::read(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
            let text = String::from_utf8_lossy(&bytes);
            guards.insert(h.typedefs.as_str(), header_text::internal_guard_lines(&text));
            let found = header_text::alias_macros(&text);
            let (ok, broken) = header_text::resolve_aliases(&found, |n| names.contains(n), |s| symbols.contains(s));
            let count = self.counts.entry(h.name.clone()).or_default();
            count.aliases = found.len();
            count.broken_aliases = broken.len();
            for b in broken {
                self.warnings.push(format!(
                    "CUDA {version}: alias {} expands to `{}`: {}\n  --> {}:{}",
                    b.name,
                    b.expansion,
                    b.reason,
                    path.display(),
                    b.line
                ));
            }
            self.aliases.extend(ok);
        }
        let file_of = |loc: &Option<crate::clang::SourceLine>| -> Option<(String, usize)> {
            let loc = loc.as_ref()?;
            Some((loc.file.file_name()?.to_string_lossy().into_owned(), loc.line))
        };
        for t in parsed.typedefs {
            let Some((file, line)) = file_of(&t.location) else {
                return Err(Error::BindgenOutput {
                    toolkit: version,
                    message: format!("no source location for {}", t.pfn),
                });
            };
            let Some(row) = rows.iter().find(|h| h.typedefs == file || h.api == file) else {
                self.warnings.push(format!(
                    "CUDA {version}: {} is declared in {file}, which is no manifest header; skipped",
                    t.pfn
                ));
                continue;
            };
            self.counts.entry(row.name.clone()).or_default().typedefs += 1;
            // The same typedef seen by both translation units (cudaGLTypedefs.h): one entry
            // on both platforms, kept under the row that saw it first.
            if let Some(d) = self.declarations.iter_mut().find(|d| d.pfn == t.pfn) {
                d.platforms.extend(row.platforms());
                continue;
            }
            let legacy = guards.get(file.as_str()).is_some_and(|g| header_text::in_ranges(g, line));
            self.declarations.push(Declaration {
                pfn: t.pfn,
                symbol: t.symbol,
                version: t.version,
                variant: t.variant,
                header: row.typedefs.clone(),
                module: row.name.clone(),
                platforms: row.platforms().into_iter().collect(),
                legacy,
                line,
                params: t.params,
                returns: t.returns,
                layouts: t.layouts,
            });
        }
        let skipped = parsed.unversioned.iter().map(|u| (u, "has no `_v<version>` in its name")).chain(
            parsed
                .unnameable
                .iter()
                .map(|u| (u, "has a symbol that is a Rust keyword, which no generated type can be named after")),
        );
        for ((name, loc), why) in skipped {
            let at = file_of(loc).map(|(f, l)| format!("{f}:{l}")).unwrap_or_default();
            self.warnings.push(format!("CUDA {version}: typedef {name} {why}; skipped ({at})"));
            if let Some(row) = file_of(loc).and_then(|(f, _)| rows.iter().find(|h| h.typedefs == f || h.api == f)) {
                self.counts.entry(row.name.clone()).or_default().unversioned += 1;
            }
        }
        let empty: Vec<String> = rows
            .iter()
            .filter(|h| self.counts.get(&h.name).is_none_or(|c| c.typedefs == 0))
            .map(|h| {
                format!(
                    "  CUDA {version}: {} has no PFN_<symbol>_v<version> typedef (empty or truncated?)\n  --> {}",
                    h.typedefs,
                    find(&h.typedefs).display()
                )
            })
            .collect();
        if !empty.is_empty() {
            return Err(Error::NoTypedefs { count: empty.len(), details: empty.join("\n") });
        }
        Ok(parsed.types)
    }
}

/// The Windows unit's own types (D3D opaque interfaces, `HGPUNV`, the D3D enums), assigned
/// to the module of the header or stand-in that declares them. Types the Linux unit already
/// has (the CUDA ones, cudaGL.h's) are dropped.
fn split_by_module(
    headers: &[HeaderSpec],
    types: syn::File,
    locations: &BTreeMap<String, crate::clang::SourceLine>,
    linux: &syn::File,
) -> BTreeMap<String, Vec<syn::Item>> {
    let known: BTreeSet<String> = linux.items.iter().filter_map(crate::syntax::item_name).collect();
    let rows: Vec<&HeaderSpec> = headers.iter().filter(|h| h.target == Platform::Windows).collect();
    // Every module whose header or stand-in declares the item: a shared stand-in (dxgi.h)
    // gives each module its own copy of the opaque type.
    let modules_of = |name: &str| -> Vec<String> {
        let Some(loc) = locations.get(name) else { return vec![] };
        let file = loc.file.to_string_lossy().replace('\\', "/");
        rows.iter()
            .filter(|h| {
                [&h.api, &h.typedefs].iter().any(|f| file.ends_with(&format!("/{f}")))
                    || h.standins.iter().any(|s| file.ends_with(&format!("/{s}")))
            })
            .map(|h| h.name.clone())
            .collect()
    };
    let mut out: BTreeMap<String, Vec<syn::Item>> = BTreeMap::new();
    let mut last: Vec<String> = vec![];
    for item in types.items {
        let name = crate::syntax::item_name(&item);
        let modules = match &name {
            Some(n) if known.contains(n.trim_start_matches("impl ")) => {
                last.clear();
                continue;
            }
            // Layout tests (`const _`) follow the type they test, impls their type.
            None => last.clone(),
            Some(n) => {
                let m = modules_of(n.trim_start_matches("impl "));
                if m.is_empty() {
                    last.clone()
                } else {
                    m
                }
            }
        };
        last = modules.clone();
        for m in modules {
            out.entry(m).or_default().push(item.clone());
        }
    }
    // Two stand-ins of one module may both declare a type (`UINT`): it keeps one.
    for items in out.values_mut() {
        let mut seen = BTreeSet::new();
        items.retain(|i| crate::syntax::item_name(i).is_none_or(|n| seen.insert(n)));
    }
    out
}

fn summary_lines(model: &Model) -> Vec<String> {
    model
        .toolkits
        .iter()
        .map(|t| {
            let entries = model.entries.values().filter(|e| e.toolkits.contains(&t.version)).count();
            let headers: Vec<String> = t
                .headers
                .iter()
                .map(|(h, c)| {
                    format!("{h}: {} typedefs, {} aliases ({} broken)", c.typedefs, c.aliases, c.broken_aliases)
                })
                .collect();
            format!("CUDA {:<5} {} -> {entries} entries", t.version, headers.join("; "))
        })
        .collect()
}
