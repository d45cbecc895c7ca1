//! The driver's side of `cuGetProcAddress`: which registry entry a driver answers a request
//! with, or how it refuses, as NVIDIA's drivers were measured to answer (470 to 555 from
//! Debian's archive, without a GPU, and 580 on a GPU machine). A function of the registry
//! only: no I/O, no driver.
//!
//! It is what a library that stands in for the driver (a tracer, a GPU-sharing layer, a mock
//! driver for CI) must answer, and the rule by which this crate's lookups refuse an entry
//! before they ask (`Driver::get` and the rest refuse exactly the requests whose answer
//! [`driver_answer`] says is not the entry itself: see [`driver_has`]).
//!
//! The rule, for `(symbol, version, flags)` asked of a driver of version `driver_version`:
//! 1. flags with a bit other than `CU_GET_PROC_ADDRESS_LEGACY_STREAM` (1) and
//!    `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM` (2): `CUDA_ERROR_INVALID_VALUE`, the
//!    status unwritten;
//! 2. a driver of CUDA 13.0 or later asked for a version above its own, compared as signed
//!    numbers: `CUDA_ERROR_INVALID_VALUE`, the status unwritten (measured on 580, which answers
//!    a negative version by the next steps). Older drivers go on;
//! 3. the ABIs of `symbol` the driver has are the registry's entries of the symbol for this
//!    platform whose version is at most the driver's own (no driver of 418 to 580 serves an
//!    entry above its version). None: `CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`;
//! 4. of those, the newest introduced at or below `version` read as unsigned (a negative
//!    version asks for the newest; measured on 470 to 580), among the symbol's default ABIs
//!    with flags 0 and 1; with the per-thread flag, among its `_ptds`/`_ptsz` variants where it
//!    has any, else among its default ABIs. None: `CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT`.
//!    (So `cuMemcpy` with the per-thread flag at 4000, where its first ABI begins, is not
//!    sufficient: its per-thread variant begins at 7000. No symbol has a default ABI newer than
//!    its newest per-thread variant, so what a driver would answer there is not measured.)
//!
//! So a driver before 13.0 asked for a version above its own answers `CUDA_SUCCESS` with the
//! newest ABI it has, an older one than a caller of that version expects (`cuCtxCreate` at
//! 12050 from a 12.4 driver is `cuCtxCreate_v3`, the 11040 ABI).
//!
//! The 4-argument `cuGetProcAddress` of drivers of CUDA 11.3 to 11.8 (and still exported by
//! later ones) has no status: both refusals of steps 3 and 4 are `CUDA_ERROR_NOT_FOUND`
//! ([`DriverAnswer::result_without_status`]).
//!
//! Exact for drivers up to the newest toolkit this crate was generated from; a newer driver
//! may answer with an ABI the registry does not know yet.

use super::registry::{EntryInfo, ENTRIES};
use super::rule::{pick, Pick};
pub use super::rule::{driver_has, entry_floor, Invalid, FIRST_REFUSING_DRIVER};

/// `CUDA_SUCCESS`.
pub const CUDA_SUCCESS: u32 = 0;
/// `CUDA_ERROR_INVALID_VALUE`.
pub const CUDA_ERROR_INVALID_VALUE: u32 = 1;
/// `CUDA_ERROR_NOT_FOUND`.
pub const CUDA_ERROR_NOT_FOUND: u32 = 500;
/// `CU_GET_PROC_ADDRESS_SUCCESS`.
pub const STATUS_SUCCESS: u32 = 0;
/// `CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`.
pub const STATUS_SYMBOL_NOT_FOUND: u32 = 1;
/// `CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT`.
pub const STATUS_VERSION_NOT_SUFFICIENT: u32 = 2;

/// What a driver answers to one `cuGetProcAddress` request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverAnswer {
    /// `CUDA_SUCCESS`, status `CU_GET_PROC_ADDRESS_SUCCESS`, and the function of this entry:
    /// the one the library exports under [`EntryInfo::exported`].
    Entry(&'static EntryInfo),
    /// The driver has no ABI of the symbol: `CUDA_SUCCESS` with
    /// `CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`, the pointer NULL.
    SymbolNotFound,
    /// The driver knows the symbol, but its first ABI is newer than the version asked for:
    /// `CUDA_SUCCESS` with `CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT`, the pointer NULL.
    VersionNotSufficient,
    /// `CUDA_ERROR_INVALID_VALUE`, the status unwritten, the pointer NULL.
    InvalidValue(Invalid),
}

