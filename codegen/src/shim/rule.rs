//! The driver's answer rule over any list of a symbol's ABIs, and the floors it implies: the
//! one statement of it. `answer.rs` applies it to the registry (`driver_answer`), the crate's
//! lookups refuse by [`driver_has`], its error texts name what a driver hands out by it, and
//! `cuda-sys-gen min-driver` (`codegen::answer_rule`, this file compiled into the generator)
//! reads the ABI a fixed-version lookup gets by it. The rule and where it was measured are in
//! `answer.rs`'s module docs.

/// The first driver version (CUDA 13.0) that answers a request for a version above its own
/// with `CUDA_ERROR_INVALID_VALUE` rather than with the newest ABI it has.
pub const FIRST_REFUSING_DRIVER: u32 = 13000;

/// The flag bits a driver knows: `LEGACY_STREAM` (1) and `PER_THREAD_DEFAULT_STREAM` (2).
const KNOWN_FLAGS: u64 = 3;
const PER_THREAD: u64 = 2;

/// Why a request is `CUDA_ERROR_INVALID_VALUE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// A flag bit other than 1 and 2.
    Flags,
    /// A version above the driver's own, asked of a driver of CUDA 13.0 or later.
    AboveDriver,
}

/// What [`pick`] answers: one of the ABIs it was given, or a refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick<T> {
    /// This ABI.
    Abi(T),
    /// The driver has no ABI of the symbol.
    SymbolNotFound,
    /// The driver knows the symbol, but its first ABI (of the kind asked for) is newer than the
    /// version asked for.
    VersionNotSufficient,
    /// `CUDA_ERROR_INVALID_VALUE`.
    InvalidValue(Invalid),
}

/// Whether a driver of `driver_version` has the ABIs introduced at `version`: whether it is at
/// least that version (`driver_version` 0, unknown, has all). No driver of 418 to 580 exports
/// an entry above its own version, and drivers before CUDA 13.0 asked for such a version answer
/// with an older ABI: so a request for an entry the driver does not have is never answered
/// with the entry, and the crate's lookups refuse it before asking.
#[inline]
pub const fn driver_has(version: u32, driver_version: u32) -> bool {
    driver_version == 0 || version <= driver_version
}

/// The oldest driver that has an entry introduced at `version` whose drivers were measured to
/// lack it before `min_driver` (its registry `min_driver`): the later of the two.
#[inline]
pub const fn entry_floor(version: u32, min_driver: Option<u32>) -> u32 {
    match min_driver {
        Some(m) if m > version => m,
        _ => version,
    }
}

/// What a driver of `driver_version` answers to `cuGetProcAddress(symbol, &pfn, version, flags,
/// &status)`, given the ABIs of `symbol` its platform has: `(abi, its version, whether it is a
/// `_ptds`/`_ptsz` variant)` each. Of ABIs of the same version and kind, the last given wins.
pub fn pick<T: Copy>(
    abis: impl Iterator<Item = (T, u32, bool)> + Clone,
    version: i32,
    flags: u64,
    driver_version: u32,
) -> Pick<T> {
    if flags & !KNOWN_FLAGS != 0 {
        return Pick::InvalidValue(Invalid::Flags);
    }
    // From 13.0 a version above the driver's own is refused, compared as a signed number: 580
    // answers -1, -2, -1000 and i32::MIN with its newest ABI.
    if driver_version >= FIRST_REFUSING_DRIVER && i64::from(version) > i64::from(driver_version) {
        return Pick::InvalidValue(Invalid::AboveDriver);
    }
    // The ABI is picked reading the version as unsigned (measured on 470 to 580): a negative
    // version asks for the newest.
    let version = version as u32;
    let has = abis.filter(move |&(_, v, _)| driver_has(v, driver_version));
    let mut known = false;
    let mut per_thread_variants = false;
    for (_, _, per_thread) in has.clone() {
        known = true;
        per_thread_variants |= per_thread;
    }
    if !known {
        return Pick::SymbolNotFound;
    }
    // Which kind of ABI answers: per-thread ones for the per-thread flag where the symbol has
    // them, default ones otherwise.
    let per_thread = flags & PER_THREAD != 0 && per_thread_variants;
    let eligible = has.filter(|&(_, v, p)| p == per_thread && v <= version);
    match eligible.max_by_key(|&(_, v, _)| v) {
        Some((abi, _, _)) => Pick::Abi(abi),
        None => Pick::VersionNotSufficient,
    }
}
