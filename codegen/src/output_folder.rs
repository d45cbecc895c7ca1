//! The output folder: before any work, a run that may write refuses a `--out` that is, holds
//! or lies inside the manifest or the cache, lies inside a crate the generator wrote, or holds
//! a `.git` or any file the generator did not write, naming what is in the way and offering a
//! folder the same check accepts ([`check_output_folder`]); and the crate written into it by
//! the same rules ([`write_crate`], for `generate` and `--add-toolkit`'s commit alike).
//!
//! Architecture Invariant: a file is the generator's only by its name (one the emitter writes
//! for this manifest, or one the folder's record lists) and its marker; nothing else in
//! `--out` is ever replaced or removed (`write::sync_tree` checks the same again).

use std::collections::BTreeSet;
use std::path::Path;

use crate::emit;
use crate::manifest::Manifest;
use crate::write::{self, Mode, WriteReport};
use crate::Error;

/// Writes (or, in check mode, compares) the rendered crate at `out`: [`write::sync_tree`]
/// with the names of an earlier cuda-sys-gen's crate ([`emit::earlier_file_names`]) and
/// [`generator_wrote`], the rules [`check_output_folder`] judged the folder by.
pub fn write_crate(out: &Path, files: &emit::Files, mode: Mode, command: &str) -> Result<WriteReport, Error> {
    let earlier = emit::earlier_file_names(files.keys());
    write::sync_tree(out, files, mode, command, &earlier, &generator_wrote)
}

/// Refuses an output folder that is, holds or is inside the manifest or the cache, is inside
/// a crate the generator wrote, or holds a `.git` or any file the generator did not write: one
/// whose name is neither one [`emit::file_names`] gives for this manifest (or
/// [`emit::earlier_file_names`], for a crate of an earlier cuda-sys-gen) nor in the folder's
/// record, or without the marker ([`write::check_replaceable`]). The refusal offers a folder
/// the same check accepts, where one is near.
pub fn check_output_folder(out: &Path, manifest: &Manifest, cache: &Path) -> Result<(), Error> {
    let rules = Rules::new(manifest, cache);
    match rules.refusal(out) {
        Err(Error::NotOurs { out: shown, reason, .. }) => {
            Err(Error::NotOurs { out: shown, reason, instead: instead_of(out, &rules) })
        }
        // A folder that may be replaced must also be one the swap can rename; a folder it offers
        // instead must pass this same check, or none is offered (no refusal sends the user in
        // a circle).
        Ok(()) => match check_swappable(out) {
            Err(Error::NotOurs { out: shown, reason, instead }) => {
                let passes = |c: &String| rules.refusal(Path::new(c)).is_ok() && check_swappable(Path::new(c)).is_ok();
                let instead = instead.filter(passes).or_else(|| instead_of(out, &rules).filter(passes));
                Err(Error::NotOurs { out: shown, reason, instead })
            }
            other => other,
        },
        other => other,
    }
}

/// What an output folder is judged by, worked out once for the folder given and every folder
/// offered instead: the manifest and the cache it must keep clear of, and the names of the
/// files this manifest's crate has (or an earlier cuda-sys-gen's had).
struct Rules<'a> {
    keep: [(&'a Path, &'static str); 2],
    names: BTreeSet<String>,
}

impl<'a> Rules<'a> {
    fn new(manifest: &'a Manifest, cache: &'a Path) -> Rules<'a> {
        let modules: Vec<_> = manifest.headers.iter().map(crate::manifest::HeaderSpec::module_spec).collect();
        let names = emit::file_names(&modules);
        let earlier = emit::earlier_file_names(&names);
        Rules {
            keep: [(&manifest.path, "the headers manifest"), (cache, "the header cache")],
            names: names.into_iter().chain(earlier).collect(),
        }
    }

    fn refusal(&self, out: &Path) -> Result<(), Error> {
        write::check_replaceable(out, &self.keep, &self.names, &generator_wrote)
    }
}

/// Refuses an `out` the writer could not swap, before any work: one spelled with a last
/// component of `.` (`cuda-pfn/.`: a folder cannot be renamed by a name that passes through
/// itself), and a mount point, bind mounts included (the new crate is written beside it and
/// renamed into its place; the kernel refuses to rename a mount point, with EBUSY).
fn check_swappable(out: &Path) -> Result<(), Error> {
    /// The longest file name Linux's, macOS's and Windows's file systems take, in bytes.
    const NAME_MAX: usize = 255;
    let refuse = |reason: String, instead: Option<String>| Err(Error::NotOurs { out: out.to_owned(), reason, instead });
    let raw = out.as_os_str().as_encoded_bytes();
    let trimmed = raw.strip_suffix(b"/").unwrap_or(raw);
    if let Some(plain) = trimmed.strip_suffix(b"/.") {
        let plain = String::from_utf8_lossy(plain).into_owned();
        return refuse(
            format!(
                "it ends in `/.`, which names the folder through itself: the crate is swapped in with a rename, which \
                 such a name cannot take part in; name the folder itself (`{plain}`)"
            ),
            None,
        );
    }
    // The writer makes folders beside the output folder named after it, at most
    // `NAME_SLACK` bytes longer (`.<name>.new-<pid>-<n>`, `<name>.kept-<n>`): a name with no room
    // for them is refused now, not after the work.
    if let Some(name) = out.file_name() {
        let len = write::scratch_name(name).len();
        if len + write::NAME_SLACK > NAME_MAX {
            return refuse(
                format!(
                    "its name is {len} bytes long, and the folders the crate is written through beside it add up to \
                     {} bytes to it: more than the {NAME_MAX} bytes a file name may have; give --out a shorter name",
                    write::NAME_SLACK
                ),
                None,
            );
        }
    }
    let Ok(canonical) = write::canonical_lenient(out) else { return Ok(()) };
    if !canonical.is_dir() {
        return Ok(());
    }
    if let Some(how) = mount_point(&canonical) {
        return refuse(
            format!(
                "it is a mount point ({how}): the crate is written beside the output folder and renamed into its \
                 place, and a mount point cannot be renamed (EBUSY); give --out a folder inside it"
            ),
            Some(canonical.join("cuda-pfn").display().to_string()),
        );
    }
    Ok(())
}

