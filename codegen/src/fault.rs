//! Fault injection for the interrupted-run tests: with `CUDA_SYS_GEN_FAULT=<point>` in the
//! environment, the process aborts at that named point, as a `kill -9` there would (no
//! destructors run, no temp folder is cleaned up). Unset, each point is one environment read.
//! The variable holds a comma-separated list; besides points it may name switches:
//! - `write:no-exchange`: swap the output folder the portable way (two renames), as on a
//!   platform or file system without an atomic exchange;
//! - `write:slow`: sleep 20 ms before each file of the new tree, so that a kill at a random
//!   moment often lands inside the write;
//! - `signal:int`: at the named point, send the process SIGINT (what Ctrl-C sends) instead of
//!   aborting: it ends the run there, or, where the run holds it off, as soon as it lets it in;
//! - `signal:kill`: the same with SIGKILL, which nothing holds off.
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
//! - `write:swapped`: the new tree is in place, the old one not yet removed;
//! - `pin:prepared` (`--add-toolkit`): the new pin's wheels are downloaded and its manifest
//!   text made, nothing written outside the cache;
//! - `pin:journal-written`: the crate is rendered in memory and the journal of the change is
//!   written beside the manifest, neither the crate nor the manifest changed yet;
//! - `pin:crate-written`: the new crate is in place, the manifest not yet changed;
//! - `pin:manifest-written`: the manifest holds the pin, the journal is not yet removed.

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
    "pin:prepared",
    "pin:journal-written",
    "pin:crate-written",
    "pin:manifest-written",
];

/// Aborts the process if `CUDA_SYS_GEN_FAULT` names this point.
pub fn point(name: &str) {
    debug_assert!(POINTS.contains(&name), "unlisted fault point {name}");
    if active(name) {
        #[cfg(unix)]
        for (switch, signal) in [("signal:int", libc::SIGINT), ("signal:kill", libc::SIGKILL)] {
            if active(switch) {
                eprintln!("{ENV}={name}: {switch} here");
                // SAFETY: raising a signal at the calling thread; its default action ends the
                // process (at once, or once the thread lets a held SIGINT in).
                unsafe { libc::raise(signal) };
                return;
            }
        }
        eprintln!("{ENV}={name}: aborting here");
        std::process::abort();
    }
}

/// Whether `CUDA_SYS_GEN_FAULT` names this point or switch.
pub fn active(name: &str) -> bool {
    std::env::var(ENV).is_ok_and(|v| v.split(',').any(|p| p.trim() == name))
}

/// The `write:slow` switch's sleep.
pub fn slow_write() {
    if active("write:slow") {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
