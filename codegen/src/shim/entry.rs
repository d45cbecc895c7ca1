//! The registry's types, which do not depend on the headers: a row ([`EntryInfo`]), its
//! parts ([`Variant`], [`StreamFlags`], [`Platforms`]), and the sealed [`Entry`] trait every
//! entry marker implements. The generated `registry.rs` holds the rows and the markers and
//! re-exports these, so that they are `registry::EntryInfo` and so on.

use core::ffi::CStr;

// `super::`, not `crate::`: the types crate is a module of the shim's check crate.
use super::record::EntryRecord;
use super::registry::{ENTRIES, ENTRY_COUNT, RECORDS, TOOLKITS};

/// Which per-thread default stream variant an entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    /// `_ptds`: per-thread default stream, synchronous calls.
    Ptds,
    /// `_ptsz`: per-thread default stream, calls that take a stream.
    Ptsz,
}

/// The `flags` argument of `cuGetProcAddress` (`CUdriverProcAddress_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct StreamFlags(pub u64);

impl StreamFlags {
    /// `CU_GET_PROC_ADDRESS_DEFAULT`.
    pub const DEFAULT: StreamFlags = StreamFlags(0);
    /// `CU_GET_PROC_ADDRESS_LEGACY_STREAM`: the default (legacy stream) variant.
    /// Every default-variant entry is looked up with this flag.
    pub const LEGACY_STREAM: StreamFlags = StreamFlags(EntryRecord::LEGACY_STREAM as u64);
    /// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`: the `_ptds`/`_ptsz` variant.
    /// Every per-thread entry is looked up with this flag.
    pub const PER_THREAD_DEFAULT_STREAM: StreamFlags = StreamFlags(EntryRecord::PER_THREAD_DEFAULT_STREAM as u64);
}

/// The flag's C name and value (`CU_GET_PROC_ADDRESS_LEGACY_STREAM (1)`), as the
/// crate's errors quote it.
impl core::fmt::Display for StreamFlags {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            0 => f.write_str("CU_GET_PROC_ADDRESS_DEFAULT (0)"),
            1 => f.write_str("CU_GET_PROC_ADDRESS_LEGACY_STREAM (1)"),
            2 => f.write_str("CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (2)"),
            n => write!(f, "flags {n:#x}"),
        }
    }
}

/// The operating systems whose driver has an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Platforms {
    pub linux: bool,
    pub windows: bool,
    /// The one processor architecture whose drivers have it (`"aarch64"`, as
    /// `std::env::consts::ARCH` says it), where NVIDIA's drivers of the others lack it
    /// although the headers declare it; `None`: every architecture.
    pub arch: Option<&'static str>,
}

impl Platforms {
    /// Whether the driver of the platform this is compiled for has the entry.
    pub const fn here(self) -> bool {
        let os = if cfg!(windows) { self.windows } else { self.linux };
        let arch = match self.arch {
            Some(a) => same(a.as_bytes(), std::env::consts::ARCH.as_bytes()),
            None => true,
        };
        os && arch
    }
}

/// `a == b`, in a `const fn`.
const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// One row of the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryInfo {
    /// The name passed to `cuGetProcAddress` (`cuMemAlloc`).
    pub symbol: &'static str,
    /// The same, NUL-terminated.
    pub c_symbol: &'static CStr,
    /// The exact version passed to `cuGetProcAddress`: the one in the typedef's name.
    pub version: u32,
    pub variant: Option<Variant>,
    /// The flags passed to `cuGetProcAddress`.
    pub flags: StreamFlags,
    /// The typedef name (`PFN_cuMemAlloc_v3020`).
    pub pfn: &'static str,
    /// The name the driver library exports this ABI under (`cuMemAlloc_v2`).
    pub exported: &'static str,
    /// The typedef header that declares it.
    pub header: &'static str,
    /// The manifest header it belongs to (`cuda`, `gl`, `d3d9`), which names its module
    /// (`pfn` for `cuda`) and feature.
    pub module: &'static str,
    /// Where the driver has it.
    pub platforms: Platforms,
    /// Declared only under `__CUDA_API_VERSION_INTERNAL`.
    pub legacy: bool,
    /// Bit `i` set when [`TOOLKITS`]`[i]` declares it.
    pub toolkit_mask: u64,
}

