//! Hostile wheels: each is refused with a message that names the archive and the entry, and
//! leaves nothing behind: no destination folder, no scratch folder beside it, nothing outside
//! the cache. (bad_input.rs has `..`, absolute paths and backslashes.)

use std::io::Write;
use std::path::{Path, PathBuf};

use codegen::archive::{self, Limits};
use codegen::fetch;
use zip::write::SimpleFileOptions;

/// Small limits, so that a bomb costs the test little; the same code runs with
/// `Limits::HEADERS` in the fetcher (checked at the end).
const SMALL: Limits = Limits { file_bytes: 1 << 20, total_bytes: 4 << 20, files: 8 };

enum E<'a> {
    File(&'a str, Vec<u8>),
    Dir(&'a str),
    Symlink(&'a str, &'a str),
    Mode(&'a str, u32),
}

fn zip_bytes(entries: &[E<'_>]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for e in entries {
        match e {
            E::File(name, data) => {
                z.start_file(*name, opts).unwrap();
                z.write_all(data).unwrap();
            }
            E::Dir(name) => z.add_directory(*name, opts).unwrap(),
            E::Symlink(name, target) => z.add_symlink(*name, *target, opts).unwrap(),
            E::Mode(name, mode) => {
                z.start_file(*name, opts.unix_permissions(*mode)).unwrap();
                z.write_all(b"x").unwrap();
            }
        }
    }
    z.finish().unwrap().into_inner()
}

fn ok_header() -> E<'static> {
    E::File("nvidia/include/cuda.h", b"#define CUDA_VERSION 12090\n".to_vec())
}

/// A cache with one earlier, good extraction in it, and a scratch root around it all.
struct Scene {
    root: tempfile::TempDir,
}

impl Scene {
    fn new() -> Scene {
        let root = tempfile::tempdir().unwrap();
        let good = root.path().join("cache/include/good-1.0");
        std::fs::create_dir_all(&good).unwrap();
        std::fs::write(good.join("cuda.h"), "ok").unwrap();
        std::fs::write(good.join(".sha256"), "s").unwrap();
        Scene { root }
    }

    fn dest(&self) -> PathBuf {
        self.root.path().join("cache/include/pkg-1.0")
    }

    fn extract(&self, bytes: &[u8], limits: &Limits) -> Result<(), String> {
        let wheel = self.root.path().join("pkg-1.0-py3-none-any.whl");
        std::fs::write(&wheel, bytes).unwrap();
        archive::extract_with_limits(&wheel, "nvidia/include", &self.dest(), "s", limits).map_err(|e| e.to_string())
    }

    /// Refused, with `needle` in the message, and nothing left but what was there before.
    #[track_caller]
    fn refuses(&self, bytes: &[u8], limits: &Limits, needle: &str) -> String {
        let err = self.extract(bytes, limits).expect_err("a hostile archive was accepted");
        assert!(err.contains("refusing archive") && err.contains("pkg-1.0-py3-none-any.whl"), "{err}");
        assert!(err.contains(needle), "expected `{needle}` in: {err}");
        self.untouched();
        err
    }

    fn untouched(&self) {
        let mut all = Vec::new();
        walk(self.root.path(), Path::new(""), &mut all);
        all.sort();
        let expected: Vec<PathBuf> = [
            "cache",
            "cache/include",
            "cache/include/good-1.0",
            "cache/include/good-1.0/.sha256",
            "cache/include/good-1.0/cuda.h",
            "pkg-1.0-py3-none-any.whl",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(all, expected, "the refused archive left something behind");
        assert_eq!(std::fs::read_to_string(self.root.path().join("cache/include/good-1.0/cuda.h")).unwrap(), "ok");
    }
}

fn walk(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(root.join(rel)).unwrap().flatten() {
        let child = rel.join(e.file_name());
        let meta = std::fs::symlink_metadata(root.join(&child)).unwrap();
        assert!(!meta.file_type().is_symlink(), "a symlink was written: {}", child.display());
        out.push(child.clone());
        if meta.is_dir() {
            walk(root, &child, out);
        }
    }
}

/// Rewrites an entry's unix mode (the high half of its central header's external attributes).
fn set_unix_mode(bytes: &mut [u8], name: &str, mode: u32) {
    let at = (0..bytes.len() - 46)
        .find(|&i| {
            &bytes[i..i + 4] == b"PK\x01\x02" && {
                let n = u16::from_le_bytes([bytes[i + 28], bytes[i + 29]]) as usize;
                bytes.get(i + 46..i + 46 + n) == Some(name.as_bytes())
            }
        })
        .expect("central header");
    bytes[at + 5] = 3; // made by: Unix
    bytes[at + 38..at + 42].copy_from_slice(&(mode << 16).to_le_bytes());
}

/// Rewrites the uncompressed size an entry declares, in its local and central headers.
fn declare_size(bytes: &mut [u8], name: &str, size: u32) {
    let mut patched = 0;
    for i in 0..bytes.len().saturating_sub(46) {
        let (sig, name_len_at, name_at, size_at) = match &bytes[i..i + 4] {
            b"PK\x03\x04" => ("local", 26, 30, 22),
            b"PK\x01\x02" => ("central", 28, 46, 24),
            _ => continue,
        };
        let n = u16::from_le_bytes([bytes[i + name_len_at], bytes[i + name_len_at + 1]]) as usize;
        if bytes.get(i + name_at..i + name_at + n) == Some(name.as_bytes()) {
            bytes[i + size_at..i + size_at + 4].copy_from_slice(&size.to_le_bytes());
            patched += 1;
            let _ = sig;
        }
    }
    assert_eq!(patched, 2, "{name}: headers not found");
}

#[test]
fn symlink_entries_are_refused() {
    let s = Scene::new();
    let bytes = zip_bytes(&[ok_header(), E::Symlink("nvidia/include/evil.h", "/etc/passwd")]);
    s.refuses(&bytes, &SMALL, "archive entry `nvidia/include/evil.h` is not a regular file (a symlink?)");
    // Other special files (a FIFO's, a device's mode) too: the writer only sets permission
    // bits, so the file type goes into the external attributes by hand.
    for kind in [0o010000, 0o020000, 0o140000] {
        let mut bytes = zip_bytes(&[ok_header(), E::Mode("nvidia/include/special.h", 0o644)]);
        set_unix_mode(&mut bytes, "nvidia/include/special.h", kind | 0o644);
        s.refuses(&bytes, &SMALL, "`nvidia/include/special.h` is not a regular file");
    }
}

#[test]
fn a_symlink_outside_the_include_folder_is_not_written() {
    let s = Scene::new();
    let bytes = zip_bytes(&[ok_header(), E::Symlink("nvidia/lib/libcuda.so", "/etc/passwd")]);
    s.extract(&bytes, &SMALL).unwrap();
    let mut all = Vec::new();
    walk(&s.dest(), Path::new(""), &mut all);
    all.sort();
    assert_eq!(all, [PathBuf::from(".sha256"), PathBuf::from("cuda.h")]);
}

#[test]
fn duplicate_names_are_refused() {
    let s = Scene::new();
    let two = |other: &'static str| zip_bytes(&[ok_header(), E::File(other, b"again".to_vec())]);
    // The zip writer will not write one name twice; a hand-made archive can.
    let mut bytes = two("nvidia/include/cudx.h");
    let at = bytes.windows(5).rposition(|w| w == b"cudx.").unwrap();
    bytes[at + 3] = b'a';
    let at = bytes.windows(5).position(|w| w == b"cudx.").unwrap();
    bytes[at + 3] = b'a';
    s.refuses(&bytes, &SMALL, "its directory lists 2 entries but only 1 distinct names: a name appears twice");
    for (other, needle) in [
        ("nvidia/include/./cuda.h", "names the same file as `nvidia/include/cuda.h`"),
        ("nvidia/include//cuda.h", "names the same file as `nvidia/include/cuda.h`"),
        ("nvidia/include/CUDA.h", "`nvidia/include/CUDA.h` names the same file as `nvidia/include/cuda.h` (on a case-insensitive file system)"),
    ] {
        s.refuses(&two(other), &SMALL, needle);
    }
}

#[test]
fn huge_declared_sizes_are_refused_before_reading() {
    let s = Scene::new();
    let mut bytes = zip_bytes(&[ok_header(), E::File("nvidia/include/big.h", b"small".to_vec())]);
    declare_size(&mut bytes, "nvidia/include/big.h", 0xFFFF_FFF0);
    s.refuses(
        &bytes,
        &SMALL,
        "archive entry `nvidia/include/big.h` declares 4294967280 bytes, more than the 1048576 allowed",
    );
    // And with the fetcher's own limits: 4 GiB is past 16 MiB.
    let err = s.refuses(&bytes, &Limits::HEADERS, "more than the 16777216 allowed");
    assert!(err.contains("big.h"), "{err}");
}

#[test]
fn zip_bombs_are_refused() {
    let s = Scene::new();
    let zeros = |n: usize| vec![0u8; n];
    // One entry that inflates past the per-file limit, honestly declared.
    let bomb = zip_bytes(&[ok_header(), E::File("nvidia/include/bomb.h", zeros(3 << 20))]);
    assert!(bomb.len() < 16 << 10, "not much of a bomb: {} bytes", bomb.len());
    s.refuses(&bomb, &SMALL, "`nvidia/include/bomb.h` declares 3145728 bytes");
    // The same, lying about its size: stopped one byte past the limit, whatever it says.
    let mut liar = bomb.clone();
    declare_size(&mut liar, "nvidia/include/bomb.h", 100);
    s.refuses(&liar, &SMALL, "archive entry `nvidia/include/bomb.h` inflates past");
    // Many entries, each under the per-file limit, past the total.
    let many: Vec<E> = (0..6)
        .map(|i| E::File(Box::leak(format!("nvidia/include/part{i}.h").into_boxed_str()), zeros(900 << 10)))
        .collect();
    s.refuses(&zip_bytes(&many), &SMALL, "the files under `nvidia/include/` inflate past 4194304 bytes in all");
    // More files than allowed.
    let files: Vec<E> =
        (0..9).map(|i| E::File(Box::leak(format!("nvidia/include/f{i}.h").into_boxed_str()), b"x".to_vec())).collect();
    s.refuses(&zip_bytes(&files), &SMALL, "9 files under `nvidia/include/`, more than the 8 allowed");
}

#[test]
fn too_many_entries_are_refused_before_anything_else() {
    let s = Scene::new();
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..=archive::MAX_ARCHIVE_ENTRIES {
        z.start_file(format!("e{i}"), opts).unwrap();
    }
    let bytes = z.finish().unwrap().into_inner();
    s.refuses(&bytes, &SMALL, "65537 entries, more than the 65536 a wheel may have");
}

#[test]
fn hostile_names_are_refused() {
    let s = Scene::new();
    for (name, needle) in [
        ("nvidia/include/a\0b.h", "has a backslash or NUL in its name"),
        ("nvidia/include/a\u{1b}[2Jb.h", "has a control character in its name"),
        ("nvidia/include/tab\there.h", "control character"),
        ("C:/nvidia/include/x.h", "drive or stream separator"),
        ("C:nvidia/include/x.h", "drive or stream separator"),
        ("nvidia/include/x.h:stream", "drive or stream separator"),
        ("nvidia/include/con.h", "a component (`con.h`) that Windows reserves"),
        ("nvidia/include/AUX", "Windows reserves"),
        ("nvidia/include/lpt1.txt/x.h", "Windows reserves"),
        ("nvidia/include/trailing.", "Windows reserves"),
        ("nvidia/include/space /x.h", "Windows reserves"),
        ("nvidia/include/.sha256", "the name of the cache's own stamp file"),
        ("../../nvidia/include/x.h", "climbs out of the archive"),
    ] {
        s.refuses(&zip_bytes(&[ok_header(), E::File(name, b"x".to_vec())]), &SMALL, needle);
    }
}

#[test]
fn a_file_and_a_folder_of_one_name_are_refused() {
    let s = Scene::new();
    let file_first = zip_bytes(&[
        ok_header(),
        E::File("nvidia/include/a", b"x".to_vec()),
        E::File("nvidia/include/a/b.h", b"y".to_vec()),
    ]);
    s.refuses(&file_first, &SMALL, "`nvidia/include/a/b.h` is inside a path that is a file");
    let folder_first = zip_bytes(&[
        ok_header(),
        E::File("nvidia/include/a/b.h", b"y".to_vec()),
        E::File("nvidia/include/a", b"x".to_vec()),
    ]);
    s.refuses(&folder_first, &SMALL, "`nvidia/include/a` is also a folder of other entries");
}

#[test]
fn broken_archives_are_refused() {
    let s = Scene::new();
    s.refuses(b"not a zip at all", &SMALL, "not a readable zip archive");
    let good = zip_bytes(&[ok_header(), E::Dir("nvidia/include/sub/")]);
    s.refuses(&good[..good.len() / 2], &SMALL, "not a readable zip archive");
    // A compression method the extractor does not have (99: AES): the reader refuses the
    // archive as a whole.
    let mut odd = good.clone();
    for sig in [&b"PK\x03\x04"[..], b"PK\x01\x02"] {
        let at = odd.windows(4).position(|w| w == sig).unwrap();
        let method_at = if sig == b"PK\x03\x04" { 8 } else { 10 };
        odd[at + method_at] = 99;
    }
    s.refuses(&odd, &SMALL, "not a readable zip archive");
    // Nothing under the include folder at all.
    s.refuses(&zip_bytes(&[E::File("other/x.h", b"x".to_vec())]), &SMALL, "no files under `nvidia/include/`");
}

/// Through the fetcher, as `generate` runs it: a pinned wheel (its sha256 matches, so the
/// digest does not save us) holding a symlink is refused and leaves the cache as it was.
#[test]
fn the_fetcher_refuses_a_hostile_pinned_wheel() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let wheel = zip_bytes(&[ok_header(), E::Symlink("nvidia/include/cudaTypedefs.h", "/etc/shadow")]);
    let file = "nvidia_cuda_runtime-13.5.37-py3-none-any.whl";
    std::fs::write(tmp.path().join(file), &wheel).unwrap();
    let sha = archive::sha256_file(&tmp.path().join(file)).unwrap();
    let text = format!(
        "schema = 1\n[fetch]\nplatform = \"manylinux2014_x86_64\"\n[[header]]\nname = \"cuda\"\napi = \"cuda.h\"\ntypedefs = \"cudaTypedefs.h\"\n\
         [[toolkit]]\nversion = \"13.5\"\n[[toolkit.package]]\nname = \"nvidia-cuda-runtime\"\nversion = \"13.5.37\"\nfile = \"{file}\"\nsha256 = \"{sha}\"\ninclude = \"nvidia/include\"\n"
    );
    let manifest = codegen::manifest::Manifest::parse(Path::new("m.toml"), &text).unwrap();
    let python = tmp.path().join("fake-python");
    std::fs::write(&python, format!("#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --dest ]; then dest=$2; fi; shift; done\ncp '{}' \"$dest/\"\n", tmp.path().join(file).display())).unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cache = tmp.path().join("cache");
    let mut fetcher = fetch::Fetcher::new(cache.clone(), &manifest);
    fetcher.python = python.display().to_string();
    let err = fetcher.toolkit(&manifest.toolkits[0]).unwrap_err().to_string();
    assert!(err.contains("refusing archive") && err.contains("is not a regular file (a symlink?)"), "{err}");
    let include: Vec<_> = std::fs::read_dir(cache.join("include")).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(include.is_empty(), "left in the cache: {include:?}");
    // The verified wheel itself stays cached: it is what was pinned.
    assert!(cache.join("wheels").join(file).is_file());
}
