//! The lookup shim: load the CUDA driver library at run time, resolve its
//! `cuGetProcAddress`, and fetch each registry entry with exactly its own version and stream
//! flag, cached per [`Driver`].
//!
//! An entry newer than the driver is refused before the driver is asked (`Lookups::refuses`,
//! the one version rule of the driver and the runtime). Drivers older than CUDA 11.3 have no
//! `cuGetProcAddress`: there each entry is the library's export of the entry's name, under the
//! same rule.
//!
//! What the driver's and the runtime's lookups share is written once, below [`Driver`]: the
//! rule, the cache, `get`, `newest`, and the mapping of an answer to a pointer or an error
//! (`Lookups`, which `runtime.rs` implements for the runtime).
//!
//! Nothing here links libcuda: the library is opened by name when [`Driver::load`] runs,
//! so a program built with this crate starts (and can report a clear error) on a machine
//! without a GPU.

use core::ffi::{c_char, c_int, c_uint, c_void, CStr};
use core::fmt;
use core::mem::{size_of, ManuallyDrop};
use core::ptr::{null, null_mut, NonNull};
use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::error::{Error, LibraryKind, LoadAttempt, Lookup};
use crate::library::{load_path, open_by_name};
#[cfg(feature = "newest")]
use crate::newest::{NewestAbi, Symbol};
use crate::registry::{Entry, EntryInfo, EntryRecord, StreamFlags, ENTRIES, ENTRY_COUNT};
use crate::types::CUresult;

// The few functions the shim itself needs, declared here and not taken from `pfn`: they are
// resolved by name before there is a cuGetProcAddress to ask, and the shim must build for any
// registry, even one generated from headers that lack these typedefs. `CUresult` and the
// status enum are C enums, passed as `unsigned int`.
type GetProcAddressV2 = unsafe extern "system" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_uint) -> c_uint;
type GetProcAddressV1 = unsafe extern "system" fn(*const c_char, *mut *mut c_void, c_int, u64) -> c_uint;
type DriverGetVersion = unsafe extern "system" fn(*mut c_int) -> c_uint;
type GetErrorName = unsafe extern "system" fn(c_uint, *mut *const c_char) -> c_uint;

pub(crate) const CUDA_SUCCESS: c_uint = 0;
pub(crate) const CUDA_ERROR_NOT_FOUND: c_uint = 500;
const STATUS_SUCCESS: c_uint = 0;
const STATUS_SYMBOL_NOT_FOUND: c_uint = 1;
const STATUS_VERSION_NOT_SUFFICIENT: c_uint = 2;
/// What `symbolStatus` is set to before the call, to see whether the driver wrote it.
pub(crate) const STATUS_UNSET: c_uint = c_uint::MAX;

/// The names `Driver::load` tries, in order. By name only: the system loader searches its
/// own path (on Linux: RUNPATH, `LD_LIBRARY_PATH`, the ld.so cache, the system folders),
/// never the working directory. `libcuda.so.1` is the driver's soname; `libcuda.so` is
/// usually only a development link, tried second.
#[cfg(not(windows))]
const DRIVER_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];
/// The driver installs `nvcuda.dll` in System32, and only System32 is searched for it (not
/// the application's folder, not the working directory, not `PATH`).
#[cfg(windows)]
const DRIVER_NAMES: &[&str] = &["nvcuda.dll"];

/// Which of the driver's lookup functions a [`Driver`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QueryApi {
    /// `cuGetProcAddress_v2` (drivers of CUDA 12.0 and later): reports a `symbolStatus`.
    GetProcAddressV2,
    /// The 4-argument `cuGetProcAddress` of drivers of CUDA 11.3 to 11.8, which reports no
    /// status: "unknown name" and "version below the first ABI" are both
    /// `CUDA_ERROR_NOT_FOUND`, and come back as [`Error::NotFound`].
    GetProcAddress,
    /// No lookup function (drivers older than CUDA 11.3): each entry is the library's export
    /// of its [`exported`](EntryInfo::exported) name (`cuMemAlloc_v2`, `cuMemcpy_ptds`), which
    /// is the function `cuGetProcAddress` returns for the entry on every driver that has both
    /// (checked entry by entry on NVIDIA's drivers 470 to 580). A name the crate does not know
    /// cannot be looked up this way.
    Exports,
}

impl QueryApi {
    /// The exported name of the function.
    pub fn name(self) -> &'static str {
        match self {
            QueryApi::GetProcAddressV2 => "cuGetProcAddress_v2",
            QueryApi::GetProcAddress => "cuGetProcAddress",
            QueryApi::Exports => EXPORTS_VIA,
        }
    }
}

#[derive(Clone, Copy)]
enum ProcAddress {
    V2(GetProcAddressV2),
    V1(GetProcAddressV1),
    Exports,
}

/// What [`QueryApi::Exports`] lookups name as their `via`.
#[cfg(not(windows))]
pub(crate) const EXPORTS_VIA: &str = "dlsym";
#[cfg(windows)]
pub(crate) const EXPORTS_VIA: &str = "GetProcAddress";