/// How `dir` (canonical) is a mount point, if it is: another file system than its parent's,
/// or a mount point the kernel lists (`/proc/self/mountinfo`, where bind mounts of the same
/// file system show).
fn mount_point(dir: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let parent = dir.parent()?;
        let (a, b) = (std::fs::metadata(dir).ok()?, std::fs::metadata(parent).ok()?);
        if a.dev() != b.dev() {
            return Some(format!("another file system than {}'s", parent.display()));
        }
    }
    let mounts = crate::input::read_text(Path::new("/proc/self/mountinfo"), "the mount table").ok()?;
    mounts.lines().find_map(|line| {
        // Field 5 is the mount point, with space, tab, newline and backslash escaped in octal.
        let point = unescape_octal(line.split(' ').nth(4)?);
        (Path::new(&point) == dir).then(|| "a bind mount or a file system mounted there".to_owned())
    })
}

/// `\040` and its kind back to the characters they stand for.
fn unescape_octal(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let digits =
            bytes.get(i + 1..i + 4).filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match digits {
            Some(d) => {
                out.push(d.iter().fold(0u8, |v, c| v.wrapping_mul(8).wrapping_add(c - b'0')));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A folder to offer instead of a refused `out`: `cuda-pfn` in `out` or in one of the folders
/// above it, the first that [`check_output_folder`]'s rules accept and that is a place for a
/// crate (not in a build folder, nor in a git repository's own folder). Shown relative to the
/// working directory where it is under it. None for a crate of ours that holds a file of
/// yours: moving that file is the fix.
fn instead_of(out: &Path, rules: &Rules) -> Option<String> {
    let canonical = write::canonical_lenient(out).ok()?;
    // A crate of ours refused for a file of yours in it: the fix is moving that file, not
    // another folder.
    if write::generated_crate(&canonical, &generator_wrote).is_some() {
        return None;
    }
    let cwd = std::env::current_dir().ok().and_then(|d| d.canonicalize().ok());
    let start = if canonical.is_dir() { canonical.as_path() } else { canonical.parent()? };
    for folder in start.ancestors().take(4) {
        if folder.components().any(|c| c.as_os_str() == ".git") || in_cargo_target(folder) {
            continue;
        }
        let candidate = folder.join("cuda-pfn");
        if candidate == canonical || rules.refusal(&candidate).is_err() {
            continue;
        }
        let shown = match &cwd {
            Some(cwd) => candidate.strip_prefix(cwd).map(Path::to_owned).unwrap_or_else(|_| candidate.clone()),
            None => candidate.clone(),
        };
        return Some(shown.display().to_string());
    }
    None
}

/// Whether `folder` is in a build folder: one tagged with `CACHEDIR.TAG` (as cargo tags its
/// target/), or one named `target` (cargo's, and where the header cache is by default).
/// `cargo clean` would take a crate there.
fn in_cargo_target(folder: &Path) -> bool {
    folder.ancestors().any(|a| a.join("CACHEDIR.TAG").is_file() || a.file_name().is_some_and(|n| n == "target"))
}

/// Whether a file of an output folder is one the generator writes: every file it writes
/// carries the marker in its first lines, except the licence texts (copies of this
/// repository's), recognised by name and first line.
pub fn generator_wrote(rel: &str, head: &[u8]) -> bool {
    let marker = write::MARKER.as_bytes();
    if head.windows(marker.len()).any(|w| w == marker) {
        return true;
    }
    let first_line = |t: &[u8]| t.split(|&b| b == b'\n').next().map(|l| l.to_vec()).unwrap_or_default();
    // The emitter's licence files (both packages'), which are this repository's.
    crate::emit::LICENSES.iter().any(|(path, text)| *path == rel && first_line(head) == first_line(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The marker the generator writes is the one it recognises: in the file record and in a
    /// file's header, as `emit` writes them (both through `write::marker_line`).
    #[test]
    fn written_markers_are_recognised() {
        let record = write::record_file(["src/lib.rs"], "cargo xtask generate");
        assert!(generator_wrote(write::RECORD, &record));
        let header = format!("// {}\n// Inputs: ...\n", write::marker_line("cuda-sys-gen generate --out x"));
        assert!(generator_wrote("src/lib.rs", header.as_bytes()));
        assert!(!generator_wrote("src/lib.rs", b"// @generated by another tool\n"));
    }
}
