//! A library that stands in for the CUDA driver: what a `cdylib` named `libcuda.so.1` needs to
//! sit between a program and NVIDIA's library (a tracer, a GPU-sharing layer, a mock driver).
//! Feature `standin`.
//!
//! - [`export_libcuda!`](crate::export_libcuda), invoked in the `cdylib` that wants them,
//!   defines one function per ABI of the registry that NVIDIA's Linux library exports, each of
//!   exactly its signature and under its exported name (`cuMemAlloc_v2` is the 3020 ABI of
//!   `cuMemAlloc`). Nothing here exports anything by itself: a program that turns the feature
//!   on does not start interposing libcuda.
//! - Each call goes to the ABI's hook ([`set_hook`], one per ABI), else to its default: the
//!   real driver's export of the same name ([`forward`]).
//! - `cuGetProcAddress_v2` and `cuGetProcAddress` ask the real driver, identify the function it
//!   returned by its address among the real library's exports of the registry's names, and
//!   hand out the stand-in's own function of that ABI instead. What the driver returns that
//!   is none of them (names newer than this crate) is handed out as it is, not intercepted. The
//!   registry's rule ([`crate::answer::driver_answer`]) is checked against every answer
//!   ([`Observer::request`], [`rule_differences`]); it never decides one.
//! - Everything a call needs is set up once, before any call can run: in the library's ELF
//!   constructor ([`set_up`], which `export_libcuda!` places in `.init_array`), the real driver
//!   is found and opened, every ABI's default resolved, the lookup table built and the
//!   observer started ([`Observer::start`]). A call then only loads atomics: it takes no lock
//!   and allocates nothing, so a signal handler or a `fork` child that calls in can never find
//!   the set-up half done.
//! - The real driver is opened by absolute path: `$CUDA_SYS_GEN_REAL_LIBCUDA`, else the first
//!   `libcuda.so.1` the loader's rules (`ld.so(8)`) find that is neither this library's own
//!   file (by device and inode) nor another stand-in (the mark `export_libcuda!` puts in the
//!   dynamic string table, read from the headers): `LD_LIBRARY_PATH` as the process started
//!   with it (`/proc/self/environ`; ignored in secure-execution mode), split at `:` and `;`, an
//!   empty element being the current folder; `/etc/ld.so.conf`'s folders; the system's. A file
//!   of another ELF class or machine is passed over, as the loader passes over it.
//! - The stand-in stays loaded once loaded (`RTLD_NODELETE`): `dlclose` then
//!   `dlopen("libcuda.so.1")` finds it again, never the real driver it opened (which the
//!   loader also knows by that name).
//! - A runtime sees exactly the lookup functions the real driver has: `cuGetProcAddress` and
//!   `cuGetProcAddress_v2` are exported as GNU indirect functions, whose resolvers answer NULL
//!   where the real driver lacks the function, so `dlsym` says it is absent (glibc; elsewhere
//!   both are always there).
//! - An ABI the real driver does not export returns `CUDA_ERROR_NOT_FOUND` ("named symbol not
//!   found"), and so does every call while no real driver can be opened ([`real_driver`] says
//!   why; the set-up says it once on stderr where the layer answers nothing itself), unless the
//!   layer answers for a driver itself ([`answer_as_driver`]).
//! - `export_libcuda!(init = PATH)` runs the layer's own `fn()` first in the set-up, before any
//!   call is answered: where its hooks go.
//! - A hook is an `unsafe extern "system" fn`: a panic inside one aborts the process at its own
//!   boundary (Rust does not unwind out of an `extern` function), so none crosses into C. Code
//!   of this module does not panic.

use core::ffi::{c_char, c_int, c_uint, c_void, CStr};
use core::ptr::{null_mut, NonNull};
use std::path::PathBuf;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

use crate::answer::driver_answer;
use crate::registry::{Entry, EntryInfo, ENTRIES, ENTRY_COUNT};
use crate::types::CUresult;

/// The environment variable that names the real driver library's path.
pub const REAL_DRIVER_ENV: &str = "CUDA_SYS_GEN_REAL_LIBCUDA";

/// What an ABI the real driver lacks returns: `CUDA_ERROR_NOT_FOUND`.
pub const MISSING: CUresult = crate::types::cudaError_enum(500);

/// One exported function of the stand-in, by entry index ([`Exports`]).
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Export(*const ());

// SAFETY: a function's address, never written through.
unsafe impl Sync for Export {}
unsafe impl Send for Export {}

impl Export {
    /// No function: the registry entry is not exported on this platform.
    pub const NONE: Export = Export(core::ptr::null());

    pub const fn of(f: *const ()) -> Export {
        Export(f)
    }
}

/// The stand-in's exported functions, one per registry entry, and its observer, as
/// [`export_libcuda!`](crate::export_libcuda) defines them.
#[doc(hidden)]
pub struct Exports {
    pub fns: [Export; ENTRY_COUNT],
    pub observer: Option<&'static dyn Observer>,
    /// `export_libcuda!(init = PATH)`: run once by [`set_up`], before anything else of it.
    pub init: Option<fn()>,
}

/// One argument of a call, as an [`Observer`] sees it.
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    /// The parameter's name in the prototype.
    pub name: &'static str,
    /// Its type, as the crate spells it (`*mut CUdeviceptr_v2`, `CUdevice_attribute`).
    pub ty: &'static str,
    pub value: ArgValue,
    /// For an output parameter, how to read the one value it points to ([`Arg::output`]);
    /// `None` for every other parameter.
    ///
    /// An output parameter is a non-`const` pointer to one scalar, handle or enum (`CUcontext*`,
    /// `CUdeviceptr*`, `int*`, `size_t*`, `CUresult*`), as the C prototype declares it. Never
    /// one: a pointer to `char` (strings, byte buffers), to a record, to `void`; any pointer
    /// parameter of a function that also takes an element count (`numNodes`, `count`,
    /// `numOptions`: its pointers may be arrays, of a length the observer cannot know), except
    /// the count itself; a pointer to an untyped pointer (`void**`) unless its name says it is
    /// returned (`pfn`, `pp`, `ppExportTable`, `cubinOut`: `kernelParams` and `extra` are arrays).
    pub output: Option<ReadOutput>,
}

