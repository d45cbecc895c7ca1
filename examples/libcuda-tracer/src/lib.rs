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
//! is the entry the registry's rule names (`rule ok`, else `rule DIFFERENT`); an answer older
//! than the ABI the version asked names (a driver before 13.0 asked above its own version) is
//! flagged `HAZARD: asked 12050, got cuCtxCreate_v11040 (11040), older than ...`. Without
//! `$CUDA_SYS_GEN_TRACE` nothing is written, and every call only forwards. With
//! `CUDA_SYS_GEN_TRACE_CALLS=0` only those request lines are written: every call only forwards.
//!
//! Each line is formatted on the stack and written with one `write(2)` to the file opened
//! `O_APPEND | O_NONBLOCK` before any call (in the constructor): no lock and no allocation on
//! a call's path, so a call from a signal handler or a `fork` child is traced like any other.
//! A trace that cannot be written (a FIFO nobody reads, a reader that left, a full pipe) loses
//! lines and never stops or signals the program.

use core::fmt::Write as _;
use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use cuda_driver_pfn::standin::{self, Arg, Observer};
use cuda_driver_pfn::types::CUresult;
use cuda_driver_pfn::{answer, EntryInfo, ENTRIES};

/// The environment variable that names the trace file (appended to).
pub const TRACE_ENV: &str = "CUDA_SYS_GEN_TRACE";

/// With this variable `0`, the trace has the `cuGetProcAddress` requests only: every call only
/// forwards, as through a stand-in whose hooks all forward, and is not written down. What a
/// program asks of a forwarding stand-in, to set beside what it asks of the tracer.
pub const CALLS_ENV: &str = "CUDA_SYS_GEN_TRACE_CALLS";

/// The trace's file descriptor, opened by [`Observer::start`] before any call; -1 without
/// `$CUDA_SYS_GEN_TRACE`, where it could not be opened, or once its reader has gone.
static SINK: AtomicI32 = AtomicI32::new(-1);
/// The sink is a pipe, FIFO or socket: a write there may raise `SIGPIPE`.
static SINK_PIPE: AtomicBool = AtomicBool::new(false);
/// Whether calls are written down (`$CUDA_SYS_GEN_TRACE_CALLS` is not `0`).
static CALLS: AtomicBool = AtomicBool::new(true);

struct Tracer;

static TRACER: Tracer = Tracer;

cuda_driver_pfn::export_libcuda!(observer = TRACER);

/// One line, formatted on the stack: a call may come from a signal handler that interrupted
/// `malloc`, or from a `fork` child of a process whose other threads held locks, so nothing
/// here allocates or locks. A line longer than the buffer is cut, and ends in `...`.
struct Line {
    buf: [u8; LINE_MAX],
    len: usize,
    cut: bool,
}

/// At most `PIPE_BUF` bytes: one `write` of a line to a pipe is atomic, so lines of many
/// threads and processes never interleave (on a file opened `O_APPEND`, neither).
const LINE_MAX: usize = 4096;
const ROOM: usize = LINE_MAX - " ...\n".len();

impl Line {
    fn new() -> Line {
        Line { buf: [0; LINE_MAX], len: 0, cut: false }
    }

    /// Ends the line and writes it in one `write(2)`.
    fn send(mut self) {
        let end: &[u8] = if self.cut { b" ...\n" } else { b"\n" };
        self.buf[self.len..self.len + end.len()].copy_from_slice(end);
        self.len += end.len();
        write_line(&self.buf[..self.len]);
    }
}

impl core::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = ROOM - self.len;
        let n = if s.len() <= room {
            s.len()
        } else {
            self.cut = true;
            (0..=room).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
        };
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Writes one whole line to the sink, never blocking and never signalling the program: the
/// sink was opened `O_NONBLOCK` (a full pipe drops the line), and around a write to a pipe
/// `SIGPIPE` is blocked for this thread and, where the write raised it, taken back, so a reader
/// that leaves only ends the trace.
fn write_line(line: &[u8]) {
    let fd = SINK.load(Ordering::Acquire);
    if fd < 0 {
        return;
    }
    if !SINK_PIPE.load(Ordering::Relaxed) {
        // SAFETY: a plain write of our own buffer to our own descriptor.
        let _ = unsafe { write_retrying(fd, line) };
        return;
    }
    // SAFETY: signal masks of this thread only, restored before returning; every call is
    // async-signal-safe.
    unsafe {
        let mut pipe: libc::sigset_t = core::mem::zeroed();
        let mut old: libc::sigset_t = core::mem::zeroed();
        let mut pending: libc::sigset_t = core::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old);
        libc::sigpending(&mut pending);
        let was_pending = libc::sigismember(&pending, libc::SIGPIPE) == 1;
        if write_retrying(fd, line) == Err(libc::EPIPE) {
            // The reader has gone: no more lines, and the SIGPIPE this write raised is taken
            // back (one that was pending before is the program's, and stays).
            SINK.store(-1, Ordering::Release);
            if !was_pending {
                let zero = libc::timespec { tv_sec: 0, tv_nsec: 0 };
                libc::sigtimedwait(&pipe, core::ptr::null_mut(), &zero);
            }
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, core::ptr::null_mut());
    }
}

