//! Outside input checked before it is used: text files read whole ([`read_text`],
//! [`read_bytes`]), the text the command line puts into every generated file's header
//! ([`check_header_text`]), and a libclang named by `LIBCLANG_PATH` or cached, read before the
//! loader maps it ([`unloadable_library`]: a FIFO, a device or a file cut short would block the
//! loader or fault in it with SIGBUS).
//!
//! Every file read whole from outside (the manifest, a header, a record, a journal) is read
//! through [`read_bytes`]: what is not a regular file (a FIFO, a device such as `/dev/zero`, a
//! folder) is refused by name before anything is read from it, and a file is read up to
//! [`MAX_TEXT_INPUT`] bytes, no further. A FIFO must not block the run: on Unix it is opened
//! with `O_NONBLOCK`, and the kind is judged on the opened file (`fstat`), so that a file
//! swapped for another between a check and the open is judged as what was opened. (Wheels are
//! not read whole: they are checked by their sha256 and read entry by entry, with limits of
//! their own, `archive.rs`.)

use std::fs;
use std::io::Read;
use std::path::Path;

use crate::Error;

/// The most bytes a text input may have: far above any header NVIDIA ships (cuda.h is about
/// 1 MB) or any manifest, far below what would exhaust memory.
pub const MAX_TEXT_INPUT: u64 = 64 << 20;

/// The whole file at `path`, which must be a regular file of at most [`MAX_TEXT_INPUT`] bytes.
/// `what` names it in the error ("the headers manifest").
pub fn read_bytes(path: &Path, what: &str) -> Result<Vec<u8>, Error> {
    read_capped(path, what, MAX_TEXT_INPUT)
}

/// [`read_bytes`], as UTF-8 text.
pub fn read_text(path: &Path, what: &str) -> Result<String, Error> {
    let bytes = read_bytes(path, what)?;
    String::from_utf8(bytes).map_err(|e| Error::Input {
        path: path.to_owned(),
        reason: format!("{what} is not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()),
    })
}

/// [`read_bytes`] where a missing file is `None` (an optional file: a journal, a record).
pub fn read_text_if_exists(path: &Path, what: &str) -> Result<Option<String>, Error> {
    match read_text(path, what) {
        Err(Error::Io { source, .. })
            if matches!(source.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) =>
        {
            Ok(None)
        }
        other => other.map(Some),
    }
}

/// Opens `path` for reading if it is a regular file, without blocking on a FIFO; the kind
/// judged on the opened file. `what` names it in the error.
pub fn open_regular(path: &Path, what: &str) -> Result<fs::File, Error> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO opened for reading waits for a writer; non-blocking, it opens at once. The
        // flag does nothing to the reads of a regular file.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let meta = file.metadata().map_err(|source| Error::Io { path: path.to_owned(), source })?;
    if !meta.is_file() {
        return Err(Error::Input {
            path: path.to_owned(),
            reason: format!("{what} must be a regular file, and this is {}", kind_of(&meta)),
        });
    }
    Ok(file)
}

fn read_capped(path: &Path, what: &str, cap: u64) -> Result<Vec<u8>, Error> {
    let file = open_regular(path, what)?;
    let too_big = || Error::Input {
        path: path.to_owned(),
        reason: format!(
            "{what} is larger than {} MiB, the most cuda-sys-gen reads of a text input: it cannot be a header or a \
             manifest (check the path)",
            cap >> 20
        ),
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > cap {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // One byte past the cap tells a file that grew while it was read.
    file.take(cap + 1).read_to_end(&mut bytes).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    Ok(bytes)
}

/// What a file that is not a regular one is, in words.
pub fn kind_of(meta: &fs::Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_char_device() {
            return "a character device (such as /dev/zero)";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// How a command-line binary loads libclang in a child process of its own (set once, at
/// start, by `cuda-sys-gen` and `cargo xtask`; a library user of the generator has none, and
/// gets the checks of the file alone).
static LIBCLANG_PROBE: std::sync::OnceLock<fn() -> Result<(), String>> = std::sync::OnceLock::new();

/// Sets [`probe_libclang`]'s way of loading libclang apart: a function that runs the very load
/// this process is about to make (same environment) in a child, and says what killed it.
pub fn set_libclang_probe(probe: fn() -> Result<(), String>) {
    let _ = LIBCLANG_PROBE.set(probe);
}

/// Loads libclang in a child process first, where a probe was set: a library whose loading
/// kills the process (a signal in the loader or its initialisers, no reading of the file
/// foresees) is then an error with the signal, never this process's death.
pub fn probe_libclang() -> Result<(), String> {
    LIBCLANG_PROBE.get().map_or(Ok(()), |probe| probe())
}

/// `LIBCLANG_PATH`, when set, checked before clang-sys loads what it names: a file (or a
/// `libclang*.so*` of the folder) that would block the loader or kill the process there is
/// refused with the reason, in the first second of a run.
pub fn check_libclang_path() -> Result<(), String> {
    let Some(named) = std::env::var_os("LIBCLANG_PATH") else { return Ok(()) };
    for file in libclang_files(Path::new(&named)) {
        if let Some(why) = unloadable_library(&file) {
            return Err(format!(
                "LIBCLANG_PATH names {}, which {why}; point LIBCLANG_PATH at a working libclang.so, or unset it to \
                 use the system's or the pinned wheel",
                file.display()
            ));
        }
    }
    Ok(())
}

/// The files clang-sys may load for `LIBCLANG_PATH=path`: the file itself, or each
/// `libclang*.so*` of the folder.
pub fn libclang_files(path: &Path) -> Vec<std::path::PathBuf> {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            let mut found: Vec<std::path::PathBuf> = fs::read_dir(path)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("libclang") && n.contains(".so"))
                })
                .collect();
            found.sort();
            found
        }
        Ok(_) => vec![path.to_owned()],
        // Nothing there: clang-sys says so itself.
        Err(_) => Vec::new(),
    }
}

