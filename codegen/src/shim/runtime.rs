//! The CUDA runtime path (cargo feature `runtime`): the same typed, exact-version lookups,
//! asked of `libcudart` instead of the driver, for programs that already use the runtime.
//!
//! `cudaGetDriverEntryPointByVersion` (runtime 12.5 and later) takes the version, and is
//! used whenever the runtime exports it; it is resolved at run time, so an older runtime is
//! no link error. The older `cudaGetDriverEntryPoint` takes no version: it asks the driver
//! for the ABI of the *runtime's* own version. It is used only when the registry proves
//! that this is exactly the requested entry; otherwise the lookup fails with
//! [`Error::RuntimeAbiMismatch`] rather than hand out a pointer of another ABI.

use core::ffi::{c_char, c_int, c_uint, c_void, CStr};
use core::fmt;
use core::mem::ManuallyDrop;
use core::ptr::{null_mut, NonNull};
use std::path::Path;

use crate::error::{Error, LibraryKind, LoadAttempt, Lookup};
use crate::library::{exported, load_path, open_path};
use crate::lookup::{
    cast, get_entry, interpret, keep, not_a_pointer, Answer, Cache, Lookups, StatusNames, CUDA_SUCCESS, RAW_LOOKUP,
    STATUS_UNSET,
};
#[cfg(feature = "newest")]
use crate::lookup::{newest_of, DefaultStream};
#[cfg(feature = "newest")]
use crate::newest::Symbol;
use crate::registry::{Entry, EntryInfo, StreamFlags, ENTRIES, TOOLKITS};
use crate::types::CUresult;

type ByVersion = unsafe extern "system" fn(*const c_char, *mut *mut c_void, c_uint, u64, *mut c_uint) -> c_uint;
// Runtimes of 11.3 to 11.8 declare it without the last parameter; in the C calling
// conventions Rust supports, the extra argument is ignored by such a callee, and the status
// then stays unset.
type EntryPoint = unsafe extern "system" fn(*const c_char, *mut *mut c_void, u64, *mut c_uint) -> c_uint;
// `cudaRuntimeGetVersion`; `cudaDriverGetVersion` has the same prototype.
type RuntimeGetVersion = unsafe extern "system" fn(*mut c_int) -> c_uint;
type GetErrorName = unsafe extern "system" fn(c_uint) -> *const c_char;

/// The sonames of CUDA 13, 12 and 11, newest first. By name only, like the driver.
#[cfg(not(windows))]
const RUNTIME_NAMES: &[&str] = &["libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"];
/// Searched in the application's folder, System32 and folders added with
/// `AddDllDirectory`; not the working directory and not `PATH` (use
/// [`Runtime::from_path`] for a toolkit's `bin` folder).
#[cfg(windows)]
const RUNTIME_NAMES: &[&str] = &["cudart64_13.dll", "cudart64_12.dll", "cudart64_110.dll"];

const RUNTIME_STATUS: StatusNames = StatusNames {
    version_not_sufficient: "cudaDriverEntryPointVersionNotSufficent", /* sic: NVIDIA's spelling */
    not_found: "cudaErrorSymbolNotFound",
};