/// Which variants `Driver::newest` (feature `newest`) prefers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefaultStream {
    /// Default-variant ABIs only, looked up with `CU_GET_PROC_ADDRESS_LEGACY_STREAM`.
    Legacy,
    /// For each default ABI, its `_ptds`/`_ptsz` variant first (looked up with
    /// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`), then the ABI itself; symbols with no
    /// per-thread variant behave as with [`Legacy`](DefaultStream::Legacy).
    PerThread,
}

impl DefaultStream {
    /// What `Driver::newest` uses: `PerThread` when the crate's `per-thread-default-stream`
    /// feature is on, as `CUDA_API_PER_THREAD_DEFAULT_STREAM` does for C, otherwise `Legacy`.
    ///
    /// Cargo unifies features: if any crate in a build turns `per-thread-default-stream` on,
    /// it is on for every user of this crate in that build, so a library should not rely
    /// on either value; pass a [`DefaultStream`] to `newest_with` where it matters.
    pub const CONFIGURED: DefaultStream =
        if cfg!(feature = "per-thread-default-stream") { DefaultStream::PerThread } else { DefaultStream::Legacy };
}

/// A loaded CUDA driver, with a cache of the entry points fetched from it.
///
/// Each `Driver` has its own cache: two drivers in one process (a real one and a test
/// double, say) never see each other's pointers. A `Driver` is `Send` and `Sync`; share it
/// by reference or in an `Arc`.
///
/// The library is never unloaded, not even when the `Driver` is dropped: the function
/// pointers handed out are plain `fn` values that outlive it, and libcuda does not support
/// being unloaded from a running process anyway.
pub struct Driver {
    library: String,
    _lib: ManuallyDrop<libloading::Library>,
    proc: ProcAddress,
    version: u32,
    error_name: Option<GetErrorName>,
    cache: Cache,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("library", &self.library)
            .field("version", &self.version)
            .field("query_api", &self.query_api())
            .finish_non_exhaustive()
    }
}

impl Driver {
    /// Loads the driver by name: `libcuda.so.1`, then `libcuda.so` (Linux), or
    /// `nvcuda.dll` from System32 (Windows); never from the working directory.
    ///
    /// It resolves `cuGetProcAddress_v2`, or on drivers of CUDA 11.3 to 11.8 the 4-argument
    /// `cuGetProcAddress` (older drivers have neither: see [`QueryApi::Exports`]), and reads
    /// the driver version once with `cuDriverGetVersion`.
    /// It does not call `cuInit`: loading and looking up need no initialised driver, and
    /// `cuInit` has effects a program should choose (it reads `CUDA_VISIBLE_DEVICES`, takes
    /// time, and fails with `CUDA_ERROR_NO_DEVICE` where lookups would still work). Call it
    /// through `get::<entries::cuInit_v2000>()`.
    pub fn load() -> Result<Driver, Error> {
        let mut tried = Vec::new();
        for name in DRIVER_NAMES {
            match open_by_name(name) {
                Ok(lib) => return Driver::from_library(lib, (*name).to_owned()),
                Err(message) => tried.push(LoadAttempt { name: (*name).to_owned(), message }),
            }
        }
        Err(Error::LibraryNotFound { library: LibraryKind::Driver, tried })
    }

