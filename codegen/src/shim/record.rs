//! The record a lookup leaves in a compiled program ([`EntryRecord`]), defined once: its
//! layout, its kinds, its flag encoding, its encoding and its decoding. The same file is the
//! generated crate's `registry::EntryRecord` (the types crate's `record.rs`), the generator's
//! (`codegen::record_format`: the emitter writes each record's bytes, computed here, as a
//! literal) and the reader's of `cuda-sys-gen min-driver`, so that what is written and what is
//! read cannot disagree.

use core::ffi::CStr;

/// What a lookup leaves in the compiled program, for `cuda-sys-gen min-driver`:
/// 160 bytes of fixed layout and no pointers (so no relocations), found by
/// [`EntryRecord::MAGIC`] and checked by [`EntryRecord::check`].
///
/// Every way of looking an entry up reaches its record (the name the driver is
/// given is read from it), and nothing else does: no table points at the records,
/// and each is a static of its own (in a section of its own), so the linker keeps
/// exactly the records of the lookups in the code it keeps, after inlining, LTO,
/// `cfg`, features and generics. A binary's records are therefore what it can ask
/// the driver for.
///
/// | offset | field | |
/// | --- | --- | --- |
/// | 0 | `magic` | [`EntryRecord::MAGIC`] |
/// | 8 | `layout` | 1 |
/// | 9 | `how` | [`EntryRecord::ENTRY`], [`EntryRecord::NEWEST`], [`EntryRecord::RUNTIME`] or [`EntryRecord::FIXED`] |
/// | 10 | `flags` | the `cuGetProcAddress` flags |
/// | 11 | `abis` | how many ABIs it accepts (`NEWEST`), else 1 |
/// | 12 | `version` | the version asked for (`NEWEST`: its oldest ABI's) |
/// | 16 | `floor` | the oldest driver that has it (`major * 1000 + minor * 10`) |
/// | 20 | `high` | the highest version it asks for |
/// | 24 | `symbol` | the symbol, NUL-padded (64 bytes) |
/// | 88 | `exported` | the exported name (`ENTRY`), or what asked (`RUNTIME`), NUL-padded |
/// | 152 | `check` | FNV-1a (32 bits) of bytes 0 to 151, the integers little-endian |
/// | 156 | `reserved` | 0 |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(8))]
pub struct EntryRecord {
    pub magic: [u8; 8],
    pub layout: u8,
    pub how: u8,
    pub flags: u8,
    pub abis: u8,
    pub version: u32,
    pub floor: u32,
    pub high: u32,
    pub symbol: [u8; 64],
    pub exported: [u8; 64],
    pub check: u32,
    pub reserved: u32,
}

/// What a record is of: [`EntryRecord::how`], as a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum RecordKind {
    /// An exact entry: `get`, `api::`, `cu!`, `entry_table!`, `call`.
    Entry = 1,
    /// `newest::<symbols::X>`: any of `abis` ABIs, from `version` to `high`.
    Newest = 2,
    /// A lookup whose name or version is known only at run time (`get_raw`, `resolve`): the
    /// program may need more than its records say.
    Runtime = 3,
    /// A lookup by a name and version fixed at compile time (the `get_raw!` macro of the crate
    /// that looks entries up).
    Fixed = 4,
}

impl RecordKind {
    /// The kind a record's `how` byte names, if it names one.
    pub const fn from_u8(how: u8) -> Option<RecordKind> {
        match how {
            1 => Some(RecordKind::Entry),
            2 => Some(RecordKind::Newest),
            3 => Some(RecordKind::Runtime),
            4 => Some(RecordKind::Fixed),
            _ => None,
        }
    }
}

impl EntryRecord {
    /// A record's size in bytes.
    pub const SIZE: usize = 160;
    /// The first 8 bytes of every record.
    pub const MAGIC: [u8; 8] = *b"\xc3cuRec\x1a\n";
    /// The `layout` byte of every record of this layout.
    pub const LAYOUT: u8 = 1;
    /// How many bytes a name may take (one more is its NUL).
    pub const NAME_MAX: usize = 63;
    /// The bytes [`EntryRecord::check`] covers: all before it.
    const CHECKED: usize = 152;
    /// An exact entry: `get`, `api::`, `cu!`, `entry_table!`, `call`.
    pub const ENTRY: u8 = RecordKind::Entry as u8;
    /// `newest::<symbols::X>`: any of `abis` ABIs, from `version` to `high`.
    pub const NEWEST: u8 = RecordKind::Newest as u8;
    /// A lookup whose name or version is known only at run time (`get_raw`,
    /// `resolve`): the program may need more than its records say.
    pub const RUNTIME: u8 = RecordKind::Runtime as u8;
    /// A lookup by a name and version fixed at compile time
    /// (the `get_raw!` macro of the crate that looks entries up).
    pub const FIXED: u8 = RecordKind::Fixed as u8;
    /// The `flags` byte of a default-variant lookup (`CU_GET_PROC_ADDRESS_LEGACY_STREAM`).
    pub const LEGACY_STREAM: u8 = 1;
    /// The `flags` byte of a `_ptds`/`_ptsz` lookup
    /// (`CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`).
    pub const PER_THREAD_DEFAULT_STREAM: u8 = 2;

    /// The `flags` byte an entry is looked up with: per-thread variant or default one.
    pub const fn flags_for(per_thread: bool) -> u8 {
        if per_thread {
            Self::PER_THREAD_DEFAULT_STREAM
        } else {
            Self::LEGACY_STREAM
        }
    }

    /// Whether the record asks for a per-thread variant (its `flags`).
    pub const fn per_thread(&self) -> bool {
        self.flags == Self::PER_THREAD_DEFAULT_STREAM
    }