/// Reads what an output parameter at this address points to (emitted per parameter).
pub type ReadOutput = unsafe fn(usize) -> ArgValue;

impl Arg {
    /// What an output parameter points to ([`Arg::output`]); `None` for any other parameter and
    /// for a NULL pointer.
    ///
    /// # Safety
    /// Only after the call returned `CUDA_SUCCESS`, before it returns to its caller (inside
    /// [`Observer::call`], after `forward`): the driver has then filled what the pointer points
    /// to, and the caller's memory is still there. Never before the call, never after a failure.
    pub unsafe fn output(&self) -> Option<ArgValue> {
        let (Some(read), ArgValue::Pointer(p)) = (self.output, self.value) else { return None };
        if p == 0 {
            return None;
        }
        // SAFETY: the caller's pointer of this parameter's type, filled by a successful call.
        Some(unsafe { read(p) })
    }
}

/// An argument's value. Pointers are addresses: nothing is read through them (what an output
/// parameter points to is read after a successful call only, by [`Arg::output`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArgValue {
    Pointer(usize),
    Int(i128),
    /// A C enum's value (its type is [`Arg::ty`]), and the enum's enumerators (value, name),
    /// by value.
    Enum(i128, &'static [(i128, &'static str)]),
    Float(f64),
    /// A record passed by value: its size in bytes (its bytes are not read).
    Bytes(usize),
}

impl core::fmt::Display for ArgValue {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            ArgValue::Pointer(0) => f.write_str("NULL"),
            ArgValue::Pointer(p) => write!(f, "{p:#x}"),
            ArgValue::Int(v) => write!(f, "{v}"),
            ArgValue::Enum(v, names) => match names.binary_search_by_key(&v, |&(n, _)| n) {
                Ok(i) => write!(f, "{} ({v})", names[i].1),
                Err(_) => write!(f, "{v}"),
            },
            ArgValue::Float(v) => write!(f, "{v}"),
            ArgValue::Bytes(n) => write!(f, "{{{n} bytes}}"),
        }
    }
}

impl core::fmt::Display for Arg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {} = {}", self.name, self.ty, self.value)
    }
}

/// Watches every call of the stand-in's exported functions: give one to
/// [`export_libcuda!`](crate::export_libcuda) (`export_libcuda!(observer = MY_OBSERVER)`).
pub trait Observer: Sync {
    /// Called once, from the library's constructor, after the real driver was opened and
    /// before any call can run: set up here what [`Observer::call`] needs (open a file). Calls
    /// may come from signal handlers and from `fork` children: what they do should take no
    /// lock and allocate nothing that another thread may hold half done.
    fn start(&self) {}

    /// A call of entry `index` (of [`ENTRIES`]) with `args`, made by calling `forward` (the
    /// hook, else the real driver), whose result the observer returns. Call `forward` exactly
    /// once. After it returned `CUDA_SUCCESS`, [`Arg::output`] reads what each output
    /// parameter points to.
    fn call(&self, index: usize, args: &[Arg], forward: &mut dyn FnMut() -> CUresult) -> CUresult;

    /// A `cuGetProcAddress` request the real driver answered with a function: the entry it
    /// was identified as (`None`: a function the registry does not know, handed out as it is),
    /// and whether that is the entry the registry's rule names.
    fn request(&self, symbol: &CStr, version: c_int, flags: u64, answered: Option<&'static EntryInfo>, rule_agrees: bool) {
        let _ = (symbol, version, flags, answered, rule_agrees);
    }
}

static HOOKS: [AtomicPtr<c_void>; ENTRY_COUNT] = [const { AtomicPtr::new(null_mut()) }; ENTRY_COUNT];
/// The default of each entry, once known: the real driver's export, the interception of the
/// lookup functions, or [`GONE`].
static FORWARD: [AtomicPtr<c_void>; ENTRY_COUNT] = [const { AtomicPtr::new(null_mut()) }; ENTRY_COUNT];
/// In [`FORWARD`]: the real driver has no such export.
const GONE: *mut c_void = NonNull::<c_void>::dangling().as_ptr();
static EXPORTS: AtomicPtr<Exports> = AtomicPtr::new(null_mut());
/// [`answer_as_driver`]'s version; 0: not set.
static ANSWER_AS: AtomicU32 = AtomicU32::new(0);
static RULE_DIFFERENCES: AtomicUsize = AtomicUsize::new(0);
static UNKNOWN_ANSWERS: AtomicUsize = AtomicUsize::new(0);

/// Where no real driver could be opened, the stand-in answers for itself as a driver of
/// `driver_version` (`major*1000 + minor*10`, `12020` for CUDA 12.2): `cuDriverGetVersion`
/// (without a hook) says `driver_version`, and `cuGetProcAddress` and `cuGetProcAddress_v2`
/// answer by the registry's rule for that driver ([`crate::answer::driver_answer`]) with the
/// stand-in's own functions, each of which calls its hook (without one,
/// `CUDA_ERROR_NOT_FOUND`). What a mock driver needs first: a runtime asks for the version,
/// then looks every function up. Where a real driver was opened this changes nothing: its
/// answers are the ones given. Call it from the `init` function of
/// [`export_libcuda!`](crate::export_libcuda), which runs before any call is answered; 0
/// takes it back.
pub fn answer_as_driver(driver_version: u32) {
    ANSWER_AS.store(driver_version, Ordering::Release);
}

/// Takes entry `E`'s hook away: its calls go to [`forward`] again.
pub fn clear_hook<E: Entry>() {
    HOOKS[E::INDEX].store(null_mut(), Ordering::Release);
}

