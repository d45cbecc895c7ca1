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
//! `CUDA_SYS_GEN_TRACE_CALLS=0` only those request lines are written: every call only forwards;
//! with `first`, only the first call of each ABI is written (what `min-driver --run` reads).
//! A request the driver refuses gets a `refused` line (`refused TID "cuNoSuch" 12000 flags 0 ->
//! CUDA_SUCCESS status 1`); each CUDA runtime mapped when the tracer starts, a `runtime` line
//! (`runtime PID /usr/lib/libcudart.so.12.4.99`). With `CUDA_SYS_GEN_TRACE_IMAGES=DIR` (an
//! existing folder), each image a load from memory was given and the driver accepted is copied
//! there (`image PID cuModuleLoadData_v2000 DIR/image-PID-0.ptx`), followed by the compute
//! capability of the GPU it was loaded on, as the real driver says (`gpu PID 90`); an image loaded
//! from a file (`cuModuleLoad`, `cuLibraryLoadFromFile`, `cuLinkAddFile`) is copied from the
//! file the program named, read by the tracer.
//!
//! With `CUDA_SYS_GEN_AS_DRIVER=12040` (not above the real driver's version; at it, every
//! answer is the real driver's own) the tracer answers as a driver of that version would
//! (`min-driver --run --as-driver`): `cuDriverGetVersion` says it; each lookup still asks the real driver, then hands out the answer the registry's
//! rule gives for that driver (`answer::driver_answer`: this library's function of that ABI,
//! which forwards to the real driver's export, or the refusal), written as one `as-driver` line
//! with the real driver's answer beside it; a call of an ABI that driver does not have returns
//! `CUDA_ERROR_NOT_FOUND` without reaching the real driver, written as a `missing` line; and an
//! image that driver would not load (min-driver's rule, `min_driver::load`, for the GPU of the
//! current context) fails with its error (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`,
//! `CUDA_ERROR_NO_BINARY_FOR_GPU`), written as an `image-refused` line (`image-refused PID
//! cuModuleLoadData_v2000 -> CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): a driver of 12000 would
//! not load it: WHY`).
//!
//! Each line is formatted on the stack and written with one `write(2)` to the file opened
//! `O_APPEND | O_NONBLOCK` before any call (in the constructor): no lock and no allocation on
//! a call's path, so a call from a signal handler or a `fork` child is traced like any other.
//! A trace that cannot be written (a FIFO nobody reads, a reader that left, a full pipe) loses
//! lines and never stops or signals the program.

use core::cell::Cell;
use core::ffi::{c_void, CStr};
use core::fmt::Write as _;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, Ordering};

use cuda_driver_pfn::answer::DriverAnswer;
use cuda_driver_pfn::registry::ENTRY_COUNT;
use cuda_driver_pfn::standin::{self, Arg, ArgValue, Observer};
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
/// `$CUDA_SYS_GEN_TRACE_CALLS=first`: only the first call of each ABI is written down.
static FIRST_ONLY: AtomicBool = AtomicBool::new(false);
/// Per ABI, whether a call of it was written down (for [`FIRST_ONLY`]).
static CALLED: [AtomicBool; ENTRY_COUNT] = [const { AtomicBool::new(false) }; ENTRY_COUNT];

/// The environment variable that makes the tracer answer as an older driver would: a version
/// as `cuDriverGetVersion` says it (`12040`), not above the real driver's.
pub const AS_DRIVER_ENV: &str = "CUDA_SYS_GEN_AS_DRIVER";
/// [`AS_DRIVER_ENV`]'s version, once accepted by [`Observer::start`]; 0: answer as the real
/// driver does.
static AS_DRIVER: AtomicU32 = AtomicU32::new(0);
/// This library, as `dlopen` knows it: where the function of an ABI the real driver did not
/// answer with is found by its exported name (`--as-driver` hands it out instead).
static OWN_HANDLE: AtomicPtr<c_void> = AtomicPtr::new(core::ptr::null_mut());

/// The environment variable that names a folder (existing) where the tracer writes a copy of
/// each image a program loads from memory (`min-driver --run` reads their kernels).
pub const IMAGES_ENV: &str = "CUDA_SYS_GEN_TRACE_IMAGES";
static IMAGES: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
static IMAGE_COUNT: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);
/// The driver functions that load an image from memory.
const IMAGE_LOADERS: &[&str] =
    &["cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary", "cuLibraryLoadData", "cuLinkAddData"];