    /// Loads the driver from this file. Give a path with a folder in it
    /// (`./libcuda.so.1`): a bare file name is looked up on the loader's search path, as
    /// [`Driver::load`] does.
    ///
    /// A file is read before it is handed to the loader: one that cannot load in this process
    /// (not a regular file, not an ELF shared library, another processor's or word size's,
    /// truncated, or with a dynamic section that points the loader outside what it maps: the
    /// list is in `library.rs`) is refused with the reason, not loaded.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Driver, Error> {
        let path = path.as_ref();
        let lib = load_path(path, LibraryKind::Driver)?;
        Driver::from_library(lib, path.display().to_string())
    }

    fn from_library(lib: libloading::Library, library: String) -> Result<Driver, Error> {
        // SAFETY: these are the driver's documented exports, and the types are their C
        // prototypes (cuda.h).
        let get_version: Option<DriverGetVersion> = unsafe { exported(&lib, c"cuDriverGetVersion") };
        let exported_version = get_version.map(|f| read_version(f, "cuDriverGetVersion"));
        let proc = if let Some(f) = unsafe { exported::<GetProcAddressV2>(&lib, c"cuGetProcAddress_v2") } {
            ProcAddress::V2(f)
        } else if let Some(f) = unsafe { exported::<GetProcAddressV1>(&lib, c"cuGetProcAddress") } {
            ProcAddress::V1(f)
        } else if get_version.is_none() && unsafe { exported::<*const c_void>(&lib, c"cuInit") }.is_none() {
            // Every CUDA driver there has been exports cuInit: this library is none.
            return Err(Error::NotADriver { library });
        } else if get_version.is_some() {
            // A driver older than CUDA 11.3: its exports are the lookup, under the version rule,
            // which needs the version it exports.
            ProcAddress::Exports
        } else {
            return Err(Error::NoGetProcAddress { library, driver_version: None });
        };
        let error_name = unsafe { exported::<GetErrorName>(&lib, c"cuGetErrorName") };
        let mut driver =
            Driver { library, _lib: ManuallyDrop::new(lib), proc, version: 0, error_name, cache: Cache::new() };
        driver.version = match exported_version {
            Some(Ok(v)) => v,
            Some(Err(detail)) => return Err(Error::VersionUnreadable { library: driver.library, detail }),
            // Every real driver exports it; a wrapper or stub library may not. Then ask the
            // driver itself, at the version of the function's only ABI (CUDA 2.2).
            None => match driver.ask(c"cuDriverGetVersion", 2020, StreamFlags::LEGACY_STREAM, None) {
                Ok((_, Answer::Found(p))) => {
                    // SAFETY: the driver's own cuDriverGetVersion, ABI of version 2020.
                    let f = unsafe { core::mem::transmute::<*mut c_void, DriverGetVersion>(p.as_ptr()) };
                    match read_version(f, "cuDriverGetVersion (through cuGetProcAddress)") {
                        Ok(v) => v,
                        Err(detail) => return Err(Error::VersionUnreadable { library: driver.library, detail }),
                    }
                }
                Ok((via, answer)) => {
                    let detail = format!(
                        "it does not export cuDriverGetVersion, and {via}(\"cuDriverGetVersion\", 2020, ...) answered {answer:?}"
                    );
                    return Err(Error::VersionUnreadable { library: driver.library, detail });
                }
                Err(e) => return Err(Error::VersionUnreadable { library: driver.library, detail: e.to_string() }),
            },
        };
        Ok(driver)
    }

    /// The driver's version, as `cuDriverGetVersion` gave it at load time
    /// (`major*1000 + minor*10`: 12090 is CUDA 12.9).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The name or path the library was loaded from.
    pub fn library(&self) -> &str {
        &self.library
    }

    /// Which lookup function the driver has.
    pub fn query_api(&self) -> QueryApi {
        match self.proc {
            ProcAddress::V2(_) => QueryApi::GetProcAddressV2,
            ProcAddress::V1(_) => QueryApi::GetProcAddress,
            ProcAddress::Exports => QueryApi::Exports,
        }
    }

    /// Fetches one registry entry: `E`'s symbol, at exactly `E`'s version, with `E`'s flag
    /// ([`StreamFlags::LEGACY_STREAM`] for a default-variant entry,
    /// [`StreamFlags::PER_THREAD_DEFAULT_STREAM`] for a `_ptds`/`_ptsz` one). The driver then
    /// returns exactly the ABI `E::Fn` describes.
    ///
    /// An entry newer than the driver is [`Error::DriverTooOld`], decided before the driver is
    /// asked: a driver older than CUDA 13.0 would answer with an older ABI of the symbol, and
    /// calling that through `E::Fn` is undefined behaviour.
    ///
    /// The first call per entry asks the driver; later calls cost one atomic load. There is
    /// no lock: threads that miss at the same time may each ask the driver once (at most one
    /// lookup per such thread), and all get the same pointer, since the driver answers one
    /// request with one function. Failures are not cached.
    #[inline]
    pub fn get<E: Entry>(&self) -> Result<E::Fn, Error> {
        get_entry::<E, _>(self)
    }

    /// The newest ABI of symbol `S` that both this crate and the driver have, as the
    /// symbol's enum (one case per ABI: match it to call the right signature). Needs the
    /// crate's `newest` feature.
    ///
    /// It tries the crate's ABIs from the highest version down, skipping those newer than
    /// the driver, and steps down on [`Error::VersionNotSufficient`] and [`Error::NotFound`];
    /// any other error ends the search. It never asks for a version the crate has no type
    /// for. With the `per-thread-default-stream` feature it prefers the per-thread variants
    /// (see [`DefaultStream`]); [`Driver::newest_with`] chooses explicitly.
    #[cfg(feature = "newest")]
    pub fn newest<S: Symbol>(&self) -> Result<S::Newest, Error> {
        self.newest_with::<S>(DefaultStream::CONFIGURED)
    }

    /// [`Driver::newest`] with an explicit preference between default and per-thread
    /// variants, whatever the crate's features.
    #[cfg(feature = "newest")]
    pub fn newest_with<S: Symbol>(&self, stream: DefaultStream) -> Result<S::Newest, Error> {
        newest_of::<S, _>(self, stream)
    }

    /// Looks up a symbol this crate does not know (one newer than the crate, say), at the
    /// version and with the flags given. Not cached.
    ///
    /// A version above the driver's is refused with [`Error::DriverTooOld`] before the driver
    /// is asked, as for [`Driver::get`]. On a driver without `cuGetProcAddress`
    /// ([`QueryApi::Exports`]) only requests the registry has an entry for can be made.
    ///
    /// # Safety
    /// `F` must be the function pointer type (or `Option` of it) of exactly the ABI the
    /// driver returns for `symbol` at `version`: the version that introduced the prototype
    /// `F` describes. A higher version can return a newer ABI with another signature.
    /// A type `F` that is not pointer-sized is refused with [`Error::InvalidArgument`].
    ///
    /// The program then holds a record that makes `cuda-sys-gen min-driver`'s floor "at least"
    /// (it cannot tell the name or the version); [`get_raw!`](crate::get_raw) fixes both at
    /// compile time and leaves their record instead.
    pub unsafe fn get_raw<F: Copy>(&self, symbol: &CStr, version: u32, flags: StreamFlags) -> Result<F, Error> {
        keep(&RAW_LOOKUP);
        self.raw::<F>(symbol, version, flags)
    }

    /// [`Driver::get_raw`] of the name and version of `record`, which [`get_raw!`](crate::get_raw)
    /// builds at compile time: the program holds that record, and `min-driver` reads it.
    ///
    /// # Safety
    /// As for [`Driver::get_raw`].
    #[doc(hidden)]
    pub unsafe fn get_recorded<F: Copy>(&self, record: &'static EntryRecord) -> Result<F, Error> {
        self.raw::<F>(record.c_symbol(), record.version, StreamFlags(u64::from(record.flags)))
    }

    unsafe fn raw<F: Copy>(&self, symbol: &CStr, version: u32, flags: StreamFlags) -> Result<F, Error> {
        if size_of::<F>() != size_of::<*mut c_void>() {
            return Err(not_a_pointer::<F>(symbol, version, flags, self.query_api().name()));
        }
        // Only a driver without cuGetProcAddress needs the entry's exported name.
        let exported = matches!(self.proc, ProcAddress::Exports)
            .then(|| ENTRIES.iter().find(|e| e.c_symbol == symbol && e.version == version && e.flags == flags))
            .flatten()
            .map(|e| e.exported);
        let p = self.query(symbol, version, flags, exported)?;
        cast::<F>(p).ok_or_else(|| not_a_pointer::<F>(symbol, version, flags, self.query_api().name()))
    }

    /// Any registry entry, by its row, as a plain pointer: the same request and cache as
    /// [`Driver::get`], without a type (and so without a generic function per entry, for
    /// code that walks [`ENTRIES`]). A row that is not one of them is asked for
    /// without the cache. Calling the pointer needs the entry's own type.
    ///
    /// The program then holds a record that makes `cuda-sys-gen min-driver`'s floor "at least":
    /// which rows it is given is known only at run time.
    pub fn resolve(&self, info: &EntryInfo) -> Result<NonNull<c_void>, Error> {
        keep(&RESOLVE_LOOKUP);
        match info.index() {
            Some(index) => fetch(self, index, info.c_symbol, info.version, info.flags),
            None => self.query(info.c_symbol, info.version, info.flags, Some(info.exported)),
        }
    }

    /// Looks entry `E` up and calls it through `call`, as a `Result`: [`Error::Call`] names
    /// the entry's symbol (`cuMemAlloc`) when it returns anything but `CUDA_SUCCESS`.
    /// No function name to type: `driver.call::<entries::cuInit_v2000>(|init| unsafe { init(0) })?`
    /// (the crate docs' "Calls and tables" has a whole example).
    pub fn call<E: Entry>(&self, call: impl FnOnce(E::Fn) -> CUresult) -> Result<(), Error> {
        let f = self.get::<E>()?;
        check(E::INFO.symbol, call(f), |code| self.error_name(code))
    }

    /// `Ok` for `CUDA_SUCCESS`, otherwise [`Error::Call`] naming `function` and the code.
    pub fn check(&self, function: &str, result: CUresult) -> Result<(), Error> {
        check(function, result, |code| self.error_name(code))
    }

    /// The name of a `CUresult` (`CUDA_ERROR_INVALID_VALUE`): the driver's own
    /// `cuGetErrorName` where it has one that knows the code, else the table of the newest
    /// toolkit this crate was generated from.
    pub fn error_name(&self, code: u32) -> Option<String> {
        if let Some(f) = self.error_name {
            let mut s: *const c_char = null();
            // SAFETY: cuGetErrorName either stores a pointer to a static NUL-terminated
            // string or fails; the pointer is checked before it is read.
            let r = unsafe { f(code, &mut s) };
            if r == CUDA_SUCCESS && !s.is_null() {
                return Some(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned());
            }
        }
        crate::codes::result_name(code).map(str::to_owned)
    }

    /// A first lookup's common case: `cuGetProcAddress_v2` answers success (status success
    /// or unwritten) with a function, which is stored in the cache.
    #[inline(never)]
    fn first(&self, index: usize, symbol: &CStr, version: u32, flags: StreamFlags) -> Result<NonNull<c_void>, Miss> {
        // What the version rule refuses is `ask`'s to refuse.
        if self.refuses(version) {
            return Err(Miss::NotAsked);
        }
        let (ProcAddress::V2(f), Ok(v)) = (self.proc, c_int::try_from(version)) else { return Err(Miss::NotAsked) };
        let mut p: *mut c_void = null_mut();
        let mut status = STATUS_UNSET;
        // SAFETY: the driver's cuGetProcAddress_v2; `symbol` is NUL-terminated, the two
        // out-pointers are valid for writes.
        let r = unsafe { f(symbol.as_ptr(), &mut p, v, flags.0, &mut status) };
        if r == CUDA_SUCCESS && (status == STATUS_SUCCESS || status == STATUS_UNSET) {
            if let Some(p) = NonNull::new(p) {
                self.cache.store(index, p);
                return Ok(p);
            }
        }
        Err(Miss::Answered { result: r, status })
    }

    /// Everything [`Driver::first`] leaves: an answer that was not plainly a function (mapped
    /// as [`Driver::ask`] maps it, by the same [`interpret`]), or a request it did not make
    /// (the 4-argument `cuGetProcAddress`, the exports; a version the version rule refuses or
    /// one that does not fit an `int`), handed to [`Driver::ask`], which makes the one or
    /// refuses the other.
    #[cold]
    #[inline(never)]
    fn missed(
        &self,
        index: usize,
        symbol: &CStr,
        version: u32,
        flags: StreamFlags,
        miss: Miss,
    ) -> Result<NonNull<c_void>, Error> {
        let (via, answer) = match miss {
            // `first` returned every non-NULL pointer it may use; what is left is NULL to the
            // mapping.
            Miss::Answered { result, status } => {
                (QueryApi::GetProcAddressV2.name(), interpret(result, Some(status), null_mut(), &DRIVER_STATUS))
            }
            Miss::NotAsked => self.ask(symbol, version, flags, ENTRIES.get(index).map(|e| e.exported))?,
        };
        let p = self.to_result(symbol, version, flags, via, answer)?;
        self.cache.store(index, p);
        Ok(p)
    }

    /// One request to the driver, mapped to a pointer or an error; not cached.
    fn query(
        &self,
        symbol: &CStr,
        version: u32,
        flags: StreamFlags,
        exported: Option<&str>,
    ) -> Result<NonNull<c_void>, Error> {
        let (via, answer) = self.ask(symbol, version, flags, exported)?;
        self.to_result(symbol, version, flags, via, answer)
    }

    /// An answer, given the request's context.
    fn to_result(
        &self,
        symbol: &CStr,
        version: u32,
        flags: StreamFlags,
        via: &'static str,
        answer: Answer,
    ) -> Result<NonNull<c_void>, Error> {
        answer.into_result(self, || Lookup { symbol: symbol.to_string_lossy().into_owned(), version, flags, via })
    }

    /// Calls the driver's lookup function, exactly once, with exactly these arguments; or,
    /// without one, takes the library's export `exported` (the entry's name). What the version
    /// rule refuses is not asked for: [`Answer::TooNew`].
    fn ask(
        &self,
        symbol: &CStr,
        version: u32,
        flags: StreamFlags,
        exported: Option<&str>,
    ) -> Result<(&'static str, Answer), Error> {
        let via = self.query_api().name();
        let invalid = |reason: &str| Error::InvalidArgument {
            lookup: Lookup { symbol: symbol.to_string_lossy().into_owned(), version, flags, via },
            reason: reason.to_owned(),
        };
        let Ok(v) = c_int::try_from(version) else {
            return Err(invalid("the version does not fit the driver's `int` parameter"));
        };
        if self.refuses(version) {
            return Ok((via, Answer::TooNew));
        }
        let mut p: *mut c_void = null_mut();
        let answer = match self.proc {
            ProcAddress::V2(f) => {
                let mut status = STATUS_UNSET;
                // SAFETY: the driver's cuGetProcAddress_v2; `symbol` is NUL-terminated, the
                // two out-pointers are valid for writes.
                let r = unsafe { f(symbol.as_ptr(), &mut p, v, flags.0, &mut status) };
                interpret(r, Some(status), p, &DRIVER_STATUS)
            }
            ProcAddress::V1(f) => {
                // SAFETY: the driver's 4-argument cuGetProcAddress, as above.
                let r = unsafe { f(symbol.as_ptr(), &mut p, v, flags.0) };
                interpret(r, None, p, &DRIVER_STATUS)
            }
            ProcAddress::Exports => {
                let Some(name) = exported else {
                    return Err(invalid(
                        "the driver has no cuGetProcAddress (it is older than CUDA 11.3), and only the entries of this \
                         crate's registry have an exported name to look up instead",
                    ));
                };
                // SAFETY: only the address is read; the entry's type is the caller's.
                match unsafe { self._lib.get::<*mut c_void>(name.as_bytes()) } {
                    Ok(symbol) => interpret(CUDA_SUCCESS, None, *symbol, &DRIVER_STATUS),
                    Err(_) => Answer::NotExported,
                }
            }
        };
        Ok((via, answer))
    }
}

