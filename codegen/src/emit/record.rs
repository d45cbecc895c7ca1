//! The bytes of an entry's record (the generated crate's `EntryRecord`, which min-driver reads),
//! computed by the generator: what the C header (`include/cuda_pfn.h`) writes into a program
//! beside every getter, byte for byte what the Rust crate's `const fn EntryRecord::new` builds
//! for the same entry (tested against it).

use crate::model::Entry;

/// A record's size.
pub const RECORD_SIZE: usize = 160;
/// The first 8 bytes of every record.
pub const MAGIC: [u8; 8] = *b"\xc3cuRec\x1a\n";
/// The record layout this writes.
pub const LAYOUT: u8 = 1;
/// `EntryRecord::ENTRY`: an exact entry.
pub const ENTRY: u8 = 1;
/// The most bytes a record's name holds (then a NUL at least).
pub const NAME_MAX: usize = 63;

/// The fields of a record, before they are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordFields<'a> {
    pub how: u8,
    pub flags: u8,
    pub abis: u8,
    pub version: u32,
    pub floor: u32,
    pub high: u32,
    pub symbol: &'a str,
    pub exported: &'a str,
}

impl<'a> RecordFields<'a> {
    /// An exact entry's record, as the registry's `records::X` static holds it: its version,
    /// its floor (the measured `min_driver` where that is higher), its stream flag.
    pub fn of_entry(e: &'a Entry) -> RecordFields<'a> {
        RecordFields {
            how: ENTRY,
            flags: u8::from(e.variant.is_some()) + 1,
            abis: 1,
            version: e.version,
            floor: e.min_driver.unwrap_or(e.version).max(e.version),
            high: e.version,
            symbol: &e.symbol,
            exported: &e.exported,
        }
    }

    /// The 160 bytes, integers little-endian, or `None` where a name does not fit (63 bytes,
    /// no NUL): the Rust crate refuses such a record at compile time.
    pub fn bytes(&self) -> Option<[u8; RECORD_SIZE]> {
        let mut r = [0u8; RECORD_SIZE];
        r[..8].copy_from_slice(&MAGIC);
        r[8..12].copy_from_slice(&[LAYOUT, self.how, self.flags, self.abis]);
        r[12..16].copy_from_slice(&self.version.to_le_bytes());
        r[16..20].copy_from_slice(&self.floor.to_le_bytes());
        r[20..24].copy_from_slice(&self.high.to_le_bytes());
        for (at, name) in [(24, self.symbol), (88, self.exported)] {
            let b = name.as_bytes();
            if b.len() > NAME_MAX || b.contains(&0) {
                return None;
            }
            r[at..at + b.len()].copy_from_slice(b);
        }
        let check = checksum(&r[..152]);
        r[152..156].copy_from_slice(&check.to_le_bytes());
        Some(r)
    }

    /// The checksum field (FNV-1a of bytes 0 to 151).
    pub fn check(&self) -> Option<u32> {
        self.bytes().map(|r| checksum(&r[..152]))
    }
}

/// FNV-1a (32 bits): the record's `check`.
pub fn checksum(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_check() {
        let f = RecordFields {
            how: ENTRY,
            flags: 1,
            abis: 1,
            version: 12050,
            floor: 12050,
            high: 12050,
            symbol: "cuCtxCreate",
            exported: "cuCtxCreate_v4",
        };
        let r = f.bytes().unwrap();
        assert_eq!(&r[..8], &MAGIC);
        assert_eq!(u32::from_le_bytes([r[12], r[13], r[14], r[15]]), 12050);
        assert_eq!(&r[24..35], b"cuCtxCreate");
        assert_eq!(&r[88..102], b"cuCtxCreate_v4");
        assert_eq!(u32::from_le_bytes([r[152], r[153], r[154], r[155]]), checksum(&r[..152]));
        assert_eq!(&r[156..], &[0; 4]);
        let long = "x".repeat(64);
        assert_eq!(RecordFields { symbol: &long, ..f.clone() }.bytes(), None);
        assert_eq!(RecordFields { exported: "a\0b", ..f }.bytes(), None);
    }
}