/// The driver functions that load an image from a file, and the name of their path argument.
const FILE_LOADERS: &[(&str, &str)] =
    &[("cuModuleLoad", "fname"), ("cuLibraryLoadFromFile", "fileName"), ("cuLinkAddFile", "path")];
/// The most of one image copied (a larger one is not recorded).
const IMAGE_MAX: usize = 1 << 30;

thread_local! {
    /// Set while this thread's lookup asks the real driver on behalf of `--as-driver`: its
    /// answer is kept in [`REAL_ANSWER`], not written as a `request` line. Const-initialised
    /// cells without destructors: nothing is allocated or registered on a call's path.
    static ASKING: Cell<bool> = const { Cell::new(false) };
    static REAL_ANSWER: Cell<Option<&'static EntryInfo>> = const { Cell::new(None) };
}

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
        let calls = std::env::var_os(CALLS_ENV);
        CALLS.store(calls.as_ref().is_none_or(|v| v != "0"), Ordering::Relaxed);
        FIRST_ONLY.store(calls.is_some_and(|v| v == "first"), Ordering::Relaxed);
        if let Some(dir) = std::env::var_os(IMAGES_ENV).filter(|d| !d.is_empty()) {
            let _ = IMAGES.set(std::path::PathBuf::from(dir));
        }
        let as_driver = as_driver_asked();
        // As the real driver's own version: every answer is the real driver's own (the rule
        // is not put in place of what it was measured from), so the run goes as without.
        let real_version = standin::real_driver().map_or(0, |r| r.version());
        if let Some(Ok(v)) = as_driver.filter(|v| *v != Ok(real_version)) {
            OWN_HANDLE.store(own_handle(), Ordering::Release);
            AS_DRIVER.store(v, Ordering::Release);
        }
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
        // The CUDA runtime already mapped (it loads libcuda, so it is there before this
        // library's constructor runs): its major needs NVIDIA's minimum driver for it.
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let mut seen: Vec<&str> = Vec::new();
        for path in maps.lines().filter_map(|l| l.split_whitespace().nth(5)) {
            let name = path.rsplit('/').next().unwrap_or(path);
            if name.starts_with("libcudart.so") && !seen.contains(&path) {
                seen.push(path);
                let mut line = Line::new();
                let _ = write!(line, "runtime {} {path}", std::process::id());
                line.send();
            }
        }
        match as_driver {
            Some(Ok(v)) => {
                let mut line = Line::new();
                let _ = write!(line, "as-driver {v}");
                line.send();
            }
            Some(Err(why)) => {
                let mut line = Line::new();
                let _ = write!(line, "as-driver refused: {why}");
                line.send();
            }
            None => {}
        }
    }

    fn call(&self, index: usize, args: &[Arg], forward: &mut dyn FnMut() -> CUresult) -> CUresult {
        let Some(info) = ENTRIES.get(index) else { return forward() };
        let as_driver = AS_DRIVER.load(Ordering::Relaxed);
        if info.symbol == "cuGetProcAddress" {
            return lookup(index, info, args, forward, as_driver);
        }
        if as_driver != 0 {
            if !answer::driver_has(info.version, as_driver) {
                // A driver of that version does not export this ABI: a program linked against
                // it would not have loaded; one that found it by `dlsym` gets what a missing
                // symbol gives. The real driver is not called.
                let mut line = Line::new();
                let _ = write!(
                    line,
                    "missing {} {} ({}) -> CUDA_ERROR_NOT_FOUND: a driver of {as_driver} does not export it",
                    thread_id(),
                    abi(info),
                    info.exported
                );
                line.send();
                return standin::MISSING;
            }
            if info.symbol == "cuDriverGetVersion" {
                let mut says = || {
                    let r = forward();
                    if let (0, Some(ArgValue::Pointer(p))) = (r.0, args.first().map(|a| a.value)) {
                        if p != 0 {
                            // SAFETY: the caller's `int*`, which the driver just wrote.
                            unsafe { *(p as *mut core::ffi::c_int) = as_driver as core::ffi::c_int };
                        }
                    }
                    r
                };
                return trace_call(index, info, args, &mut says);
            }
        }
        let from_file = FILE_LOADERS.iter().find(|(s, _)| *s == info.symbol).map(|(_, arg)| *arg);
        if (IMAGES.get().is_some() || as_driver != 0) && (from_file.is_some() || IMAGE_LOADERS.contains(&info.symbol)) {
            return load(index, info, args, forward, as_driver, from_file);
        }
        trace_call(index, info, args, forward)
    }
    fn request(
        &self,
        symbol: &core::ffi::CStr,
        version: core::ffi::c_int,
        flags: u64,
        answered: Option<&'static EntryInfo>,
        rule_agrees: bool,
    ) {
        if ASKING.get() {
            // Asked on behalf of `--as-driver`: its `as-driver` line says both answers.
            REAL_ANSWER.set(answered);
            return;
        }
        if SINK.load(Ordering::Relaxed) < 0 {
            return;
        }
        let mut line = Line::new();
        let _ = write!(line, "request {} ", thread_id());
        write_request(&mut line, symbol, version, flags);
        let _ = line.write_str(" -> ");
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

/// A call written down as one `call` line (unless the trace is off, calls are not traced, or
/// with `first` an earlier call of the ABI was), made by `forward`.
fn trace_call(index: usize, info: &EntryInfo, args: &[Arg], forward: &mut dyn FnMut() -> CUresult) -> CUresult {
    if SINK.load(Ordering::Relaxed) < 0 || !CALLS.load(Ordering::Relaxed) {
        return forward();
    }
    if FIRST_ONLY.load(Ordering::Relaxed) && CALLED.get(index).is_none_or(|c| c.swap(true, Ordering::Relaxed)) {
        return forward();
    }
    let start = std::time::Instant::now();
    let result = forward();
    let took = start.elapsed().as_nanos();
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

/// `"symbol" version flags F`: the symbol quoted, its bytes that are no UTF-8 as `\xNN`.
fn write_request(line: &mut Line, symbol: &CStr, version: core::ffi::c_int, flags: u64) {
    let _ = line.write_str("\"");
    for chunk in symbol.to_bytes().utf8_chunks() {
        let _ = write!(line, "{}", chunk.valid().escape_debug());
        for b in chunk.invalid() {
            let _ = write!(line, "\\x{b:02x}");
        }
    }
    let _ = write!(line, "\" {version} flags {flags}");
}

/// `$CUDA_SYS_GEN_AS_DRIVER`, read once by the set-up: `None` where unset; the reason where
/// it is no version or above the real driver's (a driver cannot be asked for what it lacks).
fn as_driver_asked() -> Option<Result<u32, &'static str>> {
    let text = std::env::var(AS_DRIVER_ENV).ok().filter(|t| !t.is_empty())?;
    let Ok(v) = text.trim().parse::<u32>() else {
        return Some(Err("not a driver version as cuDriverGetVersion says it (12040)"));
    };
    if v < 2000 {
        return Some(Err("not a driver version as cuDriverGetVersion says it (12040)"));
    }
    match standin::real_driver() {
        Ok(r) if r.version() != 0 && v > r.version() => Some(Err("above the real driver's version")),
        Ok(_) => Some(Ok(v)),
        Err(_) => Some(Err("no real driver was opened")),
    }
}

/// This library's handle (`dlopen` of its own path, already loaded: nothing is run), for the
/// functions of ABIs by their exported names.
fn own_handle() -> *mut c_void {
    // SAFETY: dladdr only reads the loader's tables; the path it gives is the loader's own.
    unsafe {
        let mut info: libc::Dl_info = core::mem::zeroed();
        if libc::dladdr(own_handle as fn() -> *mut c_void as *const c_void, &mut info) == 0 || info.dli_fname.is_null()
        {
            return core::ptr::null_mut();
        }
        libc::dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD)
    }
}

