//! The one way files reach `generated/`: compare, then write only what changed, all or nothing.
//!
//! In check mode nothing is written; stale, missing and extra files are named in the error
//! together with the command that fixes them (rust-analyzer's `ensure_file_contents`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::Error;

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

/// Makes `root` hold exactly `files` (relative path to bytes).
///
/// Write mode stages every changed file beside its target first and only then renames them
/// into place, so an error while staging (a full disk, a permission) leaves `root` as it was.
pub fn sync_tree(root: &Path, files: &BTreeMap<String, Vec<u8>>, mode: Mode, command: &str) -> Result<WriteReport, Error> {
    let existing = list_tree(root)?;
    let mut report = WriteReport::default();
    let mut changed = Vec::new();
    for (rel, bytes) in files {
        let path = root.join(rel);
        match fs::read(&path) {
            Ok(old) if &old == bytes => report.unchanged += 1,
            Ok(_) => changed.push(rel.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => changed.push(rel.clone()),
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
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    let cleanup = |staged: &[(PathBuf, PathBuf)]| {
        for (tmp, _) in staged {
            let _ = fs::remove_file(tmp);
        }
    };
    for rel in &changed {
        let target = root.join(rel);
        let dir = target.parent().map(Path::to_owned).unwrap_or_else(|| root.to_owned());
        if let Err(source) = fs::create_dir_all(&dir) {
            cleanup(&staged);
            return Err(Error::Io { path: dir, source });
        }
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dir.join(format!(".{name}.cuda-sys-gen-tmp"));
        if let Err(source) = fs::write(&tmp, &files[rel]) {
            cleanup(&staged);
            let _ = fs::remove_file(&tmp);
            return Err(Error::Io { path: tmp, source });
        }
        staged.push((tmp, target));
    }
    for (tmp, target) in &staged {
        fs::rename(tmp, target).map_err(|source| Error::Io { path: target.clone(), source })?;
    }
    for rel in &extra {
        let path = root.join(rel);
        fs::remove_file(&path).map_err(|source| Error::Io { path, source })?;
    }
    report.written = changed;
    report.removed = extra;
    Ok(report)
}
