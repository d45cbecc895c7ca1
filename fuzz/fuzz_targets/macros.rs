//! The header-macro reader (logical lines, `#define PFN_x` aliases, the INTERNAL guard) fed
//! arbitrary bytes, read as the pipeline reads headers (lossy UTF-8); seeded with the
//! fixture headers.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fuzz_oracles::check_macros(&String::from_utf8_lossy(data));
});
