//! `--add-toolkit`'s change of the manifest and its crate as one: a journal beside the
//! manifest first, then the crate, then the manifest, then the journal removed ([`commit`]);
//! after a kill at any point, the next run makes the two agree from the journal ([`recover`]).
//! Also the manifest's only writer ([`write_manifest`]: a flushed temporary file renamed into
//! place, with the manifest's mode and owner; through a symbolic link to its target; in place
//! where the manifest has other hard links, which a rename would break).

use std::fs;
use std::path::{Path, PathBuf};

use crate::add_toolkit::signals::HoldSignals;
use crate::emit::Files;
use crate::version::ToolkitVersion;
use crate::write::WriteReport;
use crate::Error;

/// The manifest's change that [`commit`] makes: from its text now to the text with the pin
/// of `version`.
#[derive(Debug, Clone, Copy)]
pub struct ManifestChange<'a> {
    pub path: &'a Path,
    pub old: &'a str,
    pub new: &'a str,
    pub version: ToolkitVersion,
}

/// Writes the manifest's new text atomically (a temporary file beside it, flushed, then a
/// rename), keeping what the manifest is to others: its mode, and its owner and group where
/// this user may set them; a symbolic link stays one (its target is written, in the target's
/// folder); a manifest with other hard links is written in place (a rename would leave them
/// the old text; the journal covers a write cut short). Returns what the user should know of
/// how it was written (a link followed, an owner that could not be kept).
pub fn write_manifest(path: &Path, text: &str) -> Result<Vec<String>, Error> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    let mut said = Vec::new();
    let target = if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let target = fs::canonicalize(path).map_err(io(path))?;
        said.push(format!(
            "{} is a symbolic link: the new pin was written to its target, {}",
            path.display(),
            target.display()
        ));
        target
    } else {
        path.to_owned()
    };
    let old = fs::metadata(&target).ok();
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Some(links) = old.as_ref().map(MetadataExt::nlink).filter(|n| *n > 1) {
            let mut file = fs::OpenOptions::new().write(true).truncate(true).open(&target).map_err(io(&target))?;
            std::io::Write::write_all(&mut file, text.as_bytes()).map_err(io(&target))?;
            file.sync_all().map_err(io(&target))?;
            said.push(format!(
                "{} has {links} hard links: written in place, so that every one of them has the new pin",
                target.display()
            ));
            return Ok(said);
        }
    }
    let tmp = synced_temp(&target, text)?;
    if let Some(meta) = &old {
        fs::set_permissions(tmp.path(), meta.permissions()).map_err(io(&target))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if std::os::unix::fs::chown(tmp.path(), Some(meta.uid()), Some(meta.gid())).is_err() {
                // Only root gives a file away; a group of one's own is kept where it can be.
                let kept_group = std::os::unix::fs::chown(tmp.path(), None, Some(meta.gid())).is_ok();
                said.push(format!(
                    "{} was owned by user {} and group {}: the new file is this user's{}",
                    target.display(),
                    meta.uid(),
                    meta.gid(),
                    if kept_group { ", in the same group" } else { "" }
                ));
            }
        }
    }
    tmp.persist(&target).map_err(|e| Error::Io { path: target.clone(), source: e.error })?;
    sync_parent(&target);
    Ok(said)
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
    /// [`crate::write::tree_digest`] of the new crate: the output folder holds it once swapped in.
    pub crate_sha256: String,
    /// The manifest before and after the pin.
    pub old_manifest: String,
    pub new_manifest: String,
}

/// Writes `files` (rendered from `change.new`) to `out` and `change.new` to the manifest, as one
/// change: a journal first ([`Journal`], beside the manifest), then the crate (swapped in
/// whole by [`crate::write::sync_tree`]), then the manifest (renamed into place), then the journal
/// removed, with Ctrl-C held off from the journal to its removal. Killed at any point, the
/// next run finds the journal and makes the two agree ([`recover`]). A failure before the
/// crate is swapped in changes nothing; one after it leaves the journal for the next run.
pub fn commit(change: &ManifestChange, out: &Path, files: &Files, command: &str) -> Result<WriteReport, Error> {
    let manifest = change.path;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    let journal_at = journal_path(manifest);
    let journal = Journal {
        about: format!(
            "cuda-sys-gen generate --add-toolkit {} is changing {} and the crate at {}; if that run is gone, the next \
             `cuda-sys-gen generate` makes them agree again: do not edit",
            change.version,
            manifest.display(),
            out.display()
        ),
        pid: std::process::id(),
        version: change.version.to_string(),
        out: crate::write::canonical_lenient(out).map_err(io(out))?,
        crate_sha256: crate::write::tree_digest(&crate::write::as_written(files, command)),
        old_manifest: change.old.to_owned(),
        new_manifest: change.new.to_owned(),
    };
    let text = serde_json::to_string_pretty(&journal)
        .map_err(|e| Error::Io { path: journal_at.clone(), source: std::io::Error::other(e) })?;
    let hold = HoldSignals::now();
    // No clobbering: a journal already there is another run's, or a killed one's that
    // `recover` has not seen.
    let tmp = synced_temp(&journal_at, &text)?;
    tmp.persist_noclobber(&journal_at).map_err(|e| Error::Io { path: journal_at.clone(), source: e.error })?;
    sync_parent(&journal_at);
    crate::fault::point("pin:journal-written");
    let report = match crate::output_folder::write_crate(out, files, crate::write::Mode::Write, command) {
        Ok(r) => r,
        Err(e) => {
            // The crate is as it was: so is the manifest.
            let _ = fs::remove_file(&journal_at);
            return Err(e);
        }
    };
    crate::fault::point("pin:crate-written");
    let mut report = report;
    report.said = write_manifest(manifest, change.new).map_err(|e| Error::Interrupted {
        journal: journal_at.clone(),
        detail: format!(
            "the crate at {} holds CUDA {}, but {} could not be written ({e}): the next `generate` pins it there \
             from the journal",
            out.display(),
            change.version,
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
    let mut said = Vec::new();
    if now != *want {
        if now != *other {
            return Err(unreadable(format!(
                "{} changed since the interrupted run (process {}) that was adding CUDA {}",
                manifest.display(),
                journal.pid,
                journal.version
            )));
        }
        said = write_manifest(manifest, want)?;
    }
    fs::remove_file(&at).map_err(|source| Error::Io { path: at.clone(), source })?;
    sync_parent(&at);
    let how: String = said.iter().map(|l| format!("; {l}")).collect();
    Ok(Some(if crate_is_new {
        format!(
            "an interrupted `--add-toolkit {}` (process {}) had written the crate at {}: {} pins CUDA {} with it{how}",
            journal.version,
            journal.pid,
            journal.out.display(),
            manifest.display(),
            journal.version
        )
    } else {
        format!(
            "an interrupted `--add-toolkit {}` (process {}) had not written the crate at {}: {} is as it was before \
             it{how}",
            journal.version,
            journal.pid,
            journal.out.display(),
            manifest.display()
        )
    }))
}
