//! PyPI, as `--add-toolkit` asks it: which releases of a CUDA minor a package has
//! (`pip index versions`), the newest patch, the download into the cache, its sha256, and the
//! include folder and `CUDA_VERSION` found inside the wheel.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::archive;
use crate::fetch::Fetcher;
use crate::manifest::{PackagePin, Sha256};
use crate::platform::Platform;
use crate::version::ToolkitVersion;
use crate::Error;

/// The package that carries `template`'s files for `version`: `-cu11`/`-cu12` suffixes up to
/// 12.x, none from 13.0 on.
pub fn package_for(template: &str, version: ToolkitVersion) -> String {
    let base = template.trim_end_matches("-cu11").trim_end_matches("-cu12");
    match version.major {
        11 | 12 => format!("{base}-cu{}", version.major),
        _ => base.to_owned(),
    }
}

/// The versions `pip index versions` lists: the line `Available versions: a, b, c`.
pub fn parse_index_versions(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("Available versions:"))
        .map(|rest| rest.split(',').map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()).collect())
        .unwrap_or_default()
}

/// The newest `major.minor.patch` release of `version`'s minor, by number (`13.4.92` over
/// `13.4.49`); pre-releases and other forms are ignored.
pub fn newest_patch(versions: &[String], version: ToolkitVersion) -> Option<String> {
    versions
        .iter()
        .filter(|v| minor_of(v) == Some(version))
        .filter_map(|v| {
            let patch: u64 = v.splitn(3, '.').nth(2)?.parse().ok()?;
            Some((patch, v))
        })
        .max()
        .map(|(_, v)| v.clone())
}

pub(super) fn minor_of(v: &str) -> Option<ToolkitVersion> {
    let mut parts = v.splitn(3, '.');
    let (major, minor) = (parts.next()?, parts.next()?);
    parts.next()?;
    format!("{major}.{minor}").parse().ok()
}

pub(super) fn for_platform(platform: &Option<String>) -> String {
    platform.as_ref().map(|p| format!(" (for {p})")).unwrap_or_default()
}

/// `python3 -m pip index versions NAME` for one pip platform, binary wheels only.
pub(super) fn index_versions(
    fetcher: &Fetcher,
    name: &str,
    platform: &str,
    version: ToolkitVersion,
) -> Result<Vec<String>, Error> {
    if fetcher.offline {
        return Err(Error::PipIndex {
            package: name.into(),
            detail: "downloads are off (--offline); finding a new toolkit needs PyPI".into(),
        });
    }
    let output = Command::new(&fetcher.python)
        .args(["-m", "pip", "index", "versions", name, "--only-binary=:all:", "--disable-pip-version-check"])
        .args(["--platform", platform])
        .output()
        .map_err(|e| Error::PipIndex {
            package: name.into(),
            detail: format!("could not run `{} -m pip`: {e}", fetcher.python),
        })?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
    if !output.status.success() {
        if stderr.contains("No matching distribution") {
            return Err(Error::NotOnPyPI {
                version,
                package: name.into(),
                detail: format!("pip finds no {name} for {platform} at all"),
            });
        }
        return Err(Error::PipIndex { package: name.into(), detail: last });
    }
    let versions = parse_index_versions(&String::from_utf8_lossy(&output.stdout));
    if versions.is_empty() {
        return Err(Error::PipIndex {
            package: name.into(),
            detail: format!("no `Available versions:` line in its output ({last})"),
        });
    }
    Ok(versions)
}

/// Downloads `name==version` for a pip platform into the cache's wheel folder and pins what
/// came: file name, sha256, and the include folder found inside.
pub(super) fn download(fetcher: &Fetcher, name: &str, version: &str, platform: &str) -> Result<PackagePin, Error> {
    let wheels = fetcher.cache.join("wheels");
    let spec = format!("{name}=={version}");
    let tmp = fetcher.pip_download(&spec, platform)?;
    let mut got: Vec<PathBuf> = fs::read_dir(tmp.path())
        .map_err(|source| Error::Io { path: tmp.path().to_owned(), source })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    got.sort();
    let [wheel] = got.as_slice() else {
        return Err(Error::Pip { package: spec, detail: format!("pip produced {} wheel files, not one", got.len()) });
    };
    let file = wheel.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let sha256 = archive::sha256_file(wheel)?;
    let include = include_folder(wheel)?;
    check_cuda_version(wheel, &include, version)?;
    let dest = wheels.join(&file);
    fs::rename(wheel, &dest).map_err(|source| Error::Io { path: dest.clone(), source })?;
    Ok(PackagePin {
        name: name.to_owned(),
        version: version.to_owned(),
        file,
        sha256: Sha256(sha256),
        include,
        platform: None,
        target: Platform::Linux,
    })
}

