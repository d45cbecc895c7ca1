//! The manifest loader fed arbitrary TOML; seeded with headers-manifest.toml.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        fuzz_oracles::check_manifest(text);
    }
});
