//! Libraries that would crash or hang the loader, and a driver that lies: the doctor (and
//! `Driver::from_path` under it) ends each with an error that names what is wrong and an exit
//! status of its table, never a signal, never a hang.
//!
//! - A shared object whose dynamic section points the loader outside what it maps (the hash
//!   tables, the string and symbol tables, the version tables, the relocation tables and what
//!   they write, the initialiser arrays, a needed library's name) would end the process with
//!   SIGSEGV inside `dlopen`: each is refused, naming the tag, before the loader sees it.
//! - A FIFO would block the loader forever, `/dev/zero` feed it without end.
//! - A driver that answers a lookup with `CUDA_SUCCESS` and a NULL pointer is broken: the
//!   doctor says so and exits with 4, for every answer NULL or only some.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use cuda_sys_gen_tests::fake::{build, Flavour};
use cuda_sys_gen_tests::*;

/// Runs the doctor on `arg` with `env`, killed after a minute (a hang is a failure, not a
/// stuck test run).
fn doctor(arg: &Path, env: &[(&str, &str)]) -> Output {
    let child = Command::new(doctor_binary())
        .arg(arg)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (send, receive) = std::sync::mpsc::channel();
    // Its output read while it runs (a full pipe would stop it), on a thread of its own.
    std::thread::spawn(move || send.send(child.wait_with_output()));
    match receive.recv_timeout(Duration::from_secs(60)) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            // SAFETY: signalling the child this test started, which has not been waited for.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("the doctor hung on {}", arg.display());
        }
    }
}

/// The doctor refused `path` before loading it: status 1, no signal, and `says` in its error.
fn refused(path: &Path, says: &str) {
    let o = doctor(path, &[]);
    let err = text(&o.stderr);
    assert_eq!(o.status.signal(), None, "{}: the doctor died of a signal: {err}", path.display());
    assert_eq!(o.status.code(), Some(1), "{}: {err}", path.display());
    assert!(err.contains("not loaded") && err.contains(says), "{}: expected `{says}` in: {err}", path.display());
}

/// A little-endian ELF64 file's fields, read here independently of the shim.
struct Elf {
    bytes: Vec<u8>,
}

impl Elf {
    fn u(&self, at: usize, n: usize) -> u64 {
        self.bytes[at..at + n].iter().rev().fold(0u64, |v, b| (v << 8) | u64::from(*b))
    }