/// This library's function of `entry` (its export under the exported name), NULL where none.
fn own_function(entry: &EntryInfo) -> *mut c_void {
    let handle = OWN_HANDLE.load(Ordering::Acquire);
    let name = entry.exported.as_bytes();
    let mut c = [0u8; 128];
    if handle.is_null() || name.len() >= c.len() {
        return core::ptr::null_mut();
    }
    c[..name.len()].copy_from_slice(name);
    // SAFETY: a NUL-terminated name looked up in our own handle.
    unsafe { libc::dlsym(handle, c.as_ptr().cast()) }
}

/// An argument's integer or pointer value (0 where it has another kind).
fn int_arg(args: &[Arg], i: usize) -> i128 {
    match args.get(i).map(|a| a.value) {
        Some(ArgValue::Int(v)) => v,
        Some(ArgValue::Pointer(p)) => p as i128,
        _ => 0,
    }
}

/// A call of `cuGetProcAddress` or `cuGetProcAddress_v2` (`index`): traced as any call, and a
/// request the driver refused gets a `refused` line (answered ones get their `request` line
/// from the stand-in). With `--as-driver`, the real driver is asked (the call goes through),
/// and then the answer is replaced by the one a driver of `as_driver` gives by the registry's
/// rule (`answer::driver_answer`): its function (this library's, which forwards to the real
/// driver's export of that ABI), or its refusal; an `as-driver` line says both.
fn lookup(
    index: usize,
    info: &EntryInfo,
    args: &[Arg],
    forward: &mut dyn FnMut() -> CUresult,
    as_driver: u32,
) -> CUresult {
    let symbol = int_arg(args, 0) as usize;
    let pfn = int_arg(args, 1) as usize;
    let version = int_arg(args, 2) as core::ffi::c_int;
    let flags = int_arg(args, 3) as u64;
    let status = if info.exported == "cuGetProcAddress" { 0 } else { int_arg(args, 4) as usize };
    if as_driver == 0 {
        let r = trace_call(index, info, args, forward);
        // SAFETY: the caller's pointers, read after the driver used them.
        let handed = if pfn == 0 { 0 } else { unsafe { *(pfn as *const usize) } };
        if symbol != 0 && pfn != 0 && (r.0 != 0 || handed == 0) && SINK.load(Ordering::Relaxed) >= 0 {
            let st = if status != 0 && r.0 == 0 { i64::from(unsafe { *(status as *const u32) }) } else { -1 };
            let mut line = Line::new();
            let _ = write!(line, "refused {} ", thread_id());
            // SAFETY: the caller's NUL-terminated name, which the driver read too.
            write_request(&mut line, unsafe { CStr::from_ptr(symbol as *const core::ffi::c_char) }, version, flags);
            let _ = write!(line, " -> {r:?} status {st}");
            line.send();
        }
        return r;
    }
    ASKING.set(true);
    REAL_ANSWER.set(None);
    let real = trace_call(index, info, args, forward);
    ASKING.set(false);
    if symbol == 0 || pfn == 0 {
        return real;
    }
    // SAFETY: a NUL-terminated name the driver has just read.
    let name = unsafe { CStr::from_ptr(symbol as *const core::ffi::c_char) };
    let real_entry = REAL_ANSWER.get().filter(|_| real.0 == 0);
    let real_status = if status != 0 && real.0 == 0 { i64::from(unsafe { *(status as *const u32) }) } else { -1 };
    let ours = answer::driver_answer(name.to_bytes(), version, flags, as_driver);
    let function = match ours {
        DriverAnswer::Entry(e) if real_entry.is_some_and(|r| core::ptr::eq(r, e)) => {
            // SAFETY: the caller's `void**`, which the stand-in filled with its function of `e`.
            unsafe { *(pfn as *const *mut c_void) }
        }
        DriverAnswer::Entry(e) => own_function(e),
        _ => core::ptr::null_mut(),
    };
    let (result, st) = if info.exported == "cuGetProcAddress" {
        (ours.result_without_status(), None)
    } else {
        ours.result_and_status()
    };
    // SAFETY: the caller's pointers, as the driver writes them.
    unsafe {
        *(pfn as *mut *mut c_void) = function;
        if let (Some(st), true) = (st, status != 0) {
            *(status as *mut u32) = st;
        }
    }
    if SINK.load(Ordering::Relaxed) >= 0 {
        let mut line = Line::new();
        let _ = write!(line, "as-driver {} ", thread_id());
        write_request(&mut line, name, version, flags);
        let _ = line.write_str(" -> ");
        match ours {
            DriverAnswer::Entry(e) => {
                let _ = write!(line, "{} ({})", abi(e), e.exported);
                if function.is_null() {
                    let _ = line.write_str(" NOT HANDED OUT");
                }
            }
            other => {
                // The status as the caller sees it: -1 where it passed none (as the real
                // driver's answer is written), so that the two compare.
                let shown = st.filter(|_| status != 0).map_or(-1, i64::from);
                let _ = write!(line, "refused {result} status {shown} ({other:?})");
            }
        }
        let _ = line.write_str(" real ");
        match real_entry {
            Some(e) => {
                let _ = write!(line, "{} ({})", abi(e), e.exported);
            }
            None if real.0 == 0 && real_status == 0 => {
                let _ = line.write_str("a function the registry does not know");
            }
            None => {
                let _ = write!(line, "refused {} status {real_status}", real.0);
            }
        }
        if let Some(named) = ours.entry().and_then(|e| hazard(name, version, flags, e)) {
            let _ = write!(line, " HAZARD: asked {version}, older than {}, the ABI of {version};", abi(named));
        }
        line.send();
    }
    cuda_driver_pfn::types::cudaError_enum(result)
}

