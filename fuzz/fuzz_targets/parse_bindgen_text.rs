//! The typedef parser fed arbitrary text, seeded with bindgen's real output for the fixture
//! toolkits (`cargo xtask fuzz seeds`) and a dictionary of its tokens.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        fuzz_oracles::check_parse(text);
    }
});