/// Why the loader cannot map `path` without blocking or faulting, read as it will read it:
/// not a regular file (a FIFO blocks the loader forever, a device never ends), not an ELF file,
/// or cut short (a segment past the file's end: the loader maps it, and the first touch is
/// SIGBUS). `None`: nothing of that kind (what else is wrong, the loader says).
pub fn unloadable_library(path: &Path) -> Option<String> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) => return Some(format!("cannot be read ({e})")),
    };
    if !meta.is_file() {
        return Some(format!("is {}, not a shared library", kind_of(&meta)));
    }
    let bytes = match read_head(path, 64 * 1024) {
        Ok(b) => b,
        Err(e) => return Some(format!("cannot be read ({e})")),
    };
    let len = meta.len();
    let u = |at: usize, n: usize| -> Option<u64> {
        Some(bytes.get(at..at + n)?.iter().rev().fold(0u64, |v, b| (v << 8) | u64::from(*b)))
    };
    if bytes.get(..4) != Some(b"\x7fELF".as_slice()) || bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        return Some(format!("is no 64-bit little-endian ELF file ({len} bytes)"));
    }
    let (Some(phoff), Some(size), Some(count)) = (u(32, 8), u(54, 2), u(56, 2)) else {
        return Some(format!("is cut short: {len} bytes, less than an ELF header"));
    };
    let end = phoff.saturating_add(size.saturating_mul(count));
    if size < 56 || end > len || end > bytes.len() as u64 {
        return Some(format!("is cut short: its program headers end at byte {end}, the file has {len}"));
    }
    for i in 0..count {
        let h = (phoff + i * size) as usize;
        let (Some(kind), Some(offset), Some(filesz)) = (u(h, 4), u(h + 8, 8), u(h + 32, 8)) else { continue };
        let need = offset.saturating_add(filesz);
        if kind == 1 && need > len {
            return Some(format!("is cut short: a loadable segment needs {need} bytes, the file has {len}"));
        }
    }
    None
}

/// Up to `max` bytes from the start of a regular file, opened without blocking.
fn read_head(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let mut out = Vec::new();
    file.take(max).read_to_end(&mut out)?;
    Ok(out)
}

/// Refuses text the command line puts into every generated file's header (`what`: the option
/// that gave it) when it holds a control character: the header is a comment line in every
/// file, Cargo.toml's included, and TOML allows no control character but tab in a comment
/// (a line feed would end the comment and turn the rest into TOML). Tab is refused too: the
/// text is quoted in one line of Rust and TOML alike, and a tab there is never meant.
pub fn check_header_text(what: &str, text: &str) -> Result<(), Error> {
    let Some((at, c)) = text.chars().enumerate().find(|(_, c)| c.is_control()) else { return Ok(()) };
    let name = match c {
        '\n' => " (a line feed)".to_owned(),
        '\r' => " (a carriage return)".to_owned(),
        '\t' => " (a tab)".to_owned(),
        '\0' => " (NUL)".to_owned(),
        _ => String::new(),
    };
    Err(Error::HeaderText {
        what: what.to_owned(),
        text: text.to_owned(),
        why: format!(
            "it holds the control character U+{:04X}{name} at character {}: the text is quoted in a comment line at \
             the top of every generated file, Cargo.toml's included, where TOML allows no control character (a line \
             feed would end the comment and make the rest TOML); give it on one line, without control characters",
            c as u32,
            at + 1
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_refused_and_plain_text_passes() {
        check_header_text("--regenerate-command", "cargo xtask generate --out 'a b'").unwrap();
        check_header_text("--regenerate-command", "é ünïcode ✓").unwrap();
        for bad in ["a\nb", "a\rb", "a\tb", "a\0b", "a\u{1b}[31m", "a\u{7f}", "a\u{85}"] {
            let e = check_header_text("--regenerate-command", bad).unwrap_err().to_string();
            assert!(e.contains("--regenerate-command") && e.contains("control character U+"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn a_file_over_the_cap_is_refused_with_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        fs::write(&path, vec![b'a'; 2000]).unwrap();
        assert_eq!(read_capped(&path, "the file", 2000).unwrap().len(), 2000);
        let e = read_capped(&path, "the file", 1999).unwrap_err().to_string();
        assert!(e.contains("larger than") && e.contains("big"), "{e}");
        let e = read_bytes(dir.path(), "the headers manifest").unwrap_err().to_string();
        assert!(e.contains("must be a regular file, and this is a folder"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_and_a_device_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&fifo, "the headers manifest").unwrap_err().to_string();
        assert!(e.contains("a FIFO"), "{e}");
        let e = read_text(Path::new("/dev/zero"), "the headers manifest").unwrap_err().to_string();
        assert!(e.contains("/dev/zero") && e.contains("a character device"), "{e}");
    }
}
