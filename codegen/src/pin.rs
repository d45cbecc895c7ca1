//! `generate --add-toolkit`: find the newest patch of a CUDA minor on PyPI, download its
//! wheels, hash them, and add a `[[toolkit]]` pin to the manifest's text (comments kept).
//!
//! The new toolkit gets the same packages as the newest pinned one (the runtime and
//! profiler-api wheels for Linux, the runtime wheel for Windows), renamed for its major
//! version (`nvidia-cuda-runtime-cu11`, `-cu12`, plain `nvidia-cuda-runtime` from 13 on), each
//! at the newest patch of the minor that PyPI has for its platform.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::archive;
use crate::fetch::Fetcher;
use crate::locate::ToolkitSpec;
use crate::manifest::{line_col, Manifest, PackagePin, Sha256, ToolkitPin};
use crate::platform::Platform;
use crate::version::ToolkitVersion;
use crate::Error;

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

/// Finds, downloads and verifies the wheels of `spec` (a version, or a local toolkit whose
/// `CUDA_VERSION` names one) and returns the manifest text with their pin added. Writes only
/// into the cache: the wheels land in `<cache>/wheels/` so regeneration needs no second download.
pub fn prepare(manifest_path: &Path, fetcher: &Fetcher, spec: &ToolkitSpec) -> Result<NewPin, Error> {
    let text = crate::input::read_text(manifest_path, "the headers manifest")?;
    let manifest = Manifest::parse(manifest_path, &text)?;
    let (version, local) = match spec {
        ToolkitSpec::Version(v) => (*v, None),
        ToolkitSpec::Path(p) => {
            let tk = crate::toolkits::named_toolkit(&manifest, p)?;
            (tk.version, tk.include_dirs.first().cloned())
        }
    };
    if let Some(existing) = manifest.toolkit(version) {
        let needle = format!("version = \"{version}\"");
        let (line, col) = line_col(&text, text.find(&needle).unwrap_or(0));
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
    let new_text = insert_pin(&text, &manifest, &pin);
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
        notes.push(compare_local(&local, fetcher, &pin, &manifest)?);
    }
    Ok(NewPin { pin, text: new_text, previous, notes })
}

/// Writes the manifest's new text atomically (a temporary file beside it, flushed, then a
/// rename).
pub fn write_manifest(path: &Path, text: &str) -> Result<(), Error> {
    let tmp = synced_temp(path, text)?;
    tmp.persist(path).map_err(|e| Error::Io { path: path.to_owned(), source: e.error })?;
    sync_parent(path);
    Ok(())
}

/// `text` in a temporary file beside `path`, flushed to disk.
fn synced_temp(path: &Path, text: &str) -> Result<tempfile::NamedTempFile, Error> {
    let dir = parent_of(path);
    let mut tmp = tempfile::Builder::new()
        .prefix(".headers-manifest-")
        .tempfile_in(dir)
        .map_err(|source| Error::Io { path: dir.to_owned(), source })?;
    let io = |source| Error::Io { path: tmp_path(path), source };
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    Ok(tmp)
}

fn tmp_path(path: &Path) -> PathBuf {
    parent_of(path).join(".headers-manifest-*")
}

fn parent_of(path: &Path) -> &Path {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Flushes the folder entry of a rename (best effort: a kill needs none, a power cut does).
fn sync_parent(path: &Path) {
    #[cfg(unix)]
    if let Ok(f) = fs::File::open(parent_of(path)) {
        let _ = f.sync_all();
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// The journal of an `--add-toolkit` that is changing a manifest and its crate: beside the
/// manifest, `.<manifest's name>.add-toolkit`. While it exists the two may disagree; the next
/// run ([`recover`]) makes them agree again from it.
pub fn journal_path(manifest: &Path) -> PathBuf {
    let name = manifest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    parent_of(manifest).join(format!(".{name}.add-toolkit"))
}

/// What [`commit`] writes before it changes anything: enough to tell, after a kill at any
/// point, whether the crate was replaced, and to make the manifest say the same.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Journal {
    /// What this file is, for a person who finds it.
    pub about: String,
    /// The process that wrote it: while it runs, nobody else touches the manifest.
    pub pid: u32,
    /// The toolkit being pinned.
    pub version: String,
    /// The crate's folder, absolute.
    pub out: PathBuf,
    /// [`write::tree_digest`] of the new crate: the output folder holds it once swapped in.
    pub crate_sha256: String,
    /// The manifest before and after the pin.
    pub old_manifest: String,
    pub new_manifest: String,
}

/// Blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT on this thread while it lives (the pipeline's
/// worker threads are gone by then): a Ctrl-C during the commit takes effect after it, so it
/// leaves the manifest and the crate both old or both new. SIGKILL cannot be held off: the
/// journal covers it.
struct HoldSignals {
    #[cfg(unix)]
    old: libc::sigset_t,
}

impl HoldSignals {
    fn new() -> HoldSignals {
        #[cfg(unix)]
        {
            // SAFETY: sigset_t is plain data, initialised by sigemptyset before use; the
            // calls change this thread's mask only.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                let mut old: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                    libc::sigaddset(&mut set, sig);
                }
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
                HoldSignals { old }
            }
        }
        #[cfg(not(unix))]
        HoldSignals {}
    }
}

