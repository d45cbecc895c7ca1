//! Getting headers: pinned wheels through pip into a cache under `target/`, or a local toolkit.
//!
//! The cache holds, per package, the verified wheel and the include files extracted from it:
//! `<cache>/wheels/<file>` and `<cache>/include/<name>-<version>/`. Both are written under a
//! temporary name and renamed into place, so a killed run never leaves a half-written entry
//! that a later run would trust; a wheel is re-hashed before every extraction.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::archive::{extract_with_limits, is_stamped, sha256_file, Limits};
use crate::manifest::{Manifest, PackagePin, ToolkitPin};
use crate::platform::Platform;
use crate::version::ToolkitVersion;
use crate::Error;

/// Headers of one toolkit, ready for clang.
#[derive(Debug, Clone)]
pub struct ToolkitHeaders {
    pub version: ToolkitVersion,
    /// `-I` folders of the Linux translation unit, in order.
    pub include_dirs: Vec<PathBuf>,
    /// `-I` folders of the Windows translation unit (the win_amd64 wheels); empty when there
    /// are none (a local Linux toolkit).
    pub windows_include_dirs: Vec<PathBuf>,
    /// Where they came from, for messages and the summary.
    pub origin: Origin,
    /// The same in a few words that hold no machine-specific path (it reaches registry.json).
    pub source: String,
}