const DRIVER_STATUS: StatusNames = StatusNames {
    version_not_sufficient: "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT",
    not_found: "CUDA_ERROR_NOT_FOUND",
};

/// What [`Driver::first`] hands to [`Driver::missed`]: small enough to come back in registers.
#[derive(Clone, Copy)]
enum Miss {
    /// `cuGetProcAddress_v2` answered, but not plainly with a function.
    Answered { result: c_uint, status: c_uint },
    /// The request is not one `first` makes.
    NotAsked,
}

fn read_version(f: DriverGetVersion, what: &str) -> Result<u32, String> {
    let mut v: c_int = 0;
    // SAFETY: cuDriverGetVersion writes one int.
    let r = unsafe { f(&mut v) };
    if r != CUDA_SUCCESS {
        let name = crate::codes::result_name(r).unwrap_or("an unknown code");
        return Err(format!("{what} failed with {name} ({r})"));
    }
    u32::try_from(v).ok().filter(|&v| v > 0).ok_or_else(|| format!("{what} returned the version {v}"))
}

impl Lookups for Driver {
    const VIA: &'static str = "cuGetProcAddress";

    fn cache(&self) -> &Cache {
        &self.cache
    }

    fn driver_version(&self) -> u32 {
        self.version
    }

    /// A miss calls [`Driver::first`], which handles only the common answer
    /// (`cuGetProcAddress_v2`: success with a function) and returns in registers; every other
    /// answer is mapped out of line by [`Driver::missed`] from what the driver already said, so
    /// that a first lookup runs few instructions of the shim's own.
    #[inline]
    fn miss(&self, index: usize, symbol: &CStr, version: u32, flags: StreamFlags) -> Result<NonNull<c_void>, Error> {
        match self.first(index, symbol, version, flags) {
            Ok(p) => Ok(p),
            Err(miss) => self.missed(index, symbol, version, flags, miss),
        }
    }