impl EntryInfo {
    /// The toolkits that declare this entry.
    pub fn toolkits(&self) -> impl Iterator<Item = &'static str> + '_ {
        TOOLKITS.iter().enumerate().filter(|(i, _)| self.toolkit_mask >> i & 1 == 1).map(|(_, t)| *t)
    }

    /// Every ABI of `symbol` this crate knows, oldest first, default and per-thread
    /// variants: a slice of [`ENTRIES`] (empty for a symbol it does not know).
    pub fn of_symbol(symbol: &str) -> &'static [EntryInfo] {
        let start = ENTRIES.partition_point(|e| e.symbol < symbol);
        let end = start + ENTRIES[start..].partition_point(|e| e.symbol == symbol);
        &ENTRIES[start..end]
    }

    /// This row's index in [`ENTRIES`], if it is one of its rows.
    pub fn index(&self) -> Option<usize> {
        let offset = (self as *const EntryInfo as usize).checked_sub(ENTRIES.as_ptr() as usize)?;
        let index = offset / core::mem::size_of::<EntryInfo>();
        (offset % core::mem::size_of::<EntryInfo>() == 0 && index < ENTRY_COUNT).then_some(index)
    }
}

/// What only this crate implements: the markers of `registry::entries`.
pub(crate) mod sealed {
    pub trait Sealed {}
}

/// A registry entry, as a type: implemented only by the markers in
/// [`entries`](super::registry::entries), each of which sets only its index; the rest is the
/// entry's row.
///
/// # Safety
/// `Fn` is the ABI the driver returns for (`SYMBOL`, `VERSION`, `FLAGS`). The trait is
/// sealed; for symbols this crate does not know, use a raw lookup.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a registry entry: name its marker in `entries`",
    label = "not an entry marker",
    note = "`entry_table!`, `Driver::get` and `Driver::call` take the markers of `entries` \
            (`entries::cuInit_v2000`), not the function types of `pfn` (`pfn::PFN_cuInit_v2000`): \
            drop the `PFN_` and write `entries::` for `pfn::`"
)]
pub unsafe trait Entry: sealed::Sealed + 'static {
    /// The function pointer type (`PFN_..._vNNNN`).
    type Fn: Copy + 'static;
    /// This entry's index in [`ENTRIES`].
    const INDEX: usize;
    /// This entry's row.
    const INFO: &'static EntryInfo = &ENTRIES[Self::INDEX];
    /// This entry's [`EntryRecord`]: a static of its own, which every lookup of the
    /// entry reaches (its name is the one passed to the driver), so that the program
    /// holds it exactly where it holds code that looks the entry up. From the registry's
    /// `RECORDS` table, a `const`: one table instead of a constant in each marker's impl.
    const RECORD: &'static EntryRecord = RECORDS[Self::INDEX];
    /// The name passed to `cuGetProcAddress`: the bytes of [`Self::RECORD`].
    const SYMBOL: &'static CStr = Self::RECORD.c_symbol();
    /// The exact version passed to `cuGetProcAddress`.
    const VERSION: u32 = Self::INFO.version;
    /// The flags passed to `cuGetProcAddress`.
    const FLAGS: StreamFlags = Self::INFO.flags;
    /// The oldest driver that has it (`major * 1000 + minor * 10`): [`Self::VERSION`],
    /// or a later release where NVIDIA's drivers were measured to lack it at its own
    /// version (the marker's page says so).
    const MIN_DRIVER: u32 = Self::VERSION;
}
