//! What every function of [`api`](crate::api) calls through: one process-wide driver, the
//! code for "nothing to call", and the checks. Hand-written; `api.rs` holds the functions.

use std::sync::OnceLock;

use crate::types::{cudaError_enum, CUresult};
use crate::{Driver, Entry, Error, ENTRIES};

/// What a function of [`api`](crate::api) returns without a driver: the library could not
/// be loaded, or is no working driver. cuda.h's meaning of the code, "initialization has
/// failed", is what happened; [`error_of`] says why.
pub const NO_DRIVER: CUresult = cudaError_enum::CUDA_ERROR_NOT_INITIALIZED;

/// What a function of [`api`](crate::api) returns where the driver is older than the ABI
/// the function calls (or has no ABI of it old enough): "the API call requires a newer CUDA
/// driver than the one currently installed", as cuda.h says of the code.
pub const NEEDS_NEWER_DRIVER: CUresult = cudaError_enum::CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER;

/// What a function of [`api`](crate::api) returns where a driver of its version lacks the
/// function (another platform's, or not in this driver's build): "the attempted operation is
/// not supported on the current system".
pub const NOT_IN_THIS_DRIVER: CUresult = cudaError_enum::CUDA_ERROR_NOT_SUPPORTED;

/// The code a function of [`api`](crate::api) returns for the lookup error `e`: one whose
/// meaning in cuda.h is what happened ([`NO_DRIVER`], [`NEEDS_NEWER_DRIVER`],
/// [`NOT_IN_THIS_DRIVER`]; the driver's own code where `cuGetProcAddress` failed with one;
/// `CUDA_ERROR_UNKNOWN` where the driver's answer made no sense).
pub fn code_of(e: &Error) -> CUresult {
    match e {
        Error::LibraryNotFound { .. }
        | Error::BareName { .. }
        | Error::NotADriver { .. }
        | Error::NoGetProcAddress { .. }
        | Error::VersionUnreadable { .. }
        | Error::ApiDriverSet { .. } => NO_DRIVER,
        Error::DriverTooOld { .. } | Error::VersionNotSufficient { .. } => NEEDS_NEWER_DRIVER,
        Error::SymbolNotFound { .. } | Error::NotFound { .. } | Error::NotExported { .. } => NOT_IN_THIS_DRIVER,
        Error::Driver { code, .. } => cudaError_enum(*code),
        // Answers that make no sense, and errors no lookup of `api` gives: listed, not `_`, so
        // that a new variant needs its code chosen here.
        Error::NullPointer { .. }
        | Error::UnknownStatus { .. }
        | Error::NoKnownAbi { .. }
        | Error::InvalidArgument { .. }
        | Error::Call { .. }
        | Error::MissingEntries { .. }
        | Error::RuntimeTooOld { .. }
        | Error::RuntimeUnready { .. }
        | Error::RuntimeAbiMismatch { .. }
        | Error::Runtime { .. } => cudaError_enum::CUDA_ERROR_UNKNOWN,
    }
}

static DRIVER: OnceLock<Result<Driver, Error>> = OnceLock::new();

/// The process-wide driver [`api`](crate::api) calls through: [`Driver::load`] on first use
/// (or the library [`use_library`] named), then the same driver (or the same error) for the
/// life of the process.
pub fn driver() -> Result<&'static Driver, Error> {
    DRIVER.get_or_init(Driver::load).as_ref().map_err(Clone::clone)
}

/// Points [`api`](crate::api) at the driver library at `path` ([`Driver::from_path`]) instead
/// of the one [`Driver::load`] finds: once, before the first function of `api` (or
/// [`driver`], [`check`], [`error_of`], `cu!`) runs. Returns that driver, or why it could not
/// be loaded (which every later call then reports too). After the process-wide driver is set,
/// it is refused with [`Error::ApiDriverSet`], and the driver in use stays.
///
/// ```no_run
/// use cuda_driver_pfn::{api, cu, Error};
/// fn main() -> Result<(), Error> {
///     api::use_library("/opt/nvidia/lib64/libcuda.so.1")?;
///     unsafe { cu!(cuInit(0))? };
///     Ok(())
/// }
/// ```
pub fn use_library(path: impl AsRef<std::path::Path>) -> Result<&'static Driver, Error> {
    let path = path.as_ref();
    let mut ours = false;
    let set = DRIVER.get_or_init(|| {
        ours = true;
        Driver::from_path(path)
    });
    match set {
        Ok(driver) if ours => Ok(driver),
        Err(e) if ours => Err(e.clone()),
        _ => Err(Error::ApiDriverSet {
            asked: path.display().to_string(),
            in_use: match set {
                Ok(driver) => Ok(driver.library().to_owned()),
                Err(e) => Err(Box::new(e.clone())),
            },
        }),
    }
}

thread_local! {
    /// The code of this thread's last lookup that failed in [`resolve`], for [`unavailable`].
    static LAST_FAILURE: core::cell::Cell<CUresult> = const { core::cell::Cell::new(cudaError_enum::CUDA_ERROR_UNKNOWN) };
}

