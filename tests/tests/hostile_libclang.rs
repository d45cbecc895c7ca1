//! A libclang that would block or kill the generator in the system loader: named by
//! `LIBCLANG_PATH` (cut short, a FIFO) or cached cut short with its stamp intact. Each is
//! refused in the first second with what is wrong and what to do, never a SIGBUS, never a hang.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use cuda_sys_gen_tests::*;

/// The wheel's libclang.so in the shared cache (fetched by any earlier generate).
fn cached_libclang() -> PathBuf {
    let dir = cache_dir().join("libclang");
    let wheel = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (run `cargo xtask generate` once)", dir.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("libclang.so").is_file())
        .expect("a cached libclang wheel");
    wheel.join("libclang.so")
}

/// `generate` of the cufoo fixture into a scratch folder, killed after 20 s.
fn generate(cache: &Path, libclang_path: &Path) -> (Output, Duration) {
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let out = tempfile::tempdir().unwrap();
    let case = repo_root().join("tests/fixtures/cufoo");
    let binary = cuda_sys_gen_binary();
    let start = Instant::now();
    let mut child = Command::new(binary)
        .arg("generate")
        .arg("--manifest")
        .arg(manifest.path().join("headers-manifest.toml"))
        .arg("--out")
        .arg(out.path().join("crate"))
        .arg("--cache")
        .arg(cache)
        .arg("--offline")
        .arg("--toolkit")
        .arg(case.join("cuda-11.4"))
        .env("LIBCLANG_PATH", libclang_path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("generate hung with LIBCLANG_PATH={}", libclang_path.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    (child.wait_with_output().unwrap(), start.elapsed())
}

fn refused(o: &Output, says: &[&str]) {
    let err = text(&o.stderr);
    assert_eq!(o.status.signal(), None, "died of a signal: {err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    for s in says {
        assert!(err.contains(s), "expected {s:?} in: {err}");
    }
}

#[test]
fn a_libclang_cut_short_or_a_fifo_in_libclang_path_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut");
    std::fs::create_dir(&cut).unwrap();
    let whole = std::fs::read(cached_libclang()).unwrap();
    std::fs::write(cut.join("libclang.so"), &whole[..3_000_000]).unwrap();
    let (o, took) = generate(&cache_dir(), &cut);
    refused(&o, &["LIBCLANG_PATH names", "libclang.so", "is cut short"]);
    assert!(took < Duration::from_secs(5), "took {took:?}");
    // The file itself named.
    let (o, _) = generate(&cache_dir(), &cut.join("libclang.so"));
    refused(&o, &["is cut short"]);
    let fifo = dir.path().join("fifo");
    std::fs::create_dir(&fifo).unwrap();
    let c = std::ffi::CString::new(fifo.join("libclang.so").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (o, took) = generate(&cache_dir(), &fifo);
    refused(&o, &["a FIFO"]);
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

/// The cached wheel's libclang.so cut short, its stamp intact (a disk that filled, a copy
/// interrupted): the fallback says which file and to remove its folder.
#[test]
fn a_cached_libclang_cut_short_is_refused_with_its_folder() {
    let cache = tempfile::tempdir().unwrap();
    link_tree(&cache_dir(), cache.path()).unwrap();
    let shared = cached_libclang();
    let wheel = shared.parent().unwrap().file_name().unwrap().to_owned();
    let mine = cache.path().join("libclang").join(&wheel).join("libclang.so");
    // The hard link replaced by a file of its own before it is cut.
    let whole = std::fs::read(&shared).unwrap();
    std::fs::remove_file(&mine).unwrap();
    std::fs::write(&mine, &whole[..1_000_000]).unwrap();
    let (o, took) = generate(cache.path(), Path::new("/nonexistent"));
    refused(&o, &["cached", "is cut short", "remove"]);
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(std::fs::metadata(&shared).unwrap().len(), whole.len() as u64, "the shared cache was touched");
}

/// A libclang whose initialiser (`DT_INIT`) is moved onto its dynamic section: whole, an ELF
/// file like any other, and loading it jumps into memory that is not executable. The
/// generator loads it in a child process first, and says it crashes the loader, with the
/// signal; it never dies of it itself.
#[test]
fn a_libclang_that_crashes_the_loader_is_reported_from_a_child() {
    let mut bytes = std::fs::read(cached_libclang()).unwrap();
    let u = |b: &[u8], at: usize, n: usize| b[at..at + n].iter().rev().fold(0u64, |v, x| (v << 8) | u64::from(*x));
    let (phoff, size, count) = (u(&bytes, 32, 8) as usize, u(&bytes, 54, 2) as usize, u(&bytes, 56, 2) as usize);
    let h = (0..count).map(|i| phoff + i * size).find(|&h| u(&bytes, h, 4) == 2).expect("a PT_DYNAMIC");
    let (offset, vaddr) = (u(&bytes, h + 8, 8) as usize, u(&bytes, h + 16, 8));
    let mut at = offset;
    let mut patched = false;
    while u(&bytes, at, 8) != 0 {
        if u(&bytes, at, 8) == 12 {
            bytes[at + 8..at + 16].copy_from_slice(&vaddr.to_le_bytes());
            patched = true;
        }
        at += 16;
    }
    assert!(patched, "the wheel's libclang has no DT_INIT: the test no longer crafts a crash");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("libclang.so"), &bytes).unwrap();
    let (o, _) = generate(&cache_dir(), dir.path());
    refused(&o, &["crashes the system loader", "signal 11"]);
}
