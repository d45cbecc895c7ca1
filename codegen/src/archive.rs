//! Reading wheels (zip archives) safely: the sha256 of a file, which entry names may be
//! extracted and where to, and extraction into the cache with limits, atomically. Outside
//! input: every rule here is fuzzed (`cargo xtask fuzz`, target `extract`).

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::Error;

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

pub fn sha256_file(path: &Path) -> Result<String, Error> {
    let mut f = crate::input::open_regular(path, "a file to hash")?;
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
    let mut f = crate::input::open_regular(path, "a wheel").ok()?;
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
pub fn is_stamped(dir: &Path, sha256: &str) -> bool {
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
pub fn extract_with_limits(
    wheel: &Path,
    include: &str,
    dest: &Path,
    stamp: &str,
    limits: &Limits,
) -> Result<(), Error> {
    let bad = |message: String| Error::UnsafeArchive { archive: wheel.to_owned(), message };
    let file = crate::input::open_regular(wheel, "a wheel")?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| bad(format!("not a readable zip archive: {e}")))?;
    if zip.len() > MAX_ARCHIVE_ENTRIES {
        return Err(bad(format!("{} entries, more than the {MAX_ARCHIVE_ENTRIES} a wheel may have", zip.len())));
    }
    // The zip reader keeps one entry per name: a name listed twice would vanish silently, and
    // which of its contents another tool extracts is anyone's guess.
    if let Some(listed) = listed_entries(wheel) {
        if listed > zip.len() as u64 {
            return Err(bad(format!(
                "its directory lists {listed} entries but only {} distinct names: a name appears twice",
                zip.len()
            )));
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
            let other =
                if first == name { String::new() } else { format!(" `{first}` (on a case-insensitive file system)") };
            return Err(bad(format!("archive entry `{name}` {how}{other}")));
        }
        if entry.size() > limits.file_bytes {
            return Err(bad(format!(
                "archive entry `{name}` declares {} bytes, more than the {} allowed",
                entry.size(),
                limits.file_bytes
            )));
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
        (&mut entry).take(room + 1).read_to_end(&mut data).map_err(|e| bad(format!("archive entry `{name}`: {e}")))?;
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
        let removed =
            if dest.is_dir() && !dest.is_symlink() { fs::remove_dir_all(dest) } else { fs::remove_file(dest) };
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

fn mkdir(p: &Path) -> Result<(), Error> {
    fs::create_dir_all(p).map_err(|source| Error::Io { path: p.to_owned(), source })
}
