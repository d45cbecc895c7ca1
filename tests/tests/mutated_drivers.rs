//! NVIDIA's real drivers (the Debian matrix, `tests/real-drivers.toml`), mutated in their
//! program headers and dynamic section, given to the doctor: every mutant ends with a message
//! and an exit status of the doctor's table, never a signal, never a hang.
//!
//! No check of the file can judge everything the loader does with it (an initialiser that
//! jumps into data, a relocation that writes over the lazily bound GOT): the doctor loads the
//! library in a child process of its own first, and says "this library crashes the system
//! loader" with the signal there. The campaign is seeded (the same mutants every run):
//! `CUDA_SYS_GEN_MUTANTS` mutants per driver (200 by default).

use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cuda_sys_gen_tests::drivers::{self, Fetched};
use cuda_sys_gen_tests::{doctor_binary, text};

/// How a doctor run ended.
struct Ended {
    code: Option<i32>,
    signal: Option<i32>,
    stdout: String,
    stderr: String,
}

/// The doctor on `path`, killed after 20 s (a hang is a failure of the test, not a stuck run).
fn doctor(path: &Path, driver: &Fetched) -> Result<Ended, String> {
    let mut child = Command::new(doctor_binary())
        .arg(path)
        .env("LD_LIBRARY_PATH", driver.library_path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let o = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the doctor hung on {} (killed after 20 s)", path.display()));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(Ended {
        code: status.code(),
        signal: status.signal(),
        stdout: text(&o.join().unwrap()),
        stderr: text(&e.join().unwrap()),
    })
}

/// A little-endian ELF64 file's program headers and dynamic entries (read here, independently
/// of the shim's check).
struct Elf<'a>(&'a [u8]);

impl Elf<'_> {
    fn u(&self, at: usize, n: usize) -> u64 {
        self.0[at..at + n].iter().rev().fold(0u64, |v, b| (v << 8) | u64::from(*b))
    }

    /// The file offset of each program header.
    fn headers(&self) -> Vec<usize> {
        let (phoff, size, count) = (self.u(32, 8) as usize, self.u(54, 2) as usize, self.u(56, 2) as usize);
        (0..count).map(|i| phoff + i * size).collect()
    }

    /// (file offset, tag, value) of each dynamic entry, up to DT_NULL included.
    fn dynamic(&self) -> Vec<(usize, u64, u64)> {
        let h = *self.headers().iter().find(|&&h| self.u(h, 4) == 2).expect("a PT_DYNAMIC");
        let (offset, size) = (self.u(h + 8, 8) as usize, self.u(h + 32, 8) as usize);
        let mut out = Vec::new();
        for at in (offset..offset + size).step_by(16) {
            let tag = self.u(at, 8);
            out.push((at, tag, self.u(at + 8, 8)));
            if tag == 0 {
                break;
            }
        }
        out
    }

    /// The address of the dynamic section (a writable segment's data, not code).
    fn dynamic_vaddr(&self) -> u64 {
        let h = *self.headers().iter().find(|&&h| self.u(h, 4) == 2).expect("a PT_DYNAMIC");
        self.u(h + 16, 8)
    }
}

/// A seeded xorshift: the same mutants every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Tags the loader acts on, for retagging an entry.
const TAGS: &[u64] = &[
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    11,
    12,
    13,
    14,
    15,
    16,
    17,
    18,
    19,
    20,
    21,
    22,
    23,
    24,
    25,
    26,
    27,
    28,
    29,
    30,
    32,
    33,
    35,
    36,
    37,
    0x6fff_fef5,
    0x6fff_fff0,
    0x6fff_fffc,
    0x6fff_fffe,
    0x6fff_fff9,
    0x6fff_fffb,
];

/// One mutant: the writes (file offset, bytes) that make it from the original, and what they do.
fn mutant(bytes: &[u8], rng: &mut Rng) -> (Vec<(usize, Vec<u8>)>, String) {
    let elf = Elf(bytes);
    let value = |rng: &mut Rng, old: u64, others: &[u64]| match rng.below(6) {
        0 => rng.next(),
        1 => old ^ (1 << rng.below(64)),
        2 => old.wrapping_add(rng.below(0x2000) as u64).wrapping_sub(0x1000),
        3 => others[rng.below(others.len())],
        4 => 0,
        _ => old >> (1 + rng.below(8)),
    };
    let mut writes = Vec::new();
    let what = if rng.below(3) == 0 {
        // A program header field.
        let headers = elf.headers();
        let h = headers[rng.below(headers.len())];
        let (off, n, name) = [
            (0, 4, "p_type"),
            (4, 4, "p_flags"),
            (8, 8, "p_offset"),
            (16, 8, "p_vaddr"),
            (32, 8, "p_filesz"),
            (40, 8, "p_memsz"),
            (48, 8, "p_align"),
        ][rng.below(7)];
        let old = elf.u(h + off, n);
        let others: Vec<u64> = headers.iter().map(|&o| elf.u(o + off, n)).collect();
        let mut new = value(rng, old, &others);
        if n == 4 {
            new &= 0xffff_ffff;
        }
        writes.push((h + off, new.to_le_bytes()[..n].to_vec()));
        format!("{name} of the program header at {h:#x}: {old:#x} -> {new:#x}")
    } else {
        let entries = elf.dynamic();
        let i = rng.below(entries.len());
        let (at, tag, old) = entries[i];
        let values: Vec<u64> = entries.iter().map(|e| e.2).collect();
        match rng.below(4) {
            0 => {
                let new = TAGS[rng.below(TAGS.len())];
                writes.push((at, new.to_le_bytes().to_vec()));
                format!("tag of dynamic entry {i} ({tag:#x}) -> {new:#x}")
            }
            1 if tag != 0 => {
                // The entry removed: the ones after it move up.
                let rest: Vec<u8> =
                    entries[i + 1..].iter().flat_map(|e| [e.1.to_le_bytes(), e.2.to_le_bytes()].concat()).collect();
                let mut moved = rest;
                moved.extend([0u8; 16]);
                writes.push((at, moved));
                format!("dynamic entry {i} ({tag:#x}) removed")
            }
            _ => {
                let new = value(rng, old, &values);
                writes.push((at + 8, new.to_le_bytes().to_vec()));
                format!("value of dynamic entry {i} ({tag:#x}): {old:#x} -> {new:#x}")
            }
        }
    };
    (writes, what)
}