/// The length of the image at `p` that the driver has just loaded (so its headers are valid):
/// a fatbin (its header's sizes), a fatbin wrapper (`__fatBinC_Wrapper_t`, followed), an ELF
/// cubin (to the end of its header tables), else PTX text (to its NUL). `None`: too large.
///
/// # Safety
/// `p` is an image the driver accepted.
unsafe fn image_extent(mut p: *const u8, given: usize) -> Option<(*const u8, usize, &'static str)> {
    let read_u32 = |q: *const u8, at: usize| unsafe { core::ptr::read_unaligned(q.add(at).cast::<u32>()) };
    let read_u16 = |q: *const u8, at: usize| unsafe { core::ptr::read_unaligned(q.add(at).cast::<u16>()) };
    let read_u64 = |q: *const u8, at: usize| unsafe { core::ptr::read_unaligned(q.add(at).cast::<u64>()) };
    if read_u32(p, 0) == 0x4662_43b1 {
        p = read_u64(p, 8) as usize as *const u8;
        if p.is_null() {
            return None;
        }
    }
    let (len, kind) = if given > 0 {
        (given, "image")
    } else if read_u32(p, 0) == 0xba55_ed50 {
        (usize::from(read_u16(p, 6)).checked_add(usize::try_from(read_u64(p, 8)).ok()?)?, "fatbin")
    } else if read_u32(p, 0) == u32::from_le_bytes(*b"\x7fELF") {
        let sh =
            usize::try_from(read_u64(p, 0x28)).ok()? + usize::from(read_u16(p, 0x3a)) * usize::from(read_u16(p, 0x3c));
        let ph =
            usize::try_from(read_u64(p, 0x20)).ok()? + usize::from(read_u16(p, 0x36)) * usize::from(read_u16(p, 0x38));
        (sh.max(ph), "cubin")
    } else {
        // SAFETY: PTX is NUL-terminated text, as the driver read it.
        (unsafe { CStr::from_ptr(p.cast()) }.to_bytes().len(), "ptx")
    };
    (len <= IMAGE_MAX).then_some((p, len, kind))
}