impl Drop for HoldSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `new`; a signal held meanwhile is delivered now.
        #[cfg(unix)]
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
    }
}

/// Writes `files` (rendered from `new.text`) to `out` and `new.text` to the manifest, as one
/// change: a journal first ([`Journal`], beside the manifest), then the crate (swapped in
/// whole by [`write::sync_tree`]), then the manifest (renamed into place), then the journal
/// removed, with Ctrl-C held off from the journal to its removal. Killed at any point, the
/// next run finds the journal and makes the two agree ([`recover`]). A failure before the
/// crate is swapped in changes nothing; one after it leaves the journal for the next run.
pub fn commit(
    manifest: &Path,
    out: &Path,
    old_text: &str,
    new: &NewPin,
    files: &crate::emit::Files,
    command: &str,
) -> Result<crate::write::WriteReport, Error> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    let journal_at = journal_path(manifest);
    let journal = Journal {
        about: format!(
            "cuda-sys-gen generate --add-toolkit {} is changing {} and the crate at {}; if that run is gone, the next \
             `cuda-sys-gen generate` makes them agree again: do not edit",
            new.pin.version,
            manifest.display(),
            out.display()
        ),
        pid: std::process::id(),
        version: new.pin.version.to_string(),
        out: crate::write::canonical_lenient(out).map_err(io(out))?,
        crate_sha256: crate::write::tree_digest(&crate::write::as_written(files, command)),
        old_manifest: old_text.to_owned(),
        new_manifest: new.text.clone(),
    };
    let text = serde_json::to_string_pretty(&journal)
        .map_err(|e| Error::Io { path: journal_at.clone(), source: std::io::Error::other(e) })?;
    let hold = HoldSignals::new();
    // No clobbering: a journal already there is another run's, or a killed one's that
    // `recover` has not seen.
    let tmp = synced_temp(&journal_at, &text)?;
    tmp.persist_noclobber(&journal_at).map_err(|e| Error::Io { path: journal_at.clone(), source: e.error })?;
    sync_parent(&journal_at);
    crate::fault::point("pin:journal-written");
    let earlier = crate::emit::earlier_file_names(files.keys());
    let written = crate::write::sync_tree(
        out,
        files,
        crate::write::Mode::Write,
        command,
        &earlier,
        &crate::output_folder::generator_wrote,
    );
    let report = match written {
        Ok(r) => r,
        Err(e) => {
            // The crate is as it was: so is the manifest.
            let _ = fs::remove_file(&journal_at);
            return Err(e);
        }
    };
    crate::fault::point("pin:crate-written");
    write_manifest(manifest, &new.text).map_err(|e| Error::Interrupted {
        journal: journal_at.clone(),
        detail: format!(
            "the crate at {} holds CUDA {}, but {} could not be written ({e}): the next `generate` pins it there \
             from the journal",
            out.display(),
            new.pin.version,
            manifest.display()
        ),
    })?;
    crate::fault::point("pin:manifest-written");
    fs::remove_file(&journal_at).map_err(io(&journal_at))?;
    sync_parent(&journal_at);
    drop(hold);
    Ok(report)
}