    fn failed(&self, lookup: Lookup, code: u32) -> Error {
        Error::Driver { lookup, code, name: self.error_name(code) }
    }
}

// What the driver's and the runtime's lookups share, written once.

/// A library that answers lookups: the [`Driver`], or the runtime (`runtime.rs`). Each says how
/// it asks for an entry it has not cached; the version rule, the cache, `get`, `newest` and
/// the mapping of an answer are the same for both, here.
pub(crate) trait Lookups {
    /// The lookup function a size error of `get` names.
    const VIA: &'static str;

    /// One slot per registry entry.
    fn cache(&self) -> &Cache;

    /// The driver's version as this library knows it: what [`Lookups::refuses`] compares with
    /// (0 while it is being read, or where the runtime cannot tell).
    fn driver_version(&self) -> u32;

    /// Entry `index` (its `symbol`, `version` and `flags`), not in the cache: one request
    /// (unless the version rule refuses it), and the function it answers stored in the cache.
    fn miss(&self, index: usize, symbol: &CStr, version: u32, flags: StreamFlags) -> Result<NonNull<c_void>, Error>;

    /// The error of a result code that no [`Answer`] names.
    fn failed(&self, lookup: Lookup, code: u32) -> Error;

    /// The version rule, in every path (`get`, `resolve`, `call`, `api::`, `entry_table!`,
    /// `get_raw`, `newest`, the runtime's): an entry newer than the driver is refused before the
    /// driver is asked ([`Error::DriverTooOld`]). Drivers before CUDA 13.0, asked for a version
    /// above their own, answer `CUDA_SUCCESS` with the newest ABI they have, an older one than
    /// the entry's type describes (measured on NVIDIA's drivers 470 to 555;
    /// `tests/tests/real_drivers.rs`), and no driver exports an entry above its own version
    /// (418 to 580), so the rule loses nothing. An unknown driver version (0) refuses nothing.
    /// It is the registry's answer rule ([`crate::answer::driver_has`]): refused is what a
    /// driver would not answer with the entry itself.
    #[inline]
    fn refuses(&self, version: u32) -> bool {
        !crate::answer::driver_has(version, self.driver_version())
    }
}

