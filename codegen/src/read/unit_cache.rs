//! bindgen's output per translation unit, kept beside the header cache
//! (`<cache>/bindgen/`) and reused while nothing it was made from has changed.
//!
//! bindgen is nearly all of a regeneration's time (about 90%: `cargo xtask bench-phases`), and
//! between two runs its inputs rarely change. An entry is reused only when all of these are
//! the same as when it was written: this executable (path, size and modification time: the
//! generator's code, bindgen's pinned version and every builder option are compiled into it),
//! libclang (path and version), the unit (toolkit, target, header rows, include folders), the
//! content (sha256) of every file clang included, as bindgen's own dependency tracking
//! reports them, and every environment variable bindgen read. Anything else is a miss, and a
//! miss is an ordinary bindgen run, so the output is the same with or without the cache.
//!
//! One file per unit and executable: a rebuilt generator overwrites its own entries, so the
//! cache does not grow with every build. Writes go through a temporary file and a rename; a
//! cache that cannot be read or written only makes the run slower.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::read::clang::{self, BindgenOutput, Deps, SourceLine, Unit};
use crate::Error;

/// The folder under the header cache.
pub const DIR: &str = "bindgen";

/// Bumped when the stored form changes.
const FORMAT: &str = "cuda-sys-gen bindgen unit cache 2";

/// The scratch kind of an entry being written (`.unit-<pid>-<n>` beside the entries).
const SCRATCH_KIND: &str = "unit";

#[derive(Serialize, Deserialize)]
struct Stored {
    format: String,
    key: String,
    /// Every file clang included, with its sha256.
    files: Vec<(PathBuf, String)>,
    /// Every environment variable bindgen read, with its value then.
    env: Vec<(String, Option<String>)>,
    rust: String,
    locations: Vec<(String, PathBuf, usize)>,
}

/// Where a unit's output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The cache: nothing it was made from changed.
    Cache,
    /// A bindgen run.
    Bindgen,
}

/// [`clang::run_bindgen`] through the cache in `cache/bindgen/`.
pub fn run_bindgen(unit: &Unit<'_>, standins: &Path, cache: &Path) -> Result<(BindgenOutput, Source), Error> {
    cached(unit, "", standins, cache, || clang::run_bindgen_tracked(unit, standins))
}

/// [`clang::run_c_names`] through the same cache.
pub fn run_c_names(
    unit: &Unit<'_>,
    per_thread: bool,
    candidates: &[String],
    standins: &Path,
    cache: &Path,
) -> Result<(BindgenOutput, Source), Error> {
    let what = format!("C names, per-thread {per_thread}: {}", candidates.join(" "));
    cached(unit, &what, standins, cache, || clang::run_c_names(unit, per_thread, candidates, standins))
}

/// A run of `unit` (`what` tells runs of one unit apart), from the cache if it holds one.
fn cached(
    unit: &Unit<'_>,
    what: &str,
    standins: &Path,
    cache: &Path,
    run: impl FnOnce() -> Result<(BindgenOutput, Deps), Error>,
) -> Result<(BindgenOutput, Source), Error> {
    let Some((slot, key)) = identity(unit, what) else { return Ok((run()?.0, Source::Bindgen)) };
    let path = cache.join(DIR).join(format!("{slot}.json"));
    if let Some(out) = load(&path, &key) {
        return Ok((out, Source::Cache));
    }
    let (out, deps) = run()?;
    store(&path, key, &out, &deps, standins);
    Ok((out, Source::Bindgen))
}

/// The entry's file name (this executable, libclang, the unit, `extra`) and its full key (the
/// same, plus the executable's size and time, and libclang's version). None: no caching.
fn identity(unit: &Unit<'_>, extra: &str) -> Option<(String, String)> {
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
    // Loads libclang in this thread (as bindgen will) and says which one it is.
    let version = bindgen::clang_version().full;
    let library = clang_sys::get_library().map(|l| l.path().to_path_buf())?;
    let headers: Vec<String> = unit.headers.iter().map(|h| format!("{h:?}")).collect();
    let what = format!(
        "{FORMAT}\n{}\n{}\n{} {} {}\n{}\n{:?}",
        exe.display(),
        library.display(),
        unit.toolkit,
        unit.target,
        unit.first_api,
        headers.join("\n"),
        unit.include_dirs
    );
    let what = if extra.is_empty() { what } else { format!("{what}\n{extra}") };
    let slot = hex::encode(&Sha256::digest(what.as_bytes())[..16]);
    let key = hex::encode(Sha256::digest(format!("{what}\n{} {mtime}\n{version}", meta.len()).as_bytes()));
    Some((slot, key))
}

fn sha256_of(path: &Path) -> Option<String> {
    crate::archive::sha256_file(path).ok()
}

fn load(path: &Path, key: &str) -> Option<BindgenOutput> {
    let bytes = crate::input::read_bytes(path, "a cached bindgen output").ok()?;
    let stored: Stored = serde_json::from_slice(&bytes).ok()?;
    if stored.format != FORMAT || stored.key != key {
        return None;
    }
    if !stored.files.iter().all(|(file, hash)| sha256_of(file).as_deref() == Some(hash.as_str())) {
        return None;
    }
    if !stored.env.iter().all(|(k, v)| std::env::var(k).ok() == *v) {
        return None;
    }
    let locations: BTreeMap<String, SourceLine> =
        stored.locations.into_iter().map(|(name, file, line)| (name, SourceLine { file, line })).collect();
    Some(BindgenOutput { rust: stored.rust, locations })
}

/// Writes the entry, or nothing if a file it depends on cannot be read.
fn store(path: &Path, key: String, out: &BindgenOutput, deps: &Deps, standins: &Path) {
    // The stand-ins are compiled into this executable (part of the key) and live in a
    // temporary folder of this run.
    let mut files: Vec<&PathBuf> = deps.files.iter().filter(|f| !f.starts_with(standins)).collect();
    files.sort();
    files.dedup();
    let mut hashed = Vec::new();
    for f in files {
        let Some(h) = sha256_of(f) else { return };
        hashed.push((f.clone(), h));
    }
    let mut env: Vec<(String, Option<String>)> = deps.env.iter().map(|k| (k.clone(), std::env::var(k).ok())).collect();
    env.sort();
    env.dedup();
    let stored = Stored {
        format: FORMAT.to_owned(),
        key,
        files: hashed,
        env,
        rust: out.rust.clone(),
        locations: out.locations.iter().map(|(n, l)| (n.clone(), l.file.clone(), l.line)).collect(),
    };
    let Ok(bytes) = serde_json::to_vec(&stored) else { return };
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    // A scratch file of this process (`.unit-<pid>-<n>`, unique per call: tests run
    // generations side by side in one process); a killed run's are removed by the next.
    crate::scratch::remove_stale(dir, SCRATCH_KIND);
    static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!("{}{n}", crate::scratch::prefix(SCRATCH_KIND)));
    if std::fs::write(&tmp, bytes).is_err() || std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}
