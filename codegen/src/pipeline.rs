//! The whole job, as a picture: fetch (or locate) the headers, read each toolkit, build the
//! model, emit the crate, write it, report. Each verb is a room of its own ([`fetch`],
//! [`toolkits`], [`read`], [`Model`], [`emit`], [`write`], [`report`]); this file only joins
//! them.
//!
//! Architecture Invariant: nothing is written before the whole crate is rendered in memory
//! ([`render`]), and only [`crate::write::sync_tree`] writes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::add_toolkit::journal;
use crate::emit::{self, EmitOptions};
use crate::error::Warning;
use crate::fetch::{self, Fetcher, ToolkitHeaders};
use crate::manifest::{HeaderSpec, Manifest, ToolkitPin};
use crate::model::{CrateTypes, Model};
use crate::output_folder::{check_output_folder, write_crate};
use crate::platform::Platform;
use crate::read::{self, clang, UnitTypes};
use crate::report::{self, Report};
use crate::toolkits;
use crate::version::ToolkitVersion;
use crate::write::{Mode, WriteReport};
use crate::{prereq, Error};

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

/// `generate`: check, render, write.
pub fn generate(cfg: &Config) -> Result<Report, Error> {
    generate_checked(cfg, check_before_work(cfg)?)
}

/// [`generate`] after its checks (which a caller may have run itself, to act between them
/// and the work: the command line prints the checks' notes first).
pub fn generate_checked(cfg: &Config, checked: Checked) -> Result<Report, Error> {
    let (files, mut report) = render(cfg, checked.manifest())?;
    report.notes.splice(0..0, checked.notes);
    report.write = write_crate(&cfg.out_dir, &files, cfg.mode, &cfg.emit.command)?;
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
    let (toolkits, notes) = toolkits::collect(manifest, &fetcher, &cfg.local_toolkits)?;
    let Built { model, libclang, toolkit_lines, warnings, types } = build_model(manifest, &fetcher, &toolkits)?;
    let types = types.ok_or_else(|| Error::NoToolkits { manifest: manifest.path.clone() })?;
    let modules: Vec<emit::ModuleSpec> = manifest.headers.iter().map(HeaderSpec::module_spec).collect();
    let opts = EmitOptions { manifest: manifest_name(&manifest.path)?, ..cfg.emit.clone() };
    let files = emit::emit(emit::Input { model: &model, types, modules: &modules, opts: &opts })?;
    let write = WriteReport::default();
    Ok((files, Report { model, libclang, write, toolkit_lines, notes, warnings }))
}

/// What is checked before any work, here only: the crate name and the command quoted in
/// every file's header; then, where the run may write, a killed `--add-toolkit` made whole
/// ([`journal::recover`]: it may change the manifest, so it comes before the manifest is
/// read); the manifest, read once; and, where the run may write, that the output folder holds
/// nothing but the generator's own files ([`check_output_folder`]).
pub fn check_before_work(cfg: &Config) -> Result<Checked, Error> {
    crate::crate_name::check(&cfg.emit.crate_name)?;
    crate::input::check_header_text("--regenerate-command", &cfg.emit.command)?;
    manifest_name(&cfg.manifest)?;
    let mut notes = Vec::new();
    if cfg.mode == Mode::Write {
        notes.extend(journal::recover(&cfg.manifest)?);
    }
    let manifest = Manifest::load(&cfg.manifest)?;
    if cfg.mode == Mode::Write {
        check_output_folder(&cfg.out_dir, &manifest, &cfg.cache_dir)?;
    }
    Ok(Checked { manifest, notes })
}

/// A run's inputs that passed [`check_before_work`], the only way to make one: the manifest,
/// and what the checks did that the user should hear of (a killed `--add-toolkit` made whole).
#[derive(Debug)]
pub struct Checked {
    manifest: Manifest,
    pub notes: Vec<String>,
}

impl Checked {
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
}