/// A loaded CUDA runtime library, with its own cache of entry points.
pub struct Runtime {
    library: String,
    _lib: ManuallyDrop<libloading::Library>,
    version: u32,
    /// What the runtime's `cudaDriverGetVersion` said, for messages; 0 if unknown.
    driver_version: u32,
    by_version: Option<ByVersion>,
    entry_point: Option<EntryPoint>,
    error_name: Option<GetErrorName>,
    cache: Cache,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("library", &self.library)
            .field("version", &self.version)
            .field("driver_version", &self.driver_version)
            .field("by_version", &self.by_version.is_some())
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Finds the CUDA runtime where users have it, the first that loads: by soname
    /// (`libcudart.so.13`, `.12`, `.11.0`; `cudart64_13.dll`, `_12`, `_110` on Windows) on
    /// the loader's path; then in `$CUDA_HOME`, `$CUDA_PATH` and `/usr/local/cuda` (`lib64`,
    /// `lib`; `bin` on Windows); then in a pip install of the `nvidia-cuda-runtime` wheels
    /// (`site-packages/nvidia/cu13/lib`, `nvidia/cuda_runtime/lib`, in `$VIRTUAL_ENV`,
    /// `$CONDA_PREFIX`, the user's and the system's Python). Reads its version with
    /// `cudaRuntimeGetVersion`. Like the driver, it is never unloaded. The error lists every
    /// place tried.
    pub fn load() -> Result<Runtime, Error> {
        let mut tried = Vec::new();
        for name in RUNTIME_NAMES {
            match open_by_name_runtime(name) {
                Ok(lib) => return Runtime::from_library(lib, (*name).to_owned()),
                Err(message) => tried.push(LoadAttempt { name: (*name).to_owned(), message }),
            }
        }
        for path in runtime_paths() {
            if !path.is_file() {
                continue;
            }
            match open_path(&path) {
                Ok(lib) => return Runtime::from_library(lib, path.display().to_string()),
                Err(message) => tried.push(LoadAttempt { name: path.display().to_string(), message }),
            }
        }
        if tried.len() == RUNTIME_NAMES.len() {
            let looked =
                "no libcudart in $CUDA_HOME, $CUDA_PATH, /usr/local/cuda or a pip install of nvidia-cuda-runtime";
            tried.push(LoadAttempt { name: "(toolkit and pip folders)".into(), message: looked.into() });
        }
        Err(Error::LibraryNotFound { library: LibraryKind::Runtime, tried })
    }