    fn put(&mut self, at: usize, n: usize, v: u64) {
        self.bytes[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
    }

    /// (type, flags, offset, vaddr, filesz) of each program header.
    fn segments(&self) -> Vec<(u64, u64, u64, u64, u64)> {
        let (phoff, size, count) = (self.u(32, 8) as usize, self.u(54, 2) as usize, self.u(56, 2) as usize);
        (0..count)
            .map(|i| phoff + i * size)
            .map(|h| (self.u(h, 4), self.u(h + 4, 4), self.u(h + 8, 8), self.u(h + 16, 8), self.u(h + 32, 8)))
            .collect()
    }

    /// The file offset of each dynamic entry, with its tag and value, up to DT_NULL.
    fn dynamic(&self) -> Vec<(usize, u64, u64)> {
        let (_, _, offset, _, size) = *self.segments().iter().find(|s| s.0 == 2).expect("a PT_DYNAMIC");
        let mut out = Vec::new();
        for at in (offset as usize..(offset + size) as usize).step_by(16) {
            let (tag, value) = (self.u(at, 8), self.u(at + 8, 8));
            if tag == 0 {
                break;
            }
            out.push((at, tag, value));
        }
        out
    }

    /// Where the address `vaddr` is in the file (through the loadable segment holding it).
    fn file_offset(&self, vaddr: u64) -> usize {
        let (_, _, offset, start, _) = *self
            .segments()
            .iter()
            .find(|s| s.0 == 1 && s.3 <= vaddr && vaddr < s.3 + s.4)
            .expect("a loadable segment holds it");
        (offset + vaddr - start) as usize
    }

    /// The file with the value of dynamic tag `tag` replaced (and its tag, where `retag`).
    fn with(&self, tag: u64, value: u64, retag: Option<u64>) -> Option<Vec<u8>> {
        let (at, _, _) = *self.dynamic().iter().find(|d| d.1 == tag)?;
        let mut copy = Elf { bytes: self.bytes.clone() };
        copy.put(at + 8, 8, value);
        if let Some(new) = retag {
            copy.put(at, 8, new);
        }
        Some(copy.bytes)
    }
}

const DT_NEEDED: u64 = 1;
const DT_PLTRELSZ: u64 = 2;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_RELA: u64 = 7;
const DT_RELASZ: u64 = 8;
const DT_STRSZ: u64 = 10;
const DT_JMPREL: u64 = 23;
const DT_INIT_ARRAY: u64 = 25;
const DT_FINI_ARRAY: u64 = 26;
const DT_INIT_ARRAYSZ: u64 = 27;
const DT_HASH: u64 = 4;
const DT_GNU_HASH: u64 = 0x6fff_fef5;
const DT_VERSYM: u64 = 0x6fff_fff0;
const DT_VERNEED: u64 = 0x6fff_fffe;

/// Far past any segment of the fake (and of any library): a table the loader would read from
/// unmapped memory.
const FAR: u64 = 0x7fff_0000_0000;

/// The fake driver with one dynamic entry pointing outside the file, per tag the loader
/// dereferences while mapping; each refused with the tag named, none a signal. The untouched
/// fake loads, and so do the system's own libraries (the check refuses only what is wrong).
#[test]
fn a_dynamic_section_pointing_outside_the_segments_is_refused_by_tag() {
    let fake = Elf { bytes: std::fs::read(build(Flavour::Full)).unwrap() };
    let dir = tempfile::tempdir().unwrap();
    let tags: Vec<u64> = fake.dynamic().iter().map(|d| d.1).collect();
    let mut cases: Vec<(&str, Vec<u8>, &str)> = Vec::new();
    let mut case = |name: &'static str, bytes: Option<Vec<u8>>, says: &'static str| match bytes {
        Some(b) => cases.push((name, b, says)),
        None => eprintln!("the fake has no entry for {name}: not crafted ({tags:x?})"),
    };
    case("strtab", fake.with(DT_STRTAB, FAR, None), "DT_STRTAB");
    case("strsz", fake.with(DT_STRSZ, 1 << 40, None), "DT_STRSZ");
    case("symtab", fake.with(DT_SYMTAB, FAR, None), "DT_SYMTAB");
    case("gnu-hash", fake.with(DT_GNU_HASH, FAR, None), "DT_GNU_HASH");
    // The fake has a GNU hash table only: its entry turned into a SysV one, far out.
    case("hash", fake.with(DT_GNU_HASH, FAR, Some(DT_HASH)), "DT_HASH");
    case("needed", fake.with(DT_NEEDED, 1 << 40, None), "DT_NEEDED");
    case("versym", fake.with(DT_VERSYM, FAR, None), "DT_VERSYM");
    case("verneed", fake.with(DT_VERNEED, FAR, None), "DT_VERNEED");
    case("rela", fake.with(DT_RELA, FAR, None), "DT_RELA");
    case("relasz", fake.with(DT_RELASZ, 1 << 40, None), "DT_RELASZ");
    case("jmprel", fake.with(DT_JMPREL, FAR, None), "DT_JMPREL");
    case("pltrelsz", fake.with(DT_PLTRELSZ, 1 << 40, None), "DT_PLTRELSZ");
    case("init-array", fake.with(DT_INIT_ARRAY, FAR, None), "DT_INIT_ARRAY");
    case("init-arraysz", fake.with(DT_INIT_ARRAYSZ, 1 << 40, None), "DT_INIT_ARRAY");
    case("fini-array", fake.with(DT_FINI_ARRAY, FAR, None), "DT_FINI_ARRAY");
    // A relocation that writes into the ELF header (address 0, a read-only segment).
    let rela = fake.dynamic().iter().find(|d| d.1 == DT_RELA).map(|d| d.2);
    case(
        "reloc-place",
        rela.map(|at| {
            let mut copy = Elf { bytes: fake.bytes.clone() };
            let first = fake.file_offset(at);
            copy.put(first, 8, 0);
            copy.bytes
        }),
        "writes at 0x0, which is not inside a writable loadable segment",
    );
    // Every tag the fake has of those the loader reads is covered.
    for needed in [DT_STRTAB, DT_SYMTAB, DT_GNU_HASH, DT_NEEDED, DT_RELA, DT_JMPREL, DT_INIT_ARRAY] {
        assert!(tags.contains(&needed), "the fake lacks tag {needed:#x}: the test no longer covers it ({tags:x?})");
    }
    for (name, bytes, says) in &cases {
        let path = dir.path().join(name).join("libcuda.so.1");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        refused(&path, says);
    }
    let good = dir.path().join("good").join("libcuda.so.1");
    std::fs::create_dir_all(good.parent().unwrap()).unwrap();
    std::fs::write(&good, &fake.bytes).unwrap();
    let o = doctor(&good, &[]);
    assert_eq!(o.status.code(), Some(0), "the untouched fake: {}", text(&o.stderr));
    // The system's libraries pass the check (and are then no CUDA driver).
    let mut checked = 0;
    for lib in [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
    ] {
        if !Path::new(lib).is_file() {
            continue;
        }
        let o = doctor(Path::new(lib), &[]);
        let err = text(&o.stderr);
        assert!(err.contains("is not a CUDA driver") && !err.contains("not loaded"), "{lib}: {err}");
        checked += 1;
    }
    assert!(checked > 0, "none of the system libraries looked for is on this machine");
}

/// The fake with one dynamic entry at a time set to a random far value, whatever its tag:
/// whatever the check says, the doctor ends with a status, never a signal (a file the check
/// passes is then loaded: the entry was one the loader does not dereference).
#[test]
fn a_scrambled_dynamic_section_never_ends_in_a_signal() {
    let fake = Elf { bytes: std::fs::read(build(Flavour::Full)).unwrap() };
    let dir = tempfile::tempdir().unwrap();
    let entries = fake.dynamic();
    // A small deterministic generator: the same files every run.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..60 {
        let mut copy = Elf { bytes: fake.bytes.clone() };
        let (at, tag, value) = entries[next() as usize % entries.len()];
        // Far values: what a value inside the segments points at is the library's own (the
        // relocations it then reads write what they say, which no check can judge).
        let new = match next() % 3 {
            0 => next(),
            1 => value ^ (1 << (32 + next() % 31)),
            _ => value.wrapping_sub(1 << (33 + next() % 30)),
        };
        copy.put(at + 8, 8, new);
        let path = dir.path().join(format!("round-{round}")).join("libcuda.so.1");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &copy.bytes).unwrap();
        let o = doctor(&path, &[]);
        assert_eq!(
            o.status.signal(),
            None,
            "round {round}: tag {tag:#x} set from {value:#x} to {new:#x}: the doctor died of a signal: {}",
            text(&o.stderr)
        );
    }
}

