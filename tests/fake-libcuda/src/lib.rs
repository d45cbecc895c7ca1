//! A fake CUDA driver (and runtime) library for the shim's tests, written by this project.
//!
//! It exports the few functions the shim resolves by name (`cuGetProcAddress_v2`,
//! `cuGetProcAddress`, `cuDriverGetVersion`, `cuGetErrorName`, and the runtime's
//! `cudaRuntimeGetVersion`, `cudaDriverGetVersion`, `cudaGetDriverEntryPointByVersion`,
//! `cudaGetDriverEntryPoint`, `cudaGetErrorName`) and answers lookups the way NVIDIA's drivers
//! were measured to (`tests/tests/real_drivers.rs` compares its answers with those of the real
//! drivers of `tests/real-drivers.toml`, request by request): the newest ABI of the symbol
//! introduced at or before the requested version; with
//! `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`, among the symbol's per-thread variants where
//! it has any; `CUDA_SUCCESS` with `CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND` for a name
//! it does not know and with `CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT` for a version below
//! the first ABI (both `CUDA_ERROR_NOT_FOUND` from the 4-argument `cuGetProcAddress`);
//! `CUDA_ERROR_INVALID_VALUE`, the status unwritten, for an undefined flag bit. For a version
//! above the driver's own, a driver of CUDA 13.0 or later answers `CUDA_ERROR_INVALID_VALUE`,
//! while every older one (11.4 to 12.5 measured) answers `CUDA_SUCCESS` with the newest ABI it
//! has: an *older* ABI than the one asked for, which is why the shim never asks for such a
//! version.
//!
//! The test configures it through the `fake_*` functions: the driver version, the table of
//! ABIs (symbol, version, per-thread, pointer value), per-request overrides that inject
//! faults, and a delay. Every request is recorded as (symbol, version, flags, entry point).
//! All state is in this library's statics, so each loaded copy of the file is its own driver.
//!
//! A process that loads the fake by itself (the doctor, run by a test) cannot be configured
//! through those functions; for it, `FAKE_LIBCUDA_NULL_POINTERS` in its environment makes the
//! fake a broken driver, one that answers lookups with `CUDA_SUCCESS` and a NULL pointer
//! (no real driver was seen to): `all` for every lookup, `some` for the symbols that begin
//! with `cuMem` (then `cuInit` answers with its own export, and every other name is unknown).
//!
//! The pointers handed out are the values the test configured; they are compared, never
//! called. Nothing here may panic: a panic cannot cross `extern "C"`.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

const CUDA_SUCCESS: c_uint = 0;
const CUDA_ERROR_INVALID_VALUE: c_uint = 1;
const CUDA_ERROR_NOT_FOUND: c_uint = 500;

const STATUS_SUCCESS: c_int = 0;
const STATUS_SYMBOL_NOT_FOUND: c_int = 1;
const STATUS_VERSION_NOT_SUFFICIENT: c_int = 2;
/// In an override: leave `symbolStatus` as the caller initialised it.
const STATUS_UNWRITTEN: c_int = -1;

/// The first driver version that refuses a request above its own version.
const FIRST_REFUSING_DRIVER: c_int = 13000;

const FLAG_PER_THREAD: u64 = 2;
const KNOWN_FLAGS: u64 = 3;

/// Which exported function a request came through (`fake_log_entry`'s `api`).
const API_V2: c_int = 2;
const API_V1: c_int = 1;
const API_RT_BY_VERSION: c_int = 3;
const API_RT_ENTRY_POINT: c_int = 4;

struct Abi {
    symbol: Vec<u8>,
    version: c_int,
    per_thread: bool,
    ptr: usize,
}

struct Override {
    symbol: Vec<u8>,
    /// 0: every version.
    version: c_int,
    result: c_uint,
    status: c_int,
    ptr: usize,
}

struct Request {
    symbol: Vec<u8>,
    version: c_int,
    flags: u64,
    api: c_int,
}