/// The record [`Driver::get_raw`] (and the runtime's) leaves in the program.
pub(crate) static RAW_LOOKUP: EntryRecord = EntryRecord::new(EntryRecord::RUNTIME, "", "get_raw", 0, 0, 0, 0, 0);
/// The record [`Driver::resolve`] leaves in the program.
pub(crate) static RESOLVE_LOOKUP: EntryRecord = EntryRecord::new(EntryRecord::RUNTIME, "", "resolve", 0, 0, 0, 0, 0);

/// Keeps `record` in the program wherever the code that calls this is kept: one volatile
/// load, which no optimiser removes.
#[inline(always)]
pub(crate) fn keep(record: &'static EntryRecord) {
    // SAFETY: a read of a static, through a reference to it.
    let _ = unsafe { core::ptr::read_volatile(&record.layout) };
}

/// Entry `index`: from the cache, or asked for (one request) and stored.
///
/// A hit is one Acquire load at a fixed offset; what a miss calls is the same for every entry.
/// The request comes as values, not as the entry's row: from `get`, they are constants
/// (`E::SYMBOL`, ...), which a row in the registry's static is not to another crate.
#[inline]
pub(crate) fn fetch<L: Lookups>(
    from: &L,
    index: usize,
    symbol: &CStr,
    version: u32,
    flags: StreamFlags,
) -> Result<NonNull<c_void>, Error> {
    if let Some(p) = from.cache().load(index) {
        return Ok(p);
    }
    from.miss(index, symbol, version, flags)
}

