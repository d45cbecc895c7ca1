//! What `newest` (feature `newest`) is made of, apart from its per-symbol enums and markers:
//! the sealed [`Symbol`] and [`NewestAbi`] traits, the order the ABIs are tried in, and the one
//! generic reading and writing of every enum's layout. The generated `newest.rs` holds the enums
//! and the markers and re-exports these, so that they are `newest::Symbol` and so on.

use core::ffi::c_void;
use core::ptr::NonNull;

use crate::registry::{EntryInfo, EntryRecord, ENTRIES};

/// What only this crate implements: the enums of `newest` and the markers of `symbols`.
pub(crate) mod sealed {
    pub trait Sealed {}
}

/// A driver symbol, as a type: implemented only by the markers in
/// [`symbols`](crate::newest::symbols), each of which names its enum and nothing else.
///
/// The enums are not symbols themselves, so that a program reaches `newest` only
/// through a name `cuda-sys-gen min-driver` reads (`symbols::cuCtxCreate`).
pub trait Symbol: sealed::Sealed + 'static {
    /// The enum with one case per ABI.
    type Newest: NewestAbi;
    /// The name passed to `cuGetProcAddress`.
    // Every enum has a case: the generator makes one only for a symbol with entries.
    const NAME: &'static str = ENTRIES[<Self::Newest as NewestAbi>::CASES[0]].symbol;
    /// This symbol's record ([`EntryRecord`](crate::EntryRecord)): the ABIs
    /// `newest` accepts, read as the oldest. The name `newest` passes to the driver is
    /// read from it, so the program holds it exactly where it holds the lookup.
    const RECORD: &'static EntryRecord;
    /// The registry rows [`Driver::newest_with`](crate::Driver::newest_with) tries, in
    /// order: with [`DefaultStream::Legacy`](crate::DefaultStream::Legacy) the default
    /// ABIs, highest version first; with
    /// [`DefaultStream::PerThread`](crate::DefaultStream::PerThread) the same, each
    /// default ABI preceded by the per-thread variants that pair with it (a per-thread
    /// variant pairs with the highest default ABI at or below its version; one older
    /// than every default ABI comes last).
    fn order(stream: crate::DefaultStream) -> impl Iterator<Item = &'static EntryInfo> {
        order(<Self::Newest as NewestAbi>::CASES, stream).filter_map(|i| ENTRIES.get(i))
    }
}

/// An enum's [`NewestAbi::CASES`], in the order [`Symbol::order`] says: all of them
/// with per-thread variants preferred (the order they are declared in), else the
/// default ABIs among them. One function for every symbol.
pub(crate) fn order(cases: &'static [usize], stream: crate::DefaultStream) -> impl Iterator<Item = usize> {
    let per_thread = stream == crate::DefaultStream::PerThread;
    cases.iter().copied().filter(move |&i| per_thread || ENTRIES.get(i).is_some_and(|e| e.variant.is_none()))
}

/// What every symbol's enum can say about the case it holds.
///
/// Each enum is `#[repr(usize)]` with one function pointer per case, so its layout is
/// the primitive representation's (RFC 2195): a `usize` tag, the case's index in
/// declaration order, then the pointer. The methods read and write that
/// layout once, generically, instead of a `match` per enum, so that the crate compiles
/// no code per symbol.
pub trait NewestAbi: sealed::Sealed + Copy + core::fmt::Debug + 'static {
    /// Per case, in declaration order: the index in [`ENTRIES`] of its ABI. The cases are
    /// declared highest version first, each per-thread variant before the default ABI
    /// it pairs with: the order [`Symbol::order`] tries them in.
    const CASES: &'static [usize];
    /// The index in [`ENTRIES`] of the ABI held.
    fn index(&self) -> usize {
        Self::CASES[raw(self).tag]
    }
    /// The registry row of the ABI held.
    fn info(&self) -> &'static EntryInfo {
        // Every case's index is one the generator took from the table itself.
        &ENTRIES[self.index()]
    }
    /// The function pointer, as a plain pointer (to compare or print, not to call).
    fn as_ptr(&self) -> *const c_void {
        raw(self).f
    }
    /// The case of registry entry `index` holding `p`; `None` if `index` is not one of
    /// this symbol's ABIs.
    ///
    /// # Safety
    /// `p` must be what the driver returned for entry `index`'s request (its symbol,
    /// version and flags): the case's function type is then exactly that function's.
    unsafe fn from_entry(index: usize, p: NonNull<c_void>) -> Option<Self> {
        let () = Layout::<Self>::SAME;
        let tag = Self::CASES.iter().position(|&i| i == index)?;
        // SAFETY: `Self` is a `#[repr(usize)]` enum whose every case holds one
        // non-nullable function pointer (`Layout` checks the size): `Raw` with a tag
        // below the number of cases and a non-null pointer is a value of it, the
        // case's function type being, by the caller's contract, the function's.
        Some(unsafe { core::mem::transmute_copy::<Raw, Self>(&Raw { tag, f: p.as_ptr() }) })
    }
}

/// The layout every enum of this module has: the primitive representation of a
/// `#[repr(usize)]` enum whose cases each hold one function pointer.
#[repr(C)]
#[derive(Clone, Copy)]
struct Raw {
    tag: usize,
    f: *const c_void,
}

/// Checked where [`NewestAbi::from_entry`] is compiled for an enum: its size is
/// [`Raw`]'s.
struct Layout<T>(core::marker::PhantomData<T>);
impl<T> Layout<T> {
    const SAME: () = assert!(core::mem::size_of::<T>() == core::mem::size_of::<Raw>());
}

/// An enum's value as [`Raw`].
fn raw<T: NewestAbi>(value: &T) -> Raw {
    let () = Layout::<T>::SAME;
    // SAFETY: every `NewestAbi` is a sealed `#[repr(usize)]` enum of this module with
    // `Raw`'s layout (the size checked above); a function pointer reads as a pointer.
    unsafe { core::mem::transmute_copy::<T, Raw>(value) }
}

/// Every enum's `Debug`: the typedef and the pointer (`PFN_cuCtxCreate_v12050(0x7f..)`).
pub(crate) fn debug_abi<T: NewestAbi>(abi: &T, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
    write!(f, "{}({:p})", abi.info().pfn, abi.as_ptr())
}
