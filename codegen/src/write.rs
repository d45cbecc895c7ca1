//! The one way files reach `generated/`: compare, then replace the whole tree at once.
//!
//! In check mode nothing is written; stale, missing and extra files are named in the error
//! together with the command that fixes them (rust-analyzer's `ensure_file_contents`).
//!
//! In write mode the complete new tree is built in a sibling folder (`.generated.new-<pid>-<n>`,
//! unchanged files hard-linked from the old tree so that their timestamps stay), then swapped
//! with the old one in one step, and the old one removed. A run killed at any moment leaves
//! the output folder either entirely old or entirely new; its leftovers beside it are removed
//! by the next run. See [`swap_dirs`] for how the swap is done per platform.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::{fault, scratch, Error};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Write,
    Check,
}

/// What a write changed, as paths relative to the root.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WriteReport {
    pub written: Vec<String>,
    pub removed: Vec<String>,
    pub unchanged: usize,
}

/// Every file under `root`, relative, `/`-separated, sorted. A missing root is empty.
pub fn list_tree(root: &Path) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && rel.as_os_str().is_empty() => return Ok(out),
            Err(source) => return Err(Error::Io { path: dir, source }),
        };
        for entry in rd {
            let entry = entry.map_err(|source| Error::Io { path: dir.clone(), source })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = rel.join(&name);
            let ft = entry.file_type().map_err(|source| Error::Io { path: root.join(&child), source })?;
            if ft.is_dir() {
                stack.push(child);
            } else {
                out.push(child.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Why `root` may not be replaced as a whole, if it holds anything the generator did not
/// write. Called before any work, and only where a run may write: `root` is compared by its
/// canonical path (`../repo`, an absolute path and a symlink are the same folder), so that a
/// repository, the manifest or the cache can never be swapped away however `--out` spells them.
///
/// Refused: `root` being a file; `root` being or holding one of `keep` (the manifest, the
/// cache: each with what it is); a `.git` anywhere in it; and any file `ours` does not
/// recognise as the generator's (by its marker), a link or other special file included. A
/// missing `root`, or one that only holds the generator's files, passes.
pub fn check_replaceable(root: &Path, keep: &[(&Path, &str)], ours: &dyn Fn(&str, &[u8]) -> bool) -> Result<(), Error> {
    let refuse = |reason: String| Err(Error::NotOurs { out: root.to_owned(), reason });
    let canonical = canonical_lenient(root).map_err(|source| Error::Io { path: root.to_owned(), source })?;
    let mut found = Vec::new();
    let mut kept_inside = Vec::new();
    for (path, what) in keep {
        let kept = canonical_lenient(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        if kept == canonical {
            return refuse(format!("it is {what} ({})", path.display()));
        }
        if kept.starts_with(&canonical) {
            found.push(format!("{} ({what})", path.display()));
            kept_inside.push(kept);
        }
    }
    let meta = match fs::symlink_metadata(&canonical) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && found.is_empty() => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return refuse(format!("it would hold what is not the generator's:\n    {}", found.join("\n    ")));
        }
        Err(source) => return Err(Error::Io { path: root.to_owned(), source }),
    };
    if !meta.is_dir() {
        return refuse("it is a file, not a folder".into());
    }
    // A sorted walk that stops at the first few findings: a home folder given by mistake is
    // refused at once, not after reading all of it.
    const ENOUGH: usize = 8;
    let mut more = false;
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = canonical.join(&rel);
        let mut entries: Vec<fs::DirEntry> = fs::read_dir(&dir)
            .and_then(|rd| rd.collect::<std::io::Result<_>>())
            .map_err(|source| Error::Io { path: dir.clone(), source })?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            if found.len() == ENOUGH {
                more = true;
                break;
            }
            let child = rel.join(entry.file_name());
            if kept_inside.iter().any(|k| *k == canonical.join(&child)) {
                continue; // said above, as the manifest or the cache
            }
            let shown = root.join(&child).display().to_string();
            let ft = entry.file_type().map_err(|source| Error::Io { path: entry.path(), source })?;
            if entry.file_name() == ".git" {
                found.push(format!("{shown} (a git repository)"));
            } else if ft.is_dir() {
                stack.push(child);
            } else if !ft.is_file() {
                found.push(format!("{shown} (a link or special file, which cuda-sys-gen never writes)"));
            } else {
                let head = read_head(&entry.path()).map_err(|source| Error::Io { path: entry.path(), source })?;
                if !ours(&child.to_string_lossy().replace('\\', "/"), &head) {
                    found.push(format!("{shown} (not written by cuda-sys-gen: it has no `@generated` marker)"));
                }
            }
        }
        if more {
            break;
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    let also = if more { "\n    and more" } else { "" };
    refuse(format!("it holds what cuda-sys-gen did not write:\n    {}{also}", found.join("\n    ")))
}

/// The first KiB of a file: where the generator's marker is.
fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(1024);
    fs::File::open(path)?.take(1024).read_to_end(&mut head)?;
    Ok(head)
}

/// `path` made absolute and canonical as far as it exists (links followed), with the part
/// that does not exist yet appended (`..` in it taken lexically: nothing there is a link).
pub fn canonical_lenient(path: &Path) -> std::io::Result<PathBuf> {
    let absolute = if path.is_absolute() { path.to_owned() } else { std::env::current_dir()?.join(path) };
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        match fs::canonicalize(existing) {
            Ok(mut base) => {
                for c in rest.iter().rev() {
                    match c {
                        std::path::Component::ParentDir => {
                            base.pop();
                        }
                        std::path::Component::Normal(n) => base.push(n),
                        _ => {}
                    }
                }
                return Ok(base);
            }
            Err(e) => {
                let (Some(parent), Some(last)) = (existing.parent(), existing.components().next_back()) else {
                    return Err(e);
                };
                rest.push(last);
                existing = parent;
            }
        }
    }
}

