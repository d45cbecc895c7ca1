//! NVIDIA's real driver libraries, from Debian's non-free archive, for the real-driver tests
//! (`tests/tests/real_drivers.rs`) and `cargo xtask drivers`.
//!
//! `tests/real-drivers.toml` pins each package by exact version and SHA256. [`fetch`] gets what
//! the cache under `target/real-drivers/` lacks with `apt-get download`, through a sources list
//! and state folder of its own (nothing is installed, no root is needed), from the Debian
//! mirror the machine's apt configuration names; checks the SHA256; and unpacks each package
//! with `dpkg-deb -x` into a scratch folder that is renamed into place once complete.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The manifest's path.
pub fn manifest_path() -> PathBuf {
    crate::repo_root().join("tests").join("real-drivers.toml")
}

/// Where fetched and unpacked packages are kept.
pub fn cache_dir() -> PathBuf {
    crate::repo_root().join("target").join("real-drivers")
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    driver: Vec<Pin>,
}

/// One driver: its branch name (`550`), the CUDA version its `cuDriverGetVersion` reports,
/// and its packages (the first holds libcuda.so.1).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    pub name: String,
    pub cuda: String,
    pub package: Vec<Package>,
}

/// One Debian package, pinned.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Package {
    pub name: String,
    pub version: String,
    pub suite: String,
    pub sha256: String,
    /// The folder inside the package that holds its libraries.
    pub lib: String,
}

impl Package {
    /// `name=version`, as apt takes it.
    fn spec(&self) -> String {
        format!("{}={}", self.name, self.version)
    }

    /// Its unpacked folder in the cache: the version's `~` and `:` kept out of the path.
    fn dir(&self, cache: &Path) -> PathBuf {
        cache.join(format!("{}_{}", self.name, self.version.replace([':', '~'], "_")))
    }
}

impl Pin {
    /// `major*1000 + minor*10` of [`Pin::cuda`].
    pub fn cuda_version(&self) -> Option<u32> {
        let (major, minor) = self.cuda.split_once('.')?;
        Some(major.parse::<u32>().ok()? * 1000 + minor.parse::<u32>().ok()? * 10)
    }
}

/// A driver ready to load: `libcuda.so.1` and the folders to put on `LD_LIBRARY_PATH`.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub pin: Pin,
    pub libcuda: PathBuf,
    pub lib_dirs: Vec<PathBuf>,
}

impl Fetched {
    /// `LD_LIBRARY_PATH` for a process that loads this driver by its soname.
    pub fn library_path(&self) -> std::ffi::OsString {
        std::env::join_paths(&self.lib_dirs).unwrap_or_default()
    }
}

/// The pinned drivers for a test, fetched where the cache lacks them; `None` where this machine
/// cannot fetch them at all (no apt-get or dpkg-deb), which the test then skips, saying so,
/// except under `CI=true`, where that fails (`crate::skip`). Any other failure panics.
pub fn fetched() -> Option<Vec<Fetched>> {
    match fetch() {
        Ok(d) => Some(d),
        Err(FetchError::Unavailable(why)) => {
            crate::skip(&format!("the real-driver tests: {why}"));
            None
        }
        Err(e) => panic!("the real drivers could not be had: {e}"),
    }
}

/// Why the drivers could not be had.
#[derive(Debug)]
pub enum FetchError {
    /// This machine cannot fetch them at all (no apt-get or dpkg-deb): a reason to skip,
    /// except in CI.
    Unavailable(String),
    /// Anything else: a failed download, a wrong digest, a bad manifest.
    Failed(String),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Unavailable(s) | FetchError::Failed(s) => f.write_str(s),
        }
    }
}

/// The pinned drivers.
pub fn pins() -> Result<Vec<Pin>, FetchError> {
    let path = manifest_path();
    let text = std::fs::read_to_string(&path).map_err(|e| FetchError::Failed(format!("{}: {e}", path.display())))?;
    let m: Manifest = toml::from_str(&text).map_err(|e| FetchError::Failed(format!("{}: {e}", path.display())))?;
    for pin in &m.driver {
        if pin.cuda_version().is_none() || pin.package.is_empty() {
            return Err(FetchError::Failed(format!(
                "{}: driver {}: `cuda` must read MAJOR.MINOR and at least one package must be pinned",
                path.display(),
                pin.name
            )));
        }
    }
    Ok(m.driver)
}

