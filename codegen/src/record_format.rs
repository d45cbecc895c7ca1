//! The format of the records a lookup leaves in a compiled program: `shim/record.rs`, its one
//! definition, compiled here for the emitter (which writes each record's bytes as a literal)
//! and for `cuda-sys-gen min-driver`'s reader, and written into every generated crate as its
//! types crate's `record.rs`.

#[path = "shim/record.rs"]
mod format;

pub use format::{EntryRecord, RecordKind};