/// A FIFO and a character device given as the driver: refused by what they are, at once.
#[test]
fn a_fifo_or_a_device_as_the_driver_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("libcuda.so.1");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    refused(&fifo, "a FIFO");
    refused(Path::new("/dev/zero"), "a character device");
    refused(dir.path(), "a folder");
}

/// The fake as a broken driver: every lookup, or only the `cuMem` ones, answered with success
/// and a NULL pointer. The doctor says the driver is broken and exits with 4.
#[test]
fn a_driver_answering_success_with_null_is_broken() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("libcuda.so.1");
    std::fs::copy(build(Flavour::Full), &path).unwrap();
    for (mode, at_least) in [("all", cuda_driver_pfn::ENTRIES.len()), ("some", 1)] {
        let o = doctor(&path, &[("FAKE_LIBCUDA_NULL_POINTERS", mode)]);
        let out = text(&o.stdout);
        assert_eq!(o.status.code(), Some(4), "{mode}: {out}{}", text(&o.stderr));
        let line = out.lines().find(|l| l.starts_with("BROKEN DRIVER: ")).unwrap_or_else(|| panic!("{mode}: {out}"));
        let count: usize = line["BROKEN DRIVER: ".len()..].split(' ').next().unwrap().parse().unwrap();
        assert!(count >= at_least && count <= cuda_driver_pfn::ENTRIES.len(), "{mode}: {line}");
        assert!(out.contains("  BROKEN  "), "{mode}: {out}");
        if mode == "some" {
            // cuInit answered with its own export: resolved and verified, not broken.
            assert!(out.lines().any(|l| l.starts_with("  ok      PFN_cuInit_v2000")), "{out}");
            assert!(count < cuda_driver_pfn::ENTRIES.len(), "{line}");
        }
    }
    // The same file, answering as a driver does: no broken driver.
    let o = doctor(&path, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("BROKEN"), "{}", text(&o.stdout));
}