impl DriverAnswer {
    /// The entry, for [`DriverAnswer::Entry`].
    pub fn entry(self) -> Option<&'static EntryInfo> {
        match self {
            DriverAnswer::Entry(e) => Some(e),
            _ => None,
        }
    }

    /// The `CUresult` of `cuGetProcAddress_v2` and the `symbolStatus` it writes (`None`:
    /// left as it was).
    pub fn result_and_status(self) -> (u32, Option<u32>) {
        match self {
            DriverAnswer::Entry(_) => (CUDA_SUCCESS, Some(STATUS_SUCCESS)),
            DriverAnswer::SymbolNotFound => (CUDA_SUCCESS, Some(STATUS_SYMBOL_NOT_FOUND)),
            DriverAnswer::VersionNotSufficient => (CUDA_SUCCESS, Some(STATUS_VERSION_NOT_SUFFICIENT)),
            DriverAnswer::InvalidValue(_) => (CUDA_ERROR_INVALID_VALUE, None),
        }
    }

    /// The `CUresult` of the 4-argument `cuGetProcAddress`, which has no status: both
    /// refusals of a name are `CUDA_ERROR_NOT_FOUND`.
    pub fn result_without_status(self) -> u32 {
        match self {
            DriverAnswer::Entry(_) => CUDA_SUCCESS,
            DriverAnswer::SymbolNotFound | DriverAnswer::VersionNotSufficient => CUDA_ERROR_NOT_FOUND,
            DriverAnswer::InvalidValue(_) => CUDA_ERROR_INVALID_VALUE,
        }
    }
}

