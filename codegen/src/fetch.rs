//! Getting headers: pinned wheels through pip into a cache under `target/`, or a local toolkit.
//!
//! The cache holds, per package, the verified wheel and the include files extracted from it:
//! `<cache>/wheels/<file>` and `<cache>/include/<name>-<version>/`. Both are written under a
//! temporary name and renamed into place, so a killed run never leaves a half-written entry
//! that a later run would trust; a wheel is re-hashed before every extraction.

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::manifest::{Manifest, PackagePin, Platform, ToolkitPin, ToolkitVersion};
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

/// Largest include file we accept from a wheel; cuda.h is 1.3 MB.
pub const MAX_HEADER_BYTES: u64 = 16 << 20;
/// Largest file we accept from the libclang wheel; its libclang.so is 64 MB.
const MAX_LIBCLANG_BYTES: u64 = 256 << 20;

/// What one extraction may write: a zip bomb of many small-but-full entries is stopped by
/// the total, one of a single huge entry by the per-file limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Per file, inflated, whatever the archive declares.
    pub file_bytes: u64,
    /// All files together, inflated.
    pub total_bytes: u64,
    /// Files written.
    pub files: usize,
}

impl Limits {
    /// A runtime wheel's include folder: 101 files, 4.7 MB in 13.5.
    pub const HEADERS: Limits = Limits { file_bytes: MAX_HEADER_BYTES, total_bytes: 64 << 20, files: 4096 };
    /// The libclang wheel's `clang/native`: a few files, 64 MB.
    pub const LIBCLANG: Limits = Limits { file_bytes: MAX_LIBCLANG_BYTES, total_bytes: 512 << 20, files: 256 };

    /// `max_bytes` per file, four times that in all, 4096 files.
    pub fn per_file(max_bytes: u64) -> Limits {
        Limits { file_bytes: max_bytes, total_bytes: max_bytes.saturating_mul(4), files: 4096 }
    }
}

/// Entries an archive may have at all (listed, not only extracted); a wheel has a few hundred.
pub const MAX_ARCHIVE_ENTRIES: usize = 1 << 16;

/// The stamp file an extracted folder holds: the sha256 of the wheel it came from.
const STAMP: &str = ".sha256";

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
                crate::manifest::Platform::Linux => include_dirs.push(dir),
                crate::manifest::Platform::Windows => windows_include_dirs.push(dir),
            }
        }
        let source = pin
            .packages
            .iter()
            .map(|p| format!("{} {}{}", p.name, p.version, p.platform.as_ref().map(|x| format!(" ({x})")).unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", ");
        Ok(ToolkitHeaders { version: pin.version, include_dirs, windows_include_dirs, origin: Origin::Pinned, source })
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
            if sha256_file(&path)? == p.sha256.0 {
                return Ok(path);
            }
            // A half-downloaded or tampered file: drop it and fetch again.
            fs::remove_file(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
        }
        if self.offline {
            return Err(Error::NotCached { package: format!("{}=={}", p.name, p.version), cache: wheels });
        }
        mkdir(&wheels)?;
        let tmp = tempfile::Builder::new()
            .prefix(&crate::scratch::prefix("download"))
            .tempdir_in(&wheels)
            .map_err(|source| Error::Io { path: wheels.clone(), source })?;
        let spec = format!("{}=={}", p.name, p.version);
        self.report_download(p);
        let output = Command::new(&self.python)
            .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check"])
            .args(["--platform", p.platform.as_deref().unwrap_or(&self.platform), "--dest"])
            .arg(tmp.path())
            .arg(&spec)
            .output()
            .map_err(|source| Error::Pip { package: spec.clone(), detail: format!("could not run `{} -m pip`: {source}", self.python) })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let detail = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
            return Err(Error::Pip { package: spec, detail });
        }
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