    /// Loads the runtime from this file (give a path with a folder in it).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Runtime, Error> {
        let path = path.as_ref();
        let lib = load_path(path, LibraryKind::Runtime)?;
        Runtime::from_library(lib, path.display().to_string())
    }

    fn from_library(lib: libloading::Library, library: String) -> Result<Runtime, Error> {
        // SAFETY: the runtime's documented exports, with their C prototypes
        // (cuda_runtime_api.h).
        let Some(get_version) = (unsafe { exported::<RuntimeGetVersion>(&lib, c"cudaRuntimeGetVersion") }) else {
            return Err(Error::VersionUnreadable {
                library,
                detail: "it does not export cudaRuntimeGetVersion".into(),
            });
        };
        let error_name = unsafe { exported::<GetErrorName>(&lib, c"cudaGetErrorName") };
        let mut v: c_int = 0;
        // SAFETY: writes one int.
        let r = unsafe { get_version(&mut v) };
        if r != CUDA_SUCCESS {
            let name = error_name.and_then(|f| error_name_of(f, r));
            return Err(Error::RuntimeUnready { library, code: r, name });
        }
        let version = match u32::try_from(v) {
            Ok(v) if v > 0 => v,
            _ => {
                let detail = format!("cudaRuntimeGetVersion returned {r} and the version {v}");
                return Err(Error::VersionUnreadable { library, detail });
            }
        };
        // Only for messages: 0 (unknown) if it is missing or fails (it reports 0 itself
        // when no driver is installed).
        let driver_version = unsafe { exported::<RuntimeGetVersion>(&lib, c"cudaDriverGetVersion") }
            .and_then(|f| {
                let mut v: c_int = 0;
                // SAFETY: writes one int.
                let r = unsafe { f(&mut v) };
                (r == CUDA_SUCCESS).then(|| u32::try_from(v).ok()).flatten()
            })
            .unwrap_or(0);
        let by_version = unsafe { exported::<ByVersion>(&lib, c"cudaGetDriverEntryPointByVersion") };
        let entry_point = unsafe { exported::<EntryPoint>(&lib, c"cudaGetDriverEntryPoint") };
        if by_version.is_none() && entry_point.is_none() {
            return Err(Error::RuntimeTooOld { library, runtime_version: version });
        }
        Ok(Runtime {
            library,
            _lib: ManuallyDrop::new(lib),
            version,
            driver_version,
            by_version,
            entry_point,
            error_name,
            cache: Cache::new(),
        })
    }

    /// The runtime's version (`cudaRuntimeGetVersion`).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The driver's version as the runtime reports it (`cudaDriverGetVersion`): 0 when no
    /// driver is installed or the runtime could not tell.
    pub fn driver_version(&self) -> u32 {
        self.driver_version
    }

    /// The name or path the library was loaded from.
    pub fn library(&self) -> &str {
        &self.library
    }

    /// Whether the runtime has `cudaGetDriverEntryPointByVersion`, so that every entry can
    /// be asked for at its own version.
    pub fn has_by_version(&self) -> bool {
        self.by_version.is_some()
    }

    // `get`, `newest` and `newest_with` are the driver's, through the one lookup core:
    // `lookup::get_entry` says why each type keeps its own.

    /// Fetches one registry entry through the runtime, with exactly `E`'s version and flag
    /// (the runtime's `cudaEnableLegacyStream` and `cudaEnablePerThreadDefaultStream` have
    /// the driver flags' values). Cached per `Runtime` as [`Driver::get`](crate::Driver::get) is.
    pub fn get<E: Entry>(&self) -> Result<E::Fn, Error> {
        get_entry::<E, _>(self)
    }

    /// [`Driver::newest`](crate::Driver::newest), through the runtime (feature `newest`):
    /// ABIs newer than the driver the runtime reports are skipped (the version rule).
    #[cfg(feature = "newest")]
    pub fn newest<S: Symbol>(&self) -> Result<S::Newest, Error> {
        self.newest_with::<S>(DefaultStream::CONFIGURED)
    }

    /// [`Driver::newest_with`](crate::Driver::newest_with), through the runtime.
    #[cfg(feature = "newest")]
    pub fn newest_with<S: Symbol>(&self, stream: DefaultStream) -> Result<S::Newest, Error> {
        newest_of::<S, _>(self, stream)
    }

    /// [`Driver::get_raw`](crate::Driver::get_raw), through the runtime: only with
    /// `cudaGetDriverEntryPointByVersion` (runtime 12.5 and later), the one that takes a
    /// version. Not cached.
    ///
    /// # Safety
    /// As for `Driver::get_raw`: `F` must be exactly the ABI introduced at `version`.
    pub unsafe fn get_raw<F: Copy>(&self, symbol: &CStr, version: u32, flags: StreamFlags) -> Result<F, Error> {
        keep(&RAW_LOOKUP);
        let via = "cudaGetDriverEntryPointByVersion";
        let request = || Lookup { symbol: symbol.to_string_lossy().into_owned(), version, flags, via };
        let answer = if self.refuses(version) {
            Answer::TooNew
        } else if let Some(f) = self.by_version {
            let mut p: *mut c_void = null_mut();
            let mut status = STATUS_UNSET;
            // SAFETY: the runtime's cudaGetDriverEntryPointByVersion; valid out-pointers.
            let r = f(symbol.as_ptr(), &mut p, version, flags.0, &mut status);
            interpret(r, Some(status), p, &RUNTIME_STATUS)
        } else {
            let reason =
                "a raw lookup needs the version-taking function, and there is no registry entry to prove the ABI"
                    .to_owned();
            return Err(Error::RuntimeAbiMismatch {
                lookup: request(),
                runtime_version: self.version,
                picks: None,
                reason,
            });
        };
        let p = answer.into_result(self, request)?;
        cast::<F>(p).ok_or_else(|| not_a_pointer::<F>(symbol, version, flags, via))
    }

    /// `Ok` for `CUDA_SUCCESS`, otherwise [`Error::Call`]: for the results of driver
    /// functions called through pointers from this runtime (they return `CUresult`).
    pub fn check(&self, function: &str, result: CUresult) -> Result<(), Error> {
        crate::lookup::check(function, result, |code| self.error_name(code))
    }

    /// The name of a `CUresult` (`CUDA_ERROR_INVALID_VALUE`), from the crate's table of the
    /// newest toolkit's codes: what driver functions called through this runtime return.
    pub fn error_name(&self, code: u32) -> Option<String> {
        crate::codes::result_name(code).map(str::to_owned)
    }

    /// One request for entry `info`, mapped to a pointer or an error; not cached.
    fn query(&self, info: &EntryInfo, symbol: &CStr) -> Result<NonNull<c_void>, Error> {
        if self.refuses(info.version) {
            let via =
                if self.by_version.is_some() { "cudaGetDriverEntryPointByVersion" } else { "cudaGetDriverEntryPoint" };
            return Answer::TooNew.into_result(self, || lookup(info, via));
        }
        let mut p: *mut c_void = null_mut();
        let mut status = STATUS_UNSET;
        let (via, r) = if let Some(f) = self.by_version {
            // SAFETY: the runtime's cudaGetDriverEntryPointByVersion; valid out-pointers.
            ("cudaGetDriverEntryPointByVersion", unsafe {
                f(symbol.as_ptr(), &mut p, info.version, info.flags.0, &mut status)
            })
        } else if let Some(f) = self.entry_point {
            let lookup = lookup(info, "cudaGetDriverEntryPoint");
            entry_point_picks(info, self.version).map_err(|(picks, reason)| Error::RuntimeAbiMismatch {
                lookup,
                runtime_version: self.version,
                picks,
                reason,
            })?;
            // SAFETY: as above; the registry proved the ABI it returns is `info`'s.
            ("cudaGetDriverEntryPoint", unsafe { f(symbol.as_ptr(), &mut p, info.flags.0, &mut status) })
        } else {
            return Err(Error::RuntimeTooOld { library: self.library.clone(), runtime_version: self.version });
        };
        interpret(r, Some(status), p, &RUNTIME_STATUS).into_result(self, || lookup(info, via))
    }

    /// The runtime's own name of a `cudaError_t` (`cudaGetErrorName`).
    fn runtime_error_name(&self, code: u32) -> Option<String> {
        error_name_of(self.error_name?, code)
    }
}

