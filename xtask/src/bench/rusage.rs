//! The compile-time bench's rustc wrapper: this executable, set as `RUSTC_WRAPPER`, runs the
//! rustc cargo asked for and appends that rustc's peak resident memory, wall time and CPU time
//! (user and system, every thread) to a log. On a shared machine the CPU time is the steadier
//! figure: another session's build stretches a rustc's wall time, much less its CPU time.
//!
//! The wrapper has exactly one child, so `getrusage(RUSAGE_CHILDREN)` after it exits is that
//! rustc's own peak, per crate, with no tool to install.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

/// Set on the cargo under test: the log file. Its absence means "not a wrapper".
pub const LOG_VAR: &str = "CUDA_SYS_GEN_BENCH_RUSAGE_LOG";

/// One rustc run.
#[derive(Debug, Clone)]
pub struct Rustc {
    pub krate: String,
    pub peak_kib: u64,
    pub secs: f64,
    /// User and system CPU seconds, every thread of the rustc.
    pub cpu: f64,
}

/// When cargo started this process as its rustc wrapper (`$RUSTC_WRAPPER $RUSTC args...`),
/// runs rustc, logs it and exits with rustc's status; otherwise returns.
pub fn wrap_if_asked() {
    let Some(log) = std::env::var_os(LOG_VAR) else { return };
    let args: Vec<OsString> = std::env::args_os().collect();
    let Some(rustc) = args.get(1) else { return };
    if !Path::new(rustc).file_stem().is_some_and(|s| s.to_string_lossy().starts_with("rustc")) {
        return;
    }
    let t = Instant::now();
    let code = match Command::new(rustc).args(&args[2..]).status() {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!("bench rustc wrapper: could not run {}: {e}", Path::new(rustc).display());
            1
        }
    };
    let secs = t.elapsed().as_secs_f64();
    let krate = args.windows(2).find(|w| w[0] == "--crate-name").map(|w| w[1].to_string_lossy().into_owned());
    // `___` is cargo asking rustc about the target, not a crate.
    if let Some(krate) = krate.filter(|k| k != "___") {
        // One short write per line with O_APPEND: concurrent rustcs do not interleave.
        let (peak, cpu) = children_usage();
        let line = format!("{krate}\t{peak}\t{secs:.3}\t{cpu:.3}\n");
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!("bench rustc wrapper: could not append to {}: {e}", Path::new(&log).display());
        }
    }
    std::process::exit(code);
}

/// The child's peak resident memory (KiB) and its CPU seconds, user and system.
fn children_usage() -> (u64, f64) {
    // SAFETY: getrusage fills the struct it is given.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut r) } == 0;
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    // Linux reports ru_maxrss in KiB.
    if ok {
        (r.ru_maxrss.max(0) as u64, secs(r.ru_utime) + secs(r.ru_stime))
    } else {
        (0, 0.0)
    }
}

pub fn read_log(path: &Path) -> Result<Vec<Rustc>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        if let [krate, kib, secs, cpu] = f[..] {
            let bad = || format!("bad line in {}: {line}", path.display());
            out.push(Rustc {
                krate: krate.to_owned(),
                peak_kib: kib.parse().with_context(bad)?,
                secs: secs.parse().with_context(bad)?,
                cpu: cpu.parse().with_context(bad)?,
            });
        }
    }
    Ok(out)
}
