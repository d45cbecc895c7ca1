//! Scratch folders beside their targets (`.generated.new-<pid>-<n>`, `.extract-<pid>-XXXX`),
//! named by the process that made them, so that a later run can tell a killed run's leftovers
//! from a live run's work in progress and remove only the former.
//!
//! A scratch entry is stale when the process its name carries is gone (on Unix, `kill(pid, 0)`
//! says no such process). Elsewhere, and for names that carry no pid, an entry is stale once it
//! is a day old. A reused pid only delays a clean-up; it never removes live work.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How old a scratch entry without a readable pid must be before it is removed.
const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// The name prefix of this process's scratch entries of one kind: `.<kind>-<pid>-`.
pub fn prefix(kind: &str) -> String {
    format!(".{kind}-{}-", std::process::id())
}

/// Creates a fresh folder `.<kind>-<pid>-<n>` in `parent`, with the permissions a plain
/// `mkdir` gives (unlike a temp dir's 0700), removed on drop unless [`Scratch::keep`] is called.
pub fn create_dir(parent: &Path, kind: &str) -> io::Result<Scratch> {
    let base = prefix(kind);
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    for n in 0..1000u32 {
        let path = parent.join(format!("{base}{}", nanos.wrapping_add(n)));
        match fs::create_dir(&path) {
            Ok(()) => return Ok(Scratch { path: Some(path) }),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("no free scratch name `{base}*` in {}", parent.display())))
}

/// A scratch folder that removes itself when dropped.
#[derive(Debug)]
pub struct Scratch {
    path: Option<PathBuf>,
}

impl Scratch {
    pub fn path(&self) -> &Path {
        self.path.as_deref().unwrap_or(Path::new(""))
    }

    /// Leaves the folder where it is (it has been renamed into place, say).
    pub fn keep(mut self) -> PathBuf {
        self.path.take().unwrap_or_default()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = fs::remove_dir_all(&p);
        }
    }
}

/// Scratch entries of `kind` in `dir` left by processes that no longer run, oldest name first.
pub fn stale_entries(dir: &Path, kind: &str) -> Vec<PathBuf> {
    let lead = format!(".{kind}-");
    let Ok(rd) = fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix(&lead) else { return false };
            match rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) {
                Some(pid) if pid == std::process::id() => false,
                Some(pid) if cfg!(unix) => !pid_alive(pid),
                _ => is_old(&e.path()),
            }
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// Removes the stale scratch entries of `kind` in `dir`; returns what it removed. Failures to
/// remove are ignored: the next run tries again, and nothing ever trusts a scratch entry.
pub fn remove_stale(dir: &Path, kind: &str) -> Vec<PathBuf> {
    let stale = stale_entries(dir, kind);
    for p in &stale {
        let _ = if p.is_dir() && !p.is_symlink() { fs::remove_dir_all(p) } else { fs::remove_file(p) };
    }
    stale
}

fn is_old(path: &Path) -> bool {
    let modified = fs::symlink_metadata(path).and_then(|m| m.modified());
    modified.ok().and_then(|m| m.elapsed().ok()).is_some_and(|age| age > STALE_AFTER)
}

/// Whether process `pid` is running (on Unix; elsewhere always true, so that nothing of a
/// process that may be running is touched).
#[cfg(unix)]
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
pub fn pid_alive(_pid: u32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dead_processes_leftovers_are_stale() {
        let dir = tempfile::tempdir().unwrap();
        let mine = create_dir(dir.path(), "out.new").unwrap();
        // pid 0x7fff_fff0 is above Linux's pid_max: never a running process.
        fs::create_dir(dir.path().join(".out.new-2147483632-7")).unwrap();
        fs::create_dir(dir.path().join(".out.new-nopid")).unwrap();
        fs::create_dir(dir.path().join("out")).unwrap();
        let stale = remove_stale(dir.path(), "out.new");
        assert_eq!(stale, vec![dir.path().join(".out.new-2147483632-7")]);
        assert!(mine.path().is_dir() && dir.path().join(".out.new-nopid").is_dir());
        let kept = mine.path().to_owned();
        drop(mine);
        assert!(!kept.exists());
    }
}
