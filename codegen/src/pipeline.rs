//! The whole job: fetch or locate headers, run bindgen, parse, merge, emit, write.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::clang::{self, BindgenOutput};
use crate::emit::{self, EmitOptions};
use crate::fetch::{self, Fetcher, Origin, ToolkitHeaders};
use crate::macros;
use crate::manifest::{HeaderSpec, Manifest, ToolkitVersion};
use crate::model::{Declaration, HeaderCount, Model, ToolkitInput};
use crate::parse;
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
    /// The run's summary, as printed by the command-line tools: warnings first, then per
    /// toolkit counts, notes, ABI drift and what was written.
    pub fn summary(&self, mode: Mode, elapsed: std::time::Duration) -> String {
        let mut s = String::new();
        for w in &self.warnings {
            s.push_str(&format!("warning: {w}\n"));
        }
        s.push_str(&format!("{}\n", self.libclang));
        for line in &self.toolkit_lines {
            s.push_str(&format!("{line}\n"));
        }
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        for d in &self.model.drift {
            let param = d.param.as_deref().unwrap_or("parameter list");
            s.push_str(&format!("ABI drift: {} {} -> {}: {param}: {} -> {}\n", d.pfn, d.from, d.to, d.before, d.after));
        }
        s.push_str(&format!(
            "{} entries of {} symbols from {} toolkits\n",
            self.model.entries.len(),
            self.model.symbols().len(),
            self.model.toolkits.len()
        ));
        let secs = elapsed.as_secs_f64();
        match mode {
            Mode::Check => s.push_str(&format!("up to date ({secs:.1} s)\n")),
            Mode::Write => s.push_str(&format!(
                "{} files written, {} removed, {} unchanged ({secs:.1} s)\n",
                self.write.written.len(),
                self.write.removed.len(),
                self.write.unchanged
            )),
        }
        s
    }
}

pub fn generate(cfg: &Config) -> Result<Report, Error> {
    let name = &cfg.emit.crate_name;
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(Error::BadCrateName { name: name.clone() });
    }
    let manifest = Manifest::load(&cfg.manifest)?;
    let mut fetcher = Fetcher::new(cfg.cache_dir.clone(), &manifest);
    fetcher.offline = cfg.offline;
    let (toolkits, notes) = collect_toolkits(&manifest, &fetcher, &cfg.local_toolkits)?;
    let built = build_model(&manifest, &fetcher, &toolkits)?;
    let types = built.newest_types()?;
    let files = emit::emit(&built.model, &types, &cfg.emit)?;
    let write = write::sync_tree(&cfg.out_dir, &files, cfg.mode, &cfg.emit.command)?;
    let Built { model, libclang, toolkit_lines, warnings, .. } = built;
    Ok(Report { model, libclang, write, toolkit_lines, notes, warnings })
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
    /// bindgen's output for the newest toolkit: the CUDA types the emitter passes through.
    newest_rust: String,
}

impl Built {
    /// The newest toolkit's CUDA types, less the `PFN_` typedefs.
    pub fn newest_types(&self) -> Result<syn::File, Error> {
        let newest = self.model.newest_toolkit().unwrap_or(ToolkitVersion { major: 0, minor: 0 });
        parse::parse_bindgen(&self.newest_rust, &BTreeMap::new())
            .map(|p| p.types)
            .map_err(|message| Error::BindgenOutput { toolkit: newest, message })
    }
}