struct State {
    driver_version: c_int,
    version_result: c_uint,
    runtime_version: c_int,
    /// What NVIDIA's runtimes were measured to answer without a usable GPU or driver
    /// (docs/cudart-measurements.md): `cudaRuntimeGetVersion` of a CUDA 11 runtime fails with
    /// `cudaErrorNoDevice` (100) or `cudaErrorInsufficientDriver` (35), the version unwritten;
    /// every runtime's entry point lookup fails with one of the two, nothing written. 0: none.
    runtime_version_failure: c_uint,
    entry_point_failure: c_uint,
    abis: Vec<Abi>,
    overrides: Vec<Override>,
    /// Fault injection, no real driver's behaviour: answer "version not sufficient" as
    /// `CUDA_ERROR_NOT_FOUND` (the guide's 4.20.3.1) instead of a status (its 4.20.5). The
    /// drivers measured (12.0 to 12.5) all answer with the status.
    not_sufficient_as_not_found: bool,
    delay_us: u32,
    log: Vec<Request>,
}

const INITIAL: State = State {
    driver_version: 13050,
    version_result: CUDA_SUCCESS,
    runtime_version: 13050,
    runtime_version_failure: CUDA_SUCCESS,
    entry_point_failure: CUDA_SUCCESS,
    abis: Vec::new(),
    overrides: Vec::new(),
    not_sufficient_as_not_found: false,
    delay_us: 0,
    log: Vec::new(),
};

/// The state behind a POSIX mutex rather than std's: std's `Mutex` is a futex that
/// ThreadSanitizer cannot see into in a library built without it (as this one is, like a real
/// driver), while `pthread_mutex_lock` is intercepted, so `cargo xtask tsan` sees the fake's
/// locking and checks only the shim.
#[cfg(unix)]
mod lock {
    use super::{State, INITIAL};
    use std::cell::UnsafeCell;
    use std::marker::PhantomData;
    use std::ops::{Deref, DerefMut};

    pub(super) struct Locked {
        mutex: UnsafeCell<libc::pthread_mutex_t>,
        state: UnsafeCell<State>,
    }
    // SAFETY: `state` is only reached through a `Guard`, which holds `mutex`.
    unsafe impl Sync for Locked {}

    static STATE: Locked =
        Locked { mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER), state: UnsafeCell::new(INITIAL) };

    /// Not `Send`: a mutex must be unlocked by the thread that locked it.
    pub(super) struct Guard(&'static Locked, PhantomData<*const ()>);

    pub(super) fn state() -> Guard {
        // SAFETY: a statically initialised default mutex; never moved, never destroyed.
        // Locking it can fail only for a deadlock by the same thread, which never re-enters.
        unsafe { libc::pthread_mutex_lock(STATE.mutex.get()) };
        Guard(&STATE, PhantomData)
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            // SAFETY: locked by this thread in `state`.
            unsafe { libc::pthread_mutex_unlock(self.0.mutex.get()) };
        }
    }

    impl Deref for Guard {
        type Target = State;
        fn deref(&self) -> &State {
            // SAFETY: the mutex is held for the guard's lifetime.
            unsafe { &*self.0.state.get() }
        }
    }

    impl DerefMut for Guard {
        fn deref_mut(&mut self) -> &mut State {
            // SAFETY: the mutex is held for the guard's lifetime, by this guard only.
            unsafe { &mut *self.0.state.get() }
        }
    }
}

#[cfg(not(unix))]
mod lock {
    use super::{State, INITIAL};
    use std::sync::{Mutex, MutexGuard, PoisonError};

    static STATE: Mutex<State> = Mutex::new(INITIAL);