pub fn sha256_file(path: &Path) -> Result<String, Error> {
    let mut f = fs::File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// Checks an archive entry name and returns the path under `prefix` it stands for, if any.
///
/// Refused anywhere in the archive: absolute paths, drive letters and `:` streams, `..`,
/// backslashes (a Windows-made zip's separator, which would otherwise name a file
/// `a\..\b`), NUL and other control characters. Refused under `prefix`: names Windows cannot
/// hold as files (`CON`, `nul.h`, `COM1`, a trailing dot or space), so that the cache is the
/// same on every platform. Other entries outside `prefix` are skipped, not refused.
pub fn entry_path_under(name: &str, prefix: &str) -> Result<Option<PathBuf>, String> {
    if name.contains('\\') || name.contains('\0') {
        return Err(format!("archive entry `{}` has a backslash or NUL in its name", name.replace('\0', "\\0")));
    }
    if name.chars().any(char::is_control) {
        return Err(format!("archive entry `{}` has a control character in its name", name.escape_debug()));
    }
    let path = Path::new(name);
    for c in path.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err(format!("archive entry `{name}` climbs out of the archive (`..`)")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("archive entry `{name}` has an absolute path"))
            }
        }
    }
    if name.contains(':') {
        return Err(format!("archive entry `{name}` has a drive or stream separator `:`"));
    }
    let prefix = prefix.trim_end_matches('/');
    let Some(rel) = path.strip_prefix(prefix).ok().filter(|r| !r.as_os_str().is_empty()) else { return Ok(None) };
    // Only for what is extracted: elsewhere such a name is no harm to us.
    for part in rel.components().map(|c| c.as_os_str().to_string_lossy()) {
        if is_windows_reserved(&part) {
            return Err(format!("archive entry `{name}` has a component (`{part}`) that Windows reserves"));
        }
    }
    Ok(Some(rel.to_owned()))
}

/// `CON`, `aux.h`, `COM1.txt`, `name.` or `name ` : not a file name on Windows.
fn is_windows_reserved(part: &str) -> bool {
    if part.ends_with('.') || part.ends_with(' ') {
        return true;
    }
    let stem = part.split('.').next().unwrap_or(part).trim_end().to_ascii_uppercase();
    matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$")
        || (stem.len() == 4
            && (stem.starts_with("COM") || stem.starts_with("LPT"))
            && stem.as_bytes()[3].is_ascii_digit())
}

/// How many entries a zip's end-of-central-directory record (or its zip64 one) says it has;
/// `None` where it cannot be read (the zip reader then has its own say).
fn listed_entries(path: &Path) -> Option<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let tail_len = len.min(22 + 65535);
    f.seek(SeekFrom::Start(len - tail_len)).ok()?;
    let mut tail = vec![0; tail_len as usize];
    f.read_exact(&mut tail).ok()?;
    let eocd = tail.windows(4).rposition(|w| w == b"PK\x05\x06")?;
    let count = u16::from_le_bytes(tail.get(eocd + 10..eocd + 12)?.try_into().ok()?);
    if count != 0xFFFF {
        return Some(u64::from(count));
    }
    // zip64: the locator sits just before the record and points at the zip64 record.
    let locator = tail.get(eocd.checked_sub(20)?..eocd)?;
    if &locator[..4] != b"PK\x06\x07" {
        return None;
    }
    let at = u64::from_le_bytes(locator[8..16].try_into().ok()?);
    f.seek(SeekFrom::Start(at)).ok()?;
    let mut rec = [0u8; 40];
    f.read_exact(&mut rec).ok()?;
    (&rec[..4] == b"PK\x06\x06").then(|| u64::from_le_bytes(rec[32..40].try_into().unwrap_or_default()))
}

/// Whether `dir` is a finished extraction of the wheel with this sha256.
fn is_stamped(dir: &Path, sha256: &str) -> bool {
    fs::read_to_string(dir.join(STAMP)).is_ok_and(|s| s.trim() == sha256)
}

/// Extracts the files under `include` from a wheel into `dest`, atomically, with
/// [`Limits::per_file`]`(max_bytes)`.
pub fn extract_includes(wheel: &Path, include: &str, dest: &Path, stamp: &str, max_bytes: u64) -> Result<(), Error> {
    extract_with_limits(wheel, include, dest, stamp, &Limits::per_file(max_bytes))
}

