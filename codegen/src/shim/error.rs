//! The one error type of the shim. Every lookup failure is a value that says which symbol,
//! which version and which flag were asked for, what the driver answered, and what to do
//! (in the manner of the CUDA programming guide's section 4.20.5).

use core::fmt;

use crate::registry::StreamFlags;

/// Everything that can go wrong while loading the driver or looking an entry point up.
///
/// The variants are the kinds a caller may want to tell apart; the `Display` text of each
/// names the symbol and version and says what to do about it. `Debug` is the variant's name
/// and that text, so that `fn main() -> Result<(), Error>`, which prints an error's `Debug`,
/// says what to do too; match the variants for their fields.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// No library could be loaded: each name (or the path) tried, with the loader's message.
    LibraryNotFound { library: LibraryKind, tried: Vec<LoadAttempt> },
    /// `from_path` was given a bare file name (no folder in it), which the loader looked for
    /// on its search path and did not find, while the current folder has a file of that name:
    /// a bare name never means the current folder (`./libcuda.so.1` does). `message` is the
    /// loader's.
    BareName { library: LibraryKind, name: String, message: String },
    /// The library loaded, but it is no CUDA driver: it exports none of `cuInit`,
    /// `cuDriverGetVersion` and `cuGetProcAddress` (another library under libcuda's name,
    /// a stub, a wrong path).
    NotADriver { library: String },
    /// The library exports neither `cuGetProcAddress_v2` nor `cuGetProcAddress`, nor the
    /// `cuDriverGetVersion` that a driver older than CUDA 11.3 is served through (by its
    /// exports, under the version rule). `driver_version` is always `None` today.
    NoGetProcAddress { library: String, driver_version: Option<u32> },
    /// `cuDriverGetVersion` (or `cudaRuntimeGetVersion`) is missing or failed.
    VersionUnreadable { library: String, detail: String },
    /// `CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`: the driver does not know the name. The text
    /// says which of the reasons the registry points to: the entry point is not on this
    /// platform, the driver is older than the release that added it, or (neither) the
    /// driver should have it; for a name the registry lacks, a misspelling or a newer name.
    SymbolNotFound { lookup: Lookup, driver_version: u32 },
    /// The driver knows the symbol but has no ABI of it at or before the requested version:
    /// `CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT`, or `CUDA_ERROR_NOT_FOUND`, which the
    /// guide (section 4.20.3.1) describes for the same case. `reported` is which of the two.
    VersionNotSufficient { lookup: Lookup, driver_version: u32, reported: &'static str },
    /// `CUDA_ERROR_NOT_FOUND` from the 4-argument `cuGetProcAddress` of drivers 11.3 to 11.8.
    /// Those report no status, so "unknown name" and "version too low" cannot be told apart.
    NotFound { lookup: Lookup, driver_version: u32 },
    /// The requested version is newer than the driver, so the driver was not asked: one older
    /// than CUDA 13.0 would answer `CUDA_SUCCESS` with the newest ABI it has, another ABI than
    /// the one requested (measured on NVIDIA's drivers of CUDA 11.4 to 12.5), and newer ones
    /// answer `CUDA_ERROR_INVALID_VALUE`. [`Error::served_instead`] names the ABI an older
    /// driver would have handed out, where the registry knows it.
    DriverTooOld { lookup: Lookup, driver_version: u32 },
    /// A driver without `cuGetProcAddress` (older than CUDA 11.3, looked up through its
    /// exports) does not export the entry's name.
    NotExported { lookup: Lookup, driver_version: u32 },
    /// Any other `CUresult` from `cuGetProcAddress`, with its name where it could be found
    /// (`cuGetErrorName`, else the crate's table of the newest toolkit's codes).
    Driver { lookup: Lookup, code: u32, name: Option<String> },
    /// `CUDA_SUCCESS` and a `NULL` pointer: no answer a working driver gives (a broken driver,
    /// or a stand-in that is none).
    NullPointer { lookup: Lookup },
    /// A `symbolStatus` value that CUDA did not define when this crate was generated.
    UnknownStatus { lookup: Lookup, status: u32 },
    /// `Driver::newest` (feature `newest`) found none of the ABIs the crate knows.
    /// `known` lists their versions in the order tried, `tried` those not skipped as newer
    /// than the driver, and `last` the last answer that made it step down.
    NoKnownAbi { symbol: String, driver_version: u32, known: Vec<u32>, tried: Vec<u32>, last: Option<Box<Error>> },
    /// A request that cannot be made as given (a raw lookup's type is not pointer-sized, a
    /// version does not fit the driver's `int`).
    InvalidArgument { lookup: Lookup, reason: String },
    /// A driver function called through a pointer from this crate returned an error
    /// ([`Driver::check`](crate::Driver::check)).
    Call { function: String, code: u32, name: Option<String> },
    /// A table of [`entry_table!`](crate::entry_table) could not be loaded: every entry that
    /// failed, each with its own error, so that one run lists them all.
    MissingEntries { table: &'static str, min_driver: u32, errors: Vec<Error> },
    /// The CUDA runtime exports neither `cudaGetDriverEntryPointByVersion` nor
    /// `cudaGetDriverEntryPoint`: it is older than CUDA 11.3.
    RuntimeTooOld { library: String, runtime_version: u32 },
    /// The runtime's `cudaRuntimeGetVersion` failed (`code`, named `name` by the runtime):
    /// measured (docs/cudart-measurements.md), CUDA 11 runtimes do so with no GPU
    /// (`cudaErrorNoDevice`, 100) or with no driver of CUDA 11 or later
    /// (`cudaErrorInsufficientDriver`, 35); 12.x and 13.x runtimes answered in every case.
    RuntimeUnready { library: String, code: u32, name: Option<String> },
    /// The runtime has only `cudaGetDriverEntryPoint`, which asks for the ABI of the
    /// runtime's own version, and the registry cannot prove that this is the requested one.
    /// `picks` is the version the runtime would get, where the registry knows it.
    RuntimeAbiMismatch { lookup: Lookup, runtime_version: u32, picks: Option<u32>, reason: String },
    /// Any other `cudaError_t` from the runtime's entry point functions.
    Runtime { lookup: Lookup, code: u32, name: Option<String> },
    /// `api::use_library` (feature `api`) was called after the process-wide
    /// driver of `api` was set: `asked` is the path it was given, `in_use` the library in use
    /// (or the error of loading it), which stays.
    ApiDriverSet { asked: String, in_use: Result<String, Box<Error>> },
}

/// Which library [`Error::LibraryNotFound`] was about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibraryKind {
    /// `libcuda` / `nvcuda.dll`.
    Driver,
    /// `libcudart` / `cudart64_*.dll`.
    Runtime,
}

