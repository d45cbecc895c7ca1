//! `cuda-sys-gen min-driver`: a thin caller of the `cuda-sys-gen-min-driver` library (the
//! `min-driver/` crate: its readers, its model of what a program can do at run time, its floor
//! and report), whose names are re-exported here.

pub use min_driver::*;

/// `min-driver --help`'s closing text.
pub fn exit_status_help() -> String {
    crate::exit::exit_status_help(EXIT_STATUSES, HELP_CLOSING)
}