/// `get::<E>()` of the driver and of the runtime: entry `E`, through the cache, as `E::Fn`.
#[inline]
pub(crate) fn get_entry<E: Entry, L: Lookups>(from: &L) -> Result<E::Fn, Error> {
    let p = fetch(from, E::INDEX, E::SYMBOL, E::VERSION, E::FLAGS)?;
    // SAFETY: by the `Entry` contract, `E::Fn` is the function pointer type of exactly
    // the ABI the library returns for (SYMBOL, VERSION, FLAGS).
    unsafe { cast::<E::Fn>(p) }.ok_or_else(|| not_a_pointer::<E::Fn>(E::SYMBOL, E::VERSION, E::FLAGS, L::VIA))
}

/// `newest_with::<S>()` of the driver and of the runtime: the first of `S`'s ABIs (in
/// `stream`'s order, those the version rule lets through) found, through the cache.
#[cfg(feature = "newest")]
pub(crate) fn newest_of<S: Symbol, L: Lookups>(from: &L, stream: DefaultStream) -> Result<S::Newest, Error> {
    let cases = <S::Newest as NewestAbi>::CASES;
    // The name given to the driver is the symbol record's, which this keeps in the program.
    let (index, p) = first_found(from, S::NAME, S::RECORD.c_symbol(), cases, stream)?;
    // SAFETY: `p` is the answer to entry `index`'s own request.
    unsafe { S::Newest::from_entry(index, p) }.ok_or_else(|| no_known_abi(from, S::NAME, cases, stream, None))
}

/// The search of `newest_of`, compiled once and not per symbol: `cases` are the symbol's
/// entries in the order of [`Symbol::order`].
#[cfg(feature = "newest")]
fn first_found<L: Lookups>(
    from: &L,
    symbol: &str,
    c_symbol: &CStr,
    cases: &'static [usize],
    stream: DefaultStream,
) -> Result<(usize, NonNull<c_void>), Error> {
    let mut last = None;
    for index in crate::newest::order(cases, stream) {
        let Some(info) = ENTRIES.get(index).filter(|info| !from.refuses(info.version)) else { continue };
        match fetch(from, index, c_symbol, info.version, info.flags) {
            Ok(p) => return Ok((index, p)),
            Err(e) if e.steps_down() => last = Some(Box::new(e)),
            Err(e) => return Err(e),
        }
    }
    Err(no_known_abi(from, symbol, cases, stream, last))
}

/// The error of a search that found nothing: every ABI it asked for failed, the last with
/// `last` (or none could be asked for).
#[cfg(feature = "newest")]
fn no_known_abi<L: Lookups>(
    from: &L,
    symbol: &str,
    cases: &'static [usize],
    stream: DefaultStream,
    last: Option<Box<Error>>,
) -> Error {
    let versions = || crate::newest::order(cases, stream).filter_map(|i| ENTRIES.get(i)).map(|info| info.version);
    let tried = if last.is_some() { versions().filter(|&v| !from.refuses(v)).collect() } else { Vec::new() };
    Error::NoKnownAbi {
        symbol: symbol.to_owned(),
        driver_version: from.driver_version(),
        known: versions().collect(),
        tried,
        last,
    }
}

/// `Ok` for `CUDA_SUCCESS`, otherwise [`Error::Call`]: what `check` of the driver and of the
/// runtime says.
pub(crate) fn check(function: &str, result: CUresult, name: impl FnOnce(u32) -> Option<String>) -> Result<(), Error> {
    if result.0 == CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::Call { function: function.to_owned(), code: result.0, name: name(result.0) })
    }
}

/// What a lookup function answered, before it is given the request's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    Found(NonNull<c_void>),
    SymbolNotFound,
    /// Which answer said so: the status, or `CUDA_ERROR_NOT_FOUND`.
    NotSufficient(&'static str),
    /// `CUDA_ERROR_NOT_FOUND` from a function with no status.
    NotFoundNoStatus,
    /// Refused by the version rule ([`Lookups::refuses`]): not asked for.
    TooNew,
    /// A driver without `cuGetProcAddress` does not export the entry's name.
    NotExported,
    Failed(u32),
    Null,
    UnknownStatus(u32),
}

impl Answer {
    /// The pointer, or the error this answer is for the lookup `lookup` makes (only built
    /// for an error) of `from`: the same for the driver and the runtime, but for a result code
    /// no other case names, which `from` turns into its own error.
    pub(crate) fn into_result(
        self,
        from: &impl Lookups,
        lookup: impl FnOnce() -> Lookup,
    ) -> Result<NonNull<c_void>, Error> {
        let driver_version = from.driver_version();
        Err(match self {
            Answer::Found(p) => return Ok(p),
            Answer::SymbolNotFound => Error::SymbolNotFound { lookup: lookup(), driver_version },
            Answer::NotSufficient(reported) => {
                Error::VersionNotSufficient { lookup: lookup(), driver_version, reported }
            }
            Answer::NotFoundNoStatus => Error::NotFound { lookup: lookup(), driver_version },
            Answer::TooNew => Error::DriverTooOld { lookup: lookup(), driver_version },
            Answer::NotExported => Error::NotExported { lookup: lookup(), driver_version },
            Answer::Failed(code) => from.failed(lookup(), code),
            Answer::Null => Error::NullPointer { lookup: lookup() },
            Answer::UnknownStatus(status) => Error::UnknownStatus { lookup: lookup(), status },
        })
    }
}

