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
    /// The headers' comments, the newest toolkit's where toolkits differ (an item only older
    /// toolkits declare has the newest of those's).
    pub docs: CDocs,
}

impl CrateTypes {
    /// Types of one Linux unit alone: no Windows modules' own types, no result-code docs, no
    /// comments (what
    /// the tests and fuzz targets render crates from).
    pub fn from_linux(linux: syn::File) -> CrateTypes {
        CrateTypes { linux, windows: BTreeMap::new(), result_docs: BTreeMap::new(), docs: CDocs::default() }
    }
}

/// The headers' own documentation (Doxygen comments, as bindgen hands them over), by what it
/// documents. Names are the C names, as bindgen keeps them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CDocs {
    /// Structs, unions, enums and typedefs.
    pub items: BTreeMap<String, String>,
    /// Fields of structs and unions: `(record, field)`.
    pub fields: BTreeMap<(String, String), String>,
    /// Enumerators (unique in C, so by name alone).
    pub enumerators: BTreeMap<String, String>,
    /// Functions, by the name they are declared under once macros are expanded, which is
    /// the name the driver exports (`cuLinkCreate_v2`).
    pub functions: BTreeMap<String, String>,
}

impl CDocs {
    /// Adds what `other` documents that `self` does not (`self` is the newer toolkit's).
    pub fn fill_from(&mut self, other: CDocs) {
        fn fill<K: Ord>(to: &mut BTreeMap<K, String>, from: BTreeMap<K, String>) {
            for (k, v) in from {
                to.entry(k).or_insert(v);
            }
        }
        fill(&mut self.items, other.items);
        fill(&mut self.fields, other.fields);
        fill(&mut self.enumerators, other.enumerators);
        fill(&mut self.functions, other.functions);
    }

    /// How many items carry a comment.
    pub fn len(&self) -> usize {
        self.items.len() + self.fields.len() + self.enumerators.len() + self.functions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