/// Installs `f` as entry `E`'s hook: the stand-in's function of that ABI calls it instead of
/// the real driver (and hands it out for `cuGetProcAddress` requests answered with `E`: the
/// function handed out is the stand-in's own, which calls the hook).
///
/// A hook of `cuGetProcAddress` itself replaces the stand-in's answer to lookups: whatever it
/// writes to `*pfn` reaches the caller unchecked, so it must hand out a function of exactly the
/// ABI the request names (the driver's rule: `answer::driver_answer`), or forward.
pub fn set_hook<E: Entry>(f: E::Fn) {
    let p = if core::mem::size_of::<E::Fn>() == core::mem::size_of::<*mut c_void>() {
        // SAFETY: `E::Fn` is a (nullable) function pointer type: a pointer's bits.
        unsafe { core::mem::transmute_copy::<E::Fn, *mut c_void>(&f) }
    } else {
        null_mut()
    };
    HOOKS[E::INDEX].store(p, Ordering::Release);
}

/// Installs a hook for every ABI of symbol `S` given, each of its own signature: the cases of
/// the symbol's enum (feature `newest`), as in
/// `set_symbol_hooks::<symbols::cuMemAlloc>(&[MemAlloc::V3020(alloc_v2), MemAlloc::V2000(alloc)])`
/// ([`clear_hook`] takes one away). Returns the ABIs of `S` the registry
/// knows that `hooks` left out: calls of those (by `dlsym` of their exported names, or a
/// `cuGetProcAddress` request the driver answers with them: an older version, or the
/// per-thread flag for a `_ptds`/`_ptsz` variant) bypass this hook.
#[cfg(feature = "newest")]
pub fn set_symbol_hooks<S: crate::newest::Symbol>(hooks: &[S::Newest]) -> Vec<&'static EntryInfo> {
    use crate::newest::NewestAbi;
    for h in hooks {
        if let Some(slot) = HOOKS.get(h.index()) {
            slot.store(h.as_ptr() as *mut c_void, Ordering::Release);
        }
    }
    let cases = <S::Newest as NewestAbi>::CASES;
    cases.iter().filter(|&&i| !hooks.iter().any(|h| h.index() == i)).filter_map(|&i| ENTRIES.get(i)).collect()
}

/// Where a call of entry `E` goes without a hook: the real driver's function of that ABI (for
/// `cuGetProcAddress`, the stand-in's interception of it); `None` when the real driver lacks
/// it. A hook that wraps the call calls this.
pub fn forward<E: Entry>() -> Option<E::Fn> {
    let p = forward_pointer(E::INDEX)?;
    if core::mem::size_of::<E::Fn>() != core::mem::size_of::<*mut c_void>() {
        return None;
    }
    // SAFETY: the pointer is the function of exactly `E`'s ABI (its exported name's).
    Some(unsafe { core::mem::transmute_copy::<*mut c_void, E::Fn>(&p.as_ptr()) })
}

/// [`forward`] by entry index, as a plain pointer.
pub fn forward_pointer(index: usize) -> Option<NonNull<c_void>> {
    let slot = FORWARD.get(index)?;
    let p = slot.load(Ordering::Acquire);
    if p.is_null() {
        let p = resolve_forward(index);
        slot.store(p, Ordering::Release);
        return NonNull::new(p).filter(|p| p.as_ptr() != GONE);
    }
    NonNull::new(p).filter(|p| p.as_ptr() != GONE)
}

#[cold]
fn resolve_forward(index: usize) -> *mut c_void {
    let Some(info) = ENTRIES.get(index) else { return GONE };
    if info.symbol == "cuGetProcAddress" {
        return if info.exported == "cuGetProcAddress" {
            get_proc_address_v1 as GetProcAddressV1 as *mut c_void
        } else {
            get_proc_address_v2 as GetProcAddressV2 as *mut c_void
        };
    }
    match real_driver() {
        Ok(real) => real.export(info.exported).map_or(GONE, NonNull::as_ptr),
        Err(_) if info.symbol == "cuDriverGetVersion" => driver_get_version as DriverGetVersion as *mut c_void,
        Err(_) => GONE,
    }
}

/// What the stand-in's function of entry `index` calls: its hook, else [`forward_pointer`].
/// After [`set_up`] (the library's constructor) this only loads atomics.
#[doc(hidden)]
#[inline]
pub fn target(exports: &'static Exports, index: usize) -> Option<NonNull<c_void>> {
    if let Some(h) = HOOKS.get(index) {
        if let Some(p) = NonNull::new(h.load(Ordering::Acquire)) {
            // A hook may call `forward`, whose lookup functions hand out `exports`: set up
            // where no constructor did (outside Linux).
            if EXPORTS.load(Ordering::Relaxed).is_null() {
                set_up(exports);
            }
            return Some(p);
        }
    }
    if let Some(p) = FORWARD.get(index).map(|s| s.load(Ordering::Acquire)) {
        if !p.is_null() {
            return NonNull::new(p).filter(|p| p.as_ptr() != GONE);
        }
    }
    // Only a call that comes before the constructor ran (one from another library's
    // constructor that the loader ordered first) gets here.
    set_up(exports);
    forward_pointer(index)
}

/// The lookup functions the real driver exports, once [`set_up`] knows: [`LOOKUP_KNOWN`] and
/// the bits below.
static LOOKUPS: AtomicU8 = AtomicU8::new(0);
const LOOKUP_KNOWN: u8 = 1;
const LOOKUP_V1: u8 = 2;
const LOOKUP_V2: u8 = 4;
const LOOKUP_NO_DRIVER: u8 = 8;

/// The set-up of the stand-in, once per process: called by the library's ELF constructor,
/// which `export_libcuda!` places in `.init_array`, so it has run before any call (a call
/// that comes earlier runs it itself). Opens the real driver, resolves every ABI's default,
/// builds the table by which answers are identified, keeps this library loaded, and starts
/// the observer.
#[doc(hidden)]
pub fn set_up(exports: &'static Exports) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if EXPORTS.load(Ordering::Acquire).is_null() {
            EXPORTS.store(exports as *const Exports as *mut Exports, Ordering::Release);
        }
        // The layer's own set-up first: its hooks and `answer_as_driver` are in place before
        // any call is answered, and it may name the real driver (`$CUDA_SYS_GEN_REAL_LIBCUDA`).
        if let Some(init) = exports.init {
            init();
        }
        let real = real_driver();
        if let Err(why) = real {
            say_no_driver(why);
        }
        for (index, slot) in FORWARD.iter().enumerate() {
            if slot.load(Ordering::Acquire).is_null() {
                slot.store(resolve_forward(index), Ordering::Release);
            }
        }
        let lookups = match real {
            Ok(r) => {
                let _ = r.table();
                let has = |name: &str, bit: u8| if r.export(name).is_some() { bit } else { 0 };
                has("cuGetProcAddress", LOOKUP_V1) | has("cuGetProcAddress_v2", LOOKUP_V2)
            }
            Err(_) => LOOKUP_NO_DRIVER,
        };
        LOOKUPS.store(LOOKUP_KNOWN | lookups, Ordering::Release);
        #[cfg(unix)]
        search::keep_loaded();
        if let Some(o) = exports.observer {
            o.start();
        }
    });
}

