//! What every function of [`api`](crate::api) calls through: one process-wide driver, the
//! code for "nothing to call", and the checks. Hand-written; `api.rs` holds the functions.

use std::sync::OnceLock;

use crate::types::{cudaError_enum, CUresult};
use crate::{Driver, Entry, Error, ENTRIES};

/// What a function of [`api`](crate::api) returns when it has no driver function to call:
/// `CUDA_ERROR_STUB_LIBRARY`, which a real driver's functions never return (the toolkit's
/// stub `libcuda` returns it from every function, for the same reason).
pub const UNAVAILABLE: CUresult = cudaError_enum::CUDA_ERROR_STUB_LIBRARY;

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

/// Entry `E` from the process-wide driver; `None` without a driver or without the entry.
#[inline]
pub(crate) fn resolve<E: Entry>() -> Option<E::Fn> {
    match DRIVER.get_or_init(Driver::load) {
        Ok(driver) => driver.get::<E>().ok(),
        Err(_) => None,
    }
}

/// Why the function `c_name` of [`api`](crate::api) returns [`UNAVAILABLE`]: the error of
/// loading the driver or of looking its entry up. `None` when it resolves, or when the module
/// has no function of that name.
pub fn error_of(c_name: &str) -> Option<Error> {
    error_in(crate::api::C_NAMES, c_name)
}

/// [`error_of`] for the functions of `table` (`api::legacy`'s or `api::ptds`'s).
pub(crate) fn error_in(table: &[(&str, usize)], c_name: &str) -> Option<Error> {
    let &(_, index) = table.iter().find(|(name, _)| *name == c_name)?;
    driver().and_then(|d| d.resolve(&ENTRIES[index])).err()
}

/// `Ok` for `CUDA_SUCCESS`; for [`UNAVAILABLE`], why the function `c_name` had nothing to
/// call ([`error_of`]); otherwise [`Error::Call`] naming `c_name` and the code. The
/// [`cu!`](crate::cu) macro writes the name for you.
pub fn check(c_name: &str, result: CUresult) -> Result<(), Error> {
    check_in(crate::api::C_NAMES, c_name, result)
}

/// [`check`] for the functions of `table` (`api::legacy`'s or `api::ptds`'s).
pub(crate) fn check_in(table: &[(&str, usize)], c_name: &str, result: CUresult) -> Result<(), Error> {
    if result == UNAVAILABLE {
        if let Some(e) = error_in(table, c_name) {
            return Err(e);
        }
    }
    crate::driver::check(c_name, result, |code| {
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