/// The manifest's file name, as every generated file's header names its input (the name only:
/// a path would make the output depend on where the manifest was given from), refused with a
/// control character as `--regenerate-command` is.
fn manifest_name(path: &std::path::Path) -> Result<String, Error> {
    let name = path.file_name().map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy()).into_owned();
    crate::input::check_header_text("the manifest's file name", &name)?;
    Ok(name)
}

/// A model of some toolkits and what building it found; nothing emitted or written.
#[derive(Debug)]
pub struct Built {
    pub model: Model,
    pub libclang: String,
    /// Per toolkit: one line of counts.
    pub toolkit_lines: Vec<String>,
    /// NVIDIA header problems worth a look (broken aliases, unversioned typedefs).
    pub warnings: Vec<Warning>,
    /// The crate's types: the newest Linux unit's (with the newest toolkit's result-code
    /// docs) and the newest Windows unit's own (the newest toolkit that has Windows headers:
    /// a local Linux toolkit newer than every pin has none). `None` without toolkits.
    pub types: Option<CrateTypes>,
}

/// Read every toolkit, then [`Model::build`] over all of them. Used by [`generate`] and by
/// `diff`.
pub fn build_model(manifest: &Manifest, fetcher: &Fetcher, toolkits: &[ToolkitHeaders]) -> Result<Built, Error> {
    if toolkits.is_empty() {
        return Err(Error::NoToolkits { manifest: manifest.path.clone() });
    }
    let libclang = clang::ensure_libclang(manifest, fetcher)?;
    // Per toolkit, in completion order: put back in the toolkits' order below.
    let mut read = Vec::new();
    // Only the newest unit of each target is kept: the crate's types come from it.
    let mut newest: BTreeMap<Platform, (ToolkitVersion, UnitTypes)> = BTreeMap::new();
    let mut newest_docs = (ToolkitVersion { major: 0, minor: 0 }, Default::default());
    let mut comments: Vec<(ToolkitVersion, crate::model::CDocs)> = Vec::new();
    read::read_toolkits(&manifest.headers, toolkits, &fetcher.cache, fetcher.progress.as_ref(), |tk| {
        let version = tk.input.version;
        for unit in tk.units {
            if newest.get(&unit.target).is_none_or(|(v, _)| *v < version) {
                newest.insert(unit.target, (version, unit));
            }
        }
        if version >= newest_docs.0 {
            newest_docs = (version, tk.result_docs);
        }
        comments.push((version, tk.docs));
        read.push((tk.input, tk.warnings));
    })?;
    // In the toolkits' order, as they were given, whatever order the workers finished in.
    read.sort_by_key(|(input, _)| toolkits.iter().position(|t| t.version == input.version));
    let (inputs, warnings): (Vec<_>, Vec<_>) = read.into_iter().unzip();
    let mut warnings: Vec<Warning> = warnings.into_iter().flatten().collect();
    let mut model = Model::build(inputs);
    model.restrict_arch(manifest.arch_only.iter().map(|a| (a.symbol.as_str(), a.arch.as_str())));
    model.apply_driver_floors(
        manifest.driver_floors.iter().filter_map(|f| Some((f.pfn.as_str(), f.version()?, f.evidence.as_str()))),
    );
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
    let toolkit_lines = report::toolkit_lines(&model);
    // Newest first, each item documented by the newest toolkit that declares it.
    comments.sort_by_key(|c| std::cmp::Reverse(c.0));
    let docs = comments.into_iter().fold(crate::model::CDocs::default(), |mut acc, (_, d)| {
        acc.fill_from(d);
        acc
    });
    let (linux, windows) = (newest.remove(&Platform::Linux), newest.remove(&Platform::Windows));
    let types = linux
        .map(|(_, linux)| read::crate_types(&manifest.headers, linux, windows.map(|(_, w)| w), newest_docs.1, docs));
    Ok(Built { model, libclang, toolkit_lines, warnings, types })
}
