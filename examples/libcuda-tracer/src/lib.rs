//! A tracer for the CUDA driver: a `libcuda.so.1` that logs every call a program makes of the
//! driver, one line per call, and forwards it to the real driver. Built on the generated
//! crate's stand-in (`standin` feature, `export_libcuda!`); docs/standing-in-for-libcuda.md
//! says how to use it and what it cannot see.
//!
//! ```text
//! cargo build --release -p cuda-sys-gen-tracer
//! mkdir -p /tmp/tracer && cp target/release/libcuda_tracer.so /tmp/tracer/libcuda.so.1
//! CUDA_SYS_GEN_TRACE=/tmp/trace.log LD_LIBRARY_PATH=/tmp/tracer:$LD_LIBRARY_PATH python3 app.py
//! ```
//!
//! A line: the thread, the ABI (`cuMemAlloc_v3020`) and the name the driver exports it under
//! (`cuMemAlloc_v2`), each argument as `name: type = value` (pointers as addresses, never read
//! before the call; C enums by their enumerators' names), the result by its name, after a
//! successful call what each output parameter points to (in braces; the rule of which
//! parameters are outputs: `standin::Arg::output`), and the time the call took:
//!
//! ```text
//! call 140243 cuMemAlloc_v3020 (cuMemAlloc_v2) dptr: *mut CUdeviceptr_v2 = 0x7ffd5c3c1a28, bytesize: usize = 4096 -> CUDA_SUCCESS {*dptr = 0x7f3a4e000000} 2130 ns
//! ```
//!
//! Every `cuGetProcAddress` request the real driver answers with a function gets a line too:
//! the symbol, version and flags, the entry the function was identified as, and whether that
//! is the entry the registry's rule names (`rule ok`, else `rule DIFFERENT`). Without
//! `$CUDA_SYS_GEN_TRACE` nothing is written, and every call only forwards. With
//! `CUDA_SYS_GEN_TRACE_CALLS=0` only those request lines are written: every call only forwards.

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::{Mutex, OnceLock};

use cuda_driver_pfn::standin::{self, Arg, Observer};
use cuda_driver_pfn::types::CUresult;
use cuda_driver_pfn::{EntryInfo, ENTRIES};

/// The environment variable that names the trace file (appended to).
pub const TRACE_ENV: &str = "CUDA_SYS_GEN_TRACE";

/// With this variable `0`, the trace has the `cuGetProcAddress` requests only: every call only
/// forwards, as through a stand-in whose hooks all forward, and is not written down. What a
/// program asks of a forwarding stand-in, to set beside what it asks of the tracer.
pub const CALLS_ENV: &str = "CUDA_SYS_GEN_TRACE_CALLS";

/// Whether calls are written down (`$CUDA_SYS_GEN_TRACE_CALLS` is not `0`).
fn calls_traced() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os(CALLS_ENV).is_none_or(|v| v != "0"))
}

struct Tracer;

static TRACER: Tracer = Tracer;

cuda_driver_pfn::export_libcuda!(observer = TRACER);

/// The trace file, opened on the first call; `None` without `$CUDA_SYS_GEN_TRACE` (or where it
/// cannot be opened: the program runs on, untraced).
fn log() -> Option<&'static Mutex<std::fs::File>> {
    static LOG: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let path = std::env::var_os(TRACE_ENV)?;
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).ok()?;
        let real = match standin::real_driver() {
            Ok(r) => format!("{} (version {})", r.path().display(), r.version()),
            Err(why) => format!("none: {why}"),
        };
        let _ = writeln!(file, "start {} real driver {real}", std::process::id());
        Some(Mutex::new(file))
    })
    .as_ref()
}

fn write_line(line: &str) {
    if let Some(log) = log() {
        // One write per line, under the lock: lines of many threads never interleave.
        let mut file = log.lock().unwrap_or_else(|e| e.into_inner());
        let _ = file.write_all(line.as_bytes());
    }
}

/// This thread's id as the kernel numbers it.
fn thread_id() -> i64 {
    std::thread_local! {
        static ID: i64 = {
            // SAFETY: gettid takes no arguments and cannot fail.
            i64::from(unsafe { libc_gettid() })
        };
    }
    ID.with(|id| *id)
}

extern "C" {
    /// glibc 2.30 and later; `pid_t` is a C `int`.
    #[link_name = "gettid"]
    fn libc_gettid() -> core::ffi::c_int;
}

fn abi(info: &EntryInfo) -> &str {
    info.pfn.strip_prefix("PFN_").unwrap_or(info.pfn)
}

impl Observer for Tracer {
    fn call(&self, index: usize, args: &[Arg], forward: &mut dyn FnMut() -> CUresult) -> CUresult {
        if log().is_none() || !calls_traced() {
            return forward();
        }
        let start = std::time::Instant::now();
        let result = forward();
        let took = start.elapsed().as_nanos();
        let Some(info) = ENTRIES.get(index) else { return result };
        let mut line = format!("call {} {} ({})", thread_id(), abi(info), info.exported);
        for (i, a) in args.iter().enumerate() {
            let _ = write!(line, "{}{a}", if i == 0 { " " } else { ", " });
        }
        let _ = write!(line, " -> {result:?}");
        if result.0 == 0 {
            // What each output parameter points to, now that the driver has filled it.
            let mut first = true;
            for a in args {
                // SAFETY: the call returned CUDA_SUCCESS and has not yet returned to its caller.
                if let Some(v) = unsafe { a.output() } {
                    let _ = write!(line, "{}*{} = {v}", if first { " {" } else { ", " }, a.name);
                    first = false;
                }
            }
            if !first {
                line.push('}');
            }
        }
        let _ = write!(line, " {took} ns");
        if result.0 == standin::MISSING.0 && standin::forward_pointer(index).is_none() {
            line.push_str(" (not in the real driver: nothing was called)");
        }
        line.push('\n');
        write_line(&line);
        result
    }

    fn request(
        &self,
        symbol: &core::ffi::CStr,
        version: core::ffi::c_int,
        flags: u64,
        answered: Option<&'static EntryInfo>,
        rule_agrees: bool,
    ) {
        if log().is_none() {
            return;
        }
        let to = answered.map_or_else(
            || "a function the registry does not know (not traced)".to_owned(),
            |e| format!("{} ({})", abi(e), e.exported),
        );
        let rule = if rule_agrees { "rule ok" } else { "rule DIFFERENT" };
        write_line(&format!(
            "request {} {:?} {version} flags {flags} -> {to} {rule}\n",
            thread_id(),
            symbol.to_string_lossy()
        ));
    }
}
