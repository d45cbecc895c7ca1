//! The wheel extractor fed arbitrary archives: raw bytes (first byte even: seeded with real
//! zips built from the fixtures) or archives built from fuzzed entries (odd), so that names,
//! kinds, sizes and compression reach the checks past the zip parser.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode % 2 == 0 {
        fuzz_oracles::check_extract(rest, "nvidia/include");
    } else if let Ok(spec) = arbitrary::Unstructured::new(rest).arbitrary::<fuzz_oracles::zips::Archive>() {
        fuzz_oracles::check_extract(&spec.build(), "nvidia/include");
    }
});
