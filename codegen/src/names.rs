//! The `PFN_` name grammar every stage shares: `PFN_<symbol>_v<version>[_ptds|_ptsz]`.
//!
//! A leaf: it imports nothing of the pipeline. The parser uses it to split bindgen's typedef
//! names, the header reader to tell a `#define PFN_x` alias from a typedef name, the model to
//! rebuild keys.

use serde::{Deserialize, Serialize};

/// The per-thread default stream variants of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// `_ptds`: per-thread default stream, for synchronous calls.
    Ptds,
    /// `_ptsz`: per-thread default stream, for calls that take a stream.
    Ptsz,
}

impl Variant {
    pub fn suffix(self) -> &'static str {
        match self {
            Variant::Ptds => "_ptds",
            Variant::Ptsz => "_ptsz",
        }
    }
}

/// A CUDA version (`major * 1000 + minor * 10`) has at most this many digits.
pub const MAX_VERSION_DIGITS: usize = 6;

/// Why a `PFN_` name is not `PFN_<symbol>_v<version>[_ptds|_ptsz]`. Each is the rule it breaks,
/// as a sentence for the message that names the file and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// Not `PFN_` at all.
    NotPfn,
    /// No `_v<digits>` at its end: an unversioned name (`PFN_cuMemAlloc`), which the headers
    /// use for aliases. Skipped with a warning where a typedef has one.
    NoVersion,
    /// `_v` and more digits than any CUDA version has.
    VersionTooLong { digits: String },
    /// `_v0`.
    VersionZero,
    /// The symbol itself ends in `_v<digits>`: two version suffixes (`PFN_cuCtxCreate_v12050_v13060`).
    TwoVersions { symbol: String, inner: String },
    /// The symbol is empty, starts with a digit or holds a character no C identifier has.
    BadSymbol { symbol: String },
}

impl NameError {
    /// Whether the name is simply unversioned (an alias's name), rather than malformed.
    pub fn is_unversioned(&self) -> bool {
        matches!(self, NameError::NoVersion)
    }
}

impl std::fmt::Display for NameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NameError::NotPfn => write!(f, "it does not start with `PFN_`"),
            NameError::NoVersion => write!(f, "it has no `_v<version>` at its end"),
            NameError::VersionTooLong { digits } => write!(
                f,
                "its version `{digits}` has {} digits; a CUDA version (major*1000 + minor*10, such as 12050) has at most {MAX_VERSION_DIGITS}",
                digits.len()
            ),
            NameError::VersionZero => write!(f, "its version is 0, which no CUDA release is"),
            NameError::TwoVersions { symbol, inner } => write!(
                f,
                "it has two version suffixes (`_v{inner}` on the symbol `{symbol}`): the rule is PFN_<symbol>_v<version>[_ptds|_ptsz] with one version"
            ),
            NameError::BadSymbol { symbol } => {
                write!(f, "its symbol `{symbol}` is not a C identifier (letters, digits and `_`, not starting with a digit)")
            }
        }
    }
}

/// The parts of a well-formed name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PfnName<'a> {
    pub symbol: &'a str,
    pub version: u32,
    pub variant: Option<Variant>,
}

/// Splits `PFN_cuMemcpy_v7000_ptds` into (`cuMemcpy`, 7000, Some(Ptds)), or says which rule the
/// name breaks.
pub fn split_pfn_name(name: &str) -> Result<PfnName<'_>, NameError> {
    let rest = name.strip_prefix("PFN_").ok_or(NameError::NotPfn)?;
    let (rest, variant) = if let Some(r) = rest.strip_suffix("_ptds") {
        (r, Some(Variant::Ptds))
    } else if let Some(r) = rest.strip_suffix("_ptsz") {
        (r, Some(Variant::Ptsz))
    } else {
        (rest, None)
    };
    let (symbol, digits) = version_suffix(rest).ok_or(NameError::NoVersion)?;
    if digits.len() > MAX_VERSION_DIGITS {
        return Err(NameError::VersionTooLong { digits: digits.to_owned() });
    }
    let version: u32 = digits.parse().map_err(|_| NameError::VersionTooLong { digits: digits.to_owned() })?;
    if version == 0 {
        return Err(NameError::VersionZero);
    }
    if let Some((_, inner)) = version_suffix(symbol) {
        return Err(NameError::TwoVersions { symbol: symbol.to_owned(), inner: inner.to_owned() });
    }
    let c_ident = !symbol.is_empty()
        && !symbol.starts_with(|c: char| c.is_ascii_digit())
        && symbol.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
    if !c_ident {
        return Err(NameError::BadSymbol { symbol: symbol.to_owned() });
    }
    Ok(PfnName { symbol, version, variant })
}

