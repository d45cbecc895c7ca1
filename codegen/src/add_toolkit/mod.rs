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
        ToolkitSpec::Latest => (latest(fetcher)?, None),
        ToolkitSpec::Path(p) => {
            let tk = crate::toolkits::named_toolkit(manifest, p)?;
            (tk.version, tk.include_dirs.first().cloned())
        }
    };
    // A minor already pinned is bumped to its newest patch (a version, or `latest`), if there is
    // a newer one; a local toolkit of a pinned minor is no new pin.
    let existing = manifest.toolkit(version);
    if let (Some(existing), true) = (existing, local.is_some()) {
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
    if existing.is_none() {
        crate::model::check_toolkit_count(manifest.toolkits.iter().map(|t| t.version).chain([version]))?;
    }
    // (name, pip platform if not [fetch]'s, translation unit) of each package to pin.
    let template = existing.or_else(|| manifest.toolkits.iter().max_by_key(|t| t.version));
    let wanted: Vec<(String, Option<String>, Platform)> = match template {
        Some(t) => t.packages.iter().map(|p| (package_for(&p.name, version), p.platform.clone(), p.target)).collect(),
        // A manifest without pins (`init`'s): the runtime's and the profiler API's headers for
        // Linux, the runtime's for Windows, as this project pins them.
        None => vec![
            (package_for("nvidia-cuda-runtime", version), None, Platform::Linux),
            (package_for("nvidia-cuda-profiler-api", version), None, Platform::Linux),
            (package_for("nvidia-cuda-runtime", version), Some("win_amd64".to_owned()), Platform::Windows),
        ],
    };
    let mut packages = Vec::new();
    for (name, platform, target) in wanted {
        let pip_platform = platform.clone().unwrap_or_else(|| fetcher.platform.clone());
        let versions = if fetcher.offline {
            pypi::cached_versions(fetcher, &name, &pip_platform)
        } else {
            index_versions(fetcher, &name, &pip_platform, version)?
        };
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
        // The pinned package where it is this patch or a later one (PyPI's newest may be older
        // than a pin: a release withdrawn); never a step back.
        let patch = |v: &str| v.splitn(3, '.').nth(2).and_then(|p| p.parse::<u64>().ok());
        let mut pin = match existing.and_then(|e| {
            e.packages.iter().find(|p| {
                p.name == name && p.platform == platform && p.target == target && patch(&p.version) >= patch(&full)
            })
        }) {
            // Already this patch or a later one: kept as pinned.
            Some(same) => same.clone(),
            None if fetcher.offline => pypi::from_cache(fetcher, &name, &full, &pip_platform)?,
            None => download(fetcher, &name, &full, &pip_platform)?,
        };
        pin.platform = platform;
        pin.target = target;
        packages.push(pin);
    }
    let pin = ToolkitPin { version, packages };
    let mut notes = Vec::new();
    let (base_text, base) = match existing {
        Some(old) if *old == pin => {
            let needle = format!("version = \"{version}\"");
            let (line, col) = line_col(text, text.find(&needle).unwrap_or(0));
            return Err(Error::AlreadyPinned {
                version,
                pin: format!(
                    "{}, the newest patch {}",
                    old.describe(),
                    if fetcher.offline { "the cache holds" } else { "PyPI has" }
                ),
                manifest: manifest_path.to_owned(),
                line,
                col,
            });
        }
        Some(old) => {
            let bumps: Vec<String> = old
                .packages
                .iter()
                .zip(&pin.packages)
                .filter(|(a, b)| a.version != b.version)
                .map(|(a, b)| format!("{} {} -> {}", a.name, a.version, b.version))
                .collect();
            notes.push(format!("CUDA {version}: a newer patch release ({})", bumps.join(", ")));
            let without = manifest_text::remove_pin(text, version);
            let parsed = Manifest::parse(manifest_path, &without)?;
            (without, parsed)
        }
        None => (text.to_owned(), manifest.clone()),
    };
    let new_text = insert_pin(&base_text, &base, &pin);
    // Re-read what will be written: the manifest's own checks, and the pin must come back whole.
    let reread = Manifest::parse(manifest_path, &new_text)?;
    if reread.toolkit(version) != Some(&pin) || reread.toolkits.len() != base.toolkits.len() + 1 {
        return Err(Error::Manifest {
            path: manifest_path.to_owned(),
            line: 1,
            col: 1,
            message: format!("adding the pin of CUDA {version} did not give the manifest that was meant (this is a bug in cuda-sys-gen)"),
        });
    }
    let below = manifest.toolkits.iter().map(|t| t.version).filter(|v| *v < version).max();
    // A patch bump is compared with nothing: the same minor on both sides.
    let previous = below.or_else(|| manifest.toolkits.iter().map(|t| t.version).min()).filter(|_| existing.is_none());

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

/// The newest CUDA minor there is: of PyPI's `nvidia-cuda-runtime` (13.0 and later; offline,
/// of the wheels the cache holds, every major's).
fn latest(fetcher: &Fetcher) -> Result<ToolkitVersion, Error> {
    let platform = fetcher.platform.clone();
    let names = ["nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11"];
    let versions: Vec<String> = if fetcher.offline {
        names.iter().flat_map(|n| pypi::cached_versions(fetcher, n, &platform)).collect()
    } else {
        index_versions(fetcher, names[0], &platform, ToolkitVersion { major: 13, minor: 0 })?
    };
    versions.iter().filter_map(|v| minor_of(v)).max().ok_or_else(|| Error::PipIndex {
        package: names[0].into(),
        detail: if fetcher.offline {
            format!("no CUDA runtime wheel for {platform} in {} (--offline)", fetcher.cache.join("wheels").display())
        } else {
            "PyPI lists no release of it".into()
        },
    })
}

/// The manifest `init` starts from: this project's header rows, `[fetch]` and `[libclang]`,
/// no toolkit (a test compares its rows with this repository's headers-manifest.toml).
pub const MANIFEST_START: &str = include_str!("../../crate-files/headers-manifest-start.toml");

/// What `init` wrote.
#[derive(Debug, Clone)]
pub struct Initialised {
    pub pins: Vec<ToolkitPin>,
    pub notes: Vec<String>,
}

/// `cuda-sys-gen init`: writes a new manifest at `path` pinning `specs` (versions, `latest`, or
/// local toolkits; none: `latest`), each at its newest patch on PyPI (`offline`: in the cache
/// `cache`). Never replaces anything: a file (or anything else) already at `path` stops it
/// before any work, and the file is put in place with a hard link, which fails rather than
/// replace one that appeared meanwhile.
pub fn init(path: &Path, cache: &Path, offline: bool, specs: &[ToolkitSpec]) -> Result<Initialised, Error> {
    let exists = |path: &Path| Error::Manifest {
        path: path.to_owned(),
        line: 1,
        col: 1,
        message: "already exists: init never replaces a manifest. Pin another toolkit in it with `cuda-sys-gen \
                  generate --add-toolkit VERSION` (or `latest`)"
            .into(),
    };
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(exists(path));
    }
    let specs = if specs.is_empty() { &[ToolkitSpec::Latest][..] } else { specs };
    let mut text = MANIFEST_START.to_owned();
    let (mut pins, mut notes) = (Vec::new(), Vec::new());
    for spec in specs {
        let manifest = Manifest::parse(path, &text)?;
        let mut fetcher = Fetcher::new(cache.to_owned(), &manifest);
        fetcher.offline = offline;
        let new = prepare(&manifest, &fetcher, spec)?;
        text = new.text;
        notes.extend(new.notes);
        pins.push(new.pin);
    }
    Manifest::parse(path, &text)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let io = |source| Error::Io { path: path.to_owned(), source };
    let mut temp = tempfile::Builder::new().prefix(".headers-manifest.init-").tempfile_in(&dir).map_err(io)?;
    {
        use std::io::Write;
        temp.write_all(text.as_bytes()).map_err(io)?;
        temp.as_file().sync_all().map_err(io)?;
    }
    match std::fs::hard_link(temp.path(), path) {
        Ok(()) => Ok(Initialised { pins, notes }),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists(path)),
        // A file system without hard links: a file created only where none is.
        Err(_) => {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    exists(path)
                } else {
                    io(e)
                }
            })?;
            // A failed write leaves the file this run created (never removed by its path, which
            // could name another file by then); the error names it.
            file.write_all(text.as_bytes()).map_err(io)?;
            Ok(Initialised { pins, notes })
        }
    }
}
