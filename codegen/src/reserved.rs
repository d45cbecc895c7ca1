//! Names the generated crate uses itself, which no manifest header row may take. A leaf: the
//! manifest checks rows against these, and the emitter writes them
//! (`fuzz_regressions::every_root_name_of_the_crate_is_reserved` reads the emitted crate and
//! fails when one it uses is missing here).

/// Names the generated crate's root uses itself (its own modules, and `entries` and `symbols`,
/// re-exported there): no header row may be named so. `pfn` is the cuda.h row's own. A test
/// (`fuzz_regressions::every_root_name_of_the_crate_is_reserved`) reads the emitted `lib.rs`
/// and fails when a name there is missing here.
pub const RESERVED_MODULES: &[&str] = &[
    "aliases",
    "answer",
    "api",
    "api_shim",
    "codes",
    "doctor",
    "driver",
    "entries",
    "entry",
    "error",
    "lib",
    "library",
    "lookup",
    "min_driver",
    "newest",
    "newest_abi",
    "pfn",
    "record",
    "registry",
    "result",
    "rule",
    "runtime",
    "standin",
    "standin_exports",
    "symbols",
    "table",
    "types",
    "visit",
    "visit_entries",
    "visit_symbols",
    "visitor",
    "zeroed",
];

/// Features the generated Cargo.toml defines itself: no header row may take one.
pub const RESERVED_FEATURES: &[&str] = &[
    "aliases",
    "api",
    "bare-enumerators",
    "default",
    "doctor",
    "newest",
    "newest_abi",
    "per-thread-default-stream",
    "registry-json",
    "runtime",
    "standin",
    "visit",
];

/// The module of a manifest header row in the generated crate: the row's name, but `pfn` for
/// the cuda.h row (`cuda`).
pub fn module_name(row: &str) -> &str {
    if row == "cuda" {
        "pfn"
    } else {
        row
    }
}