/// `write(2)` of all of `line`, again after an interruption; the `errno` of a failure.
unsafe fn write_retrying(fd: i32, mut line: &[u8]) -> Result<(), i32> {
    while !line.is_empty() {
        // SAFETY: the caller's descriptor and our buffer.
        let n = unsafe { libc::write(fd, line.as_ptr().cast(), line.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        line = &line[n as usize..];
    }
    Ok(())
}

/// This thread's id as the kernel numbers it, asked each time: an id kept per thread would
/// be the parent's in a `fork` child.
fn thread_id() -> i64 {
    // SAFETY: gettid takes no arguments and cannot fail.
    i64::from(unsafe { libc::gettid() })
}

fn abi(info: &EntryInfo) -> &str {
    info.pfn.strip_prefix("PFN_").unwrap_or(info.pfn)
}

/// Opens the trace: for appending, created where missing, never waiting (a FIFO nobody reads
/// is not opened at all: the program runs on untraced), closed across `exec`.
fn open_sink(path: &std::ffi::OsStr) -> Option<i32> {
    use std::os::unix::ffi::OsStrExt;
    let mut c = path.as_bytes().to_vec();
    c.push(0);
    let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_NONBLOCK | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr().cast(), flags, 0o666 as libc::c_uint) };
    if fd < 0 {
        return None;
    }
    // SAFETY: fstat of the descriptor just opened.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    let pipe =
        unsafe { libc::fstat(fd, &mut st) } == 0 && matches!(st.st_mode & libc::S_IFMT, libc::S_IFIFO | libc::S_IFSOCK);
    SINK_PIPE.store(pipe, Ordering::Relaxed);
    Some(fd)
}

/// The ABI a caller asking for `version` expects, where the driver answered an older one: the
/// entry a driver that has every ABI the registry knows answers (`driver_answer` of driver
/// version 0), where that is newer than `answered`. A driver before CUDA 13.0 asked for a
/// version above its own answers with the newest ABI it has (`cuCtxCreate` at 12050 from a
/// 12.2 driver is the 11040 ABI): a caller that casts the pointer to its version's typedef
/// then calls a function of another signature. A negative version (read as unsigned, the
/// newest the driver has) names no ABI, so it is never flagged. Pure: no lock, no allocation.
fn hazard(
    symbol: &core::ffi::CStr,
    version: core::ffi::c_int,
    flags: u64,
    answered: &'static EntryInfo,
) -> Option<&'static EntryInfo> {
    if version < 0 {
        return None;
    }
    let named = answer::driver_answer(symbol.to_bytes(), version, flags, 0).entry()?;
    (named.symbol == answered.symbol && named.version > answered.version).then_some(named)
}

impl Observer for Tracer {
    fn start(&self) {
        CALLS.store(std::env::var_os(CALLS_ENV).is_none_or(|v| v != "0"), Ordering::Relaxed);
        let Some(path) = std::env::var_os(TRACE_ENV) else { return };
        let Some(fd) = open_sink(&path) else { return };
        SINK.store(fd, Ordering::Release);
        let mut line = Line::new();
        match standin::real_driver() {
            Ok(r) => {
                let _ = write!(
                    line,
                    "start {} real driver {} (version {})",
                    std::process::id(),
                    r.path().display(),
                    r.version()
                );
            }
            Err(why) => {
                let _ = write!(line, "start {} real driver none: {why}", std::process::id());
            }
        }
        line.send();
    }

    fn call(&self, index: usize, args: &[Arg], forward: &mut dyn FnMut() -> CUresult) -> CUresult {
        if SINK.load(Ordering::Relaxed) < 0 || !CALLS.load(Ordering::Relaxed) {
            return forward();
        }
        let start = std::time::Instant::now();
        let result = forward();
        let took = start.elapsed().as_nanos();
        let Some(info) = ENTRIES.get(index) else { return result };
        let mut line = Line::new();
        let _ = write!(line, "call {} {} ({})", thread_id(), abi(info), info.exported);
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
                let _ = line.write_str("}");
            }
        }
        let _ = write!(line, " {took} ns");
        if result.0 == standin::MISSING.0 && standin::forward_pointer(index).is_none() {
            let _ = line.write_str(" (not in the real driver: nothing was called)");
        }
        line.send();
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
        if SINK.load(Ordering::Relaxed) < 0 {
            return;
        }
        let mut line = Line::new();
        let _ = write!(line, "request {} \"", thread_id());
        for chunk in symbol.to_bytes().utf8_chunks() {
            let _ = write!(line, "{}", chunk.valid().escape_debug());
            for b in chunk.invalid() {
                let _ = write!(line, "\\x{b:02x}");
            }
        }
        let _ = write!(line, "\" {version} flags {flags} -> ");
        match answered {
            Some(e) => {
                let _ = write!(line, "{} ({})", abi(e), e.exported);
            }
            None => {
                let _ = line.write_str("a function the registry does not know (not traced)");
            }
        }
        if let Some((got, named)) = answered.and_then(|a| Some((a, hazard(symbol, version, flags, a)?))) {
            let _ = write!(
                line,
                " HAZARD: asked {version}, got {} ({}), older than {}, the ABI of {version};",
                abi(got),
                got.version,
                abi(named)
            );
        }
        let _ = line.write_str(if rule_agrees { " rule ok" } else { " rule DIFFERENT" });
        line.send();
    }
}