/// One attempt to load a library: the name or path given to the loader, and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadAttempt {
    pub name: String,
    pub message: String,
}

/// One request, as it was passed: the symbol, the exact version, the flags, and the
/// function that was asked (`cuGetProcAddress_v2`, `cuGetProcAddress`,
/// `cudaGetDriverEntryPointByVersion`, `cudaGetDriverEntryPoint`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    pub symbol: String,
    pub version: u32,
    pub flags: StreamFlags,
    pub via: &'static str,
}

impl Error {
    /// The request that failed, for the variants that have one.
    pub fn lookup(&self) -> Option<&Lookup> {
        match self {
            Error::SymbolNotFound { lookup, .. }
            | Error::VersionNotSufficient { lookup, .. }
            | Error::NotFound { lookup, .. }
            | Error::DriverTooOld { lookup, .. }
            | Error::NotExported { lookup, .. }
            | Error::Driver { lookup, .. }
            | Error::NullPointer { lookup }
            | Error::UnknownStatus { lookup, .. }
            | Error::InvalidArgument { lookup, .. }
            | Error::RuntimeAbiMismatch { lookup, .. }
            | Error::Runtime { lookup, .. } => Some(lookup),
            _ => None,
        }
    }

    /// For [`Error::DriverTooOld`]: the registry entry of the ABI the driver would have handed
    /// out had it been asked (a driver older than CUDA 13.0 answers with the newest ABI of the
    /// symbol it has, of the same stream variant where there is one), if the registry has one
    /// at or below the driver's version. `None` for other errors.
    pub fn served_instead(&self) -> Option<&'static crate::EntryInfo> {
        let Error::DriverTooOld { lookup, driver_version } = self else { return None };
        served_at(lookup, *driver_version)
    }

    /// The answers on which `Driver::newest` tries an older ABI: the symbol exists, but
    /// not at that version.
    #[cfg(feature = "newest")]
    pub(crate) fn steps_down(&self) -> bool {
        matches!(self, Error::VersionNotSufficient { .. } | Error::NotFound { .. })
    }
}

/// A driver API version (`major*1000 + minor*10`) as people write it: `CUDA 12.9` for 12090.
/// With `{:#}`, the number too: `CUDA 12.9 (12090)`. A number of no such form is shown as
/// `version N`, and 0 as `version unknown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CudaVersion(pub u32);

impl CudaVersion {
    pub const fn major(self) -> u32 {
        self.0 / 1000
    }