/// The doctor's exit statuses (its `//!` table): 0, 1, 3, 4.
const DOCUMENTED: &[i32] = &[0, 1, 3, 4];

/// `count` mutants of each driver; every one ends with a documented status and a message.
fn campaign(count: usize) {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for driver in &drivers {
        let original = std::fs::read(&driver.libcuda).unwrap();
        let path = dir.path().join(&driver.pin.name).join("libcuda.so.1");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &original).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let mut rng =
            Rng(0x5eed_0000 ^ driver.pin.name.bytes().fold(0u64, |h, b| h.wrapping_mul(31) ^ u64::from(b)) | 1);
        let (mut loaded, mut refused, mut isolated) = (0, 0, 0);
        for n in 0..count {
            let (writes, what) = mutant(&original, &mut rng);
            for (at, b) in &writes {
                file.write_all_at(b, *at as u64).unwrap();
            }
            let ended = doctor(&path, driver);
            for (at, b) in &writes {
                file.write_all_at(&original[*at..*at + b.len()], *at as u64).unwrap();
            }
            let case = format!("driver {} mutant {n} ({what})", driver.pin.name);
            match ended {
                Err(hang) => failures.push(format!("{case}: {hang}")),
                Ok(e) if e.signal.is_some() => {
                    failures.push(format!("{case}: the doctor died of signal {:?}: {}", e.signal, e.stderr))
                }
                Ok(e) if !e.code.is_some_and(|c| DOCUMENTED.contains(&c)) => {
                    failures.push(format!("{case}: exit status {:?}, not in the doctor's table: {}", e.code, e.stderr))
                }
                Ok(e) if e.code == Some(1) && !e.stderr.contains("doctor: ") => {
                    failures.push(format!("{case}: status 1 with no message: {:?}", e.stderr))
                }
                Ok(e) if e.code != Some(1) && !e.stdout.contains("entries resolve") => {
                    failures.push(format!("{case}: status {:?} without the report: {}", e.code, e.stderr))
                }
                Ok(e) => {
                    if e.stderr.contains("the system loader") {
                        isolated += 1;
                    } else if e.code == Some(1) {
                        refused += 1;
                    } else {
                        loaded += 1;
                    }
                }
            }
        }
        eprintln!(
            "driver {}: {count} mutants: {refused} refused or not a driver, {isolated} crashed or stopped the loader \
             in the doctor's child, {loaded} loaded",
            driver.pin.name
        );
        let _ = std::io::stderr().flush();
    }
    assert!(failures.is_empty(), "{} of the mutants failed:\n{}", failures.len(), failures.join("\n"));
}

/// The campaign: 200 mutants of each driver of the matrix (about 40 s here, 2 cores).
#[test]
fn mutated_real_drivers_end_with_a_message_and_a_documented_status() {
    let count = std::env::var("CUDA_SYS_GEN_MUTANTS").ok().and_then(|s| s.parse().ok()).unwrap_or(200);
    campaign(count);
}

/// A real driver whose initialiser (`DT_INIT`) is moved onto its dynamic section, data the
/// check finds inside a segment: loading it jumps into memory that is not executable. The
/// doctor's child dies of it; the doctor says so, with the signal, and exits 1.
#[test]
fn an_initialiser_jumping_into_data_is_reported_as_a_crash_of_the_loader() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut tried = 0;
    for driver in &drivers {
        let mut bytes = std::fs::read(&driver.libcuda).unwrap();
        let elf = Elf(&bytes);
        let Some(&(at, _, _)) = elf.dynamic().iter().find(|e| e.1 == 12) else { continue };
        let data = elf.dynamic_vaddr();
        bytes[at + 8..at + 16].copy_from_slice(&data.to_le_bytes());
        let path = dir.path().join(&driver.pin.name).join("libcuda.so.1");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        let e = doctor(&path, driver).unwrap();
        assert_eq!(e.signal, None, "driver {}: the doctor died of a signal: {}", driver.pin.name, e.stderr);
        assert_eq!(e.code, Some(1), "driver {}: {}{}", driver.pin.name, e.stdout, e.stderr);
        assert!(
            e.stderr.contains("this library crashes the system loader") && e.stderr.contains("SIGSEGV"),
            "driver {}: {}",
            driver.pin.name,
            e.stderr
        );
        tried += 1;
    }
    assert!(tried > 0, "no driver of the matrix has a DT_INIT");
}