impl ToolkitHeaders {
    /// The `-I` folders of `target`'s translation unit.
    pub fn include_dirs_for(&self, target: Platform) -> &[PathBuf] {
        match target {
            Platform::Linux => &self.include_dirs,
            Platform::Windows => &self.windows_include_dirs,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Fetched wheels of a pinned toolkit.
    Pinned,
    /// A toolkit on this machine, at this include folder.
    Local(PathBuf),
}

/// Told of each step of a run that takes a while (a download, a translation unit read by
/// clang), as a line for the user; quick runs say nothing.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl Progress {
    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> Progress {
        Progress(std::sync::Arc::new(f))
    }

    pub fn say(&self, line: &str) {
        (self.0)(line)
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// The fetcher: pip for downloads, a cache folder for everything else.
pub struct Fetcher {
    pub cache: PathBuf,
    /// The Python interpreter that runs pip (`$PYTHON`, else `python3`).
    pub python: String,
    pub platform: String,
    /// Never call pip; fail if something is not cached.
    pub offline: bool,
    /// Told of every download, numbered against [`Fetcher::planned`].
    pub progress: Option<Progress>,
    /// How many downloads the run expects ([`crate::prereq::Plan`]); 0: unknown.
    pub planned: usize,
    downloaded: std::sync::atomic::AtomicUsize,
    /// The manifest's path and where its pins are, for an error about a pin.
    manifest: PathBuf,
    pin_at: std::collections::BTreeMap<ToolkitVersion, (usize, usize)>,
}

impl Fetcher {
    pub fn new(cache: PathBuf, manifest: &Manifest) -> Fetcher {
        Fetcher {
            cache,
            python: std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned()),
            platform: manifest.fetch.platform.clone(),
            offline: false,
            progress: None,
            planned: 0,
            downloaded: Default::default(),
            manifest: manifest.path.clone(),
            pin_at: manifest.pin_at.clone(),
        }
    }

    /// Whether a package's headers are at hand without pip: extracted, or the wheel cached.
    pub fn is_headers_cached(&self, p: &PackagePin) -> bool {
        self.is_cached(p, "include")
    }

    /// The same for the libclang wheel.
    pub fn is_libclang_cached(&self, p: &PackagePin) -> bool {
        self.is_cached(p, "libclang")
    }

    fn is_cached(&self, p: &PackagePin, kind: &str) -> bool {
        is_stamped(&self.unpacked_dir(p, kind), &p.sha256.0) || self.cache.join("wheels").join(&p.file).is_file()
    }

    /// Where a package's files are extracted: named by the wheel file (the Linux and Windows
    /// wheels of one version differ).
    fn unpacked_dir(&self, p: &PackagePin, kind: &str) -> PathBuf {
        self.cache.join(kind).join(p.file.trim_end_matches(".whl"))
    }

    fn report_download(&self, p: &PackagePin) {
        let Some(progress) = &self.progress else { return };
        let n = self.downloaded.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let of = if self.planned >= n { format!("{n}/{}", self.planned) } else { n.to_string() };
        let platform = p.platform.as_deref().unwrap_or(&self.platform);
        progress.say(&format!("downloading [{of}] {} {} ({platform})", p.name, p.version));
    }

    /// The include folders of a pinned toolkit, fetching and extracting what is not cached.
    pub fn toolkit(&self, pin: &ToolkitPin) -> Result<ToolkitHeaders, Error> {
        let mut include_dirs = Vec::new();
        let mut windows_include_dirs = Vec::new();
        for p in &pin.packages {
            let dir = self.package(p)?;
            match p.target {
                crate::platform::Platform::Linux => include_dirs.push(dir),
                crate::platform::Platform::Windows => windows_include_dirs.push(dir),
            }
        }
        // cuda.h says what a toolkit is: a pin labelled otherwise would give the crate one
        // toolkit's meanings under another's name.
        for dir in include_dirs.iter().chain(&windows_include_dirs) {
            let header = dir.join("cuda.h");
            if !header.is_file() {
                continue;
            }
            let number = crate::locate::cuda_version_define(dir)?;
            let found = ToolkitVersion::from_cuda_version(number);
            if found != pin.version {
                return Err(Error::MislabelledToolkit {
                    manifest: self.manifest.clone(),
                    line: self.pin_at.get(&pin.version).map_or(1, |a| a.0),
                    col: self.pin_at.get(&pin.version).map_or(1, |a| a.1),
                    label: pin.version,
                    found,
                    number,
                    header,
                });
            }
        }
        Ok(ToolkitHeaders {
            version: pin.version,
            include_dirs,
            windows_include_dirs,
            origin: Origin::Pinned,
            source: pin.describe(),
        })
    }

    /// The folder holding the fallback `libclang.so`, fetched if needed.
    pub fn libclang(&self, p: &PackagePin) -> Result<PathBuf, Error> {
        self.unpacked(p, "libclang", &Limits::LIBCLANG)
    }

    fn package(&self, p: &PackagePin) -> Result<PathBuf, Error> {
        self.unpacked(p, "include", &Limits::HEADERS)
    }

    /// The extracted folder of a package, extracted again unless its stamp names the pinned
    /// sha256: a folder without one (a half-extracted or hand-made one) is never trusted.
    fn unpacked(&self, p: &PackagePin, kind: &str, limits: &Limits) -> Result<PathBuf, Error> {
        let dest = self.unpacked_dir(p, kind);
        // Extractions of killed runs: scratch folders never renamed into place.
        crate::scratch::remove_stale(&self.cache.join(kind), "extract");
        if is_stamped(&dest, &p.sha256.0) {
            return Ok(dest);
        }
        let wheel = self.wheel(p)?;
        extract_with_limits(&wheel, &p.include, &dest, &p.sha256.0, limits)?;
        Ok(dest)
    }

    /// The verified wheel file, downloaded if it is not cached (or cached but corrupt).
    pub fn wheel(&self, p: &PackagePin) -> Result<PathBuf, Error> {
        let wheels = self.cache.join("wheels");
        let path = wheels.join(&p.file);
        // Downloads of killed runs: pip's folder was never renamed into the cache.
        crate::scratch::remove_stale(&wheels, "download");
        if path.exists() {
            let actual = sha256_file(&path)?;
            if actual == p.sha256.0 {
                return Ok(path);
            }
            // Not "not cached": the file is there, and its hash is not the pin's. Left as it is.
            if self.offline {
                return Err(Error::CachedSha256Mismatch {
                    wheel: path,
                    package: format!("{}=={}", p.name, p.version),
                    expected: p.sha256.0.clone(),
                    actual,
                });
            }
            // A half-downloaded or tampered file: drop it and fetch again.
            fs::remove_file(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
        }
        if self.offline {
            return Err(Error::NotCached { package: format!("{}=={}", p.name, p.version), cache: wheels });
        }
        self.report_download(p);
        let spec = format!("{}=={}", p.name, p.version);
        let tmp = self.pip_download(&spec, p.platform.as_deref().unwrap_or(&self.platform))?;
        let got = tmp.path().join(&p.file);
        if !got.exists() {
            let found: Vec<String> = list_dir(tmp.path()).into_iter().collect();
            return Err(Error::Pip {
                package: spec,
                detail: format!("pip did not produce {} (it produced: {})", p.file, found.join(", ")),
            });
        }
        let actual = sha256_file(&got)?;
        if actual != p.sha256.0 {
            return Err(Error::Sha256Mismatch { file: p.file.clone(), expected: p.sha256.0.clone(), actual });
        }
        crate::fault::point("fetch:downloaded");
        fs::rename(&got, &path).map_err(|source| Error::Io { path: path.clone(), source })?;
        Ok(path)
    }
}

impl Fetcher {
    /// `python -m pip download --no-deps` of one `name==version` for one pip platform, binary
    /// wheels only, into a scratch folder of this process under `<cache>/wheels/`
    /// (`.download-<pid>-*`, removed when dropped, or by a later run after a kill). The one
    /// way this crate downloads: the pinned wheels and `--add-toolkit`'s new ones.
    pub fn pip_download(&self, spec: &str, platform: &str) -> Result<tempfile::TempDir, Error> {
        let wheels = self.cache.join("wheels");
        mkdir(&wheels)?;
        let tmp = tempfile::Builder::new()
            .prefix(&crate::scratch::prefix("download"))
            .tempdir_in(&wheels)
            .map_err(|source| Error::Io { path: wheels.clone(), source })?;
        let output = Command::new(&self.python)
            .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check"])
            .args(["--platform", platform, "--dest"])
            .arg(tmp.path())
            .arg(spec)
            .output()
            .map_err(|source| Error::Pip {
                package: spec.to_owned(),
                detail: format!("could not run `{} -m pip`: {source}", self.python),
            })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let detail = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
            return Err(Error::Pip { package: spec.to_owned(), detail });
        }
        Ok(tmp)
    }
}

fn list_dir(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn mkdir(p: &Path) -> Result<(), Error> {
    fs::create_dir_all(p).map_err(|source| Error::Io { path: p.to_owned(), source })
}
