//! Whether `--crate-name` makes a crate that builds and that crates.io would take: cargo's
//! and crates.io's rules for package names, checked before any work.
//!
//! No crate of the ecosystem implements these as a whole (`cargo-util-schemas`' `PackageName`
//! checks the characters only, and brings serde, toml and url with it), so they are written
//! out here from their sources: cargo's `cargo new` (`restricted_names`: keywords, the
//! standard library's names, Windows device names) and crates.io's publish rules (ASCII
//! letters, digits, `-` and `_`, a letter first, at most 64 characters, here 58: the types
//! crate's name adds `-types`).

use crate::Error;

/// crates.io's limit on a package name's length.
pub const MAX_LEN: usize = 64;

/// What the types crate's package name adds to the crate's (`cuda-driver-pfn-types`; see
/// `emit::krate`).
pub const TYPES_SUFFIX: &str = "-types";

/// The longest name the crate may have: its types crate's name (`<name>-types`) must fit
/// [`MAX_LEN`] too.
pub const MAX_CRATE_LEN: usize = MAX_LEN - TYPES_SUFFIX.len();

/// Rust's keywords, strict and reserved, in every edition (cargo's `is_keyword`): a crate so
/// named cannot be written in a path.
const KEYWORDS: &[&str] = &[
    "Self", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro",
    "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "self", "static", "struct", "super",
    "trait", "true", "try", "type", "typeof", "union", "unsafe", "unsized", "use", "virtual", "where", "while",
    "yield",
];

/// The standard library's crates: a crate of one of these names shadows it in its dependents
/// (cargo refuses `test` and warns about the others; crates.io reserves them all).
const STANDARD_LIBRARY: &[&str] = &["alloc", "core", "proc_macro", "std", "test"];

/// The packages the generated crate depends on (its Cargo.toml): a package cannot depend on
/// one of its own name. `tests/tests/cli.rs` checks this against the emitted Cargo.toml.
pub const DEPENDENCIES: &[&str] = &["libloading"];

/// Why `name` cannot be the generated crate's package name, if it cannot.
pub fn check(name: &str) -> Result<(), Error> {
    let bad = |why: String| Err(Error::BadCrateName { name: name.chars().take(80).collect(), why });
    let Some(first) = name.chars().next() else { return bad("it is empty".into()) };
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
        return bad(format!("{c:?} is not an ASCII letter, digit, `-` or `_`"));
    }
    if !first.is_ascii_alphabetic() {
        return bad("it must start with an ASCII letter".into());
    }
    if name.len() > MAX_CRATE_LEN {
        return bad(format!(
            "it is {} characters long; crates.io takes at most {MAX_LEN}, and the crate's types crate is named `<name>{}`: at most {MAX_CRATE_LEN}",
            name.len(),
            TYPES_SUFFIX
        ));
    }
    // `-` and `_` are one to cargo and crates.io (the library is `name` with `_`).
    let ident = name.replace('-', "_");
    if KEYWORDS.contains(&ident.as_str()) {
        return bad("it is a Rust keyword".into());
    }
    if STANDARD_LIBRARY.contains(&ident.as_str()) {
        return bad("it is the name of a crate of Rust's standard library".into());
    }
    if DEPENDENCIES.iter().any(|d| d.replace('-', "_") == ident) {
        return bad("the generated crate depends on a crate of that name".into());
    }
    let lower = ident.to_ascii_lowercase();
    let device = ["con", "prn", "aux", "nul"].contains(&lower.as_str())
        || (lower.len() == 4
            && (lower.starts_with("com") || lower.starts_with("lpt"))
            && lower.as_bytes()[3].is_ascii_digit()
            && lower.as_bytes()[3] != b'0');
    if device {
        return bad("it is a Windows device name, which no file or folder can have there".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_and_crates_io_rules() {
        for ok in ["cuda-driver-pfn", "my_cuda", "a", "Cuda2", "com0", "console", "selfish", &"a".repeat(58)] {
            assert!(check(ok).is_ok(), "{ok}");
        }
        let long = "a".repeat(300);
        let types_too_long = "a".repeat(59);
        for (bad, why) in [
            ("", "empty"),
            ("fn", "keyword"),
            ("self", "keyword"),
            ("crate", "keyword"),
            ("Self", "keyword"),
            ("std", "standard library"),
            ("core", "standard library"),
            ("proc-macro", "standard library"),
            ("libloading", "depends on"),
            ("nul", "Windows device"),
            ("COM1", "Windows device"),
            ("9lives", "start with"),
            ("_x", "start with"),
            ("a.b", "'.'"),
            ("naïve", "'ï'"),
            (long.as_str(), "300 characters"),
            (types_too_long.as_str(), "59 characters long; crates.io takes at most 64, and the crate's types crate is named `<name>-types`: at most 58"),
        ] {
            let err = check(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