/// Every pinned driver, fetched and unpacked where the cache lacks it.
pub fn fetch() -> Result<Vec<Fetched>, FetchError> {
    let cache = cache_dir();
    let pins = pins()?;
    let missing: Vec<&Package> =
        pins.iter().flat_map(|p| &p.package).filter(|pkg| !pkg.dir(&cache).join(STAMP).is_file()).collect();
    if !missing.is_empty() {
        download(&cache, &missing)?;
    }
    pins.into_iter()
        .map(|pin| {
            let lib_dirs: Vec<PathBuf> = pin.package.iter().map(|p| p.dir(&cache).join(&p.lib)).collect();
            let libcuda = lib_dirs[0].join("libcuda.so.1");
            if !libcuda.exists() {
                return Err(FetchError::Failed(format!(
                    "{}: no libcuda.so.1 in package {} (folder {}): fix `lib` in {}",
                    libcuda.display(),
                    pin.package[0].spec(),
                    pin.package[0].lib,
                    manifest_path().display()
                )));
            }
            Ok(Fetched { pin, libcuda, lib_dirs })
        })
        .collect()
}

/// The file that marks a package's folder complete: its SHA256.
const STAMP: &str = ".sha256";

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// The Debian archive the machine's apt configuration uses (`URIs:` of a deb822 source or
/// the URI of a one-line `deb` source whose path ends in `/debian`), or
/// `$CUDA_SYS_GEN_DEBIAN_MIRROR`.
fn mirror() -> Option<String> {
    if let Ok(m) = std::env::var("CUDA_SYS_GEN_DEBIAN_MIRROR") {
        return Some(m);
    }
    let mut files = vec![PathBuf::from("/etc/apt/sources.list")];
    if let Ok(dir) = std::fs::read_dir("/etc/apt/sources.list.d") {
        let mut more: Vec<PathBuf> = dir.flatten().map(|e| e.path()).collect();
        more.sort();
        files.extend(more);
    }
    let is_archive = |uri: &str| uri.trim_end_matches('/').ends_with("/debian");
    for file in files {
        let name = file.to_string_lossy();
        if !(name.ends_with(".list") || name.ends_with(".sources")) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        for line in text.lines().map(str::trim) {
            let uri = if let Some(rest) = line.strip_prefix("URIs:") {
                rest.split_whitespace().find(|u| is_archive(u))
            } else if let Some(rest) = line.strip_prefix("deb ") {
                rest.split_whitespace().filter(|w| !w.starts_with('[') && !w.ends_with(']')).find(|u| is_archive(u))
            } else {
                None
            };
            if let Some(uri) = uri {
                return Some(uri.trim_end_matches('/').to_owned());
            }
        }
    }
    None
}

