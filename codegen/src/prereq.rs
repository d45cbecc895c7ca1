//! What a run needs from the machine, checked before anything is downloaded: a libclang (the
//! system's if one loads, else the pinned wheel, cached or fetched with pip) and `python3 -m
//! pip` for every wheel that is not cached yet. Everything missing is reported at once, one
//! line each with how to get it, instead of failing minutes into a run.

use std::process::Command;

use crate::fetch::Fetcher;
use crate::manifest::{Manifest, PackagePin, ToolkitPin};
use crate::Error;

/// What the run will fetch, once the machine has what it needs.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Wheels not in the cache, in the order they will be fetched.
    pub downloads: Vec<PackagePin>,
    /// Whether a system libclang loads (else the pinned wheel is used).
    pub system_libclang: bool,
}

/// Checks the machine for a run over `pins`. Takes well under a second: a `dlopen` of
/// libclang, a look into the cache, and `python3 -m pip --version` when something must be
/// downloaded.
pub fn check(manifest: &Manifest, fetcher: &Fetcher, pins: &[&ToolkitPin]) -> Result<Plan, Error> {
    let mut missing = Vec::new();
    let mut downloads: Vec<PackagePin> = Vec::new();
    // What LIBCLANG_PATH names is read before the loader maps it.
    crate::input::check_libclang_path().map_err(|detail| Error::NoLibclang { detail })?;
    crate::input::probe_libclang().map_err(|detail| Error::NoLibclang { detail })?;
    let system_libclang = clang_sys::load().is_ok();
    if !system_libclang {
        match &manifest.libclang {
            Some(pin) if !fetcher.is_libclang_cached(pin) => downloads.push(pin.clone()),
            Some(_) => {}
            None => missing.push(
                "libclang: none loads on this machine and the manifest pins no [libclang] wheel to fall back on; \
                 add the [libclang] block of cuda-sys-gen's own headers-manifest.toml, or point LIBCLANG_PATH at \
                 the folder that holds libclang.so"
                    .to_owned(),
            ),
        }
    }
    for p in pins.iter().flat_map(|t| &t.packages) {
        // A wheel two toolkits share (11.7 and 11.8 take one profiler-api wheel) comes once.
        if !fetcher.is_headers_cached(p) && !downloads.iter().any(|d| d.file == p.file) {
            downloads.push(p.clone());
        }
    }
    if !downloads.is_empty() {
        if fetcher.offline {
            let files: Vec<String> =
                downloads.iter().map(|p| format!("{} ({}=={})", p.file, p.name, p.version)).collect();
            return Err(Error::NotCachedOffline { files, cache: fetcher.cache.join("wheels") });
        }
        if let Err(why) = pip_version(&fetcher.python) {
            let libclang_too = if system_libclang { "" } else { " (the libclang wheel among them)" };
            missing.push(format!(
                "`{} -m pip`: {why}; {} wheel(s) must be downloaded{libclang_too}. Install pip for your Python \
                 (`{} -m ensurepip --user`, or your system's python3-pip), or set PYTHON to an interpreter that has \
                 it; or pass --toolkit with a local CUDA toolkit",
                fetcher.python,
                downloads.len(),
                fetcher.python,
            ));
        }
    }
    if !missing.is_empty() {
        return Err(Error::Prerequisites { missing });
    }
    Ok(Plan { downloads, system_libclang })
}

/// `python -m pip --version`'s first line, or why it could not run.
pub fn pip_version(python: &str) -> Result<String, String> {
    let out = Command::new(python)
        .args(["-m", "pip", "--version", "--disable-pip-version-check"])
        .output()
        .map_err(|e| format!("`{python}` could not be run ({e})"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("it exited with an error").trim();
        return Err(format!("it does not run ({last})"));
    }
    Ok(String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().to_owned())
}