    pub const fn minor(self) -> u32 {
        self.0 % 1000 / 10
    }
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            f.write_str("version unknown")
        } else if self.0 % 10 == 0 && self.0 >= 1000 {
            write!(f, "CUDA {}.{}", self.major(), self.minor())?;
            if f.alternate() {
                write!(f, " ({})", self.0)?;
            }
            Ok(())
        } else {
            write!(f, "version {}", self.0)
        }
    }
}

/// The first driver version that refuses a request above its own version with
/// `CUDA_ERROR_INVALID_VALUE` (older ones answer it with an older ABI): the answer rule's.
use crate::answer::FIRST_REFUSING_DRIVER;

/// `CUDA 12.5 (12050)`, for messages.
struct Cuda(u32);

impl fmt::Display for Cuda {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", CudaVersion(self.0))
    }
}

/// The oldest release that a version number belongs to, for "update to ... or newer".
struct Release(u32);

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CUDA {}.{}", self.0 / 1000, self.0 % 1000 / 10)
    }
}

// The helpers below write into the formatter and walk a symbol's rows (`of_symbol`, a
// slice of `ENTRIES`) with plain loops: no `String`s, no iterator adaptors, no
// `str::replace` or `join`. Each of those instantiates std's generic code in this crate, and
// every build of it pays for that code (the text of `Error` was a tenth of the crate's clean
// build, measured with `cargo xtask bench --only compile`: docs/performance.md).

/// The ABI a driver of version `driver` hands out for `lookup`'s symbol and flags where it is
/// asked at its own version: the answer rule's ([`crate::answer::driver_answer`]), which is
/// also what a driver older than CUDA 13.0 answers a request above its version with.
fn served_at(lookup: &Lookup, driver: u32) -> Option<&'static crate::EntryInfo> {
    let version = i32::try_from(driver).unwrap_or(i32::MAX);
    crate::answer::driver_answer(lookup.symbol.as_bytes(), version, lookup.flags.0, driver).entry()
}

/// The registry entry a lookup asks for exactly, if it is one.
#[allow(clippy::manual_find)] // a loop, as the note above says
fn entry_of(lookup: &Lookup) -> Option<&'static crate::EntryInfo> {
    for e in crate::EntryInfo::of_symbol(&lookup.symbol) {
        if e.version == lookup.version && e.flags == lookup.flags {
            return Some(e);
        }
    }
    None
}

/// The oldest version of `symbol` in the registry, if the registry has the symbol.
fn first_version(symbol: &str) -> Option<u32> {
    let mut first: Option<u32> = None;
    for e in crate::EntryInfo::of_symbol(symbol) {
        if first.is_none_or(|v| e.version < v) {
            first = Some(e.version);
        }
    }
    first
}

/// The marker type of an entry: `entries::cuCtxCreate_v11040`.
struct Marker(&'static crate::EntryInfo);

impl fmt::Display for Marker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("entries::")?;
        f.write_str(self.0.pfn.strip_prefix("PFN_").unwrap_or(self.0.pfn))
    }
}

/// The least of `list` (`u32::MAX` for none).
fn least(list: &[u32]) -> u32 {
    let mut m = u32::MAX;
    for &v in list {
        m = m.min(v);
    }
    m
}

/// A pinned toolkit's name split at its dot: `("12", "4")` for `12.4`.
fn toolkit_parts(toolkit: &str) -> Option<(&str, &str)> {
    let dot = toolkit.bytes().position(|b| b == b'.')?;
    Some((&toolkit[..dot], &toolkit[dot + 1..]))
}

/// A run of decimal digits as a number; `None` for anything else.
fn decimal(digits: &str) -> Option<u32> {
    if digits.is_empty() {
        return None;
    }
    let mut n: u32 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u32::from(b - b'0'))?;
    }
    Some(n)
}

