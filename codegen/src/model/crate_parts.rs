//! What the emitter renders beside the model: the crate's modules (one per manifest header
//! row) and the CUDA types the newest toolkit defines, with cuda.h's documentation of each
//! result code as data.

use std::collections::BTreeMap;

/// A generated module: one manifest header row, as the crate sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleSpec {
    /// The row's name (`cuda`, `gl`); the module is `pfn` for `cuda`, else this.
    pub name: String,
    /// The cargo feature that compiles it; `None`: always.
    pub feature: Option<String>,
    /// Whether that feature is on by default.
    pub default: bool,
    /// The API and typedef headers, for its docs.
    pub api: String,
    pub typedefs: String,
}

impl ModuleSpec {
    /// The Rust module name.
    pub fn module(&self) -> &str {
        crate::reserved::module_name(&self.name)
    }
}

/// The types the crate carries: bindgen's, from the newest toolkit's translation units, less
/// the `PFN_` typedefs.
#[derive(Debug, Clone)]
pub struct CrateTypes {
    /// The newest toolkit's Linux unit: every CUDA type.
    pub linux: syn::File,
    /// The newest Windows unit's own types (opaque D3D interfaces, `HGPUNV`, the D3D enums),
    /// per module; the CUDA types it shares with the Linux unit are left out.
    pub windows: BTreeMap<String, Vec<syn::Item>>,
    /// cuda.h's comment on each `CUresult` code (`CUDA_ERROR_INVALID_VALUE`), from the newest
    /// toolkit: the codes' docs in `types.rs` and `codes.rs`.
    pub result_docs: BTreeMap<String, String>,
}

impl CrateTypes {
    /// Types of one Linux unit alone: no Windows modules' own types, no result-code docs (what
    /// the tests and fuzz targets render crates from).
    pub fn from_linux(linux: syn::File) -> CrateTypes {
        CrateTypes { linux, windows: BTreeMap::new(), result_docs: BTreeMap::new() }
    }
}
