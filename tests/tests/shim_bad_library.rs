//! A file that cannot be loaded in this process is refused by `Driver::from_path`
//! (and `Runtime::from_path`, and the doctor) with the reason, before the system loader maps
//! it: a truncated library (its first 3000 bytes, a cut inside a segment, a 1 MB cut of a real
//! driver) would otherwise end the process with SIGBUS inside `dlopen`. And a bare name that is
//! a file in the current folder is explained, not answered with "install the driver".

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_driver_pfn::{Driver, Error, LibraryKind, Runtime};
use cuda_sys_gen_tests::fake::{build, Flavour};
use cuda_sys_gen_tests::*;

/// (offset, size in the file) of each loadable segment of a little-endian ELF64 file, read
/// here independently of the shim.
fn loadable_segments(bytes: &[u8]) -> Vec<(u64, u64)> {
    let u = |at: usize, n: usize| bytes[at..at + n].iter().rev().fold(0u64, |v, b| (v << 8) | u64::from(*b));
    let (phoff, size, count) = (u(32, 8) as usize, u(54, 2) as usize, u(56, 2) as usize);
    (0..count)
        .map(|i| phoff + i * size)
        .filter(|&h| u(h, 4) == 1)
        .map(|h| (u(h + 8, 8), u(h + 32, 8)))
        .filter(|&(_, filesz)| filesz > 0)
        .collect()
}

/// The fake driver cut short: its first 3000 bytes (program headers whole, segments not), and
/// the middle of its last loadable segment.
fn cuts(dir: &Path) -> Vec<(PathBuf, usize)> {
    let fake = std::fs::read(build(Flavour::Full)).unwrap();
    let segments = loadable_segments(&fake);
    let (offset, filesz) = *segments.last().expect("the fake has loadable segments");
    let mut out = Vec::new();
    for len in [3000, (offset + filesz / 2) as usize] {
        assert!(len < fake.len());
        let path = dir.join(format!("cut-{len}")).join("libcuda.so.1");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &fake[..len]).unwrap();
        out.push((path, len));
    }
    out
}

#[test]
fn a_truncated_library_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    for (path, len) in cuts(dir.path()) {
        let e = Driver::from_path(&path).map(|_| ()).unwrap_err();
        let Error::LibraryNotFound { library: LibraryKind::Driver, tried } = &e else { panic!("{len}: {e:?}") };
        assert_eq!(tried[0].name, path.display().to_string());
        assert!(
            tried[0].message.contains("truncated") && tried[0].message.contains(&format!("{len} bytes")),
            "{len}: {}",
            tried[0].message
        );
        assert!(e.to_string().contains("Check the path"), "{e}");
        let e = Runtime::from_path(&path).map(|_| ()).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{len}: {e}");
    }
}

#[test]
fn a_library_of_another_word_size_or_processor_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fake = std::fs::read(build(Flavour::Full)).unwrap();
    let mut narrow = fake.clone();
    narrow[4] = 1; // ELFCLASS32
    let mut foreign = fake.clone();
    let other: u16 = if cfg!(target_arch = "aarch64") { 62 } else { 183 };
    foreign[18..20].copy_from_slice(&other.to_le_bytes());
    for (name, bytes, says) in [
        ("narrow", narrow, "a 32-bit library, and this process is 64-bit"),
        ("foreign", foreign, "it is built for"),
        ("text", b"INPUT(libcuda.so.1)\n".to_vec(), "not an ELF shared library"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let e = Driver::from_path(&path).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains(says), "{name}: {e}");
    }
    // The untouched library still loads: the check refuses only what is wrong.
    let good = dir.path().join("good");
    std::fs::write(&good, &fake).unwrap();
    Driver::from_path(&good).unwrap_or_else(|e| panic!("{e}"));
}

/// The doctor on a cut library: exit status 1 and the reason, never a signal.
#[test]
fn the_doctor_on_a_truncated_library_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let mut cut = cuts(dir.path());
    // A real driver cut at 1 MB, where the real drivers can be had (tests/real-drivers.toml).
    match drivers::fetch() {
        Ok(real) => {
            let newest = real.last().expect("pinned drivers");
            let bytes = std::fs::read(&newest.libcuda).unwrap();
            let path = dir.path().join("real-1mb").join("libcuda.so.1");
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &bytes[..1 << 20]).unwrap();
            cut.push((path, 1 << 20));
        }
        Err(drivers::FetchError::Unavailable(why)) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("SKIPPED: the 1 MB cut of a real driver: {why}");
        }
        Err(e) => panic!("the real drivers could not be had: {e}"),
    }
    for (path, len) in cut {
        let o = Command::new(doctor_binary()).arg(&path).output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.signal(), None, "{len}: the doctor died of a signal: {err}");
        assert_eq!(o.status.code(), Some(1), "{len}: {err}");
        assert!(err.contains("truncated") && err.contains(&path.display().to_string()), "{len}: {err}");
    }
}

/// `doctor libcuda.so.1` beside a libcuda.so.1: a bare name is looked for on the loader's
/// path, and `./libcuda.so.1` names the file.
#[test]
fn a_bare_name_of_a_file_here_says_how_to_name_it() {
    let dir = tempfile::tempdir().unwrap();
    // A name no loader path has, so that the loader does not find another file by it.
    let name = "libcuda-sys-gen-issue-26.so.1";
    std::fs::copy(build(Flavour::Full), dir.path().join(name)).unwrap();
    let doctor = |arg: &str| Command::new(doctor_binary()).current_dir(dir.path()).arg(arg).output().unwrap();
    let o = doctor(name);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("A bare file name is searched on the loader's path")
            && err.contains(&format!("`./{name}` names that file")),
        "{err}"
    );
    assert!(!err.contains("Install the NVIDIA driver"), "{err}");
    // As it says: `./name` loads it.
    let o = doctor(&format!("./{name}"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // A bare name with no such file here keeps the advice to install the driver.
    let o = doctor("libcuda-sys-gen-nowhere.so.1");
    assert!(text(&o.stderr).contains("Install the NVIDIA driver"), "{}", text(&o.stderr));
}