/// The bytes of the file a load from a file names (its argument `arg`), read whole (at most
/// [`IMAGE_MAX`]); `None` where there is no such file or it cannot be read.
fn file_image(args: &[Arg], arg: &str) -> Option<Vec<u8>> {
    use std::io::Read as _;
    use std::os::unix::ffi::OsStrExt as _;
    let p = match args.iter().find(|a| a.name == arg).map(|a| a.value) {
        Some(ArgValue::Pointer(p)) if p != 0 => p,
        _ => return None,
    };
    // SAFETY: the caller's NUL-terminated path, which the driver reads too.
    let path = std::ffi::OsStr::from_bytes(unsafe { CStr::from_ptr(p as *const core::ffi::c_char) }.to_bytes());
    // A regular file only, asked before opening: opening a FIFO would wait for a writer, and
    // reading it would take the bytes the driver is to read.
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(IMAGE_MAX as u64 + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() <= IMAGE_MAX).then_some(bytes)
}

/// The GPU of the current context, as the real driver says (`major * 10 + minor`); device 0
/// where no context is current (`cuLibraryLoadData` needs none: its library is loaded into
/// each context later).
fn current_gpu() -> Option<u32> {
    use cuda_driver_pfn::entries::{cuCtxGetDevice_v2000, cuDeviceGetAttribute_v2000};
    let (Some(get_device), Some(attribute)) =
        (standin::forward::<cuCtxGetDevice_v2000>(), standin::forward::<cuDeviceGetAttribute_v2000>())
    else {
        return None;
    };
    let mut device = Default::default();
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the real driver's functions of exactly these ABIs, given pointers to locals.
    let ok = unsafe {
        if get_device(&mut device).0 != 0 {
            device = Default::default();
        }
        attribute(
            &mut major,
            cuda_driver_pfn::types::CUdevice_attribute_enum::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            device,
        )
        .0 == 0
            && attribute(
                &mut minor,
                cuda_driver_pfn::types::CUdevice_attribute_enum::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                device,
            )
            .0 == 0
    };
    (ok && (1..100).contains(&major) && (0..10).contains(&minor)).then(|| (major * 10 + minor) as u32)
}

