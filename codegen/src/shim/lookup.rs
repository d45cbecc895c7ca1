//! The lookup core that the [`Driver`](crate::driver::Driver) and the runtime (`runtime.rs`)
//! share: the version rule (`Lookups::refuses`), the cache, `get`, `newest`, and the mapping of
//! a lookup function's answer to a pointer or an error. Each library says only how it asks for
//! an entry it has not cached (`Lookups::miss`) and what a result code no answer names means
//! (`Lookups::failed`); everything else is written once, here.
//!
//! # Rules
//! - **Stream flags.** Default-variant entries are asked for with
//!   `CU_GET_PROC_ADDRESS_LEGACY_STREAM`, per-thread ones with
//!   `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`, never with `DEFAULT`, whose meaning depends
//!   on how the caller was compiled. With the per-thread flag a driver answers only from a
//!   symbol's per-thread variants where it has any (below the first: "not sufficient"),
//!   measured request by request on drivers 470 to 580 (`answer::driver_answer`,
//!   tests/tests/real_driver_answers.rs).
//! - **Versions.** A lookup passes the entry's symbol (read from its record), version and flag
//!   and nothing else. An entry whose version is above the driver's is refused before the
//!   driver is asked, in every path (`get`, `resolve`, `call`, `api::`, `entry_table!`,
//!   `get_raw`, the runtime against the driver version it reports): drivers before CUDA 13.0
//!   answer such a request with success and the newest ABI they have, another ABI than the
//!   entry's (measured on 470 to 555), and none exports an entry above its own version
//!   (measured on 418 to 580), so the rule loses nothing. The check sits on the miss path only.
//! - **The cache.** One `AtomicPtr` per registry entry, inline: a hit is one Acquire load at a
//!   fixed offset; a miss one request, then a Release store; no lock and no read-modify-write,
//!   so threads that miss together may each ask once, and all get the same pointer. Errors are
//!   not cached. The miss path is one non-generic function for every entry (the common answer
//!   only); every other answer is mapped out of line, from what the driver already said.
//! - **`newest`** tries, from the highest version at or below the driver's, only versions the
//!   registry has a type for, through the same cache, and steps down only on "version not
//!   sufficient" and `CUDA_ERROR_NOT_FOUND`; its candidates are the enum's `CASES` (highest
//!   first, each per-thread variant before the default ABI it pairs with), searched by one
//!   function for every symbol.
//! - **The answer is never trusted**: a pointer is used only with `CUDA_SUCCESS`, a success or
//!   unwritten status (`STATUS_UNSET` is put there first) and a non-NULL value; every other
//!   answer is a typed `Error` naming the symbol, version and flag.

use core::ffi::{c_uint, c_void, CStr};
use core::mem::size_of;
use core::ptr::{null_mut, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::error::{Error, Lookup};
#[cfg(feature = "newest")]
use crate::newest::{NewestAbi, Symbol};
#[cfg(feature = "newest")]
use crate::registry::ENTRIES;
use crate::registry::{Entry, EntryRecord, StreamFlags, ENTRY_COUNT};
use crate::types::CUresult;

// The codes and statuses of the answer rule's own module: one spelling of each.
pub(crate) use crate::answer::{CUDA_ERROR_NOT_FOUND, CUDA_SUCCESS, STATUS_SUCCESS};
use crate::answer::{STATUS_SYMBOL_NOT_FOUND, STATUS_VERSION_NOT_SUFFICIENT};
/// What `symbolStatus` is set to before the call, to see whether the driver wrote it.
pub(crate) const STATUS_UNSET: c_uint = c_uint::MAX;

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
/// A library that answers lookups: the [`Driver`](crate::driver::Driver), or the runtime
/// (`runtime.rs`). Each says how it asks for an entry it has not cached; the version rule, the
/// cache, `get`, `newest` and the mapping of an answer are the same for both, here.
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

/// The record [`Driver::get_raw`](crate::driver::Driver::get_raw) (and the runtime's) leaves in
/// the program.
pub(crate) static RAW_LOOKUP: EntryRecord = EntryRecord::new(EntryRecord::RUNTIME, "", "get_raw", 0, 0, 0, 0, 0);
/// The record [`Driver::resolve`](crate::driver::Driver::resolve) leaves in the program.
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
///
/// `Driver` and `Runtime` each keep their own `get`, `newest` and `newest_with`, one call each
/// of this function or [`newest_of`]: as methods of the type, `driver.get::<E>()` needs no
/// trait in scope, and each carries the docs of its own library (the runtime's say what it
/// cannot prove). A public trait, or a macro writing both, would save those few lines and hide
/// the signatures a user reads.
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

