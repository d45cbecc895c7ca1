//! The driver's answer rule and the floors it implies: `shim/rule.rs`, its one statement,
//! compiled here for the emitter (an entry's floor in its record) and for
//! `cuda-sys-gen min-driver` (the ABI a lookup at a fixed version gets), and written into every
//! generated crate, whose `answer.rs` applies it to the registry.

#[path = "shim/rule.rs"]
mod rule;

pub use rule::{driver_has, entry_floor, pick, Invalid, Pick, FIRST_REFUSING_DRIVER};