/// The newest pinned toolkit no newer than `driver_version`, as `(12040, "12.4")`.
fn toolkit_at(driver_version: u32) -> Option<(u32, &'static str)> {
    let mut best: Option<(u32, &'static str)> = None;
    for t in crate::TOOLKITS.iter() {
        let Some((major, minor)) = toolkit_parts(t) else { continue };
        let (Some(major), Some(minor)) = (decimal(major), decimal(minor)) else { continue };
        let Some(v) = major.checked_mul(1000).and_then(|v| v.checked_add(minor.checked_mul(10)?)) else { continue };
        if v <= driver_version && best.is_none_or(|(b, bt)| (v, *t) >= (b, bt)) {
            best = Some((v, t));
        }
    }
    best
}

/// What the registry says about a symbol the driver does not know: on which platforms the
/// driver has it, and since which version.
fn symbol_not_found(f: &mut fmt::Formatter<'_>, lookup: &Lookup, driver_version: u32) -> fmt::Result {
    write!(
        f,
        "{lookup} found no such symbol (CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND): the driver of {} does not know `{}`. ",
        Cuda(driver_version),
        lookup.symbol
    )?;
    why_missing(f, lookup, driver_version)
}

/// Why a driver lacks a symbol, from the registry: not on this platform, newer than the
/// driver, or (neither) a gap in the driver; for a name the registry lacks, a misspelling
/// or a newer name.
fn why_missing(f: &mut fmt::Formatter<'_>, lookup: &Lookup, driver_version: u32) -> fmt::Result {
    // One pass over the symbol's rows: its first version, whether any is on this platform,
    // whether any is on Windows, the header of the first row, the first architecture named.
    let mut first: Option<u32> = None;
    let (mut here, mut windows) = (false, false);
    let mut header: Option<&'static str> = None;
    let mut arch: Option<&'static str> = None;
    for e in crate::EntryInfo::of_symbol(&lookup.symbol) {
        if first.is_none_or(|v| e.version < v) {
            first = Some(e.version);
        }
        here |= e.platforms.here();
        windows |= e.platforms.windows;
        header = header.or(Some(e.header));
        arch = arch.or(e.platforms.arch);
    }
    let Some(first) = first else {
        // Not in the registry (a raw lookup): a newer name, or a misspelt one.
        if lookup.version > driver_version {
            return write!(f, "The lookup asked for {}, newer than this driver: update the NVIDIA driver to one for {} or newer, or check the spelling (names are case-sensitive)", Cuda(lookup.version), Release(lookup.version));
        }
        return f.write_str("This crate does not know the name either: check the spelling (names are case-sensitive), or it is newer than this driver");
    };
    if !here {
        let on = if windows { "Windows" } else { "Linux" };
        write!(f, "It is not on this platform: `{}` ({}) is an entry point of the {on} driver", lookup.symbol, header.unwrap_or(""))?;
        if let Some(arch) = arch {
            write!(f, " on {arch}")?;
        }
        return f.write_str(" only. Leave it out on this platform");
    }
    if first > driver_version {
        return write!(
            f,
            "It needs a driver of {} or newer (its first ABI is from then); this one is {}. Update the NVIDIA driver, or do without `{}` on older drivers",
            Release(first),
            Cuda(driver_version),
            lookup.symbol
        );
    }
    write!(
        f,
        "This driver should have it: the registry has `{}` since {}, on this platform, and the driver is newer. Treat it as unavailable here, and report it to the cuda-driver-pfn maintainers with the driver version",
        lookup.symbol,
        Cuda(first)
    )
}

impl fmt::Display for Lookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.via == crate::driver::EXPORTS_VIA {
            // A driver without cuGetProcAddress: no request takes a version or a flag there.
            return match entry_of(self) {
                Some(e) => write!(f, "the lookup of `{}` (`{}`, version {}) among the driver's exports", e.exported, self.symbol, self.version),
                None => write!(f, "the lookup of `{}` (version {}) among the driver's exports", self.symbol, self.version),
            };
        }
        write!(f, "{}(\"{}\", {}, {})", self.via, self.symbol, self.version, self.flags)
    }
}

impl fmt::Display for LibraryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LibraryKind::Driver => "the CUDA driver library",
            LibraryKind::Runtime => "the CUDA runtime library",
        })
    }
}

/// A `CUresult` with its name: `CUDA_ERROR_INVALID_VALUE (1)`.
struct CodeName<'a>(u32, &'a Option<String>);

impl fmt::Display for CodeName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "error {} (a code this crate has no name for)", self.0),
        }
    }
}

/// The library the loader could not open while loading `name`, where that is another file:
/// glibc's message for a missing file starts with the name it looked for
/// (`libnvidia-fatbinaryloader.so.418.226.00: cannot open shared object file: ...`).
///
/// Bytes, not `split_once`/`rsplit`: `str`'s patterns bring std's substring and `char` searches
/// along, a tenth of the machine code this crate compiles. Each cut is after an ASCII byte, so a
/// `char` boundary.
fn missing_dependency<'a>(name: &str, message: &'a str) -> Option<&'a str> {
    let m = message.as_bytes();
    let mut colon = 0;
    while m.get(colon..colon + 2)? != b": " {
        colon += 1;
    }
    let (file, rest) = (&message[..colon], &m[colon + 2..]);
    let f = file.as_bytes();
    let mut start = f.len();
    while start > 0 && f[start - 1] != b'/' {
        start -= 1;
    }
    let missing = &file[start..];
    let n = name.as_bytes();
    let mut start = n.len();
    while start > 0 && n[start - 1] != b'/' && n[start - 1] != b'\\' {
        start -= 1;
    }
    let asked = &name[start..];
    (rest.starts_with(b"cannot open shared object file") && !missing.is_empty() && missing != asked).then_some(missing)
}