/// Makes a manifest and its crate agree after an `--add-toolkit` that was killed (its journal
/// is there, its process gone): if the output folder holds the new crate, the manifest gets
/// the pin; otherwise it keeps (or gets back) its old text. Then the journal is removed.
/// Returns what was done, for a note; `None` when there was nothing to do. A journal of a
/// running process, one that cannot be read, or a manifest changed since, is an error that
/// says what to do.
pub fn recover(manifest: &Path) -> Result<Option<String>, Error> {
    let at = journal_path(manifest);
    let Some(text) = crate::input::read_text_if_exists(&at, "the journal of an interrupted --add-toolkit")? else {
        return Ok(None);
    };
    let unreadable = |why: String| Error::Interrupted {
        journal: at.clone(),
        detail: format!(
            "{why}; check that {} and its crate agree (`generate --check`), then remove the journal",
            manifest.display()
        ),
    };
    let journal: Journal = serde_json::from_str(&text).map_err(|e| unreadable(format!("it cannot be read ({e})")))?;
    if journal.pid != std::process::id() && crate::scratch::pid_alive(journal.pid) {
        return Err(Error::Interrupted {
            journal: at.clone(),
            detail: format!(
                "cuda-sys-gen (process {}) is adding CUDA {} to {}: wait for it to finish (if no such run is going on, \
                 remove the journal)",
                journal.pid,
                journal.version,
                manifest.display()
            ),
        });
    }
    let crate_is_new = crate::write::folder_digest(&journal.out)? == journal.crate_sha256;
    let (want, other) = if crate_is_new {
        (&journal.new_manifest, &journal.old_manifest)
    } else {
        (&journal.old_manifest, &journal.new_manifest)
    };
    let now = crate::input::read_text(manifest, "the headers manifest")?;
    if now != *want {
        if now != *other {
            return Err(unreadable(format!(
                "{} changed since the interrupted run (process {}) that was adding CUDA {}",
                manifest.display(),
                journal.pid,
                journal.version
            )));
        }
        write_manifest(manifest, want)?;
    }
    fs::remove_file(&at).map_err(|source| Error::Io { path: at.clone(), source })?;
    sync_parent(&at);
    Ok(Some(if crate_is_new {
        format!(
            "an interrupted `--add-toolkit {}` (process {}) had written the crate at {}: {} pins CUDA {} with it",
            journal.version,
            journal.pid,
            journal.out.display(),
            manifest.display(),
            journal.version
        )
    } else {
        format!(
            "an interrupted `--add-toolkit {}` (process {}) had not written the crate at {}: {} is as it was before it",
            journal.version,
            journal.pid,
            journal.out.display(),
            manifest.display()
        )
    }))
}

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

fn minor_of(v: &str) -> Option<ToolkitVersion> {
    let mut parts = v.splitn(3, '.');
    let (major, minor) = (parts.next()?, parts.next()?);
    parts.next()?;
    format!("{major}.{minor}").parse().ok()
}

fn for_platform(platform: &Option<String>) -> String {
    platform.as_ref().map(|p| format!(" (for {p})")).unwrap_or_default()
}

/// `python3 -m pip index versions NAME` for one pip platform, binary wheels only.
fn index_versions(
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
fn download(fetcher: &Fetcher, name: &str, version: &str, platform: &str) -> Result<PackagePin, Error> {
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

/// Adds the pin's block after the last pinned toolkit below it (before the first, if it is
/// the oldest), so the manifest stays in version order and every comment stays where it was.
pub fn insert_pin(text: &str, manifest: &Manifest, pin: &ToolkitPin) -> String {
    let mut block = format!("[[toolkit]]\nversion = \"{}\"\n", pin.version);
    for p in &pin.packages {
        block.push_str(&format!(
            "[[toolkit.package]]\nname = \"{}\"\nversion = \"{}\"\nfile = \"{}\"\nsha256 = \"{}\"\ninclude = \"{}\"\n",
            p.name, p.version, p.file, p.sha256, p.include
        ));
        if let Some(platform) = &p.platform {
            block.push_str(&format!("platform = \"{platform}\"\n"));
        }
        if p.target != Platform::Linux {
            block.push_str(&format!("target = \"{}\"\n", p.target));
        }
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let header_at = |v: ToolkitVersion| -> Option<usize> {
        // The `[[toolkit]]` line whose next `version =` line is v's.
        let needle = format!("version = \"{v}\"");
        (0..lines.len()).find(|&i| {
            lines[i].trim() == "[[toolkit]]"
                && lines[i + 1..].iter().find(|l| !l.trim().is_empty()).is_some_and(|l| l.trim() == needle)
        })
    };
    let below = manifest.toolkits.iter().map(|t| t.version).filter(|v| *v < pin.version).max();
    let above = manifest.toolkits.iter().map(|t| t.version).filter(|v| *v > pin.version).min();
    let mut out = String::new();
    if let Some(start) = below.and_then(header_at) {
        // The block ends before the next table header, less the comments and blank lines
        // just above that header (they introduce what follows).
        let mut end = (start + 1..lines.len())
            .find(|&i| is_table_header(lines[i]) && lines[i].trim() != "[[toolkit.package]]")
            .unwrap_or(lines.len());
        while end > start + 1 && (lines[end - 1].trim().is_empty() || lines[end - 1].trim_start().starts_with('#')) {
            end -= 1;
        }
        out.push_str(&lines[..end].concat());
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&block);
        if !lines.get(end).is_some_and(|l| l.trim().is_empty()) && end < lines.len() {
            out.push('\n');
        }
        out.push_str(&lines[end..].concat());
    } else if let Some(first) = above.and_then(header_at) {
        out.push_str(&lines[..first].concat());
        out.push_str(&block);
        out.push('\n');
        out.push_str(&lines[first..].concat());
    } else {
        // No pins yet: at the end (a `[[toolkit]]` after `[libclang]` is still the same TOML).
        out.push_str(text);
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&block);
    }
    out
}

fn is_table_header(line: &str) -> bool {
    line.trim_start().starts_with('[')
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