/// The answer a driver of `driver_version` (`major*1000 + minor*10`, as `cuDriverGetVersion`
/// says it) gives to `cuGetProcAddress(symbol, &pfn, version, flags, &status)` on the platform
/// this is compiled for. See the [module docs](self) for the rule and where it was measured.
///
/// `symbol` is the name as bytes, without its NUL (`b"cuCtxCreate"`, `cstr.to_bytes()`).
pub fn driver_answer(symbol: &[u8], version: i32, flags: u64, driver_version: u32) -> DriverAnswer {
    let start = ENTRIES.partition_point(|e| e.symbol.as_bytes() < symbol);
    let abis = ENTRIES[start..]
        .iter()
        .take_while(|e| e.symbol.as_bytes() == symbol)
        .filter(|e| e.platforms.here())
        .map(|e| (e, e.version, e.variant.is_some()));
    match pick(abis, version, flags, driver_version) {
        Pick::Abi(e) => DriverAnswer::Entry(e),
        Pick::SymbolNotFound => DriverAnswer::SymbolNotFound,
        Pick::VersionNotSufficient => DriverAnswer::VersionNotSufficient,
        Pick::InvalidValue(why) => DriverAnswer::InvalidValue(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::StreamFlags;

    /// The newest driver the registry knows: every entry's version.
    fn newest() -> u32 {
        ENTRIES.iter().map(|e| e.version).max().unwrap_or(0)
    }

    fn answer(symbol: &str, version: i32, flags: u64, driver: u32) -> Option<&'static str> {
        driver_answer(symbol.as_bytes(), version, flags, driver).entry().map(|e| e.pfn)
    }

    /// An entry asked for by its own request, of a driver that has it, is itself; of one that
    /// has it not, never itself: the rule the crate's lookups refuse by.
    #[test]
    fn an_entry_is_its_own_answer_exactly_where_the_driver_has_it() {
        let drivers = [11040, 12000, 12040, 12050, 12090, 13000, 13050, newest()];
        for e in ENTRIES.iter().filter(|e| e.platforms.here()) {
            for driver in drivers {
                let a = driver_answer(e.symbol.as_bytes(), e.version as i32, e.flags.0, driver);
                assert_eq!(a == DriverAnswer::Entry(e), driver_has(e.version, driver), "{} on {driver}: {a:?}", e.pfn);
            }
        }
    }

    /// Flag 0 answers as flag 1; a flag bit beyond 1 and 2 is refused, whatever the rest.
    #[test]
    fn flags() {
        for e in ENTRIES.iter().filter(|e| e.platforms.here()) {
            let v = e.version as i32;
            let legacy = driver_answer(e.symbol.as_bytes(), v, StreamFlags::LEGACY_STREAM.0, 0);
            assert_eq!(driver_answer(e.symbol.as_bytes(), v, StreamFlags::DEFAULT.0, 0), legacy, "{}", e.pfn);
            for bad in [4, 8, 1 << 63] {
                assert_eq!(
                    driver_answer(e.symbol.as_bytes(), v, bad | e.flags.0, 0),
                    DriverAnswer::InvalidValue(Invalid::Flags)
                );
            }
            // Without the per-thread flag a per-thread variant is never the answer.
            assert!(legacy.entry().is_some_and(|a| a.variant.is_none()), "{}: {legacy:?}", e.pfn);
        }
    }

    /// Below a symbol's first ABI (of the kind the flag asks for): not sufficient; an unknown
    /// name, or one whose every ABI is newer than the driver: not found.
    #[test]
    fn refusals_of_a_name() {
        assert_eq!(driver_answer(b"cuNoSuchThing", 12000, 1, 12000), DriverAnswer::SymbolNotFound);
        assert_eq!(driver_answer(b"", 12000, 1, 12000), DriverAnswer::SymbolNotFound);
        for e in ENTRIES.iter().filter(|e| e.platforms.here()) {
            let first = ENTRIES.iter().filter(|x| x.symbol == e.symbol && x.platforms.here()).map(|x| x.version).min();
            let first = first.unwrap_or(e.version);
            for flags in [0, 1, 2] {
                let below = driver_answer(e.symbol.as_bytes(), first as i32 - 1, flags, 0);
                assert_eq!(below, DriverAnswer::VersionNotSufficient, "{}", e.pfn);
            }
            // With the per-thread flag, below the first per-thread variant where there is one.
            if e.variant.is_some() {
                let below = driver_answer(e.symbol.as_bytes(), e.version as i32 - 1, 2, 0).entry();
                assert!(below.is_none_or(|b| b.variant.is_some()), "{} -1 -> {below:?}", e.pfn);
            }
            let older = driver_answer(e.symbol.as_bytes(), (first - 10) as i32, 2, first - 10);
            assert_eq!(older, DriverAnswer::SymbolNotFound, "{} on a driver of {}", e.pfn, first - 10);
        }
    }

    /// Above the driver's own version: refused from CUDA 13.0 on; before it, the newest ABI
    /// the driver has, whatever the version asked.
    #[test]
    fn above_the_driver() {
        for e in ENTRIES.iter().filter(|e| e.platforms.here()) {
            let (s, f) = (e.symbol.as_bytes(), e.flags.0);
            assert_eq!(driver_answer(s, 99999, f, 13000), DriverAnswer::InvalidValue(Invalid::AboveDriver));
            for driver in [11040, 12040, 12050, 12090] {
                let own = driver_answer(s, driver as i32, f, driver);
                assert_eq!(driver_answer(s, 99999, f, driver), own, "{} on {driver}", e.pfn);
            }
        }
        // The measured cases, where the registry has them.
        if ENTRIES.iter().any(|e| e.pfn == "PFN_cuCtxCreate_v12050") {
            assert_eq!(answer("cuCtxCreate", 12050, 1, 12040), Some("PFN_cuCtxCreate_v11040"));
            assert_eq!(answer("cuCtxCreate", 12050, 1, 12050), Some("PFN_cuCtxCreate_v12050"));
            assert_eq!(answer("cuCtxCreate", 12050, 1, 13000), Some("PFN_cuCtxCreate_v12050"));
            assert_eq!(answer("cuCtxCreate", 13010, 1, 13000), None);
        }
    }

    /// The newest ABI at or below the version asked, of the kind the flag asks for: per-thread
    /// with flag 2 where the symbol has per-thread variants.
    #[test]
    fn newest_at_or_below() {
        for e in ENTRIES.iter().filter(|e| e.platforms.here()) {
            let per_thread_variants = EntryInfo::of_symbol(e.symbol).iter().any(|x| x.variant.is_some());
            for flags in [1, 2] {
                let per_thread = flags == 2 && per_thread_variants;
                let a = driver_answer(e.symbol.as_bytes(), e.version as i32, flags, 0).entry();
                let Some(a) = a else {
                    // Only a default ABI older than the first per-thread variant, asked for
                    // with the per-thread flag.
                    assert!(per_thread && e.variant.is_none(), "{} answers nothing with flags {flags}", e.pfn);
                    continue;
                };
                assert!(a.symbol == e.symbol && a.version <= e.version, "{} -> {}", e.pfn, a.pfn);
                assert_eq!(a.variant.is_some(), per_thread, "{} with flags {flags} -> {}", e.pfn, a.pfn);
                // Nothing of the symbol between the answer and the version asked is eligible.
                let skipped = ENTRIES.iter().find(|x| {
                    x.symbol == e.symbol
                        && x.platforms.here()
                        && x.variant.is_some() == per_thread
                        && x.version > a.version
                        && x.version <= e.version
                });
                assert!(skipped.is_none(), "{} with flags {flags}: {} skipped for {}", e.pfn, skipped.unwrap().pfn, a.pfn);
            }
        }
        if ENTRIES.iter().any(|e| e.pfn == "PFN_cuMemcpy_v7000_ptds") {
            assert_eq!(answer("cuMemcpy", 7000, 2, 13000), Some("PFN_cuMemcpy_v7000_ptds"));
            assert_eq!(answer("cuMemcpy", 7000, 0, 13000), Some("PFN_cuMemcpy_v4000"));
            // Measured on 470 to 555: not sufficient below the per-thread variant.
            assert_eq!(driver_answer(b"cuMemcpy", 6999, 2, 12050), DriverAnswer::VersionNotSufficient);
            assert_eq!(answer("cuMemcpy", 6999, 1, 12050), Some("PFN_cuMemcpy_v4000"));
        }
    }

    #[test]
    fn codes() {
        let e = &ENTRIES[0];
        assert_eq!(DriverAnswer::Entry(e).result_and_status(), (0, Some(0)));
        assert_eq!(DriverAnswer::SymbolNotFound.result_and_status(), (0, Some(1)));
        assert_eq!(DriverAnswer::VersionNotSufficient.result_and_status(), (0, Some(2)));
        assert_eq!(DriverAnswer::InvalidValue(Invalid::Flags).result_and_status(), (1, None));
        assert_eq!(DriverAnswer::SymbolNotFound.result_without_status(), 500);
        assert_eq!(DriverAnswer::VersionNotSufficient.result_without_status(), 500);
        assert_eq!(DriverAnswer::InvalidValue(Invalid::AboveDriver).result_without_status(), 1);
        assert_eq!(DriverAnswer::Entry(e).result_without_status(), 0);
    }

    /// A negative version is read as unsigned, as drivers 470 to 580 read it (measured: -1,
    /// -2, -1000 and `i32::MIN` ask for the newest ABI the driver has), and a 13.0 driver does
    /// not refuse it as above its own version.
    #[test]
    fn a_negative_version_asks_for_the_newest() {
        for v in [-1, -2, -1000, i32::MIN] {
            assert_eq!(answer("cuCtxCreate", v, 0, 12050), Some("PFN_cuCtxCreate_v12050"), "{v}");
            assert_eq!(answer("cuCtxCreate", v, 0, 12000), Some("PFN_cuCtxCreate_v11040"), "{v}");
            assert_eq!(answer("cuMemcpy", v, 2, 12050), Some("PFN_cuMemcpy_v7000_ptds"), "{v}");
        }
        // From 13.0 on, a version above the driver's own is refused, but not a negative one
        // (580, measured: the newest ABI).
        for v in [-1, -2, -1000, i32::MIN] {
            assert_eq!(answer("cuCtxCreate", v, 0, 13000), Some("PFN_cuCtxCreate_v12050"), "{v}");
        }
        assert!(matches!(driver_answer(b"cuCtxCreate", 13010, 0, 13000), DriverAnswer::InvalidValue(_)));
    }
}
