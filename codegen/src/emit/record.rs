//! The bytes of an entry's record (the generated crate's `EntryRecord`, read by min-driver),
//! computed here once: the emitters write them into the crate as literals, so that rustc
//! evaluates no `const fn` per entry, and a test compares a built binary's records with them.
//!
//! The layout, the kinds, the flags and the check are [`EntryRecord`]'s
//! ([`crate::record_format`], the one definition the crate and min-driver's reader share):
//! this room only says which fields an entry's or a symbol's record holds.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::model::Entry;
pub use crate::record_format::{EntryRecord, RecordKind};

/// A record's size.
pub const LEN: usize = EntryRecord::SIZE;
/// The first 8 bytes of every record (`EntryRecord::MAGIC`).
pub const MAGIC: [u8; 8] = EntryRecord::MAGIC;
/// `EntryRecord::ENTRY`: an exact entry.
pub const ENTRY: u8 = EntryRecord::ENTRY;
/// `EntryRecord::NEWEST`: any of `abis` ABIs of a symbol.
pub const NEWEST: u8 = EntryRecord::NEWEST;

/// What a record says, before it is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    pub how: u8,
    /// The `cuGetProcAddress` flags (1: legacy stream, 2: per-thread).
    pub flags: u8,
    pub abis: u8,
    pub version: u32,
    pub floor: u32,
    pub high: u32,
    pub symbol: &'a str,
    pub exported: &'a str,
}

/// What a record needs of one ABI of a symbol.
#[derive(Clone, Copy, Debug)]
pub struct Abi<'a> {
    pub version: u32,
    pub per_thread: bool,
    pub exported: &'a str,
    /// The driver floor measured above its version, if any (`Entry::min_driver`).
    pub min_driver: Option<u32>,
}

impl<'a> Abi<'a> {
    pub fn of(e: &'a Entry) -> Abi<'a> {
        Abi { version: e.version, per_thread: e.variant.is_some(), exported: &e.exported, min_driver: e.min_driver }
    }

    fn floor(&self) -> u32 {
        crate::answer_rule::entry_floor(self.version, self.min_driver)
    }

    fn flags(&self) -> u8 {
        EntryRecord::flags_for(self.per_thread)
    }
}

impl<'a> Record<'a> {
    /// The record of an exact entry (`entries::X::RECORD`).
    pub fn entry(symbol: &'a str, abi: Abi<'a>) -> Record<'a> {
        Record {
            how: ENTRY,
            flags: abi.flags(),
            abis: 1,
            version: abi.version,
            floor: abi.floor(),
            high: abi.version,
            symbol,
            exported: abi.exported,
        }
    }

    /// The record of `newest::<symbols::X>` over every ABI of the symbol: read as its oldest
    /// ABI (the default variant's, where it has one: both orders of `newest` end with it).
    /// `None` for a symbol without ABIs.
    pub fn newest(symbol: &'a str, abis: &[Abi<'a>]) -> Option<Record<'a>> {
        let oldest = abis
            .iter()
            .filter(|a| !a.per_thread)
            .min_by_key(|a| a.version)
            .or_else(|| abis.iter().min_by_key(|a| a.version))?;
        Some(Record {
            how: NEWEST,
            flags: oldest.flags(),
            abis: u8::try_from(abis.len()).unwrap_or(u8::MAX),
            version: oldest.version,
            floor: oldest.floor(),
            high: abis.iter().map(|a| a.version).max().unwrap_or(oldest.version),
            symbol,
            exported: oldest.exported,
        })
    }

    /// The record, laid out and checked; an error names a name that does not fit (more than
    /// 63 bytes, or a NUL in it).
    pub fn record(&self) -> Result<EntryRecord, String> {
        for name in [self.symbol, self.exported] {
            if !EntryRecord::fits(name) {
                return Err(format!(
                    "`{name}` does not fit a record's name (at most {} bytes, no NUL)",
                    EntryRecord::NAME_MAX
                ));
            }
        }
        let (s, r) = (self, EntryRecord::new);
        Ok(r(s.how, s.symbol, s.exported, s.version, s.floor, s.high, s.flags, s.abis))
    }

    /// The record's 160 bytes, as a little-endian binary holds them; an error as
    /// [`Record::record`]'s.
    pub fn bytes(&self) -> Result<[u8; LEN], String> {
        self.record().map(|r| r.to_bytes())
    }
}