/// Makes `root` hold exactly `files` (relative path to bytes), all at once.
///
/// Nothing changes when every file already has its bytes. Otherwise the new tree is built
/// beside `root` and swapped in ([`swap_dirs`]): an error or a kill before the swap leaves
/// `root` as it was, after it `root` is entirely new. A symlinked `root` is followed: the
/// folder it points to is the one replaced.
pub fn sync_tree(
    root: &Path,
    files: &BTreeMap<String, Vec<u8>>,
    mode: Mode,
    command: &str,
) -> Result<WriteReport, Error> {
    let root = follow_link(root)?;
    let (parent, name) = split_root(&root)?;
    if mode == Mode::Write {
        recover(&parent, &name, &root)?;
    }
    let existing = list_tree(&root)?;
    let mut report = WriteReport::default();
    let mut changed = Vec::new();
    let mut same = std::collections::BTreeSet::new();
    for (rel, bytes) in files {
        check_rel(rel)?;
        let path = root.join(rel);
        match fs::read(&path) {
            Ok(old) if &old == bytes => {
                report.unchanged += 1;
                same.insert(rel.as_str());
            }
            Ok(_) => changed.push(rel.clone()),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
                changed.push(rel.clone())
            }
            Err(source) => return Err(Error::Io { path, source }),
        }
    }
    let extra: Vec<String> = existing.into_iter().filter(|f| !files.contains_key(f)).collect();
    if mode == Mode::Check {
        if changed.is_empty() && extra.is_empty() {
            return Ok(report);
        }
        let mut stale: Vec<String> = changed.iter().map(|f| format!("{}", root.join(f).display())).collect();
        stale.extend(extra.iter().map(|f| format!("{} (not produced by the generator)", root.join(f).display())));
        return Err(Error::Stale { files: stale, command: command.to_owned() });
    }
    if changed.is_empty() && extra.is_empty() && root.is_dir() {
        return Ok(report);
    }
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    fs::create_dir_all(&parent).map_err(io(&parent))?;
    let new = scratch::create_dir(&parent, &new_kind(&name)).map_err(io(&parent))?;
    let half = files.len() / 2;
    for (i, (rel, bytes)) in files.iter().enumerate() {
        if i == half {
            fault::point("write:staged-half");
        }
        fault::slow_write();
        let target = new.path().join(rel);
        if let Some(dir) = target.parent() {
            fs::create_dir_all(dir).map_err(io(dir))?;
        }
        // An unchanged file keeps its inode, and with it the timestamp cargo and git look at.
        if same.contains(rel.as_str()) && fs::hard_link(root.join(rel), &target).is_ok() {
            continue;
        }
        write_synced(&target, bytes).map_err(io(&target))?;
    }
    if let Ok(meta) = fs::metadata(&root) {
        let _ = fs::set_permissions(new.path(), meta.permissions());
    }
    sync_dir(new.path());
    fault::point("write:staged");
    let old = swap_dirs(new.path(), &root, &parent, &name)?;
    fault::point("write:swapped");
    // `new`'s path now holds the old tree (or nothing, if there was none): dropping removes it.
    drop(old);
    drop(new);
    sync_dir(&parent);
    report.written = changed;
    report.removed = extra;
    Ok(report)
}