/// Extracts the files under `include` from a wheel into `dest`, atomically.
///
/// Every entry name is checked (see [`entry_path_under`]); only regular files are written
/// (a symlink or any other special entry under `include` refuses the archive); duplicates are
/// refused, including names that differ only in case (one file on macOS and Windows); and
/// `limits` bounds each file, all files together and their number, whatever the archive
/// declares. The files go to a scratch folder beside `dest` (`.extract-<pid>-XXXX`), which
/// gets the stamp (`.sha256`, holding `stamp`) last and is then renamed to `dest`: a refused
/// archive or a killed run leaves no `dest` and nothing that a later run would trust, and
/// the scratch folders of killed runs are removed by the next extraction.
pub fn extract_with_limits(wheel: &Path, include: &str, dest: &Path, stamp: &str, limits: &Limits) -> Result<(), Error> {
    let bad = |message: String| Error::UnsafeArchive { archive: wheel.to_owned(), message };
    let file = fs::File::open(wheel).map_err(|source| Error::Io { path: wheel.to_owned(), source })?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| bad(format!("not a readable zip archive: {e}")))?;
    if zip.len() > MAX_ARCHIVE_ENTRIES {
        return Err(bad(format!("{} entries, more than the {MAX_ARCHIVE_ENTRIES} a wheel may have", zip.len())));
    }
    // The zip reader keeps one entry per name: a name listed twice would vanish silently, and
    // which of its contents another tool extracts is anyone's guess.
    if let Some(listed) = listed_entries(wheel) {
        if listed > zip.len() as u64 {
            return Err(bad(format!("its directory lists {listed} entries but only {} distinct names: a name appears twice", zip.len())));
        }
    }
    let parent = dest.parent().unwrap_or(Path::new("."));
    mkdir(parent)?;
    crate::scratch::remove_stale(parent, "extract");
    let tmp = tempfile::Builder::new()
        .prefix(&crate::scratch::prefix("extract"))
        .tempdir_in(parent)
        .map_err(|source| Error::Io { path: parent.to_owned(), source })?;
    // Where each entry goes, checked for every entry before anything is written.
    let mut plan: Vec<(usize, String, PathBuf)> = Vec::new();
    let mut seen = std::collections::BTreeMap::new();
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(|e| bad(format!("entry {i}: {e}")))?;
        let name = entry.name().to_owned();
        let Some(rel) = entry_path_under(&name, include).map_err(bad)? else { continue };
        if entry.is_dir() {
            continue;
        }
        // Unix file type bits, where the archive has them: 0 (none given) or a regular file.
        let special = entry.unix_mode().is_some_and(|m| !matches!(m & 0o170000, 0 | 0o100000));
        if entry.is_symlink() || !entry.is_file() || special {
            return Err(bad(format!("archive entry `{name}` is not a regular file (a symlink?)")));
        }
        if rel == Path::new(STAMP) {
            return Err(bad(format!("archive entry `{name}` has the name of the cache's own stamp file")));
        }
        let folded: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().to_lowercase()).collect();
        let folded = folded.join("/");
        if let Some(first) = seen.insert(folded, name.clone()) {
            let how = if first == name { "appears twice" } else { "names the same file as" };
            let other = if first == name { String::new() } else { format!(" `{first}` (on a case-insensitive file system)") };
            return Err(bad(format!("archive entry `{name}` {how}{other}")));
        }
        if entry.size() > limits.file_bytes {
            return Err(bad(format!("archive entry `{name}` declares {} bytes, more than the {} allowed", entry.size(), limits.file_bytes)));
        }
        plan.push((i, name, rel));
    }
    if plan.is_empty() {
        return Err(bad(format!("no files under `{include}/`: is the manifest's `include` right?")));
    }
    if plan.len() > limits.files {
        return Err(bad(format!("{} files under `{include}/`, more than the {} allowed", plan.len(), limits.files)));
    }
    let mut total = 0u64;
    let half = plan.len() / 2;
    for (n, (i, name, rel)) in plan.iter().enumerate() {
        if n == half {
            crate::fault::point("fetch:extract-half");
        }
        let mut entry = zip.by_index(*i).map_err(|e| bad(format!("archive entry `{name}`: {e}")))?;
        let out = tmp.path().join(rel);
        if let Some(dir) = out.parent() {
            if dir.is_file() {
                return Err(bad(format!("archive entry `{name}` is inside a path that is a file")));
            }
            mkdir(dir)?;
        }
        let mut data = Vec::new();
        // Read one byte past the limit: a lying size field must not let a bomb through.
        let room = limits.file_bytes.min(limits.total_bytes - total);
        (&mut entry)
            .take(room + 1)
            .read_to_end(&mut data)
            .map_err(|e| bad(format!("archive entry `{name}`: {e}")))?;
        if data.len() as u64 > limits.file_bytes {
            return Err(bad(format!("archive entry `{name}` inflates past {} bytes", limits.file_bytes)));
        }
        total += data.len() as u64;
        if total > limits.total_bytes {
            return Err(bad(format!("the files under `{include}/` inflate past {} bytes in all", limits.total_bytes)));
        }
        if out.is_dir() {
            return Err(bad(format!("archive entry `{name}` is also a folder of other entries")));
        }
        fs::write(&out, &data).map_err(|source| Error::Io { path: out.clone(), source })?;
    }
    fs::write(tmp.path().join(STAMP), stamp).map_err(|source| Error::Io { path: tmp.path().to_owned(), source })?;
    crate::fault::point("fetch:extracted");
    if fs::symlink_metadata(dest).is_ok() {
        // The stamp goes first: a removal cut short must not leave a folder that looks done.
        let _ = fs::remove_file(dest.join(STAMP));
        let removed = if dest.is_dir() && !dest.is_symlink() { fs::remove_dir_all(dest) } else { fs::remove_file(dest) };
        removed.map_err(|source| Error::Io { path: dest.to_owned(), source })?;
        crate::fault::point("fetch:old-removed");
    }
    let tmp = tmp.keep();
    fs::rename(&tmp, dest).map_err(|source| {
        let _ = fs::remove_dir_all(&tmp);
        Error::Io { path: dest.to_owned(), source }
    })?;
    Ok(())
}

