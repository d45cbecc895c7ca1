//! Fault injection for the interrupted-run tests: with `CUDA_SYS_GEN_FAULT=<point>` in the
//! environment, the process aborts at that named point, as a `kill -9` there would (no
//! destructors run, no temp folder is cleaned up). Unset, each point is one environment read.
//!
//! The points, in the order a run reaches them:
//! - `fetch:downloaded`: pip has written the wheel into its scratch folder, not yet renamed
//!   into the cache;
//! - `fetch:extract-half`: half of the include files are extracted into the scratch folder;
//! - `fetch:extracted`: all of them, stamp written, not yet renamed into place;
//! - `fetch:old-removed`: a stale include folder has been removed, the new one not yet renamed;
//! - `write:staged-half`: half of the new tree is written beside the output folder;
//! - `write:staged`: the new tree is complete, not yet swapped in;
//! - `write:moved-old` (only where the output folder cannot be exchanged atomically): the old
//!   tree has been moved aside, the new one not yet renamed into place;
//! - `write:swapped`: the new tree is in place, the old one not yet removed.

/// The environment variable that names the point to abort at.
pub const ENV: &str = "CUDA_SYS_GEN_FAULT";

/// Every point, for the tests that visit them all.
pub const POINTS: &[&str] = &[
    "fetch:downloaded",
    "fetch:extract-half",
    "fetch:extracted",
    "fetch:old-removed",
    "write:staged-half",
    "write:staged",
    "write:moved-old",
    "write:swapped",
];

/// Aborts the process if `CUDA_SYS_GEN_FAULT` names this point.
pub fn point(name: &str) {
    debug_assert!(POINTS.contains(&name), "unlisted fault point {name}");
    if std::env::var_os(ENV).is_some_and(|v| v == name) {
        eprintln!("{ENV}={name}: aborting here");
        std::process::abort();
    }
}