/// The scratch kind of a new tree for the output folder `name`: `.generated.new-<pid>-<n>`.
fn new_kind(name: &str) -> String {
    format!("{name}.new")
}

/// The scratch kind of an old tree moved aside by the fallback swap.
fn old_kind(name: &str) -> String {
    format!("{name}.old")
}

/// Puts `new` where `root` is, in one step where the platform can; returns the scratch folder
/// that holds the old tree (to be removed), if it is not `new`'s own path.
///
/// - Linux: `renameat2(RENAME_EXCHANGE)` swaps the two folders atomically; `new`'s path then
///   holds the old tree. A missing `root` is a plain `rename`, atomic too.
/// - Elsewhere, or where the file system refuses the exchange (`EINVAL`, `ENOSYS`): `root` is
///   renamed aside to `.<name>.old-<pid>-<n>`, then `new` renamed into place. Between the two
///   renames `root` does not exist; a run killed there is repaired by the next one, which
///   renames the old tree back before doing anything else ([`recover`]), so `root` is again
///   entirely old.
pub fn swap_dirs(new: &Path, root: &Path, parent: &Path, name: &str) -> Result<Option<scratch::Scratch>, Error> {
    let io = |path: &Path, source| Error::Io { path: path.to_owned(), source };
    if !root.exists() {
        fs::rename(new, root).map_err(|e| io(root, e))?;
        return Ok(None);
    }
    if !fault::active("write:no-exchange") {
        match exchange(new, root) {
            Ok(()) => return Ok(None),
            Err(e) if exchange_unsupported(&e) => {}
            Err(e) => return Err(io(root, e)),
        }
    }
    // A fresh name, reserved by creating it and freed again: not every platform renames a
    // folder onto an empty one.
    let aside = scratch::create_dir(parent, &old_kind(name)).map_err(|e| io(parent, e))?;
    fs::remove_dir(aside.path()).map_err(|e| io(aside.path(), e))?;
    fs::rename(root, aside.path()).map_err(|e| io(root, e))?;
    fault::point("write:moved-old");
    if let Err(e) = fs::rename(new, root) {
        let _ = fs::rename(aside.path(), root);
        return Err(io(root, e));
    }
    Ok(Some(aside))
}

/// Before a write: if a fallback swap was killed between its two renames, `root` is missing
/// and the old tree sits in a stale `.<name>.old-*`: put it back. Then remove every stale
/// scratch folder of `root` (new trees of killed runs, old trees already replaced).
fn recover(parent: &Path, name: &str, root: &Path) -> Result<(), Error> {
    let old = scratch::stale_entries(parent, &old_kind(name));
    if !root.exists() {
        if let Some(last) = old.last() {
            fs::rename(last, root).map_err(|source| Error::Io { path: root.to_owned(), source })?;
        }
    }
    scratch::remove_stale(parent, &old_kind(name));
    scratch::remove_stale(parent, &new_kind(name));
    Ok(())
}

#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    };
    let (a, b) = (c(a)?, c(b)?);
    // The raw system call: glibc's renameat2() wrapper is younger than some systems we run on.
    // SAFETY: both paths are NUL-terminated and live across the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

fn exchange_unsupported(e: &std::io::Error) -> bool {
    #[cfg(target_os = "linux")]
    if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)) {
        return true;
    }
    e.kind() == std::io::ErrorKind::Unsupported
}

/// `root` itself, or the folder a symlink at `root` points to.
fn follow_link(root: &Path) -> Result<PathBuf, Error> {
    match fs::symlink_metadata(root) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(root).map_err(|source| Error::Io { path: root.to_owned(), source })
        }
        _ => Ok(root.to_owned()),
    }
}

/// The folder that holds `root`, and `root`'s own name.
fn split_root(root: &Path) -> Result<(PathBuf, String), Error> {
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned());
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return Err(Error::Io {
            path: root.to_owned(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the output folder must have a name of its own (not `/`, `.` or `..`)",
            ),
        });
    };
    let parent = match root.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    Ok((parent, name))
}