/// The runtime's name for `code` (`cudaErrorNoDevice`), through its `cudaGetErrorName`.
fn error_name_of(f: GetErrorName, code: u32) -> Option<String> {
    // SAFETY: cudaGetErrorName returns a static NUL-terminated string (or NULL).
    let s = unsafe { f(code) };
    (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
}

/// The runtime passes each request on to the driver, so the version rule compares with the
/// driver's version as the runtime reports it.
impl Lookups for Runtime {
    const VIA: &'static str = "cudaGetDriverEntryPoint";

    fn cache(&self) -> &Cache {
        &self.cache
    }

    fn driver_version(&self) -> u32 {
        self.driver_version
    }

    fn miss(&self, index: usize, symbol: &CStr, version: u32, flags: StreamFlags) -> Result<NonNull<c_void>, Error> {
        // Only registry entries come here (`E::INDEX`, `newest`'s candidates): their rows say
        // what the request alone does not (the variant and typedef `entry_point_picks` needs).
        let Some(info) = ENTRIES.get(index) else {
            return Err(Error::InvalidArgument {
                lookup: Lookup { symbol: symbol.to_string_lossy().into_owned(), version, flags, via: Self::VIA },
                reason: format!("{index} is not the index of an entry of this crate's registry"),
            });
        };
        // The name is the entry record's (`E::SYMBOL`), which this keeps in the program.
        let p = self.query(info, symbol)?;
        self.cache.store(index, p);
        Ok(p)
    }

    fn failed(&self, lookup: Lookup, code: u32) -> Error {
        Error::Runtime { name: self.runtime_error_name(code), lookup, code }
    }
}

fn lookup(info: &EntryInfo, via: &'static str) -> Lookup {
    Lookup { symbol: info.symbol.to_owned(), version: info.version, flags: info.flags, via }
}

/// Where [`Runtime::load`] looks after the loader's own path: the toolkit folders, then pip's.
fn runtime_paths() -> Vec<std::path::PathBuf> {
    use std::path::PathBuf;
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"].iter().filter_map(|k| env(k)).collect();
    if cfg!(not(windows)) {
        roots.push(PathBuf::from("/usr/local/cuda"));
    }
    let lib_dirs: &[&str] = if cfg!(windows) {
        &["bin", "bin/x64"]
    } else {
        &["lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"]
    };
    let mut out = Vec::new();
    for root in &roots {
        for dir in lib_dirs {
            out.extend(RUNTIME_NAMES.iter().map(|n| root.join(dir).join(n)));
        }
    }
    // pip: `nvidia/cu13/lib` (13.x wheels) and `nvidia/cuda_runtime/lib` (11.x, 12.x).
    let mut sites: Vec<PathBuf> = Vec::new();
    let mut pythons: Vec<PathBuf> =
        ["VIRTUAL_ENV", "CONDA_PREFIX"].iter().filter_map(|k| env(k)).map(|p| p.join("lib")).collect();
    if let Some(home) = env("HOME") {
        pythons.push(home.join(".local/lib"));
    }
    pythons.extend(["/usr/local/lib", "/usr/lib"].map(PathBuf::from));
    for lib in pythons {
        let Ok(rd) = std::fs::read_dir(&lib) else { continue };
        let mut found: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("python3")))
            .collect();
        found.sort();
        for py in found.into_iter().rev() {
            sites.push(py.join("site-packages"));
            sites.push(py.join("dist-packages"));
        }
    }
    sites.push(PathBuf::from("/usr/lib/python3/dist-packages"));
    for site in sites {
        for dir in ["nvidia/cu13/lib", "nvidia/cuda_runtime/lib"] {
            out.extend(RUNTIME_NAMES.iter().map(|n| site.join(dir).join(n)));
        }
    }
    out
}