fn download(cache: &Path, packages: &[&Package]) -> Result<(), FetchError> {
    for tool in ["apt-get", "dpkg-deb"] {
        if !have(tool) {
            return Err(FetchError::Unavailable(format!(
                "{tool} is not on this machine: the real drivers are fetched from Debian's archive with apt-get download \
                 and unpacked with dpkg-deb"
            )));
        }
    }
    let Some(mirror) = mirror() else {
        return Err(FetchError::Unavailable(
            "no Debian archive is configured for apt here (/etc/apt/sources.list*): set CUDA_SYS_GEN_DEBIAN_MIRROR to \
             one"
            .into(),
        ));
    };
    let apt = cache.join("apt");
    for dir in [apt.join("lists/partial"), apt.join("archives/partial"), apt.join("downloads")] {
        std::fs::create_dir_all(&dir).map_err(|e| FetchError::Failed(format!("{}: {e}", dir.display())))?;
    }
    // The packages are checked against our own SHA256 pins; the archive's signature is
    // checked too where the machine has Debian's keyring.
    let keyring = Path::new("/usr/share/keyrings/debian-archive-keyring.gpg");
    let option = if keyring.is_file() { format!("signed-by={}", keyring.display()) } else { "trusted=yes".into() };
    let suites: BTreeSet<&str> = packages.iter().map(|p| p.suite.as_str()).collect();
    let mut sources = String::new();
    for suite in &suites {
        let _ = writeln!(sources, "deb [{option}] {mirror} {suite} non-free");
    }
    let list = apt.join("sources.list");
    std::fs::write(&list, sources).map_err(|e| FetchError::Failed(format!("{}: {e}", list.display())))?;
    let options = [
        format!("Dir::Etc::sourcelist={}", list.display()),
        "Dir::Etc::sourceparts=-".into(),
        format!("Dir::State::Lists={}", apt.join("lists").display()),
        format!("Dir::Cache::archives={}", apt.join("archives").display()),
        "Dir::State::status=/dev/null".into(),
        "Dir::Cache::pkgcache=".into(),
        "Dir::Cache::srcpkgcache=".into(),
        "APT::Architecture=amd64".into(),
        "Debug::NoLocking=1".into(),
    ];
    let apt_get = |args: &[&str], dir: &Path| {
        let mut cmd = Command::new("apt-get");
        cmd.current_dir(dir).arg("-q");
        for o in &options {
            cmd.arg("-o").arg(o);
        }
        cmd.args(args);
        let shown = format!("apt-get {}", args.join(" "));
        match cmd.output() {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(format!("{shown} failed: {}", String::from_utf8_lossy(&out.stderr).trim())),
            Err(e) => Err(format!("{shown}: {e}")),
        }
    };
    eprintln!("real drivers: fetching {} package(s) with apt-get download", packages.len());
    apt_get(&["update"], &apt).map_err(FetchError::Failed)?;
    let downloads = apt.join("downloads");
    for pkg in packages {
        let repin = format!(
            "The archive may no longer carry {spec} ({suite} replaces its packages): re-pin it in {manifest}, with a \
             version from `apt-cache policy {name}` and its SHA256 from `apt-cache show {name}=VERSION`, both run with \
             the options of that apt-get call (sources list {list})",
            spec = pkg.spec(),
            suite = pkg.suite,
            manifest = manifest_path().display(),
            name = pkg.name,
            list = list.display()
        );
        apt_get(&["download", &pkg.spec()], &downloads).map_err(|e| FetchError::Failed(format!("{e}. {repin}")))?;
        let deb = std::fs::read_dir(&downloads)
            .map_err(|e| FetchError::Failed(format!("{}: {e}", downloads.display())))?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&format!("{}_", pkg.name)))
                    && p.extension().is_some_and(|x| x == "deb")
            })
            .ok_or_else(|| FetchError::Failed(format!("apt-get download {} wrote no .deb. {repin}", pkg.spec())))?;
        let bytes = std::fs::read(&deb).map_err(|e| FetchError::Failed(format!("{}: {e}", deb.display())))?;
        let digest = hex::encode(Sha256::digest(&bytes));
        if digest != pkg.sha256 {
            let _ = std::fs::remove_file(&deb);
            return Err(FetchError::Failed(format!(
                "{}: SHA256 {digest}, but {} pins {} for {}. If the archive rebuilt the package, check it and re-pin",
                deb.display(),
                manifest_path().display(),
                pkg.sha256,
                pkg.spec()
            )));
        }
        let dest = pkg.dir(cache);
        let scratch = cache.join(format!(".unpack-{}-{}", std::process::id(), pkg.name));
        let _ = std::fs::remove_dir_all(&scratch);
        let out = Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&scratch).output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                return Err(FetchError::Failed(format!(
                    "dpkg-deb -x {}: {}",
                    deb.display(),
                    String::from_utf8_lossy(&o.stderr).trim()
                )))
            }
            Err(e) => return Err(FetchError::Failed(format!("dpkg-deb: {e}"))),
        }
        std::fs::write(scratch.join(STAMP), &digest).map_err(|e| FetchError::Failed(format!("{e}")))?;
        let _ = std::fs::remove_dir_all(&dest);
        std::fs::rename(&scratch, &dest)
            .map_err(|e| FetchError::Failed(format!("{} -> {}: {e}", scratch.display(), dest.display())))?;
        let _ = std::fs::remove_file(&deb);
    }
    Ok(())
}