/// A record as a struct literal of `ty` (`super::EntryRecord`), each field read back from
/// `bytes`: constants only, so that the static costs rustc a literal, not an evaluation.
pub fn literal(ty: &TokenStream, bytes: &[u8; LEN]) -> TokenStream {
    let u32_at = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let arr = |from: usize, to: usize| Literal::byte_string(&bytes[from..to]);
    let magic = arr(0, 8);
    let (layout, how, flags, abis) = (
        Literal::u8_unsuffixed(bytes[8]),
        Literal::u8_unsuffixed(bytes[9]),
        Literal::u8_unsuffixed(bytes[10]),
        Literal::u8_unsuffixed(bytes[11]),
    );
    let (version, floor, high) =
        (Literal::u32_unsuffixed(u32_at(12)), Literal::u32_unsuffixed(u32_at(16)), Literal::u32_unsuffixed(u32_at(20)));
    let (symbol, exported) = (arr(24, 88), arr(88, 152));
    let check = Literal::u32_unsuffixed(u32_at(152));
    let reserved = Literal::u32_unsuffixed(u32_at(156));
    quote! {
        #ty {
            magic: *#magic, layout: #layout, how: #how, flags: #flags, abis: #abis,
            version: #version, floor: #floor, high: #high,
            symbol: *#symbol, exported: *#exported,
            check: #check, reserved: #reserved,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_laid_out_and_checked() {
        let abi = Abi { version: 3020, per_thread: false, exported: "cuMemAlloc_v2", min_driver: None };
        let r = Record::entry("cuMemAlloc", abi).bytes().unwrap();
        assert_eq!(&r[..8], b"\xc3cuRec\x1a\n");
        assert_eq!(r[8..12], [1, ENTRY, 1, 1]);
        assert_eq!(r[12..24], [0xcc, 0x0b, 0, 0, 0xcc, 0x0b, 0, 0, 0xcc, 0x0b, 0, 0]);
        assert_eq!(&r[24..35], b"cuMemAlloc\0");
        assert_eq!(&r[88..102], b"cuMemAlloc_v2\0");
        let fnv1a = |b: &[u8]| b.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
        assert_eq!(u32::from_le_bytes(r[152..156].try_into().unwrap()), fnv1a(&r[..152]));
        assert_eq!(EntryRecord::decode(&r, true).map(|d| d.to_bytes()), Some(r));
        assert_eq!(r[156..], [0; 4]);
    }

    #[test]
    fn newest_reads_as_its_oldest_default_abi() {
        let abis = [
            Abi { version: 7000, per_thread: true, exported: "cuX_ptds", min_driver: None },
            Abi { version: 9000, per_thread: false, exported: "cuX_v2", min_driver: Some(9020) },
            Abi { version: 12000, per_thread: false, exported: "cuX_v3", min_driver: None },
        ];
        let r = Record::newest("cuX", &abis).unwrap();
        assert_eq!((r.how, r.flags, r.abis, r.version, r.floor, r.high), (NEWEST, 1, 3, 9000, 9020, 12000));
        assert_eq!(r.exported, "cuX_v2");
        assert!(Record::newest("cuX", &[]).is_none());
    }

    #[test]
    fn names_that_do_not_fit_are_refused() {
        let long = "x".repeat(64);
        let abi = Abi { version: 1, per_thread: false, exported: "e", min_driver: None };
        assert!(Record::entry(&long, abi).bytes().unwrap_err().contains("63 bytes"));
        assert!(Record::entry("a\0b", abi).bytes().is_err());
        assert!(Record::entry(&long[..63], abi).bytes().is_ok());
    }
}