/// The per-toolkit steps and the merge: bindgen and the parser over each toolkit's headers,
/// then [`Model::build`] over all of them. Used by [`generate`] and by `diff`.
pub fn build_model(manifest: &Manifest, fetcher: &Fetcher, toolkits: &[ToolkitHeaders]) -> Result<Built, Error> {
    if toolkits.is_empty() {
        return Err(Error::NoToolkits);
    }
    let libclang = clang::ensure_libclang(manifest, fetcher)?;
    let mut parsed = parse_all(&manifest.headers, toolkits)?;
    // The newest toolkit's types are the ones emitted, whatever order the toolkits came in.
    parsed.sort_by_key(|(input, _, _)| input.version);
    let mut warnings = Vec::new();
    let mut inputs = Vec::new();
    let mut newest_rust = String::new();
    for (input, rust, w) in parsed {
        warnings.extend(w);
        newest_rust = rust;
        inputs.push(input);
    }
    let model = Model::build(inputs);
    warnings.extend(model.warnings.iter().cloned());
    let toolkit_lines = summary_lines(&model);
    Ok(Built { model, libclang, toolkit_lines, warnings, newest_rust })
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
        let tk = local_toolkit(path)?;
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
                notes.push(compare_with_pin(manifest, fetcher, pin, &l));
                out.push(l);
            }
            None => out.push(fetcher.toolkit(pin)?),
        }
    }
    for (version, l) in locals {
        if let Origin::Local(p) = &l.origin {
            notes.push(format!("CUDA {version} from {} is not pinned in the manifest: added to the inputs", p.display()));
        }
        out.push(l);
    }
    out.sort_by_key(|t| t.version);
    if out.is_empty() {
        return Err(Error::NoToolkits);
    }
    Ok((out, notes))
}

/// A toolkit on this machine (a root, its include/ folder or a pip layout), its version read
/// off its cuda.h.
pub fn local_toolkit(path: &Path) -> Result<ToolkitHeaders, Error> {
    let include = fetch::locate_toolkit(path)?;
    let version = fetch::read_cuda_version(&include)?;
    let source = "a local toolkit".to_owned();
    Ok(ToolkitHeaders { version, include_dirs: vec![include.clone()], origin: Origin::Local(include), source })
}

/// Compares a local toolkit's typedef headers with the pinned package's, where it is at hand.
fn compare_with_pin(manifest: &Manifest, fetcher: &Fetcher, pin: &crate::manifest::ToolkitPin, local: &ToolkitHeaders) -> String {
    let Origin::Local(path) = &local.origin else { return String::new() };
    let pinned = match fetcher.toolkit(pin) {
        Ok(p) => p,
        Err(e) => {
            return format!("CUDA {} from {} replaces the pinned package (not compared: {e})", pin.version, path.display())
        }
    };
    let mut differ = Vec::new();
    for h in &manifest.headers {
        for file in [&h.api, &h.typedefs] {
            let read = |dirs: &[PathBuf]| dirs.iter().find_map(|d| std::fs::read(d.join(file)).ok());
            if read(&local.include_dirs) != read(&pinned.include_dirs) {
                differ.push(file.as_str());
            }
        }
    }
    if differ.is_empty() {
        format!("CUDA {} from {} replaces the pinned package; its headers are identical", pin.version, path.display())
    } else {
        format!(
            "CUDA {} from {} replaces the pinned package; these headers differ from it: {}",
            pin.version,
            path.display(),
            differ.join(", ")
        )
    }
}

/// A toolkit's input to the model, bindgen's raw output (for the types), and warnings.
type Parsed = (ToolkitInput, String, Vec<String>);

/// bindgen and the parser over every toolkit, a few at a time.
fn parse_all(headers: &[HeaderSpec], toolkits: &[ToolkitHeaders]) -> Result<Vec<Parsed>, Error> {
    let standins = tempfile::Builder::new()
        .prefix("cuda-sys-gen-libc-")
        .tempdir()
        .map_err(|source| Error::Io { path: std::env::temp_dir(), source })?;
    clang::write_standins(standins.path())?;
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<Result<Parsed, Error>>> = (0..toolkits.len()).map(|_| None).collect();
    let slots = std::sync::Mutex::new(&mut results);
    std::thread::scope(|s| {
        for _ in 0..workers.min(toolkits.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(tk) = toolkits.get(i) else { break };
                let r = parse_toolkit(headers, tk, standins.path());
                slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::Bindgen { toolkit: ToolkitVersion { major: 0, minor: 0 }, message: "worker thread died".into() })))
        .collect()
}