    pub(super) fn state() -> MutexGuard<'static, State> {
        STATE.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

use lock::state;

unsafe fn bytes(s: *const c_char) -> Option<Vec<u8>> {
    if s.is_null() {
        None
    } else {
        Some(CStr::from_ptr(s).to_bytes().to_vec())
    }
}

/// What a driver answers: (CUresult, symbolStatus or STATUS_UNWRITTEN, pointer).
fn answer(symbol: &[u8], version: c_int, flags: u64, api: c_int) -> (c_uint, c_int, usize) {
    let delay = {
        let mut s = state();
        s.log.push(Request { symbol: symbol.to_vec(), version, flags, api });
        s.delay_us
    };
    // Outside the lock, so that racing callers really overlap.
    if delay > 0 {
        std::thread::sleep(std::time::Duration::from_micros(u64::from(delay)));
    }
    match std::env::var("FAKE_LIBCUDA_NULL_POINTERS").as_deref() {
        Ok("all") => return (CUDA_SUCCESS, STATUS_SUCCESS, 0),
        Ok("some") if symbol.starts_with(b"cuMem") => return (CUDA_SUCCESS, STATUS_SUCCESS, 0),
        Ok("some") if symbol == b"cuInit" => {
            return (CUDA_SUCCESS, STATUS_SUCCESS, cuInit as extern "C" fn() -> c_uint as usize)
        }
        Ok("some") => return (CUDA_SUCCESS, STATUS_SYMBOL_NOT_FOUND, 0),
        _ => {}
    }
    let s = state();
    if let Some(o) = s.overrides.iter().find(|o| o.symbol == symbol && (o.version == 0 || o.version == version)) {
        return (o.result, o.status, o.ptr);
    }
    if flags & !KNOWN_FLAGS != 0 {
        return (CUDA_ERROR_INVALID_VALUE, STATUS_UNWRITTEN, 0);
    }
    // The driver picks the ABI reading the version as unsigned (measured on 470 to 580: -1
    // asks for the newest).
    let unsigned = i64::from(version as u32);
    let limit = if api == API_RT_ENTRY_POINT { i64::from(s.runtime_version) } else { unsigned };
    // Above its own version: INVALID_VALUE from 13.0 on (measured on 580), compared as a signed
    // number there (580 answers -1, -2, -1000 and INT_MIN with its newest ABI); older drivers
    // (470 to 555) go on and hand out the newest ABI they have at or below `version`.
    if api != API_RT_ENTRY_POINT && version > s.driver_version && s.driver_version >= FIRST_REFUSING_DRIVER {
        return (CUDA_ERROR_INVALID_VALUE, STATUS_UNWRITTEN, 0);
    }
    let mut known = false;
    let mut best: Option<&Abi> = None;
    // With the per-thread flag, a symbol that has per-thread variants answers from those only
    // (below the first of them: not sufficient, measured on 470 to 555); flags 0 and 1, and
    // a symbol without any, from the default ABIs.
    let has_per_thread = s.abis.iter().any(|a| a.symbol == symbol && a.per_thread);
    let want_per_thread = flags & FLAG_PER_THREAD != 0 && has_per_thread;
    for a in s.abis.iter().filter(|a| a.symbol == symbol) {
        known = true;
        if i64::from(a.version) > limit || a.per_thread != want_per_thread {
            continue;
        }
        if best.is_none_or(|b| a.version > b.version) {
            best = Some(a);
        }
    }
    match best {
        Some(a) => (CUDA_SUCCESS, STATUS_SUCCESS, a.ptr),
        None if !known => (CUDA_SUCCESS, STATUS_SYMBOL_NOT_FOUND, 0),
        None if s.not_sufficient_as_not_found => (CUDA_ERROR_NOT_FOUND, STATUS_SUCCESS, 0),
        None => (CUDA_SUCCESS, STATUS_VERSION_NOT_SUFFICIENT, 0),
    }
}

unsafe fn write_answer(
    pfn: *mut *mut c_void,
    status_out: *mut c_int,
    (result, status, ptr): (c_uint, c_int, usize),
) -> c_uint {
    *pfn = ptr as *mut c_void;
    if !status_out.is_null() && status != STATUS_UNWRITTEN {
        *status_out = status;
    }
    result
}

// ---- the driver -------------------------------------------------------------------------

#[cfg(not(feature = "no-v2"))]
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    status: *mut c_int,
) -> c_uint {
    let (Some(name), false) = (bytes(symbol), pfn.is_null()) else { return CUDA_ERROR_INVALID_VALUE };
    write_answer(pfn, status, answer(&name, version, flags, API_V2))
}

/// The 11.3 to 11.8 form: no status, so both "unknown name" and "version below the first
/// ABI" come back as `CUDA_ERROR_NOT_FOUND`.
#[cfg(not(feature = "no-v1"))]
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
) -> c_uint {
    let (Some(name), false) = (bytes(symbol), pfn.is_null()) else { return CUDA_ERROR_INVALID_VALUE };
    let (result, status, ptr) = answer(&name, version, flags, API_V1);
    let result = match status {
        STATUS_SYMBOL_NOT_FOUND | STATUS_VERSION_NOT_SUFFICIENT if result == CUDA_SUCCESS => CUDA_ERROR_NOT_FOUND,
        _ => result,
    };
    *pfn = ptr as *mut c_void;
    result
}

#[cfg(not(feature = "no-driver-version"))]
#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(out: *mut c_int) -> c_uint {
    fake_cuDriverGetVersion(out)
}