/// `major*1000 + minor*10` of a `"12.9"`-style toolkit name.
fn parse_toolkit(t: &str) -> Option<u32> {
    let (major, minor) = t.split_once('.')?;
    Some(major.parse::<u32>().ok()?.checked_mul(1000)? + minor.parse::<u32>().ok()?.checked_mul(10)?)
}

/// Whether `cudaGetDriverEntryPoint` of a runtime of `runtime_version` returns exactly
/// `info`'s ABI. It asks the driver for the newest ABI at or below the runtime's version
/// (per-thread variants included with the per-thread flag, preferred at the same version),
/// so the registry proves it when `info` is that newest ABI and the runtime is no newer than
/// the newest toolkit the crate knows (a newer one may have ABIs the crate has never seen).
/// Otherwise: the version the runtime would pick, if known, and why it is no proof.
pub(crate) fn entry_point_picks(info: &EntryInfo, runtime_version: u32) -> Result<(), (Option<u32>, String)> {
    let per_thread = info.variant.is_some();
    let picks = ENTRIES
        .iter()
        .filter(|e| e.symbol == info.symbol && e.version <= runtime_version && (per_thread || e.variant.is_none()))
        .max_by_key(|e| (e.version, e.variant.is_some()));
    let newest = TOOLKITS.last().and_then(|t| parse_toolkit(t));
    match newest {
        Some(n) if runtime_version <= n => {}
        _ => {
            let known = TOOLKITS.last().copied().unwrap_or("none");
            return Err((None, format!("the runtime is newer than CUDA {known}, the newest toolkit this crate was generated from, so it may pick an ABI the crate does not know")));
        }
    }
    match picks {
        Some(p) if p.pfn == info.pfn => Ok(()),
        Some(p) => Err((Some(p.version), format!("the runtime would return {}", p.pfn))),
        None => Err((None, format!("the runtime's version is below every ABI of `{}` this crate knows", info.symbol))),
    }
}

#[cfg(not(windows))]
fn open_by_name_runtime(name: &str) -> Result<libloading::Library, String> {
    // SAFETY: loading runs libcudart's initialisers, which are safe in any process.
    unsafe { libloading::Library::new(name) }.map_err(|e| e.to_string())
}

#[cfg(windows)]
fn open_by_name_runtime(name: &str) -> Result<libloading::Library, String> {
    use libloading::os::windows::{Library, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS};
    // SAFETY: as above. The default safe folders only: never the working directory.
    unsafe { Library::load_with_flags(name, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS) }
        .map(Into::into)
        .map_err(|e| e.to_string())
}
