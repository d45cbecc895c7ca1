//! The typedef parser fed bindgen-like Rust source built from a grammar (see `grammar.rs`),
//! through the model and the emitter; and the same items in reverse order, which must give
//! the same typedefs and layouts.
#![no_main]

use fuzz_oracles::grammar::Source;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|src: Source| {
    let text = src.render();
    fuzz_oracles::check_parse(&text);
    if src.names_unique() {
        fuzz_oracles::check_order_independent(&text, &src.render_reversed());
    }
});
