//! The I/O around [`crate::diff`]: resolving each side of a comparison (a pinned version or a
//! local toolkit), building one model over both with the pipeline's per-toolkit steps, and
//! diffing it.

use std::path::{Path, PathBuf};

use crate::diff::{self, ToolkitDiff};
use crate::fetch::{Fetcher, Origin, ToolkitHeaders};
use crate::locate::ToolkitSpec;
use crate::manifest::{Manifest, ToolkitPin};
use crate::pipeline::{self, Built};
use crate::platform::Platform;
use crate::version::ToolkitVersion;
use crate::Error;

#[derive(Debug, Clone)]
pub struct DiffConfig {
    pub manifest: PathBuf,
    pub cache_dir: PathBuf,
    pub from: ToolkitSpec,
    pub to: ToolkitSpec,
    /// Use only the cache; never run pip.
    pub offline: bool,
    /// Told of downloads and of translation units read by clang.
    pub progress: Option<crate::fetch::Progress>,
}

/// The report and the model it was computed from (its warnings, the libclang used).
#[derive(Debug)]
pub struct DiffRun {
    pub diff: ToolkitDiff,
    pub built: Built,
}

/// Builds one model over the two toolkits and diffs them.
pub fn diff_toolkits(cfg: &DiffConfig) -> Result<DiffRun, Error> {
    let manifest = Manifest::load(&cfg.manifest)?;
    let mut fetcher = Fetcher::new(cfg.cache_dir.clone(), &manifest);
    fetcher.offline = cfg.offline;
    fetcher.progress = cfg.progress.clone();
    // Versions first (cheap: the manifest, or a cuda.h), so that a bad pair fails before any download.
    let from = Located::new(&cfg.manifest, &manifest, &cfg.from)?;
    let to = Located::new(&cfg.manifest, &manifest, &cfg.to)?;
    // A local side of a pinned version takes that pin's Windows headers.
    let pins: Vec<&ToolkitPin> =
        [from.version(), to.version()].into_iter().filter_map(|v| manifest.toolkit(v)).collect();
    fetcher.planned = crate::prereq::check(&manifest, &fetcher, &pins)?.downloads.len();
    if from.version() == to.version() {
        let detail = match (&cfg.from, &cfg.to) {
            (ToolkitSpec::Version(_), ToolkitSpec::Version(_)) => "give two different toolkits".to_owned(),
            _ => format!(
                "`--from {}` and `--to {}` are the same CUDA version, and a model holds one toolkit per version: \
                 give two different toolkits",
                cfg.from, cfg.to
            ),
        };
        return Err(Error::SameToolkit { version: from.version(), detail });
    }
    let mut toolkits = [from.headers(&fetcher)?, to.headers(&fetcher)?];
    let mut manifest = manifest;
    let notes = windows_rows_both_or_neither(&mut manifest, &fetcher, &mut toolkits)?;
    let built = pipeline::build_model(&manifest, &fetcher, &toolkits)?;
    let mut diff = diff::diff(&built.model, toolkits[0].version, toolkits[1].version)?;
    diff.notes.extend(notes);
    Ok(DiffRun { diff, built })
}

/// The Windows-only typedef headers come from the win_amd64 wheels, which a local Linux toolkit
/// lacks. As in `generate`, a local toolkit of a pinned version takes the pin's; if a side still
/// has none, the Windows rows are left out on both sides (with a note), so that the report does
/// not call them lost or gained.
fn windows_rows_both_or_neither(
    manifest: &mut Manifest,
    fetcher: &Fetcher,
    toolkits: &mut [ToolkitHeaders],
) -> Result<Vec<String>, Error> {
    let rows: Vec<String> =
        manifest.headers.iter().filter(|h| h.target == Platform::Windows).map(|h| h.typedefs.clone()).collect();
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    for tk in toolkits.iter_mut().filter(|t| t.windows_include_dirs.is_empty()) {
        if let Some(pin) = manifest.toolkit(tk.version) {
            tk.windows_include_dirs = fetcher.toolkit(pin)?.windows_include_dirs;
        }
    }
    let lacking: Vec<String> = toolkits
        .iter()
        .filter(|t| t.windows_include_dirs.is_empty())
        .map(|t| match &t.origin {
            Origin::Local(p) => format!("CUDA {} ({})", t.version, p.display()),
            Origin::Pinned => format!("CUDA {}", t.version),
        })
        .collect();
    if lacking.is_empty() {
        return Ok(Vec::new());
    }
    manifest.headers.retain(|h| h.target != Platform::Windows);
    for tk in toolkits.iter_mut() {
        tk.windows_include_dirs.clear();
    }
    let mut rows = rows;
    rows.dedup();
    Ok(vec![format!(
        "the Windows typedef headers ({}) are not compared: {} has none",
        rows.join(", "),
        lacking.join(" and ")
    )])
}

/// One side, its version known, its headers not fetched yet.
enum Located {
    Pinned(ToolkitPin),
    Local(ToolkitHeaders),
}

impl Located {
    fn new(manifest_path: &Path, manifest: &Manifest, spec: &ToolkitSpec) -> Result<Located, Error> {
        // `latest`: the newest pinned toolkit.
        let newest = manifest.toolkits.iter().map(|t| t.version).max();
        let spec = match (spec, newest) {
            (ToolkitSpec::Latest, Some(v)) => &ToolkitSpec::Version(v),
            (spec, _) => spec,
        };
        match spec {
            // `latest` of a manifest that pins nothing.
            ToolkitSpec::Latest => Err(Error::NoToolkits { manifest: manifest_path.to_owned() }),
            ToolkitSpec::Version(v) => {
                let Some(pin) = manifest.toolkit(*v) else {
                    let pinned = manifest.toolkits.iter().map(|t| t.version.to_string()).collect::<Vec<_>>();
                    let pinned = if pinned.is_empty() { "none".to_owned() } else { pinned.join(", ") };
                    return Err(Error::NotPinned { version: *v, manifest: manifest_path.to_owned(), pinned });
                };
                Ok(Located::Pinned(pin.clone()))
            }
            ToolkitSpec::Path(p) => crate::toolkits::named_toolkit(manifest, p).map(Located::Local),
        }
    }

    fn version(&self) -> ToolkitVersion {
        match self {
            Located::Pinned(pin) => pin.version,
            Located::Local(t) => t.version,
        }
    }

    fn headers(self, fetcher: &Fetcher) -> Result<ToolkitHeaders, Error> {
        match self {
            Located::Pinned(pin) => fetcher.toolkit(&pin),
            Located::Local(t) => Ok(t),
        }
    }
}
