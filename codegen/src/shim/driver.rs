//! The lookup shim: load the CUDA driver library at run time, resolve its
//! `cuGetProcAddress`, and fetch each registry entry with exactly its own version and stream
//! flag, cached per [`Driver`].
//!
//! An entry newer than the driver is refused before the driver is asked (`Lookups::refuses`,
//! the one version rule of the driver and the runtime). Drivers older than CUDA 11.3 have no
//! `cuGetProcAddress`: there each entry is the library's export of the entry's name, under the
//! same rule.
//!
//! What the driver's and the runtime's lookups share is written once, in the lookup core
//! (`lookup.rs`): the rule, the cache, `get`, `newest`, and the mapping of an answer to a
//! pointer or an error (`Lookups`, which the [`Driver`] and the runtime implement). Opening the
//! library, and the check of a named file before it is loaded, are `library.rs`'s.
//!
//! Nothing here links libcuda: the library is opened by name when [`Driver::load`] runs,
//! so a program built with this crate starts (and can report a clear error) on a machine
//! without a GPU.

use core::ffi::{c_char, c_int, c_uint, c_void, CStr};
use core::fmt;
use core::mem::{size_of, ManuallyDrop};
use core::ptr::{null, null_mut, NonNull};
use std::path::Path;

use crate::error::{Error, LibraryKind, LoadAttempt, Lookup};
use crate::library::{exported, load_path, open_by_name, opened_file};
pub use crate::lookup::DefaultStream;
use crate::lookup::{
    cast, check, fetch, get_entry, interpret, keep, not_a_pointer, Answer, Cache, Lookups, StatusNames, CUDA_SUCCESS,
    RAW_LOOKUP, RESOLVE_LOOKUP, STATUS_SUCCESS, STATUS_UNSET,
};
#[cfg(feature = "newest")]
use crate::lookup::newest_of;
#[cfg(feature = "newest")]
use crate::newest::Symbol;
use crate::registry::{Entry, EntryInfo, EntryRecord, StreamFlags, ENTRIES};
use crate::types::CUresult;

// The few functions the shim itself needs, declared here and not taken from `pfn`: they are
// resolved by name before there is a cuGetProcAddress to ask, and the shim must build for any
// registry, even one generated from headers that lack these typedefs. `CUresult` and the
// status enum are C enums, passed as `unsigned int`.
type GetProcAddressV2 = unsafe extern "system" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_uint) -> c_uint;
type GetProcAddressV1 = unsafe extern "system" fn(*const c_char, *mut *mut c_void, c_int, u64) -> c_uint;
type DriverGetVersion = unsafe extern "system" fn(*mut c_int) -> c_uint;
type GetErrorName = unsafe extern "system" fn(c_uint, *mut *const c_char) -> c_uint;


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
                Ok(lib) => {
                    // The file the loader found for the name, where it can be told.
                    let file = opened_file(&lib, c"cuDriverGetVersion").or_else(|| opened_file(&lib, c"cuInit"));
                    return Driver::from_library(lib, file.unwrap_or_else(|| (*name).to_owned()));
                }
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

    /// The file the driver was loaded from: the path given to [`Driver::from_path`]; for
    /// [`Driver::load`], the file the system loader found for `libcuda.so.1`
    /// (`/usr/lib/x86_64-linux-gnu/libcuda.so.1`, told by `dladdr` of its `cuDriverGetVersion`),
    /// or the name where that cannot be told (on Windows, `nvcuda.dll`).
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