/// `12050, 11040`: a per-thread variant and its default share a version, shown once.
struct Versions<'a>(&'a [u32]);

impl fmt::Display for Versions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut last: Option<u32> = None;
        for &v in self.0 {
            if last == Some(v) {
                continue;
            }
            if last.is_some() {
                f.write_str(", ")?;
            }
            write!(f, "{v}")?;
            last = Some(v);
        }
        Ok(())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::LibraryNotFound { library, tried } => {
                write!(f, "could not load {library}: tried ")?;
                for (i, t) in tried.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "; " };
                    let name = if t.name.is_empty() { "an empty path" } else { &t.name };
                    write!(f, "{sep}{name} ({})", t.message)?;
                }
                // Driver::from_path: a file was named, so the advice is about that file.
                let mut named = !tried.is_empty();
                for t in tried {
                    named &= t.name.is_empty() || t.name.bytes().any(|b| b == b'/' || b == b'\\');
                }
                // The loader names the file it could not open: where that is not the library
                // asked for, the library was found and one it links against is missing (418's
                // libcuda without its libnvidia-fatbinaryloader), and installing "the driver"
                // again is not the advice.
                if let Some(dependency) = tried.iter().find_map(|t| missing_dependency(&t.name, &t.message)) {
                    return write!(
                        f,
                        ". The loader found the library but not `{dependency}`, a library it needs: install the \
                         driver package that provides `{dependency}` (NVIDIA's driver installs it beside libcuda), or \
                         add the folder that holds it to the loader's search path (ldconfig or LD_LIBRARY_PATH)"
                    );
                }
                match library {
                    LibraryKind::Driver if named => f.write_str(
                        ". Check the path, and that the file is NVIDIA's driver library for this machine: a 64-bit \
                         shared library of this processor (a text file, a 32-bit or a truncated library does not \
                         load). Driver::load finds an installed driver by itself",
                    ),
                    LibraryKind::Driver => f.write_str(
                        ". Install the NVIDIA driver (it provides libcuda.so.1 on Linux and nvcuda.dll in System32 on \
                         Windows); if it is installed where the loader does not look, add that folder to the loader's \
                         search path (ldconfig or LD_LIBRARY_PATH) or pass the library's path to Driver::from_path (for api \
                         and cu!: api::use_library, before the first call)",
                    ),
                    LibraryKind::Runtime => f.write_str(
                        ". Install the CUDA runtime (libcudart from a CUDA toolkit or the nvidia-cuda-runtime wheel) where \
                         the loader finds it, or pass its path to Runtime::from_path; or use Driver::load, which needs \
                         only the driver",
                    ),
                }
            }
            Error::BareName { library, name, message } => write!(
                f,
                "could not load {library}: tried {name} ({message}). A bare file name is searched on the \
                 loader's path (LD_LIBRARY_PATH, the ldconfig cache, the system's library folders), never in the \
                 current folder, where a file of that name is: `./{name}` names that file"
            ),
            Error::NotADriver { library } => write!(
                f,
                "{library} loaded, but it is not a CUDA driver: it exports none of cuInit, cuDriverGetVersion and \
                 cuGetProcAddress. Check which file the loader found (another library installed under libcuda's \
                 name, or a stub from a toolkit's `stubs` folder on the search path), or pass the driver's path to \
                 Driver::from_path (for api and cu!: api::use_library, before the first call)"
            ),
            Error::NoGetProcAddress { library, driver_version } => {
                write!(
                    f,
                    "{library} exports neither cuGetProcAddress_v2 nor cuGetProcAddress, nor cuDriverGetVersion: "
                )?;
                match driver_version {
                    Some(v) => write!(f, "the driver is {}, older than CUDA 11.3", Cuda(*v))?,
                    None => f.write_str("the driver is older than CUDA 11.3, and its version cannot be read")?,
                }
                f.write_str(
                    ". A driver without cuGetProcAddress is served through its exports only where its version is \
                     known (entries newer than the driver must be refused). Update the NVIDIA driver to one for CUDA \
                     11.3 or newer (R465 or later), or check that the library is NVIDIA's libcuda",
                )
            }
            Error::VersionUnreadable { library, detail } => write!(
                f,
                "could not read the version of {library}: {detail}. The library may not be a working CUDA \
                 installation: reinstall it, or check the path that was given"
            ),
            Error::SymbolNotFound { lookup, driver_version } => symbol_not_found(f, lookup, *driver_version),
            Error::VersionNotSufficient { lookup, driver_version, reported } => write!(
                f,
                "{lookup} answered {reported}: the driver of {} knows `{}`, but has no ABI of it at or before version \
                 {}, so the function was introduced after {} (or this old ABI is no longer served). Ask for a version \
                 at or above the one that introduced it: one of this crate's versioned entries for `{}`, or \
                 Driver::newest; the driver itself is recent enough",
                Cuda(*driver_version),
                lookup.symbol,
                lookup.version,
                Release(lookup.version),
                lookup.symbol
            ),
            Error::NotFound { lookup, driver_version } => {
                write!(
                    f,
                    "{lookup} answered CUDA_ERROR_NOT_FOUND: the driver, of {}, has only the 4-argument \
                     cuGetProcAddress of CUDA 11.3 to 11.8, which reports no status. ",
                    Cuda(*driver_version)
                )?;
                match first_version(&lookup.symbol) {
                    // At or above the symbol's first ABI, that ABI exists: the driver lacks the name.
                    Some(first) if lookup.version >= first => {
                        write!(f, "It does not know `{}`. ", lookup.symbol)?;
                        why_missing(f, lookup, *driver_version)
                    }
                    Some(first) => write!(
                        f,
                        "`{}` has no ABI at or before version {}: its first is from {}. Ask for one of this crate's \
                         versioned entries for it, or use Driver::newest",
                        lookup.symbol,
                        lookup.version,
                        Cuda(first)
                    ),
                    None => write!(
                        f,
                        "This crate does not know `{}` either, so the reason is one of two: the driver does not know \
                         the name (check the spelling, or update the NVIDIA driver), or it has no ABI of it at or \
                         before version {} (ask for a later version of it)",
                        lookup.symbol, lookup.version
                    ),
                }
            }
            Error::DriverTooOld { lookup, driver_version } => {
                write!(
                    f,
                    "{lookup} was not made: this ABI of `{}` is from {}, newer than the driver of {}. ",
                    lookup.symbol,
                    Cuda(lookup.version),
                    Cuda(*driver_version)
                )?;
                let instead = served_at(lookup, *driver_version);
                if lookup.via == crate::driver::EXPORTS_VIA {
                    // 450, 460: no cuGetProcAddress, so no request that could be answered wrongly.
                    f.write_str(
                        "This driver has no cuGetProcAddress, and no export of it can be this ABI: each export is \
                         an ABI of the driver's own version or older. ",
                    )?;
                } else if *driver_version < FIRST_REFUSING_DRIVER {
                    // Where the driver has an older ABI, it would have served that one.
                    if let Some(e) = instead {
                        write!(
                            f,
                            "Drivers older than CUDA 13.0 answer such a request with success and the newest ABI they \
                             have (here `{}`, the ABI of {}), not the one asked for: calling that through this \
                             ABI's type would be undefined behaviour. ",
                            e.exported,
                            Cuda(e.version)
                        )?;
                    }
                } else {
                    f.write_str("This driver would refuse the request (CUDA_ERROR_INVALID_VALUE). ")?;
                }
                write!(f, "Update the NVIDIA driver to one for {} or newer", Release(lookup.version))?;
                match instead {
                    Some(e) => {
                        write!(f, ", or use an ABI this driver has: `{}`, or Driver::newest", Marker(e))?;
                        // A port that calls cuda.h's names writes `cu!(...)`: its spelling of that ABI.
                        #[cfg(feature = "api")]
                        if crate::api::C_NAMES.iter().any(|(name, _)| *name == e.exported) {
                            write!(f, " (with `cu!`: `cu!({}(..))`)", e.exported)?;
                        }
                        if let Some((major, minor)) = toolkit_at(*driver_version).and_then(|(_, t)| toolkit_parts(t)) {
                            // The aliases follow the crate's stream mode: a per-thread entry's
                            // alias is the per-thread one only with that feature.
                            let (mode, features) = if lookup.flags == StreamFlags::PER_THREAD_DEFAULT_STREAM {
                                (
                                    " under CUDA_API_PER_THREAD_DEFAULT_STREAM",
                                    "features `aliases` and `per-thread-default-stream`",
                                )
                            } else {
                                ("", "feature `aliases`")
                            };
                            write!(
                                f,
                                ", or the name as CUDA {major}.{minor}'s cuda.h meant it{mode} \
                                 (`aliases::cuda_{major}_{minor}::{}`, {features})",
                                lookup.symbol
                            )?;
                        }
                        Ok(())
                    }
                    None if first_version(&lookup.symbol).is_some() => {
                        write!(f, "; this driver has no ABI of `{}` that this crate knows", lookup.symbol)
                    }
                    None => write!(
                        f,
                        "; this crate does not know `{}` at all: check the spelling (names are case-sensitive)",
                        lookup.symbol
                    ),
                }
            }
            Error::NotExported { lookup, driver_version } => {
                let exported = entry_of(lookup).map_or(lookup.symbol.as_str(), |e| e.exported);
                write!(
                    f,
                    "{lookup} found nothing: the driver of {} has no cuGetProcAddress (it is older than CUDA 11.3), so \
                     each entry is its export of the entry's name, and it does not export `{exported}`. ",
                    Cuda(*driver_version)
                )?;
                why_missing(f, lookup, *driver_version)
            }
            Error::Driver { lookup, code, name } => write!(
                f,
                "{lookup} failed with {}. cuGetProcAddress reports usage errors (an unsupported flag, a bad argument) \
                 this way: check the flags and the version; if the request came from Driver::get, report it to the \
                 cuda-driver-pfn maintainers with the driver version",
                CodeName(*code, name)
            ),
            Error::NullPointer { lookup } => write!(
                f,
                "{lookup} returned CUDA_SUCCESS but a NULL pointer: no answer a working driver gives (one that lacks \
                 `{}` at version {} says so with its status), so this driver is broken. Treat the function as \
                 unavailable, and check that the library is NVIDIA's driver, installed whole (`cuda-sys-gen doctor`, or \
                 the crate's doctor example with the `doctor` feature, lists every answer)",
                lookup.symbol, lookup.version
            ),
            Error::UnknownStatus { lookup, status } => write!(
                f,
                "{lookup} returned symbolStatus {status}, which CUDA did not define when this crate was generated (it \
                 knows 0 to 2); the pointer was not used. The driver is newer than this crate: regenerate or update \
                 cuda-driver-pfn, and report the value"
            ),
            Error::NoKnownAbi { symbol, driver_version, known, tried, last } => {
                write!(
                    f,
                    "no ABI of `{symbol}` that this crate knows is available from the driver of {}: ",
                    Cuda(*driver_version)
                )?;
                if known.is_empty() {
                    f.write_str("the crate knows none")?;
                } else if tried.is_empty() {
                    write!(
                        f,
                        "the crate knows versions {}, all newer than the driver. Update the NVIDIA driver to one for {} \
                         or newer",
                        Versions(known),
                        Release(least(known))
                    )?;
                } else {
                    write!(
                        f,
                        "the crate knows versions {}, and the driver had none of {}",
                        Versions(known),
                        Versions(tried)
                    )?;
                    if let Some(last) = last {
                        write!(f, " (last answer: {last})")?;
                    }
                    f.write_str(". Update the NVIDIA driver, or look the symbol up with Driver::get_raw")?;
                }
                Ok(())
            }
            Error::InvalidArgument { lookup, reason } => write!(f, "{lookup} was not made: {reason}"),
            Error::Call { function, code, name } => {
                write!(f, "{function} failed with {}", CodeName(*code, name))?;
                // cuda.h's own words for the code, as cuGetErrorString would give them.
                match crate::codes::result_description(*code) {
                    Some(text) => write!(f, ": {text}"),
                    None => Ok(()),
                }
            }
            Error::MissingEntries { table, min_driver, errors } => {
                write!(
                    f,
                    "{table}: {} of its entries could not be loaded (its newest entry is from {}):",
                    errors.len(),
                    Cuda(*min_driver)
                )?;
                for e in errors {
                    write!(f, "\n  - {e}")?;
                }
                Ok(())
            }
            Error::RuntimeUnready { library, code, name } => write!(
                f,
                "{library} cannot say its version: cudaRuntimeGetVersion failed with {}",
                RuntimeCode(*code, name.as_deref())
            ),
            Error::RuntimeTooOld { library, runtime_version } => write!(
                f,
                "{library}, of {}, exports neither cudaGetDriverEntryPointByVersion nor cudaGetDriverEntryPoint: the \
                 runtime is older than CUDA 11.3. Use Driver::load, which needs only the driver, or a CUDA runtime of \
                 12.5 or newer",
                Cuda(*runtime_version)
            ),
            Error::RuntimeAbiMismatch { lookup, runtime_version, picks, reason } => {
                write!(
                    f,
                    "`{}` version {} was not requested from the CUDA runtime of {}: it has no \
                     cudaGetDriverEntryPointByVersion (added in CUDA 12.5), and its cudaGetDriverEntryPoint asks the \
                     driver for the ABI of the runtime's own version, ",
                    lookup.symbol,
                    lookup.version,
                    Cuda(*runtime_version)
                )?;
                match picks {
                    Some(p) => write!(f, "which for `{}` is version {p}, not {}", lookup.symbol, lookup.version)?,
                    None => write!(f, "which this crate cannot prove to be version {}", lookup.version)?,
                }
                write!(
                    f,
                    " ({reason}). Calling it through this type would be undefined behaviour (the CUDA guide, section \
                     4.20.4.4). Use Driver::load (cuGetProcAddress with the exact version), or a runtime of CUDA 12.5 \
                     or newer"
                )
            }
            Error::ApiDriverSet { asked, in_use } => {
                write!(f, "api::use_library(\"{asked}\") came after the process-wide driver of api was set: ")?;
                match in_use {
                    Ok(library) => write!(f, "api calls {library}, and keeps it")?,
                    Err(e) => write!(f, "loading it failed, and api keeps that error ({e})")?,
                }
                f.write_str(
                    ". Call api::use_library once, before the first function of api, cu!, api::driver, api::check \
                     or api::error_of; or use Driver::from_path for a driver of your own",
                )
            }
            Error::Runtime { lookup, code, name } => {
                write!(f, "{lookup} failed with {}", RuntimeCode(*code, name.as_deref()))
            }
        }
    }
}