/// Where no real driver was opened and the layer answers nothing itself (no hook, no
/// [`answer_as_driver`]), every call would return `CUDA_ERROR_NOT_FOUND` without a word: one
/// line on stderr, from the set-up (never from a call), says why.
fn say_no_driver(why: &str) {
    use std::io::Write as _;
    if ANSWER_AS.load(Ordering::Acquire) != 0 || HOOKS.iter().any(|h| !h.load(Ordering::Acquire).is_null()) {
        return;
    }
    let line = format!(
        "libcuda.so.1 (a cuda-sys-gen stand-in): {why}; every call returns CUDA_ERROR_NOT_FOUND (500), \
         cuDriverGetVersion too (a layer answers by itself with standin::answer_as_driver and hooks)\n"
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// What `dlsym` and the loader get for the stand-in's export of a lookup function
/// (`cuGetProcAddress`, or `cuGetProcAddress_v2` where `v2`): `implementation` where the
/// real driver exports it too (or none was found: every call then answers
/// `CUDA_ERROR_NOT_FOUND`), NULL where it lacks it, so that a runtime falls back as it does
/// in front of that driver (the CUDA 12.4 runtime calls `cuGetProcAddress_v2` wherever
/// `dlsym` finds it, and gives up on a refusal). Before [`set_up`] ran, `implementation`.
#[doc(hidden)]
pub fn lookup_export(v2: bool, implementation: *const c_void) -> *const c_void {
    let l = LOOKUPS.load(Ordering::Acquire);
    let bit = if v2 { LOOKUP_V2 } else { LOOKUP_V1 };
    if l & LOOKUP_KNOWN == 0 || l & (bit | LOOKUP_NO_DRIVER) != 0 {
        implementation
    } else {
        core::ptr::null()
    }
}

/// How many `cuGetProcAddress` answers of the real driver were another entry than the
/// registry's rule names (0 on every driver measured).
pub fn rule_differences() -> usize {
    RULE_DIFFERENCES.load(Ordering::Relaxed)
}

/// How many `cuGetProcAddress` answers were functions the registry does not know (handed out
/// as they are, not intercepted).
pub fn unknown_answers() -> usize {
    UNKNOWN_ANSWERS.load(Ordering::Relaxed)
}

/// The real driver the stand-in forwards to.
pub struct RealDriver {
    path: PathBuf,
    lib: libloading::Library,
    version: u32,
    /// The library's exports of the registry's names, by address: (address, entry index).
    by_address: OnceLock<Vec<(usize, usize)>>,
}

impl RealDriver {
    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Its `cuDriverGetVersion` (0 where that fails).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Its export of `name`.
    pub fn export(&self, name: &str) -> Option<NonNull<c_void>> {
        // SAFETY: only the address is read.
        let p = unsafe { self.lib.get::<*mut c_void>(name.as_bytes()) }.ok()?;
        NonNull::new(*p)
    }

    /// The library's exports of the registry's names, by address: built by [`set_up`].
    fn table(&self) -> &[(usize, usize)] {
        self.by_address.get_or_init(|| {
            let mut t: Vec<(usize, usize)> = ENTRIES
                .iter()
                .enumerate()
                .filter(|(_, e)| e.platforms.here())
                .filter_map(|(i, e)| {
                    // Each entry's default, where `set_up` resolved it: the same `dlsym`, once.
                    let known = FORWARD.get(i).map(|s| s.load(Ordering::Acquire)).filter(|p| !p.is_null());
                    let p = match known {
                        Some(p) if p == GONE => return None,
                        Some(p) if e.symbol != "cuGetProcAddress" => NonNull::new(p)?,
                        _ => self.export(e.exported)?,
                    };
                    Some((p.as_ptr() as usize, i))
                })
                .collect();
            t.sort_unstable();
            t
        })
    }

    /// The registry entries whose exported name the library exports at `p`.
    pub fn entries_at(&self, p: NonNull<c_void>) -> impl Iterator<Item = usize> + '_ {
        let table = self.table();
        let a = p.as_ptr() as usize;
        let start = table.partition_point(|&(x, _)| x < a);
        table[start..].iter().take_while(move |&&(x, _)| x == a).map(|&(_, i)| i)
    }
}

/// The real driver, opened by [`set_up`]; the reason where none could be.
pub fn real_driver() -> Result<&'static RealDriver, &'static str> {
    static REAL: OnceLock<Result<RealDriver, String>> = OnceLock::new();
    REAL.get_or_init(open_real).as_ref().map_err(String::as_str)
}

fn open_real() -> Result<RealDriver, String> {
    let path = match std::env::var_os(REAL_DRIVER_ENV) {
        Some(p) if !p.is_empty() => {
            let path = PathBuf::from(p);
            if !path.is_absolute() {
                return Err(format!("${REAL_DRIVER_ENV} is {}: give an absolute path", path.display()));
            }
            if is_own_file(&path) {
                return Err(format!("${REAL_DRIVER_ENV} is {}, this stand-in's own file", path.display()));
            }
            // Judged as the loader would judge it first: a FIFO is never opened (that would wait
            // for a writer), another machine's library never read further.
            #[cfg(all(unix, not(target_vendor = "apple")))]
            crate::library::elf::check(&path).map_err(|why| format!("${REAL_DRIVER_ENV} is {}: {why}", path.display()))?;
            #[cfg(unix)]
            if search::is_standin(&path) {
                return Err(format!(
                    "${REAL_DRIVER_ENV} is {}, itself a stand-in (it carries export_libcuda!'s mark): name NVIDIA's libcuda.so.1",
                    path.display()
                ));
            }
            path
        }
        _ => search::find().ok_or_else(|| {
            format!("no real driver: set ${REAL_DRIVER_ENV} to its path (no other libcuda.so.1 in the loader's folders)")
        })?,
    };
    let lib = crate::library::open_path(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut real = RealDriver { path, lib, version: 0, by_address: OnceLock::new() };
    if let Some(f) = real.export("cuDriverGetVersion") {
        // SAFETY: cuDriverGetVersion(int*), the driver's own.
        let f = unsafe { core::mem::transmute::<*mut c_void, unsafe extern "system" fn(*mut c_int) -> c_uint>(f.as_ptr()) };
        let mut v: c_int = 0;
        if unsafe { f(&mut v) } == 0 {
            real.version = u32::try_from(v).unwrap_or(0);
        }
    }
    Ok(real)
}

#[cfg(unix)]
fn is_own_file(path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(path), search::own_file()) {
        (Ok(m), Some((dev, ino))) => m.dev() == dev && m.ino() == ino,
        _ => false,
    }
}

#[cfg(not(unix))]
fn is_own_file(_path: &std::path::Path) -> bool {
    false
}

#[cfg(unix)]
mod search {
    use core::ffi::{c_char, c_int, c_void, CStr};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};

    #[repr(C)]
    struct DlInfo {
        fname: *const c_char,
        fbase: *mut c_void,
        sname: *const c_char,
        saddr: *mut c_void,
    }

    extern "C" {
        fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
    }

    /// This library's own file (device, inode), from the loader's record of where this
    /// function lies.
    pub(super) fn own_file() -> Option<(u64, u64)> {
        let mut info = DlInfo { fname: core::ptr::null(), fbase: core::ptr::null_mut(), sname: core::ptr::null(), saddr: core::ptr::null_mut() };
        // SAFETY: dladdr only reads the loader's tables and fills `info`.
        let found = unsafe { dladdr(own_file as fn() -> Option<(u64, u64)> as *const c_void, &mut info) };
        if found == 0 || info.fname.is_null() {
            return None;
        }
        // SAFETY: the loader's NUL-terminated path.
        let name = unsafe { CStr::from_ptr(info.fname) };
        let m = std::fs::metadata(Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()))).ok()?;
        Some((m.dev(), m.ino()))
    }

    extern "C" {
        fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
        fn getauxval(kind: core::ffi::c_ulong) -> core::ffi::c_ulong;
    }

    /// glibc's and musl's values on Linux.
    const RTLD_NOW: c_int = 2;
    const RTLD_NOLOAD: c_int = 4;
    const RTLD_NODELETE: c_int = 0x1000;
    const AT_SECURE: core::ffi::c_ulong = 23;

    /// Keeps this library loaded for the life of the process: a `dlclose` that would unload it
    /// would leave the real driver it opened loaded, known to the loader by the name
    /// `libcuda.so.1`, and the program's next `dlopen("libcuda.so.1")` would get the real
    /// driver, past the stand-in.
    pub(super) fn keep_loaded() {
        let mut info = DlInfo { fname: core::ptr::null(), fbase: core::ptr::null_mut(), sname: core::ptr::null(), saddr: core::ptr::null_mut() };
        // SAFETY: dladdr only reads the loader's tables and fills `info`.
        let found = unsafe { dladdr(keep_loaded as fn() as *const c_void, &mut info) };
        if found != 0 && !info.fname.is_null() {
            // SAFETY: the loader's own path of this library, already loaded: nothing is
            // loaded or run, the library is only marked never to be unloaded.
            unsafe { dlopen(info.fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) };
        }
    }

    /// `LD_LIBRARY_PATH` as the process started with it, which is what the loader searches
    /// (a program's later `setenv` changes nothing for the loader): the environment the
    /// kernel handed the process, from `/proc/self/environ`, else the current one. `None` in
    /// secure-execution mode (set-user-ID programs), where the loader ignores it.
    fn library_path_at_start() -> Option<Vec<u8>> {
        // SAFETY: getauxval reads the auxiliary vector; 0 where the entry is absent.
        if unsafe { getauxval(AT_SECURE) } != 0 {
            return None;
        }
        const NAME: &[u8] = b"LD_LIBRARY_PATH=";
        match std::fs::read("/proc/self/environ") {
            Ok(env) => env.split(|b| *b == 0).find_map(|v| v.strip_prefix(NAME)).map(<[u8]>::to_vec),
            Err(_) => std::env::var_os("LD_LIBRARY_PATH").map(|v| v.as_bytes().to_vec()),
        }
    }

    /// The folders the loader searches, in its order: `LD_LIBRARY_PATH` (its elements split
    /// at `:` and `;`, an empty one the current folder), `/etc/ld.so.conf` (and the files it
    /// includes), the system's folders.
    fn folders() -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Some(p) = library_path_at_start() {
            for element in p.split(|b| *b == b':' || *b == b';') {
                out.push(if element.is_empty() {
                    PathBuf::from(".")
                } else {
                    PathBuf::from(std::ffi::OsStr::from_bytes(element))
                });
            }
        }
        read_conf(Path::new("/etc/ld.so.conf"), &mut out, 0);
        let system: &[&str] = if cfg!(target_arch = "x86_64") {
            &["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"]
        } else if cfg!(target_arch = "aarch64") {
            &["/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"]
        } else {
            &["/lib64", "/usr/lib64", "/lib", "/usr/lib"]
        };
        out.extend(system.iter().map(PathBuf::from));
        out
    }

    /// The folders of an `ld.so.conf` file, `include` lines followed (a `*` in the last part
    /// of the pattern only, as Debian's and Red Hat's `ld.so.conf.d/*.conf`).
    fn read_conf(path: &Path, out: &mut Vec<PathBuf>, depth: usize) {
        let Ok(text) = std::fs::read_to_string(path) else { return };
        if depth > 8 {
            return;
        }
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if let Some(pattern) = line.strip_prefix("include").filter(|r| r.starts_with([' ', '\t'])) {
                for pattern in pattern.split_whitespace() {
                    let pattern = Path::new(pattern);
                    let pattern = if pattern.is_absolute() { pattern.to_owned() } else { Path::new("/etc").join(pattern) };
                    let (Some(dir), Some(file)) = (pattern.parent(), pattern.file_name().and_then(|f| f.to_str())) else {
                        continue;
                    };
                    match file.split_once('*') {
                        Some((prefix, suffix)) => {
                            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                                .into_iter()
                                .flatten()
                                .flatten()
                                .map(|e| e.path())
                                .filter(|p| {
                                    p.file_name().and_then(|f| f.to_str()).is_some_and(|f| f.starts_with(prefix) && f.ends_with(suffix))
                                })
                                .collect();
                            files.sort();
                            for f in files {
                                read_conf(&f, out, depth + 1);
                            }
                        }
                        None => read_conf(&pattern, out, depth + 1),
                    }
                }
            } else if line.starts_with('/') {
                out.push(PathBuf::from(line));
            }
        }
    }

    /// Whether the file at `path` is a stand-in built on this crate (another copy, a tracer
    /// beside a test stand-in, say): its dynamic string table, found through its program
    /// headers, names `export_libcuda!`'s mark. Only the headers and that table are read (a
    /// few hundred kilobytes of NVIDIA's library, of tens of megabytes), each read bounded by
    /// the file's size.
    pub(super) fn is_standin(path: &Path) -> bool {
        dynamic_strings(path).is_some_and(|t| t.split(|b| *b == 0).any(|s| s == b"cuda_sys_gen_standin"))
    }

    /// Whether the loader would take the file at `path` in this process, by its ELF header
    /// (what the loader checks before it goes on searching): a shared object of this
    /// process's class, byte order and machine. A file that passes is checked whole when it
    /// is opened (`library::open_path`).
    fn loadable_here(path: &Path) -> bool {
        use std::os::unix::fs::FileExt;
        const MACHINE: Option<u16> = if cfg!(target_arch = "x86_64") {
            Some(62)
        } else if cfg!(target_arch = "aarch64") {
            Some(183)
        } else {
            None
        };
        let Ok(file) = std::fs::File::open(path) else { return false };
        let mut h = [0u8; 20];
        if file.read_exact_at(&mut h, 0).is_err() || !h.starts_with(b"\x7fELF") {
            return false;
        }
        let class = if cfg!(target_pointer_width = "64") { 2 } else { 1 };
        let data = if cfg!(target_endian = "little") { 1 } else { 2 };
        let half = |at: usize| if data == 1 { u16::from_le_bytes([h[at], h[at + 1]]) } else { u16::from_be_bytes([h[at], h[at + 1]]) };
        h[4] == class && h[5] == data && half(16) == 3 && MACHINE.is_none_or(|m| half(18) == m)
    }

    /// The most bytes read of one table.
    const MAX_READ: u64 = 64 << 20;

    /// The dynamic string table (`DT_STRTAB`, `DT_STRSZ`) of the ELF file at `path`.
    fn dynamic_strings(path: &Path) -> Option<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        // Only a regular file is opened (a FIFO would wait for a writer), and judged again
        // once open.
        if !std::fs::metadata(path).ok()?.is_file() {
            return None;
        }
        let file = std::fs::File::open(path).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() {
            return None;
        }
        let len = meta.len();
        let read = |at: u64, n: u64| -> Option<Vec<u8>> {
            if n > MAX_READ || at.checked_add(n)? > len {
                return None;
            }
            let mut buf = vec![0u8; usize::try_from(n).ok()?];
            file.read_exact_at(&mut buf, at).ok()?;
            Some(buf)
        };
        let head = read(0, 64.min(len))?;
        if !head.starts_with(b"\x7fELF") || head.len() < 52 {
            return None;
        }
        let wide = head[4] == 2;
        let little = head[5] == 1;
        let uint = |b: &[u8]| -> u64 {
            let mut v = 0u64;
            for (i, byte) in b.iter().enumerate() {
                let shift = if little { 8 * i } else { 8 * (b.len() - 1 - i) };
                v |= u64::from(*byte) << shift;
            }
            v
        };
        let field = |b: &[u8], at: usize, n: usize| b.get(at..at + n).map(uint);
        let (phoff, phentsize, phnum) = if wide {
            (field(&head, 32, 8)?, field(&head, 54, 2)?, field(&head, 56, 2)?)
        } else {
            (field(&head, 28, 4)?, field(&head, 42, 2)?, field(&head, 44, 2)?)
        };
        if phentsize < if wide { 56 } else { 32 } {
            return None;
        }
        let headers = read(phoff, phentsize.checked_mul(phnum)?)?;
        // (vaddr, offset, filesz) of each loadable segment; the dynamic segment's (offset, size).
        let mut loads = Vec::new();
        let mut dynamic = None;
        for h in headers.chunks_exact(usize::try_from(phentsize).ok()?) {
            let (kind, offset, vaddr, filesz) = if wide {
                (field(h, 0, 4)?, field(h, 8, 8)?, field(h, 16, 8)?, field(h, 32, 8)?)
            } else {
                (field(h, 0, 4)?, field(h, 4, 4)?, field(h, 8, 4)?, field(h, 16, 4)?)
            };
            match kind {
                1 => loads.push((vaddr, offset, filesz)),
                2 => dynamic = Some((offset, filesz)),
                _ => {}
            }
        }
        let (at, size) = dynamic?;
        let table = read(at, size)?;
        let (mut strtab, mut strsz) = (None, None);
        let step = if wide { 16 } else { 8 };
        for d in table.chunks_exact(step) {
            let (tag, value) = if wide { (field(d, 0, 8)?, field(d, 8, 8)?) } else { (field(d, 0, 4)?, field(d, 4, 4)?) };
            match tag {
                0 => break,
                5 => strtab = Some(value),
                10 => strsz = Some(value),
                _ => {}
            }
        }
        let (vaddr, size) = (strtab?, strsz?);
        let &(base, offset, _) = loads.iter().find(|&&(v, _, n)| vaddr >= v && vaddr - v < n)?;
        read(offset.checked_add(vaddr - base)?, size)
    }

    /// The first `libcuda.so.1` of the loader's folders that the loader could load here (the
    /// ELF class, byte order and machine of this process, by its header) and that is neither
    /// this library's own file nor another stand-in. Only regular files are opened.
    pub(super) fn find() -> Option<PathBuf> {
        let own = own_file();
        for folder in folders() {
            let candidate = folder.join("libcuda.so.1");
            let Ok(m) = std::fs::metadata(&candidate) else { continue };
            if !m.is_file() || own == Some((m.dev(), m.ino())) {
                continue;
            }
            if !loadable_here(&candidate) || is_standin(&candidate) {
                continue;
            }
            // An absolute path, so that the loader opens this file and no other.
            let candidate = if candidate.is_absolute() {
                candidate
            } else {
                std::env::current_dir().ok()?.join(candidate)
            };
            return Some(candidate);
        }
        None
    }
}