fn parse_toolkit(headers: &[HeaderSpec], tk: &ToolkitHeaders, standins: &Path) -> Result<Parsed, Error> {
    let BindgenOutput { rust, locations } = clang::run_bindgen(headers, tk, standins)?;
    // syn's trees are not Send: the types are read again, once, for the newest toolkit only.
    let parsed = parse::parse_bindgen(&rust, &locations)
        .map_err(|message| Error::BindgenOutput { toolkit: tk.version, message })?;
    let mut warnings = Vec::new();
    let mut counts: BTreeMap<String, HeaderCount> = BTreeMap::new();
    let mut aliases = BTreeMap::new();
    // Per typedef header: its text's guard ranges and alias macros.
    let mut guards: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
    let mut names: std::collections::BTreeSet<&str> = parsed.typedefs.iter().map(|t| t.pfn.as_str()).collect();
    for (n, _) in &parsed.unversioned {
        names.insert(n);
    }
    let symbols: std::collections::BTreeSet<&str> = parsed.typedefs.iter().map(|t| t.symbol.as_str()).collect();
    for h in headers {
        let path = tk.include_dirs.iter().map(|d| d.join(&h.typedefs)).find(|p| p.is_file()).unwrap_or_default();
        let bytes = std::fs::read(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
        let text = String::from_utf8_lossy(&bytes);
        guards.insert(h.typedefs.as_str(), macros::internal_guard_lines(&text));
        let found = macros::alias_macros(&text);
        let (ok, broken) = macros::resolve_aliases(&found, |n| names.contains(n), |s| symbols.contains(s));
        let count = counts.entry(h.typedefs.clone()).or_default();
        count.aliases = found.len();
        count.broken_aliases = broken.len();
        for b in broken {
            warnings.push(format!(
                "CUDA {}: alias {} expands to `{}`: {}\n  --> {}:{}",
                tk.version,
                b.name,
                b.expansion,
                b.reason,
                path.display(),
                b.line
            ));
        }
        aliases.extend(ok);
    }
    let header_of = |loc: &Option<crate::clang::SourceLine>| -> Option<(String, usize)> {
        let loc = loc.as_ref()?;
        let file = loc.file.file_name()?.to_string_lossy().into_owned();
        Some((file, loc.line))
    };
    let mut declarations = Vec::new();
    for t in parsed.typedefs {
        let Some((file, line)) = header_of(&t.location) else {
            return Err(Error::BindgenOutput { toolkit: tk.version, message: format!("no source location for {}", t.pfn) });
        };
        let header = headers
            .iter()
            .find(|h| h.typedefs == file || h.api == file)
            .map(|h| h.typedefs.clone())
            .unwrap_or_else(|| file.clone());
        let legacy = guards.get(file.as_str()).is_some_and(|g| macros::in_ranges(g, line));
        counts.entry(header.clone()).or_default().typedefs += 1;
        declarations.push(Declaration {
            pfn: t.pfn,
            symbol: t.symbol,
            version: t.version,
            variant: t.variant,
            header,
            legacy,
            line,
            params: t.params,
            returns: t.returns,
            layouts: t.layouts,
        });
    }
    for (name, loc) in &parsed.unversioned {
        let at = header_of(loc).map(|(f, l)| format!("{f}:{l}")).unwrap_or_default();
        warnings.push(format!("CUDA {}: typedef {name} has no `_v<version>` in its name; skipped ({at})", tk.version));
        if let Some((f, _)) = header_of(loc) {
            counts.entry(f).or_default().unversioned += 1;
        }
    }
    let empty: Vec<String> = headers
        .iter()
        .filter(|h| counts.get(&h.typedefs).is_none_or(|c| c.typedefs == 0))
        .map(|h| {
            let path = tk.include_dirs.iter().map(|d| d.join(&h.typedefs)).find(|p| p.is_file()).unwrap_or_default();
            format!("  CUDA {}: {} has no PFN_<symbol>_v<version> typedef (empty or truncated?)\n  --> {}", tk.version, h.typedefs, path.display())
        })
        .collect();
    if !empty.is_empty() {
        return Err(Error::NoTypedefs { count: empty.len(), details: empty.join("\n") });
    }
    let input = ToolkitInput { version: tk.version, source: tk.source.clone(), declarations, aliases, counts };
    Ok((input, rust, warnings))
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
                .map(|(h, c)| format!("{h}: {} typedefs, {} aliases ({} broken)", c.typedefs, c.aliases, c.broken_aliases))
                .collect();
            format!("CUDA {:<5} {} -> {entries} entries", t.version, headers.join("; "))
        })
        .collect()
}