impl Error {
    /// The variant's name, as `Debug` begins.
    fn variant(&self) -> &'static str {
        match self {
            Error::LibraryNotFound { .. } => "LibraryNotFound",
            Error::BareName { .. } => "BareName",
            Error::NotADriver { .. } => "NotADriver",
            Error::NoGetProcAddress { .. } => "NoGetProcAddress",
            Error::VersionUnreadable { .. } => "VersionUnreadable",
            Error::SymbolNotFound { .. } => "SymbolNotFound",
            Error::VersionNotSufficient { .. } => "VersionNotSufficient",
            Error::NotFound { .. } => "NotFound",
            Error::DriverTooOld { .. } => "DriverTooOld",
            Error::NotExported { .. } => "NotExported",
            Error::Driver { .. } => "Driver",
            Error::NullPointer { .. } => "NullPointer",
            Error::UnknownStatus { .. } => "UnknownStatus",
            Error::NoKnownAbi { .. } => "NoKnownAbi",
            Error::InvalidArgument { .. } => "InvalidArgument",
            Error::Call { .. } => "Call",
            Error::MissingEntries { .. } => "MissingEntries",
            Error::RuntimeTooOld { .. } => "RuntimeTooOld",
            Error::RuntimeUnready { .. } => "RuntimeUnready",
            Error::RuntimeAbiMismatch { .. } => "RuntimeAbiMismatch",
            Error::Runtime { .. } => "Runtime",
            Error::ApiDriverSet { .. } => "ApiDriverSet",
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {self}", self.variant())
    }
}