/// Whether a driver of `as_driver` refuses `bytes` on the current context's GPU (min-driver's
/// rule: `min_driver::load`); nothing where the GPU cannot be asked.
fn older_driver_refuses(bytes: &[u8], as_driver: u32) -> Option<min_driver::load::Refusal> {
    min_driver::load::refusal(bytes, current_gpu()?, as_driver)
}

/// Undoes a load the real driver made and the older driver refuses: the module or library
/// handed out is unloaded, and the caller's handle set to NULL.
fn unload(info: &EntryInfo, args: &[Arg]) {
    use cuda_driver_pfn::entries::{cuLibraryUnload_v12000, cuModuleUnload_v2000};
    let out = match args.first().map(|a| a.value) {
        Some(ArgValue::Pointer(p)) if p != 0 => p as *mut *mut c_void,
        _ => return,
    };
    // SAFETY: the caller's handle pointer, which the real driver has just written.
    let handle = unsafe { *out };
    if info.symbol == "cuLibraryLoadData" {
        if let Some(f) = standin::forward::<cuLibraryUnload_v12000>() {
            // SAFETY: the library the real driver has just loaded, unloaded once.
            unsafe { f(handle.cast()) };
        }
    } else if let Some(f) = standin::forward::<cuModuleUnload_v2000>() {
        // SAFETY: the module the real driver has just loaded, unloaded once.
        unsafe { f(handle.cast()) };
    }
    // SAFETY: as above.
    unsafe { *out = core::ptr::null_mut() };
}

/// A load of an image (`info`, from memory, or from the file its argument `from_file` names):
/// traced, its image copied into [`IMAGES`]'s folder, and with `--as-driver` refused with the
/// older driver's own error where that driver would not load it (an `image-refused` line). A
/// file, or a linker input of a given size, is judged before the real driver sees it; an image
/// in memory after the real driver loaded it (its headers are then known to be valid, so its
/// extent is read safely), the module or library it made unloaded again.
fn load(
    index: usize,
    info: &EntryInfo,
    args: &[Arg],
    forward: &mut dyn FnMut() -> CUresult,
    as_driver: u32,
    from_file: Option<&str>,
) -> CUresult {
    let file = from_file.and_then(|arg| file_image(args, arg));
    let mut refused: Option<min_driver::load::Refusal> = None;
    let linker_input = info.symbol == "cuLinkAddData";
    let mut go = || {
        if as_driver != 0 {
            let before = match (&file, linker_input) {
                (Some(bytes), _) => Some(bytes.as_slice()),
                // SAFETY: `size` bytes at `data`, as the caller says the input is.
                (None, true) => unsafe { given_input(args) },
                (None, false) => None,
            };
            if let Some(r) = before.and_then(|b| older_driver_refuses(b, as_driver)) {
                let code = r.code;
                refused = Some(r);
                return cuda_driver_pfn::types::cudaError_enum(code);
            }
        }
        let result = forward();
        if result.0 == 0 && as_driver != 0 && from_file.is_none() && !linker_input {
            // SAFETY: the image the real driver has just loaded.
            let extent = image_pointer(args).and_then(|p| unsafe { image_extent(p as *const u8, 0) });
            // SAFETY: `len` bytes of the image, by its own headers.
            let bytes = extent.map(|(p, len, _)| unsafe { core::slice::from_raw_parts(p, len) });
            if let Some(r) = bytes.and_then(|b| older_driver_refuses(b, as_driver)) {
                unload(info, args);
                let code = r.code;
                refused = Some(r);
                return cuda_driver_pfn::types::cudaError_enum(code);
            }
        }
        result
    };
    let result = trace_call(index, info, args, &mut go);
    if let Some(r) = &refused {
        if SINK.load(Ordering::Relaxed) >= 0 {
            let mut line = Line::new();
            let _ = write!(
                line,
                "image-refused {} {} -> {} ({}): a driver of {as_driver} would not load it: {}",
                std::process::id(),
                abi(info),
                r.name,
                r.code,
                r.why
            );
            line.send();
        }
    }
    // The image is recorded where the real driver loaded it (a refused one too: the run on the
    // real driver loads it, and its needs count).
    if result.0 == 0 || refused.is_some() {
        record_image(info, args, file.as_deref());
    }
    result
}