/// `cuX_v3020` as (`cuX`, `3020`): a trailing `_v` followed by one or more digits alone.
fn version_suffix(s: &str) -> Option<(&str, &str)> {
    let at = s.rfind("_v")?;
    let digits = &s[at + 2..];
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| (&s[..at], digits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(name: &str) -> (&str, u32, Option<Variant>) {
        let n = split_pfn_name(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        (n.symbol, n.version, n.variant)
    }

    #[test]
    fn well_formed_names() {
        assert_eq!(ok("PFN_cuMemcpy_v7000_ptds"), ("cuMemcpy", 7000, Some(Variant::Ptds)));
        assert_eq!(ok("PFN_cuMemAlloc_v3020"), ("cuMemAlloc", 3020, None));
        assert_eq!(ok("PFN_cuStreamBeginCapture_v10010_ptsz"), ("cuStreamBeginCapture", 10010, Some(Variant::Ptsz)));
        // A `_v` inside the symbol is fine, as long as it is no version suffix.
        assert_eq!(
            ok("PFN_cuGraphicsVDPAURegisterVideoSurface_v3010"),
            ("cuGraphicsVDPAURegisterVideoSurface", 3010, None)
        );
        assert_eq!(ok("PFN_cu_vx_v999999"), ("cu_vx", 999999, None));
    }

    #[test]
    fn each_rule_is_named() {
        assert_eq!(split_pfn_name("cuMemAlloc_v3020"), Err(NameError::NotPfn));
        assert_eq!(split_pfn_name("PFN_cuMemAlloc"), Err(NameError::NoVersion));
        assert_eq!(split_pfn_name("PFN_cuMemAlloc_v"), Err(NameError::NoVersion));
        assert_eq!(split_pfn_name("PFN_cuMemAlloc_vX1"), Err(NameError::NoVersion));
        assert_eq!(split_pfn_name("PFN_cuX_v0"), Err(NameError::VersionZero));
        assert_eq!(
            split_pfn_name("PFN_x_v99999999999"),
            Err(NameError::VersionTooLong { digits: "99999999999".into() })
        );
        let two =
            |symbol: &str, inner: &str| Err(NameError::TwoVersions { symbol: symbol.into(), inner: inner.into() });
        assert_eq!(split_pfn_name("PFN_cuCtxCreate_v12050_v13060"), two("cuCtxCreate_v12050", "12050"));
        assert_eq!(split_pfn_name("PFN_cuTwoV_v13060_v13060"), two("cuTwoV_v13060", "13060"));
        assert_eq!(split_pfn_name("PFN_cuFoo_v2_v11040_ptds"), two("cuFoo_v2", "2"));
        assert_eq!(split_pfn_name("PFN__v3020"), Err(NameError::BadSymbol { symbol: String::new() }));
        assert_eq!(split_pfn_name("PFN_1x_v3020"), Err(NameError::BadSymbol { symbol: "1x".into() }));
        assert!(split_pfn_name("PFN_cuMemAlloc").unwrap_err().is_unversioned());
        assert!(!split_pfn_name("PFN_cuX_v0").unwrap_err().is_unversioned());
        let why = split_pfn_name("PFN_cuCtxCreate_v12050_v13060").unwrap_err().to_string();
        assert!(why.contains("two version suffixes") && why.contains("PFN_<symbol>_v<version>"), "{why}");
    }
}