impl std::error::Error for Error {}

/// A `cudaError_t` of the runtime's, named, with what it means where that was measured
/// (docs/cudart-measurements.md: NVIDIA's libcudart 11.7 to 13.5 with the drivers of CUDA
/// 10.1 to 12.5, and none, on a machine without a GPU), else the usage-error reading.
struct RuntimeCode<'a>(u32, Option<&'a str>);

impl fmt::Display for RuntimeCode<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = self.0;
        match self.1 {
            Some(n) => write!(f, "{n} ({code})")?,
            None => write!(f, "cudaError_t {code}")?,
        }
        f.write_str(match code {
            35 => ": there is no NVIDIA driver, or its CUDA version is older than this runtime's (a CUDA 11 \
                   runtime answers so with no libcuda or a driver before CUDA 11.0; every runtime's entry point lookup \
                   when the driver's CUDA major version is below its own). Install a driver of at least the runtime's \
                   major version, or use Driver::load, which needs no runtime",
            100 => ": the driver sees no CUDA device (with no GPU, a CUDA 11 runtime cannot even say its \
                    version, and every runtime's entry point lookup fails so). Run where a GPU is visible (check \
                    CUDA_VISIBLE_DEVICES and that NVIDIA's kernel module is loaded), or use Driver::load, whose lookups \
                    need no device",
            _ => ": check the flags and the version; the CUDA runtime reports usage errors this way",
        })
    }
}