    /// What the record is of, if its `how` names a kind.
    pub const fn kind(&self) -> Option<RecordKind> {
        RecordKind::from_u8(self.how)
    }

    /// Whether `name` fits a record's name field: at most [`EntryRecord::NAME_MAX`] bytes,
    /// and no NUL.
    pub const fn fits(name: &str) -> bool {
        let b = name.as_bytes();
        if b.len() > Self::NAME_MAX {
            return false;
        }
        let mut i = 0;
        while i < b.len() {
            if b[i] == 0 {
                return false;
            }
            i += 1;
        }
        true
    }

    /// A record; refused at compile time where a name does not fit
    /// ([`EntryRecord::fits`]).
    #[allow(clippy::too_many_arguments)]
    pub const fn new(
        how: u8,
        symbol: &str,
        exported: &str,
        version: u32,
        floor: u32,
        high: u32,
        flags: u8,
        abis: u8,
    ) -> EntryRecord {
        let mut r = EntryRecord {
            magic: Self::MAGIC,
            layout: Self::LAYOUT,
            how,
            flags,
            abis,
            version,
            floor,
            high,
            symbol: padded(symbol),
            exported: padded(exported),
            check: 0,
            reserved: 0,
        };
        r.check = r.checksum();
        r
    }

    /// FNV-1a of bytes 0 to 151, as [`EntryRecord::check`] holds it.
    pub const fn checksum(&self) -> u32 {
        fnv1a(&self.to_bytes(), Self::CHECKED)
    }

    /// The record's bytes with its integers little-endian: what a little-endian program
    /// holds, and what the check is computed over on every target.
    pub const fn to_bytes(&self) -> [u8; EntryRecord::SIZE] {
        let mut out = [0u8; EntryRecord::SIZE];
        let mut i = 0;
        while i < 8 {
            out[i] = self.magic[i];
            i += 1;
        }
        out[8] = self.layout;
        out[9] = self.how;
        out[10] = self.flags;
        out[11] = self.abis;
        let words = [self.version, self.floor, self.high];
        let mut w = 0;
        while w < 3 {
            let le = words[w].to_le_bytes();
            let mut j = 0;
            while j < 4 {
                out[12 + 4 * w + j] = le[j];
                j += 1;
            }
            w += 1;
        }
        let mut j = 0;
        while j < 64 {
            out[24 + j] = self.symbol[j];
            out[88 + j] = self.exported[j];
            j += 1;
        }
        let (check, reserved) = (self.check.to_le_bytes(), self.reserved.to_le_bytes());
        let mut j = 0;
        while j < 4 {
            out[152 + j] = check[j];
            out[156 + j] = reserved[j];
            j += 1;
        }
        out
    }

    /// The record at the start of `bytes`, as a program of the given byte order holds it
    /// (`little`: little-endian), if it is one: [`EntryRecord::MAGIC`], this layout, a check
    /// that holds, and names of identifier bytes (`_`, `:` and `!` too) padded with NULs.
    /// Anything else (too short, damaged, of another layout) is `None`.
    pub fn decode(bytes: &[u8], little: bool) -> Option<EntryRecord> {
        let r = bytes.get(..Self::SIZE)?;
        let u32_at = |o: usize| {
            let w = [r[o], r[o + 1], r[o + 2], r[o + 3]];
            if little {
                u32::from_le_bytes(w)
            } else {
                u32::from_be_bytes(w)
            }
        };
        let name = |from: usize| {
            let mut field = [0u8; 64];
            field.copy_from_slice(&r[from..from + 64]);
            name_of(&field).is_some().then_some(field)
        };
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&r[..8]);
        let record = EntryRecord {
            magic,
            layout: r[8],
            how: r[9],
            flags: r[10],
            abis: r[11],
            version: u32_at(12),
            floor: u32_at(16),
            high: u32_at(20),
            symbol: name(24)?,
            exported: name(88)?,
            check: u32_at(152),
            reserved: u32_at(156),
        };
        (record.magic == Self::MAGIC && record.layout == Self::LAYOUT && record.check == record.checksum())
            .then_some(record)
    }

    /// The symbol, as the driver is given it.
    pub const fn c_symbol(&self) -> &CStr {
        match CStr::from_bytes_until_nul(&self.symbol) {
            Ok(s) => s,
            Err(_) => c"",
        }
    }

    /// The symbol, if it is a record's name ([`EntryRecord::decode`]'s rule).
    pub fn symbol_name(&self) -> Option<&str> {
        name_of(&self.symbol)
    }

    /// The exported name (or, for [`EntryRecord::RUNTIME`], what asked), if it is a record's
    /// name.
    pub fn exported_name(&self) -> Option<&str> {
        name_of(&self.exported)
    }
}

/// A NUL-padded name of a record: ASCII identifier bytes (`_`, `:`, `!` too), then only NULs.
fn name_of(field: &[u8; 64]) -> Option<&str> {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let (text, rest) = field.split_at(end);
    let ok = text.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'!'))
        && rest.iter().all(|&b| b == 0);
    if ok {
        core::str::from_utf8(text).ok()
    } else {
        None
    }
}

/// FNV-1a (32 bits) of the first `len` bytes.
const fn fnv1a(bytes: &[u8], len: usize) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut i = 0;
    while i < len {
        h = (h ^ bytes[i] as u32).wrapping_mul(0x0100_0193);
        i += 1;
    }
    h
}

/// `s` in 64 bytes, NUL-padded: at most 63 bytes of it, and no NUL.
const fn padded(s: &str) -> [u8; 64] {
    assert!(EntryRecord::fits(s), "a record's name is at most 63 bytes, with no NUL");
    let b = s.as_bytes();
    let mut out = [0u8; 64];
    let mut i = 0;
    while i < b.len() {
        out[i] = b[i];
        i += 1;
    }
    out
}