/// Also reachable through cuGetProcAddress when the test adds it to the table: the shim
/// falls back to that when `cuDriverGetVersion` is not exported.
#[no_mangle]
pub unsafe extern "C" fn fake_cuDriverGetVersion(out: *mut c_int) -> c_uint {
    if out.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let s = state();
    if s.version_result != CUDA_SUCCESS {
        return s.version_result;
    }
    *out = s.driver_version;
    CUDA_SUCCESS
}

/// Names for a few codes, plus one only this fake knows (9999), so that a test can tell the
/// driver's names from the shim's built-in table.
fn error_name(code: c_uint) -> Option<&'static CStr> {
    Some(match code {
        0 => c"CUDA_SUCCESS",
        1 => c"CUDA_ERROR_INVALID_VALUE",
        2 => c"CUDA_ERROR_OUT_OF_MEMORY",
        3 => c"CUDA_ERROR_NOT_INITIALIZED",
        100 => c"CUDA_ERROR_NO_DEVICE",
        500 => c"CUDA_ERROR_NOT_FOUND",
        801 => c"CUDA_ERROR_NOT_SUPPORTED",
        9999 => c"CUDA_ERROR_FAKE_9999",
        _ => return None,
    })
}

#[cfg(not(feature = "no-error-name"))]
#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(code: c_uint, out: *mut *const c_char) -> c_uint {
    if out.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    match error_name(code) {
        Some(name) => {
            *out = name.as_ptr();
            CUDA_SUCCESS
        }
        None => {
            *out = std::ptr::null();
            CUDA_ERROR_INVALID_VALUE
        }
    }
}

// ---- the runtime ------------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn cudaRuntimeGetVersion(out: *mut c_int) -> c_uint {
    if out.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let s = state();
    if s.runtime_version_failure != CUDA_SUCCESS {
        return s.runtime_version_failure;
    }
    *out = s.runtime_version;
    CUDA_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaDriverGetVersion(out: *mut c_int) -> c_uint {
    if out.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *out = state().driver_version;
    CUDA_SUCCESS
}

#[cfg(not(feature = "no-by-version"))]
#[no_mangle]
pub unsafe extern "C" fn cudaGetDriverEntryPointByVersion(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_uint,
    flags: u64,
    status: *mut c_int,
) -> c_uint {
    let (Some(name), false) = (bytes(symbol), pfn.is_null()) else { return CUDA_ERROR_INVALID_VALUE };
    let failure = state().entry_point_failure;
    if failure != CUDA_SUCCESS {
        return failure;
    }
    let version = c_int::try_from(version).unwrap_or(c_int::MAX);
    write_answer(pfn, status, answer(&name, version, flags, API_RT_BY_VERSION))
}

