//! The lookup shim compiled where it is edited. `codegen/src/shim/*.rs` are the sources of the
//! shim that every generated crate holds (the generator writes them as they are); here they
//! are the modules of a copy of this repository's generated crate, `generated/`: its `lib.rs`
//! (written into `OUT_DIR` by build.rs, each `mod x;` pointed at `codegen/src/shim/x.rs` or at
//! `generated/src/x.rs`; the types crate, `generated/types/`, a module of the same name, its
//! modules at `generated/types/src/x.rs`), its tables, and every feature of its Cargo.toml
//! turned on. So
//! `cargo check --workspace --all-targets`, clippy and rust-analyzer read the shim where a
//! maintainer edits it, with no generation in between.
//!
//! The tables are the last generated ones: a shim change that needs a new table needs
//! `cargo xtask generate` as well, and `cargo test` fails while `generated/` is stale.

// The generated lib.rs's own, which build.rs leaves out with its docs.
#![allow(rustdoc::redundant_explicit_links)]

include!(concat!(env!("OUT_DIR"), "/lib.rs"));