#[cfg(not(unix))]
mod search {
    /// Windows: the driver's `nvcuda.dll` in System32 (which the stand-in, in the program's
    /// folder, is not).
    pub(super) fn find() -> Option<std::path::PathBuf> {
        let root = std::env::var_os("SystemRoot")?;
        Some(std::path::PathBuf::from(root).join("System32").join("nvcuda.dll"))
    }
}

type GetProcAddressV2 = unsafe extern "system" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_uint) -> c_uint;
type GetProcAddressV1 = unsafe extern "system" fn(*const c_char, *mut *mut c_void, c_int, u64) -> c_uint;
type DriverGetVersion = unsafe extern "system" fn(*mut c_int) -> c_uint;

/// The default of `cuDriverGetVersion` where no real driver was opened: the version of
/// [`answer_as_driver`], else `CUDA_ERROR_NOT_FOUND`.
unsafe extern "system" fn driver_get_version(version: *mut c_int) -> c_uint {
    let v = ANSWER_AS.load(Ordering::Acquire);
    if v == 0 {
        return MISSING.0;
    }
    if version.is_null() {
        return crate::answer::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the caller's pointer, checked for NULL.
    unsafe { *version = c_int::try_from(v).unwrap_or(c_int::MAX) };
    0
}

/// A lookup where no real driver was opened: by [`answer_as_driver`]'s rule, with the
/// stand-in's own functions; `None` where it was not called (`CUDA_ERROR_NOT_FOUND`).
///
/// # Safety
/// The arguments as the caller of `cuGetProcAddress` passed them.
unsafe fn own_answer(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
) -> Option<crate::answer::DriverAnswer> {
    let driver = ANSWER_AS.load(Ordering::Acquire);
    if driver == 0 {
        return None;
    }
    if symbol.is_null() || pfn.is_null() {
        return Some(crate::answer::DriverAnswer::InvalidValue(crate::answer::Invalid::Flags));
    }
    let symbol = unsafe { CStr::from_ptr(symbol) };
    let answer = driver_answer(symbol.to_bytes(), version, flags, driver);
    // SAFETY: `EXPORTS` holds only a `&'static Exports`.
    let exports = unsafe { EXPORTS.load(Ordering::Acquire).as_ref() };
    let entry = answer.entry();
    let ours = entry.and_then(EntryInfo::index).and_then(|i| exports.and_then(|e| e.fns.get(i))).map_or(core::ptr::null(), |e| e.0);
    unsafe { *pfn = ours as *mut c_void };
    if let Some(o) = exports.and_then(|e| e.observer) {
        if answer.result_and_status().0 == 0 {
            o.request(symbol, version, flags, entry, true);
        }
    }
    Some(answer)
}

/// The default of `cuGetProcAddress_v2` (the 12000 ABI): the real driver's answer, its
/// function replaced by the stand-in's of the same ABI.
unsafe extern "system" fn get_proc_address_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    status: *mut c_uint,
) -> c_uint {
    let Some(f) = real_driver().ok().and_then(|r| r.export("cuGetProcAddress_v2")) else {
        // SAFETY: the caller's arguments.
        return match unsafe { own_answer(symbol, pfn, version, flags) } {
            Some(a) => {
                let (r, st) = a.result_and_status();
                if let (Some(st), false) = (st, status.is_null()) {
                    // SAFETY: the caller's pointer, checked for NULL.
                    unsafe { *status = st };
                }
                r
            }
            None => MISSING.0,
        };
    };
    // SAFETY: the real driver's cuGetProcAddress_v2, with the caller's arguments.
    let f = unsafe { core::mem::transmute::<*mut c_void, GetProcAddressV2>(f.as_ptr()) };
    let r = unsafe { f(symbol, pfn, version, flags, status) };
    // SAFETY: the driver answered; `pfn` and `symbol` are the caller's, checked for NULL.
    unsafe { substitute(r, symbol, pfn, version, flags) };
    r
}