/// Asks for the ABI of the runtime's own version, as the real one does.
#[cfg(not(feature = "no-entry-point"))]
#[no_mangle]
pub unsafe extern "C" fn cudaGetDriverEntryPoint(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    flags: u64,
    status: *mut c_int,
) -> c_uint {
    let (Some(name), false) = (bytes(symbol), pfn.is_null()) else { return CUDA_ERROR_INVALID_VALUE };
    let (version, failure) = {
        let s = state();
        (s.runtime_version, s.entry_point_failure)
    };
    if failure != CUDA_SUCCESS {
        return failure;
    }
    write_answer(pfn, status, answer(&name, version, flags, API_RT_ENTRY_POINT))
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetErrorName(code: c_uint) -> *const c_char {
    match code {
        0 => c"cudaSuccess".as_ptr(),
        1 => c"cudaErrorInvalidValue".as_ptr(),
        35 => c"cudaErrorInsufficientDriver".as_ptr(),
        100 => c"cudaErrorNoDevice".as_ptr(),
        500 => c"cudaErrorSymbolNotFound".as_ptr(),
        _ => c"cudaErrorUnknown".as_ptr(),
    }
}

// ---- configuration, for the tests -------------------------------------------------------

/// Forgets the table, the overrides and the log; back to driver and runtime version 13.5.
#[no_mangle]
pub extern "C" fn fake_reset() {
    let mut s = state();
    s.driver_version = 13050;
    s.version_result = CUDA_SUCCESS;
    s.runtime_version = 13050;
    s.runtime_version_failure = CUDA_SUCCESS;
    s.entry_point_failure = CUDA_SUCCESS;
    s.abis.clear();
    s.overrides.clear();
    s.not_sufficient_as_not_found = false;
    s.delay_us = 0;
    s.log.clear();
}

#[no_mangle]
pub extern "C" fn fake_set_driver_version(version: c_int) {
    state().driver_version = version;
}

/// What `cuDriverGetVersion` returns (CUDA_SUCCESS: the version).
#[no_mangle]
pub extern "C" fn fake_set_version_result(result: c_uint) {
    state().version_result = result;
}

#[no_mangle]
pub extern "C" fn fake_set_runtime_version(version: c_int) {
    state().runtime_version = version;
}

/// The code `cudaRuntimeGetVersion` (`version`) and the entry point lookups (`entry_point`)
/// fail with, as measured of real runtimes without a GPU; 0 for success.
#[no_mangle]
pub extern "C" fn fake_set_runtime_failures(version: c_uint, entry_point: c_uint) {
    let mut s = state();
    s.runtime_version_failure = version;
    s.entry_point_failure = entry_point;
}

/// One ABI the driver has: `symbol` introduced at `version`, the per-thread variant or not.
#[no_mangle]
pub unsafe extern "C" fn fake_add_abi(symbol: *const c_char, version: c_int, per_thread: c_int, ptr: usize) {
    if let Some(symbol) = bytes(symbol) {
        state().abis.push(Abi { symbol, version, per_thread: per_thread != 0, ptr });
    }
}

/// Requests for `symbol` at `version` (0: any) get exactly this answer; `status` -1 leaves
/// `symbolStatus` unwritten.
#[no_mangle]
pub unsafe extern "C" fn fake_override(
    symbol: *const c_char,
    version: c_int,
    result: c_uint,
    status: c_int,
    ptr: usize,
) {
    if let Some(symbol) = bytes(symbol) {
        state().overrides.push(Override { symbol, version, result, status, ptr });
    }
}

#[no_mangle]
pub extern "C" fn fake_set_not_sufficient_as_not_found(on: c_int) {
    state().not_sufficient_as_not_found = on != 0;
}

/// Every lookup sleeps this long before answering.
#[no_mangle]
pub extern "C" fn fake_set_delay_us(us: c_uint) {
    state().delay_us = us;
}

#[no_mangle]
pub extern "C" fn fake_log_len() -> usize {
    state().log.len()
}

/// Request `i`: the symbol (NUL-terminated, truncated to `cap`), version, flags and the
/// entry point it came through. 0 when `i` is past the end.
#[no_mangle]
pub unsafe extern "C" fn fake_log_entry(
    i: usize,
    buf: *mut c_char,
    cap: usize,
    version: *mut c_int,
    flags: *mut u64,
    api: *mut c_int,
) -> c_int {
    let s = state();
    let Some(r) = s.log.get(i) else { return 0 };
    if !buf.is_null() && cap > 0 {
        let n = r.symbol.len().min(cap - 1);
        std::ptr::copy_nonoverlapping(r.symbol.as_ptr().cast::<c_char>(), buf, n);
        *buf.add(n) = 0;
    }
    if !version.is_null() {
        *version = r.version;
    }
    if !flags.is_null() {
        *flags = r.flags;
    }
    if !api.is_null() {
        *api = r.api;
    }
    1
}

#[no_mangle]
pub extern "C" fn fake_log_clear() {
    state().log.clear();
}

// ---- exports under driver names, for the conformance checker's tests ---------------------
//
// A few functions exported under the names a real libcuda uses, each with a distinct body
// so that the linker cannot fold them into one address: the checker's `dlsym`/`dladdr`
// comparisons need one name per address.

macro_rules! named_exports {
    ($($name:ident = $n:literal;)*) => {
        $(
            #[no_mangle]
            pub extern "C" fn $name() -> c_uint {
                std::hint::black_box($n)
            }
        )*
    };
}

named_exports! {
    cuMemAlloc = 9001;
    cuMemAlloc_v2 = 9002;
    cuMemcpy = 9003;
    cuMemcpy_ptds = 9004;
    cuStreamBeginCapture = 9005;
    cuStreamBeginCapture_v2 = 9006;
    cuStreamBeginCapture_v2_ptsz = 9007;
    cuCtxCreate_v4 = 9008;
    cuInit = 9009;
}