/// Finds the include folder of a toolkit on this machine.
///
/// Accepts a toolkit root (`/usr/local/cuda`), its `include/` folder, a
/// `targets/<triple>/include` folder, or a pip/conda layout (`.../nvidia/cu13/include` or
/// `.../nvidia/cu13`). Returns the folder that holds `cuda.h`.
///
/// What cannot be read is said as it is (a folder without permission, a symbolic link loop),
/// not taken for a folder without cuda.h.
pub fn locate_toolkit(path: &Path) -> Result<PathBuf, Error> {
    let unreadable = |at: &Path, e: std::io::Error| {
        let what = match e.raw_os_error() {
            #[cfg(unix)]
            Some(libc::ELOOP) => "a symbolic link loop".to_owned(),
            _ => e.to_string(),
        };
        let detail = if at == path {
            format!("it cannot be read: {what}")
        } else {
            format!("{} cannot be read: {what}", at.display())
        };
        Error::ToolkitNotFound { path: path.to_owned(), detail }
    };
    match fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::ToolkitNotFound { path: path.to_owned(), detail: "no such file or directory".into() })
        }
        Err(e) => return Err(unreadable(path, e)),
        Ok(m) if !m.is_dir() => {
            return Err(Error::ToolkitNotFound { path: path.to_owned(), detail: "it is a file, not a folder: give the toolkit's folder".into() })
        }
        Ok(_) => {}
    }
    // Listing it tells a folder without read permission from one without cuda.h.
    fs::read_dir(path).map_err(|e| unreadable(path, e))?;
    let candidates = [
        path.to_owned(),
        path.join("include"),
        path.join("targets/x86_64-linux/include"),
        path.join("targets/sbsa-linux/include"),
        path.join("cuda_runtime/include"),
    ];
    for c in &candidates {
        let header = c.join("cuda.h");
        match fs::metadata(&header) {
            Ok(m) if m.is_file() => return Ok(c.clone()),
            Ok(_) => {}
            // A missing folder on the way (ENOTDIR: `include` is a file) is no toolkit here.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.kind() == std::io::ErrorKind::NotADirectory => {}
            Err(e) => return Err(unreadable(&header, e)),
        }
    }
    Err(Error::ToolkitNotFound {
        path: path.to_owned(),
        detail: "no cuda.h in it, nor in its include/ folder: give a toolkit root, its include/ folder, or a pip layout such as .../nvidia/cu13/include".into(),
    })
}

/// Reads `#define CUDA_VERSION nnnnn` off a cuda.h.
pub fn read_cuda_version(include_dir: &Path) -> Result<ToolkitVersion, Error> {
    let path = include_dir.join("cuda.h");
    let bytes = fs::read(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
    let text = String::from_utf8_lossy(&bytes);
    // `\r` too: clang ends a line at a lone carriage return, and so does a cuda.h saved so.
    for line in text.split(['\n', '\r']) {
        let mut words = line.split_whitespace();
        if words.next() == Some("#define") && words.next() == Some("CUDA_VERSION") {
            if let Some(v) = words.next().and_then(|w| w.parse::<u32>().ok()) {
                if v >= 1000 {
                    return Ok(ToolkitVersion::from_cuda_version(v));
                }
            }
        }
    }
    Err(Error::ToolkitNotFound { path, detail: "it has no `#define CUDA_VERSION <number>` line: is it a real cuda.h?".into() })
}

/// The toolkit to use when `--toolkit` is not given: the first of `$CUDA_PATH`,
/// `$CUDA_HOME` and `/usr/local/cuda` that holds a cuda.h, if any.
pub fn discover_local_toolkit() -> Option<PathBuf> {
    let mut v: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(|k| std::env::var_os(k))
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect();
    v.push(PathBuf::from("/usr/local/cuda"));
    v.into_iter().find(|p| locate_toolkit(p).is_ok())
}