/// The image argument of a load from memory (`image`, `fatCubin`, `code`, `data`).
fn image_pointer(args: &[Arg]) -> Option<usize> {
    let at = |name: &str| args.iter().find(|a| a.name == name).map(|a| a.value);
    ["image", "fatCubin", "code", "data"].iter().find_map(|n| match at(n) {
        Some(ArgValue::Pointer(p)) if p != 0 => Some(p),
        _ => None,
    })
}

/// The bytes of a linker input given with its size (`cuLinkAddData`'s `data` and `size`).
///
/// # Safety
/// The caller's `data` holds `size` bytes.
unsafe fn given_input<'a>(args: &[Arg]) -> Option<&'a [u8]> {
    let p = image_pointer(args)?;
    let n = match args.iter().find(|a| a.name == "size").map(|a| a.value) {
        Some(ArgValue::Int(n)) => usize::try_from(n).ok().filter(|&n| n > 0 && n <= IMAGE_MAX)?,
        _ => return None,
    };
    // SAFETY: the caller's promise.
    Some(unsafe { core::slice::from_raw_parts(p as *const u8, n) })
}

/// A copy of the image a load of `info` was given (`file`: the bytes of the file it named),
/// into [`IMAGES`]'s folder, and an `image` line naming it (or why it was not recorded).
fn record_image(info: &EntryInfo, args: &[Arg], file: Option<&[u8]>) {
    let Some(dir) = IMAGES.get() else { return };
    let at = |name: &str| args.iter().find(|a| a.name == name).map(|a| a.value);
    let given = match (info.symbol, at("size")) {
        ("cuLinkAddData", Some(ArgValue::Int(n))) => usize::try_from(n).unwrap_or(0),
        _ => 0,
    };
    let mut line = Line::new();
    let _ = write!(line, "image {} {} ", std::process::id(), abi(info));
    let extent = match file {
        Some(bytes) => Some((bytes.as_ptr(), bytes.len(), file_kind(bytes))),
        // SAFETY: the image the driver has just loaded successfully.
        None => image_pointer(args).and_then(|p| unsafe { image_extent(p as *const u8, given) }),
    };
    match extent {
        Some((p, len, kind)) => {
            let n = IMAGE_COUNT.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("image-{}-{n}.{kind}", std::process::id()));
            // SAFETY: `len` bytes of the image, by its own headers.
            let bytes = unsafe { core::slice::from_raw_parts(p, len) };
            match std::fs::write(&path, bytes) {
                Ok(()) => {
                    let _ = write!(line, "{}", path.display());
                }
                Err(e) => {
                    let _ = write!(line, "not recorded: {e}");
                }
            }
        }
        None if from_file_loader(info) => {
            let _ = line.write_str("not recorded: the file it names could not be read, or is larger than 1 GiB");
        }
        None => {
            let _ = line.write_str("not recorded: no image pointer, or larger than 1 GiB");
        }
    }
    line.send();
    record_gpu();
}

fn from_file_loader(info: &EntryInfo) -> bool {
    FILE_LOADERS.iter().any(|(s, _)| *s == info.symbol)
}

/// What a file's bytes are, by their first bytes: a cubin (ELF), a fatbin, else PTX (text).
fn file_kind(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"\x7fELF") {
        "cubin"
    } else if bytes.starts_with(&0xba55_ed50u32.to_le_bytes()) {
        "fatbin"
    } else {
        "ptx"
    }
}

/// A `gpu PID CC` line: the compute capability (`major * 10 + minor`) of the device of the
/// current context, asked of the real driver right after it loaded an image there, so that
/// `min-driver --run` reads the image for the GPU of the run (the cubin the driver loaded,
/// not the PTX it would JIT-compile for another GPU). Nothing where the driver cannot say.
fn record_gpu() {
    if let Some(cc) = current_gpu() {
        let mut line = Line::new();
        let _ = write!(line, "gpu {} {cc}", std::process::id());
        line.send();
    }
}