/// Entry `E` from the process-wide driver; `None` without a driver or without the entry, and
/// then [`unavailable`] is the code to return. The common path (driver loaded, entry cached)
/// is one load of the driver, one of the entry's slot and the call; everything else is out of
/// line in [`first`]. An `Option` with the code kept aside, not a `Result`: a `Result` made
/// `api::cuDriverGetVersion` 1.29x the bare pointer's call instead of 1.07x (`conformance
/// bench` on the GPU machine; docs/gpu-machine-runs.md records the run).
#[inline]
pub(crate) fn resolve<E: Entry>() -> Option<E::Fn> {
    if let Some(Ok(driver)) = DRIVER.get() {
        if let Some(p) = crate::lookup::Lookups::cache(driver).load(E::INDEX) {
            // SAFETY: as in `Driver::get`: by the `Entry` contract `E::Fn` is the type of
            // exactly the ABI stored in entry `E::INDEX`'s slot.
            if let Some(f) = unsafe { crate::lookup::cast::<E::Fn>(p) } {
                return Some(f);
            }
        }
    }
    first::<E>()
}

/// [`resolve`] when the driver is not loaded yet or the entry not cached: load, look up,
/// and keep the code of a failure for [`unavailable`].
#[cold]
#[inline(never)]
fn first<E: Entry>() -> Option<E::Fn> {
    match DRIVER.get_or_init(Driver::load) {
        Ok(driver) => match driver.get::<E>() {
            Ok(f) => Some(f),
            Err(e) => {
                failed(&e);
                None
            }
        },
        Err(e) => {
            failed(e);
            None
        }
    }
}

/// Keeps [`code_of`] `e` for [`unavailable`], off the common path.
#[cold]
#[inline(never)]
fn failed(e: &Error) {
    LAST_FAILURE.with(|c| c.set(code_of(e)));
}

/// The code for the lookup that [`resolve`] just failed on this thread: what a function of
/// [`api`](crate::api) returns instead of calling.
#[cold]
#[inline(never)]
pub(crate) fn unavailable() -> CUresult {
    LAST_FAILURE.with(|c| c.get())
}

/// Why the function `c_name` of [`api`](crate::api) had nothing to call: the error of
/// loading the driver or of looking its entry up. `None` when it resolves, or when the module
/// has no function of that name.
pub fn error_of(c_name: &str) -> Option<Error> {
    error_in(crate::api::C_NAMES, c_name)
}

/// [`error_of`] for the functions of `table` (`api::legacy`'s or `api::ptds`'s).
pub(crate) fn error_in(table: &[(&str, usize)], c_name: &str) -> Option<Error> {
    let &(_, index) = table.iter().find(|(name, _)| *name == c_name)?;
    // Not `resolve`: this only explains an error and hands out no pointer, so it leaves no
    // record that would make every program's floor "at least".
    let info = ENTRIES.get(index)?;
    driver().and_then(|d| crate::lookup::fetch(d, index, info.c_symbol, info.version, info.flags)).err()
}

/// `Ok` for `CUDA_SUCCESS`; where the function `c_name` had nothing to call, why
/// ([`error_of`]); otherwise [`Error::Call`] naming `c_name` and the code. The
/// [`cu!`](crate::cu) macro writes the name for you.
pub fn check(c_name: &str, result: CUresult) -> Result<(), Error> {
    check_in(crate::api::C_NAMES, c_name, result)
}

/// [`check`] for the functions of `table` (`api::legacy`'s or `api::ptds`'s).
pub(crate) fn check_in(table: &[(&str, usize)], c_name: &str, result: CUresult) -> Result<(), Error> {
    // A code the lookup could have given: the lookup's error, where there is one (the driver
    // function itself may return these codes too, and then there is none).
    if result != cudaError_enum::CUDA_SUCCESS {
        if let Some(e) = error_in(table, c_name) {
            return Err(e);
        }
    }
    crate::lookup::check(c_name, result, |code| {
        driver().ok().and_then(|d| d.error_name(code)).or_else(|| crate::codes::result_name(code).map(str::to_owned))
    })
}

/// Calls a function of [`api`](crate::api) by its C name and checks the result:
/// `cu!(cuMemAlloc(&mut dptr, n))?` is
/// `api::check("cuMemAlloc", api::cuMemAlloc(&mut dptr, n))?`. Use it inside `unsafe`, as the
/// function it calls is `unsafe`.
///
/// ```no_run
/// use cuda_driver_pfn::{cu, Error};
/// fn main() -> Result<(), Error> {
///     unsafe { cu!(cuInit(0))? };
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! cu {
    ($name:ident ( $($arg:expr),* $(,)? )) => {
        $crate::api::check(::core::stringify!($name), $crate::api::$name($($arg),*))
    };
}

/// `cu!` with the legacy default stream, whatever the crate's features:
/// `use cuda_driver_pfn::cu_legacy as cu;` chooses it for a module, as C's default
/// does for a translation unit. See [stream mode](crate::api#stream-mode).
#[macro_export]
macro_rules! cu_legacy {
    ($name:ident ( $($arg:expr),* $(,)? )) => {
        $crate::api::legacy::check(::core::stringify!($name), $crate::api::legacy::$name($($arg),*))
    };
}

/// `cu!` with the per-thread default stream, whatever the crate's features:
/// `use cuda_driver_pfn::cu_ptds as cu;` chooses it for a module, as
/// `CUDA_API_PER_THREAD_DEFAULT_STREAM` does for a C translation unit. See
/// [stream mode](crate::api#stream-mode).
#[macro_export]
macro_rules! cu_ptds {
    ($name:ident ( $($arg:expr),* $(,)? )) => {
        $crate::api::ptds::check(::core::stringify!($name), $crate::api::ptds::$name($($arg),*))
    };
}