/// The default of the 4-argument `cuGetProcAddress` (the 11030 ABI), as
/// [`get_proc_address_v2`].
unsafe extern "system" fn get_proc_address_v1(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
) -> c_uint {
    let Some(f) = real_driver().ok().and_then(|r| r.export("cuGetProcAddress")) else {
        // SAFETY: the caller's arguments.
        return unsafe { own_answer(symbol, pfn, version, flags) }.map_or(MISSING.0, |a| a.result_without_status());
    };
    // SAFETY: the real driver's cuGetProcAddress, with the caller's arguments.
    let f = unsafe { core::mem::transmute::<*mut c_void, GetProcAddressV1>(f.as_ptr()) };
    let r = unsafe { f(symbol, pfn, version, flags) };
    unsafe { substitute(r, symbol, pfn, version, flags) };
    r
}

/// After a lookup of the real driver: its function in `*pfn` replaced by the stand-in's of the
/// same ABI, found by address; the rule checked.
///
/// # Safety
/// `pfn` and `symbol` as the caller of `cuGetProcAddress` passed them.
unsafe fn substitute(result: c_uint, symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64) {
    if result != 0 || pfn.is_null() || symbol.is_null() {
        return;
    }
    let Some(p) = NonNull::new(unsafe { *pfn }) else { return };
    let Ok(real) = real_driver() else { return };
    let symbol = unsafe { CStr::from_ptr(symbol) };
    let rule = driver_answer(symbol.to_bytes(), version, flags, real.version());
    let named = rule.entry().and_then(EntryInfo::index);
    // The entries of the symbol asked for whose export is this very function. Another
    // symbol's entry at the same address (a library may export one function under names of
    // different symbols) is never taken: its prototype may be another. Where the symbol has
    // several here, the one the rule names; where the rule names none of them, none (the
    // caller gets the real function, untraced, rather than a guess).
    let of_symbol = |i: &usize| ENTRIES.get(*i).is_some_and(|e| e.symbol.as_bytes() == symbol.to_bytes());
    let mut found = None;
    let mut several = false;
    for i in real.entries_at(p).filter(of_symbol) {
        if Some(i) == named {
            found = named;
            several = false;
            break;
        }
        several |= found.is_some();
        found = Some(i);
    }
    if several {
        found = None;
    }
    // A function where the rule names none, another entry, or none of the registry's.
    let agrees = found.is_some() && found == named;
    if !agrees {
        RULE_DIFFERENCES.fetch_add(1, Ordering::Relaxed);
    }
    // SAFETY: `EXPORTS` holds only a `&'static Exports`.
    let exports = unsafe { EXPORTS.load(Ordering::Acquire).as_ref() };
    if let Some(o) = exports.and_then(|e| e.observer) {
        o.request(symbol, version, flags, found.and_then(|i| ENTRIES.get(i)), agrees);
    }
    let Some(index) = found else {
        UNKNOWN_ANSWERS.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let ours = exports.and_then(|e| e.fns.get(index)).map_or(core::ptr::null(), |e| e.0);
    if !ours.is_null() {
        unsafe { *pfn = ours as *mut c_void };
    }
}

/// Defines, in the crate that invokes it, one `#[no_mangle]` function per ABI of the
/// registry that NVIDIA's Linux driver library exports, of exactly its prototype and
/// under its exported name (`cuMemAlloc_v2`), each calling its hook
/// ([`standin::set_hook`](crate::standin::set_hook)) or the real driver
/// ([`standin`](crate::standin)). Invoke it once, at the root of a `cdylib` named
/// `libcuda.so.1` (crate-type `cdylib`, library name `cuda`, the file renamed or linked
/// as `libcuda.so.1`).
///
/// `export_libcuda!(observer = PATH)` hands every call to the static `PATH` (an
/// [`Observer`](crate::standin::Observer)), which makes it and sees its arguments and
/// result; without, each function is two atomic loads and the call.
///
/// `export_libcuda!(init = PATH)` (alone or with `observer`, in either order) runs the
/// `fn()` at `PATH` once, first thing in the stand-in's set-up: before any call is
/// answered and before the real driver is looked for. The place for
/// [`set_hook`](crate::standin::set_hook) and
/// [`answer_as_driver`](crate::standin::answer_as_driver). It must not call the
/// stand-in's own exported functions (the set-up is not done yet; they would wait for
/// it); [`forward`](crate::standin::forward) it may call.
///
/// On Linux it also places the stand-in's set-up ([`standin`](crate::standin): the real
/// driver found and opened, every default resolved) in the library's constructor, so
/// that no call takes a lock or allocates, and exports `cuGetProcAddress` and
/// `cuGetProcAddress_v2` as indirect functions that `dlsym` finds only where the real
/// driver has them. Give the `cdylib` the `DT_SONAME` `libcuda.so.1` too (a `build.rs`
/// printing `cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1`).
///
/// Linux only: the names are those of `libcuda.so.1` (Windows' `nvcuda.dll` exports
/// others). The per-entry functions are the generated table's (`standin_exports.rs`).
#[macro_export]
macro_rules! export_libcuda {
    () => {
        $crate::export_libcuda!(@with ::core::option::Option::None, ::core::option::Option::None);
    };
    (observer = $observer:path) => {
        $crate::export_libcuda!(@with ::core::option::Option::Some(&$observer), ::core::option::Option::None);
    };
    (init = $init:path) => {
        $crate::export_libcuda!(@with ::core::option::Option::None, ::core::option::Option::Some($init as fn()));
    };
    (observer = $observer:path, init = $init:path) => {
        $crate::export_libcuda!(
            @with ::core::option::Option::Some(&$observer), ::core::option::Option::Some($init as fn())
        );
    };
    (init = $init:path, observer = $observer:path) => {
        $crate::export_libcuda!(
            @with ::core::option::Option::Some(&$observer), ::core::option::Option::Some($init as fn())
        );
    };
    (@with $observer:expr, $init:expr) => {
        const _: () = {
            #[allow(unused_imports)]
            use $crate::types::*;
            #[allow(unused_imports)]
            use ::core::ffi::{
                c_char, c_double, c_float, c_int, c_long, c_longlong, c_short, c_uchar, c_uint, c_ulong, c_ulonglong,
                c_ushort, c_void,
            };

            // The mark by which a stand-in's search for the real driver passes over
            // other stand-ins (which would forward to each other without end).
            #[unsafe(no_mangle)]
            #[allow(non_upper_case_globals)]
            pub static cuda_sys_gen_standin: [u8; 8] = *b"stand-in";

            static EXPORTS: $crate::standin::Exports =
                $crate::standin::Exports { fns: $crate::__standin_exports!(fns), observer: $observer, init: $init };

            // The set-up, in the library's constructor: done before any call can run,
            // so that no call takes a lock or allocates for it.
            #[cfg(target_os = "linux")]
            #[used]
            #[unsafe(link_section = ".init_array")]
            static STANDIN_SET_UP: extern "C" fn() = {
                extern "C" fn set_up() {
                    $crate::standin::set_up(&EXPORTS);
                }
                set_up
            };

            $crate::__standin_exports!(items);
        };

        $crate::__standin_exports!(types);
    };
}