/// A generated path must stay inside the tree: relative, no `..`.
fn check_rel(rel: &str) -> Result<(), Error> {
    let ok = !rel.is_empty() && Path::new(rel).components().all(|c| matches!(c, std::path::Component::Normal(_)));
    if ok {
        Ok(())
    } else {
        Err(Error::Emit { file: rel.to_owned(), message: "a generated file must have a plain relative path".into() })
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = fs::File::create(path)?;
    std::io::Write::write_all(&mut f, bytes)?;
    f.sync_all()
}

/// Flushes a folder's entries to disk, where the platform allows it (a kill needs no flush;
/// a power cut does). Best effort.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(f) = fs::File::open(dir) {
        let _ = f.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn files(entries: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        entries.iter().map(|(p, t)| (p.to_string(), t.as_bytes().to_vec())).collect()
    }

    fn read(root: &Path) -> Vec<(String, String)> {
        list_tree(root).unwrap().into_iter().map(|f| (f.clone(), fs::read_to_string(root.join(&f)).unwrap())).collect()
    }

    #[test]
    fn the_tree_is_replaced_whole_and_unchanged_files_keep_their_inode() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("generated");
        let first = files(&[("Cargo.toml", "a"), ("src/lib.rs", "b"), ("src/old.rs", "c")]);
        let r = sync_tree(&root, &first, Mode::Write, "cmd").unwrap();
        assert_eq!(r.written.len(), 3);
        let lib_inode = fs::metadata(root.join("src/lib.rs")).unwrap().ino();
        let second = files(&[("Cargo.toml", "a2"), ("src/lib.rs", "b"), ("src/new.rs", "d")]);
        let r = sync_tree(&root, &second, Mode::Write, "cmd").unwrap();
        assert_eq!(
            (r.written, r.removed, r.unchanged),
            (vec!["Cargo.toml".to_string(), "src/new.rs".to_string()], vec!["src/old.rs".to_string()], 1)
        );
        assert_eq!(
            read(&root),
            vec![
                ("Cargo.toml".into(), "a2".into()),
                ("src/lib.rs".into(), "b".into()),
                ("src/new.rs".into(), "d".into())
            ]
        );
        assert_eq!(fs::metadata(root.join("src/lib.rs")).unwrap().ino(), lib_inode, "an unchanged file was rewritten");
        let names: Vec<String> =
            fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["generated"], "scratch folders left beside the output");
    }

    #[test]
    fn nothing_changed_touches_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("out");
        let f = files(&[("a.rs", "x")]);
        sync_tree(&root, &f, Mode::Write, "cmd").unwrap();
        let inode = fs::metadata(&root).unwrap().ino();
        let r = sync_tree(&root, &f, Mode::Write, "cmd").unwrap();
        assert_eq!((r.written.len(), r.removed.len(), r.unchanged), (0, 0, 1));
        assert_eq!(fs::metadata(&root).unwrap().ino(), inode, "the folder was swapped for nothing");
    }

    #[test]
    fn check_mode_names_stale_files_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("out");
        sync_tree(&root, &files(&[("a.rs", "x"), ("b.rs", "y")]), Mode::Write, "cmd").unwrap();
        let err = sync_tree(&root, &files(&[("a.rs", "x2"), ("c.rs", "z")]), Mode::Check, "cargo xtask generate")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a.rs") && err.contains("c.rs") && err.contains("b.rs (not produced by the generator)"),
            "{err}"
        );
        assert!(err.contains("run `cargo xtask generate`"), "{err}");
        assert_eq!(read(&root), vec![("a.rs".into(), "x".into()), ("b.rs".into(), "y".into())]);
    }

    #[test]
    fn a_symlinked_output_folder_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        sync_tree(&real, &files(&[("a.rs", "x")]), Mode::Write, "cmd").unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        sync_tree(&dir.path().join("link"), &files(&[("a.rs", "y")]), Mode::Write, "cmd").unwrap();
        assert!(fs::symlink_metadata(dir.path().join("link")).unwrap().file_type().is_symlink());
        assert_eq!(read(&real), vec![("a.rs".into(), "y".into())]);
    }

    #[test]
    fn generated_paths_stay_inside_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["../x.rs", "/etc/x.rs", "", "a/../../x"] {
            assert!(sync_tree(&dir.path().join("out"), &files(&[(bad, "x")]), Mode::Write, "cmd").is_err(), "{bad}");
        }
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