/// The names of the status values, which differ between the driver and the runtime.
pub(crate) struct StatusNames {
    pub version_not_sufficient: &'static str,
    pub not_found: &'static str,
}

/// Maps (result, status, pointer) to an answer. `status` is `None` for a function that has
/// none, `Some(STATUS_UNSET)` when the driver did not write it. The status is the more
/// specific report and wins over the result; a pointer is used only with `CUDA_SUCCESS` and
/// a status of success (or none written).
pub(crate) fn interpret(result: c_uint, status: Option<c_uint>, ptr: *mut c_void, names: &StatusNames) -> Answer {
    match status {
        Some(STATUS_SYMBOL_NOT_FOUND) => return Answer::SymbolNotFound,
        Some(STATUS_VERSION_NOT_SUFFICIENT) => return Answer::NotSufficient(names.version_not_sufficient),
        _ => {}
    }
    if result == CUDA_ERROR_NOT_FOUND {
        return if status.is_some() { Answer::NotSufficient(names.not_found) } else { Answer::NotFoundNoStatus };
    }
    if result != CUDA_SUCCESS {
        return Answer::Failed(result);
    }
    if let Some(s) = status.filter(|&s| s != STATUS_SUCCESS && s != STATUS_UNSET) {
        return Answer::UnknownStatus(s);
    }
    match NonNull::new(ptr) {
        Some(p) => Answer::Found(p),
        None => Answer::Null,
    }
}

/// One slot per registry entry, null until the entry is first fetched.
pub(crate) struct Cache {
    // Inline, not boxed: a hit is then one load at a constant offset from the `Driver`.
    slots: [AtomicPtr<c_void>; ENTRY_COUNT],
}

impl Cache {
    pub(crate) fn new() -> Cache {
        Cache { slots: [const { AtomicPtr::new(null_mut()) }; ENTRY_COUNT] }
    }

    /// The cached pointer of entry `index`, if there is one: one Acquire load.
    #[inline]
    pub(crate) fn load(&self, index: usize) -> Option<NonNull<c_void>> {
        NonNull::new(self.slots.get(index)?.load(Ordering::Acquire))
    }

    /// Stores the driver's answer for entry `index`, after a first lookup: no lock and no
    /// read-modify-write. Threads that miss together each ask the driver (at most one lookup
    /// per thread that misses before the first answer is stored); the driver answers the
    /// same request with the same function, so every store writes the same pointer.
    /// Failures store nothing: errors are not cached, and the next caller asks again.
    /// An index out of range stores nothing.
    #[inline]
    pub(crate) fn store(&self, index: usize, p: NonNull<c_void>) {
        if let Some(slot) = self.slots.get(index) {
            slot.store(p.as_ptr(), Ordering::Release);
        }
    }
}

/// A pointer as `F`, if `F` is pointer-sized.
///
/// # Safety
/// `F` must be a function pointer type (or `Option` of one) for the function at `p`.
pub(crate) unsafe fn cast<F: Copy>(p: NonNull<c_void>) -> Option<F> {
    if size_of::<F>() != size_of::<*mut c_void>() {
        return None;
    }
    Some(core::mem::transmute_copy::<*mut c_void, F>(&p.as_ptr()))
}

pub(crate) fn not_a_pointer<F>(symbol: &CStr, version: u32, flags: StreamFlags, via: &'static str) -> Error {
    Error::InvalidArgument {
        lookup: Lookup { symbol: symbol.to_string_lossy().into_owned(), version, flags, via },
        reason: format!(
            "the requested type `{}` has size {}, a function pointer {}: use an `unsafe extern \"system\" fn(..)` type, or an `Option` of one",
            core::any::type_name::<F>(),
            size_of::<F>(),
            size_of::<*mut c_void>()
        ),
    }
}

// Loading a library, the driver or the runtime.

/// An exported function of `lib`, or `None` if it is missing (or, oddly, NULL).
///
/// # Safety
/// `F` must be the function's type.
pub(crate) unsafe fn exported<F: Copy>(lib: &libloading::Library, name: &CStr) -> Option<F> {
    cast::<F>(exported_pointer(lib, name)?)
}

/// [`exported`]'s lookup, once for every `F`: looked up as a plain pointer, because
/// libloading would hand a NULL symbol out as a function value, which is undefined
/// behaviour for `fn` types.
unsafe fn exported_pointer(lib: &libloading::Library, name: &CStr) -> Option<NonNull<c_void>> {
    let symbol = lib.get::<*mut c_void>(name.to_bytes_with_nul()).ok()?;
    NonNull::new(*symbol)
}