/// The folder of a wheel that holds its headers: the `.../include` folder with `.h` files in
/// it, the one with cuda.h if there are several.
pub fn include_folder(wheel: &Path) -> Result<String, Error> {
    let bad = |message: String| Error::WheelContents { wheel: wheel.to_owned(), message };
    let file = crate::input::open_regular(wheel, "a wheel")?;
    let zip = zip::ZipArchive::new(file).map_err(|e| bad(format!("not a readable zip archive: {e}")))?;
    let mut folders = std::collections::BTreeMap::<String, bool>::new();
    for name in zip.file_names() {
        let Some((dir, leaf)) = name.rsplit_once('/') else { continue };
        if !leaf.ends_with(".h") || !(dir == "include" || dir.ends_with("/include")) {
            continue;
        }
        if archive::entry_path_under(name, "").is_err() {
            continue;
        }
        *folders.entry(dir.to_owned()).or_default() |= leaf == "cuda.h";
    }
    let with_cuda: Vec<&String> = folders.iter().filter(|(_, c)| **c).map(|(d, _)| d).collect();
    match (with_cuda.as_slice(), folders.len()) {
        ([one], _) => Ok((*one).clone()),
        ([], 1) => Ok(folders.keys().next().cloned().unwrap_or_default()),
        ([], 0) => Err(bad("no include/ folder with headers in it".into())),
        _ => Err(bad(format!(
            "several include folders, cannot tell which to pin: {}",
            folders.keys().cloned().collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// A runtime wheel's cuda.h must say the version the wheel's own version starts with: a
/// mislabelled wheel would otherwise be pinned as the wrong toolkit.
fn check_cuda_version(wheel: &Path, include: &str, package_version: &str) -> Result<(), Error> {
    let bad = |message: String| Error::WheelContents { wheel: wheel.to_owned(), message };
    let file = crate::input::open_regular(wheel, "a wheel")?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| bad(format!("not a readable zip archive: {e}")))?;
    let Ok(mut entry) = zip.by_name(&format!("{include}/cuda.h")) else { return Ok(()) };
    let mut text = Vec::new();
    (&mut entry)
        .take(archive::MAX_HEADER_BYTES)
        .read_to_end(&mut text)
        .map_err(|e| bad(format!("{include}/cuda.h: {e}")))?;
    let scratch = tempfile::tempdir().map_err(|source| Error::Io { path: std::env::temp_dir(), source })?;
    fs::write(scratch.path().join("cuda.h"), &text)
        .map_err(|source| Error::Io { path: scratch.path().to_owned(), source })?;
    let found = crate::locate::read_cuda_version(scratch.path())
        .map_err(|_| bad(format!("{include}/cuda.h has no `#define CUDA_VERSION`")))?;
    if minor_of(package_version) != Some(found) {
        return Err(bad(format!("its cuda.h says CUDA {found}, but the package version is {package_version}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> ToolkitVersion {
        s.parse().unwrap()
    }

    #[test]
    fn package_names_follow_the_major_version() {
        assert_eq!(package_for("nvidia-cuda-runtime", v("11.8")), "nvidia-cuda-runtime-cu11");
        assert_eq!(package_for("nvidia-cuda-runtime", v("12.9")), "nvidia-cuda-runtime-cu12");
        assert_eq!(package_for("nvidia-cuda-runtime-cu12", v("13.6")), "nvidia-cuda-runtime");
        assert_eq!(package_for("nvidia-cuda-profiler-api", v("12.4")), "nvidia-cuda-profiler-api-cu12");
    }

    #[test]
    fn newest_patch_is_numeric() {
        let out = "nvidia-cuda-runtime (13.5.37)\nAvailable versions: 13.5.37, 13.4.92, 13.4.100rc1, 13.4.49, 13.40.1, 13.0.96\n";
        let versions = parse_index_versions(out);
        assert_eq!(versions.len(), 6);
        assert_eq!(newest_patch(&versions, v("13.4")).as_deref(), Some("13.4.92"));
        assert_eq!(newest_patch(&versions, v("13.40")).as_deref(), Some("13.40.1"));
        assert_eq!(newest_patch(&versions, v("13.6")), None);
        assert!(parse_index_versions("ERROR: nothing\n").is_empty());
    }
}

/// The parts of a cached wheel's file name (`nvidia_cuda_runtime_cu12-12.4.127-py3-none-
/// manylinux2014_x86_64.whl`) when it is a release of `name` for pip platform `platform`: its
/// version. A manylinux platform takes every manylinux tag of the same machine (pip's
/// `--platform manylinux2014_x86_64` takes `manylinux1_x86_64` wheels too).
fn cached_release(file: &str, name: &str, platform: &str) -> Option<String> {
    let stem = file.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    let [dist, version, _, _, tags] = parts[..] else { return None };
    if dist != name.replace('-', "_") {
        return None;
    }
    let fits = |tag: &str| {
        if let Some(rest) = platform.strip_prefix("manylinux") {
            let machine = ["x86_64", "aarch64", "ppc64le"].into_iter().find(|m| rest.ends_with(m));
            tag.starts_with("manylinux") && machine.is_some_and(|m| tag.ends_with(m))
        } else {
            tag == platform
        }
    };
    tags.split('.').any(fits).then(|| version.to_owned())
}

/// The releases of `name` for `platform` among the wheels of the cache (`<cache>/wheels/`):
/// what `--offline` knows instead of PyPI's index.
pub fn cached_versions(fetcher: &Fetcher, name: &str, platform: &str) -> Vec<String> {
    let Ok(dir) = fs::read_dir(fetcher.cache.join("wheels")) else { return Vec::new() };
    let mut out: Vec<String> =
        dir.flatten().filter_map(|e| cached_release(&e.file_name().to_string_lossy(), name, platform)).collect();
    out.sort();
    out.dedup();
    out
}

/// The pin of a cached wheel of `name==version` for `platform`, hashed and read as
/// [`download`] reads a fresh one.
pub(super) fn from_cache(fetcher: &Fetcher, name: &str, version: &str, platform: &str) -> Result<PackagePin, Error> {
    let wheels = fetcher.cache.join("wheels");
    let mut found: Vec<PathBuf> = fs::read_dir(&wheels)
        .map_err(|source| Error::Io { path: wheels.clone(), source })?
        .flatten()
        .filter(|e| cached_release(&e.file_name().to_string_lossy(), name, platform).as_deref() == Some(version))
        .map(|e| e.path())
        .collect();
    found.sort();
    let Some(wheel) = found.first() else {
        return Err(Error::Pip {
            package: format!("{name}=={version}"),
            detail: format!("no wheel for {platform} in {} (--offline)", wheels.display()),
        });
    };
    let file = wheel.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let sha256 = archive::sha256_file(wheel)?;
    let include = include_folder(wheel)?;
    check_cuda_version(wheel, &include, version)?;
    Ok(PackagePin {
        name: name.to_owned(),
        version: version.to_owned(),
        file,
        sha256: Sha256(sha256),
        include,
        platform: None,
        target: Platform::Linux,
    })
}

#[cfg(test)]
mod cache_tests {
    use super::cached_release;

    #[test]
    fn cached_wheels_are_read_by_name_and_platform() {
        let linux = "manylinux2014_x86_64";
        let f = "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl";
        assert_eq!(cached_release(f, "nvidia-cuda-runtime-cu12", linux).as_deref(), Some("12.4.127"));
        let old = "nvidia_cuda_runtime_cu11-11.7.99-py3-none-manylinux1_x86_64.whl";
        assert_eq!(cached_release(old, "nvidia-cuda-runtime-cu11", linux).as_deref(), Some("11.7.99"));
        let two = "nvidia_cuda_runtime-13.5.37-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl";
        assert_eq!(cached_release(two, "nvidia-cuda-runtime", linux).as_deref(), Some("13.5.37"));
        assert_eq!(cached_release(two, "nvidia-cuda-runtime-cu12", linux), None);
        let win = "nvidia_cuda_runtime-13.5.37-py3-none-win_amd64.whl";
        assert_eq!(cached_release(win, "nvidia-cuda-runtime", linux), None);
        assert_eq!(cached_release(win, "nvidia-cuda-runtime", "win_amd64").as_deref(), Some("13.5.37"));
        let arm = "nvidia_cuda_runtime-13.5.37-py3-none-manylinux2014_aarch64.whl";
        assert_eq!(cached_release(arm, "nvidia-cuda-runtime", linux), None);
        assert_eq!(cached_release("junk.whl", "nvidia-cuda-runtime", linux), None);
    }
}
