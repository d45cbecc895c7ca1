//! `generate --add-toolkit`: find the newest patch of a CUDA minor on PyPI, download its
//! wheels, hash them, and add a `[[toolkit]]` pin to the manifest's text (comments kept).
//! Its rooms: [`pypi`] (what PyPI has, the download), [`manifest_text`] (the pin put into the
//! text), [`journal`] (the manifest and the crate written as one change, and a killed run's
//! change made whole), [`signals`] (Ctrl-C held off meanwhile); this file is the flow.
//!
//! The new toolkit gets the same packages as the newest pinned one (the runtime and
//! profiler-api wheels for Linux, the runtime wheel for Windows), renamed for its major
//! version (`nvidia-cuda-runtime-cu11`, `-cu12`, plain `nvidia-cuda-runtime` from 13 on), each
//! at the newest patch of the minor that PyPI has for its platform.

pub mod journal;
pub mod manifest_text;
pub mod pypi;
pub mod signals;

use std::path::{Path, PathBuf};

use crate::fetch::Fetcher;
use crate::locate::ToolkitSpec;
use crate::manifest::{line_col, Manifest, ToolkitPin};
use crate::platform::Platform;
use crate::version::ToolkitVersion;
use crate::Error;

pub use journal::{commit, journal_path, recover, ManifestChange};
pub use manifest_text::insert_pin;
use pypi::{download, for_platform, index_versions, minor_of, newest_patch, package_for};

/// A pin ready to be written: the manifest's new text and what it adds.
#[derive(Debug, Clone)]
pub struct NewPin {
    pub pin: ToolkitPin,
    /// The manifest with the pin added, already parsed and checked.
    pub text: String,
    /// The toolkit the report compares the new one with: the newest pinned one below it (or,
    /// for a toolkit older than every pin, the oldest).
    pub previous: Option<ToolkitVersion>,
    /// Notes for the user (a local toolkit's headers compared with the pinned wheel's).
    pub notes: Vec<String>,
}

impl NewPin {
    /// The change [`commit`] makes to `manifest` (the one this pin was prepared from).
    pub fn change<'a>(&'a self, manifest: &'a Manifest) -> ManifestChange<'a> {
        ManifestChange { path: &manifest.path, old: &manifest.text, new: &self.text, version: self.pin.version }
    }
}

/// Finds, downloads and verifies the wheels of `spec` (a version, or a local toolkit whose
/// `CUDA_VERSION` names one) and returns `manifest`'s text with their pin added. Writes only
/// into the cache: the wheels land in `<cache>/wheels/` so regeneration needs no second download.
pub fn prepare(manifest: &Manifest, fetcher: &Fetcher, spec: &ToolkitSpec) -> Result<NewPin, Error> {
    let (manifest_path, text) = (manifest.path.as_path(), manifest.text.as_str());
    let (version, local) = match spec {
        ToolkitSpec::Version(v) => (*v, None),
        ToolkitSpec::Path(p) => {
            let tk = crate::toolkits::named_toolkit(manifest, p)?;
            (tk.version, tk.include_dirs.first().cloned())
        }
    };
    if let Some(existing) = manifest.toolkit(version) {
        let needle = format!("version = \"{version}\"");
        let (line, col) = line_col(text, text.find(&needle).unwrap_or(0));
        return Err(Error::AlreadyPinned {
            version,
            pin: existing.describe(),
            manifest: manifest_path.to_owned(),
            line,
            col,
        });
    }
    // Before anything is looked up or downloaded: the pins with this one must fit the registry.
    crate::model::check_toolkit_count(manifest.toolkits.iter().map(|t| t.version).chain([version]))?;
    // (name, pip platform if not [fetch]'s, translation unit) of each package to pin.
    let template = manifest.toolkits.iter().max_by_key(|t| t.version);
    let wanted: Vec<(String, Option<String>, Platform)> = match template {
        Some(t) => t.packages.iter().map(|p| (package_for(&p.name, version), p.platform.clone(), p.target)).collect(),
        None => vec![(package_for("nvidia-cuda-runtime", version), None, Platform::Linux)],
    };
    let mut packages = Vec::new();
    for (name, platform, target) in wanted {
        let pip_platform = platform.clone().unwrap_or_else(|| fetcher.platform.clone());
        let versions = index_versions(fetcher, &name, &pip_platform, version)?;
        let Some(full) = newest_patch(&versions, version) else {
            let minors: std::collections::BTreeSet<ToolkitVersion> =
                versions.iter().filter_map(|v| minor_of(v)).collect();
            let minors: Vec<String> = minors.iter().map(|m| m.to_string()).collect();
            let detail = if minors.is_empty() {
                format!("{name} has no releases for {pip_platform}")
            } else {
                format!("{name} has releases for CUDA {} only{}", minors.join(", "), for_platform(&platform))
            };
            return Err(Error::NotOnPyPI { version, package: name, detail });
        };
        let mut pin = download(fetcher, &name, &full, &pip_platform)?;
        pin.platform = platform;
        pin.target = target;
        packages.push(pin);
    }
    let pin = ToolkitPin { version, packages };
    let new_text = insert_pin(text, manifest, &pin);
    // Re-read what will be written: the manifest's own checks, and the pin must come back whole.
    let reread = Manifest::parse(manifest_path, &new_text)?;
    if reread.toolkit(version) != Some(&pin) || reread.toolkits.len() != manifest.toolkits.len() + 1 {
        return Err(Error::Manifest {
            path: manifest_path.to_owned(),
            line: 1,
            col: 1,
            message: format!("adding the pin of CUDA {version} did not give the manifest that was meant (this is a bug in cuda-sys-gen)"),
        });
    }
    let below = manifest.toolkits.iter().map(|t| t.version).filter(|v| *v < version).max();
    let previous = below.or_else(|| manifest.toolkits.iter().map(|t| t.version).min());
    let mut notes = Vec::new();
    if let Some(local) = local {
        notes.push(compare_local(&local, fetcher, &pin, manifest)?);
    }
    Ok(NewPin { pin, text: new_text, previous, notes })
}

/// Whether a local toolkit's headers are the pinned wheel's.
fn compare_local(local: &Path, fetcher: &Fetcher, pin: &ToolkitPin, manifest: &Manifest) -> Result<String, Error> {
    let pinned = fetcher.toolkit(pin)?;
    let mut differ = Vec::new();
    for h in manifest.headers.iter().filter(|h| h.target == Platform::Linux) {
        for file in [&h.api, &h.typedefs] {
            let read = |path: PathBuf| crate::input::read_bytes(&path, "a header").ok();
            let pinned_bytes = pinned.include_dirs.iter().find_map(|d| read(d.join(file)));
            if read(local.join(file)) != pinned_bytes {
                differ.push(file.as_str());
            }
        }
    }
    let what = pin
        .packages
        .iter()
        .filter(|p| p.target == Platform::Linux)
        .map(|p| format!("{} {}", p.name, p.version))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(if differ.is_empty() {
        format!("the headers at {} are identical to the pinned {what}", local.display())
    } else {
        format!(
            "the headers at {} differ from the pinned {what}: {}; generated/ follows the pin",
            local.display(),
            differ.join(", ")
        )
    })
}
