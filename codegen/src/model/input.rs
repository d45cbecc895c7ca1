//! What the readers hand the model: one toolkit's declarations, the parameters and layouts
//! they carry, its alias macros' targets, its C names and its counts. The vocabulary the
//! model is built from; the readers (`read/`) produce it, and nothing here reads anything.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::layout::ParamLayout;
use crate::names::Variant;
use crate::platform::Platform;
use crate::syntax::RustType;
use crate::version::ToolkitVersion;

/// A parameter: its name as bindgen wrote it and its Rust type (`*mut CUdeviceptr`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
pub struct Param {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: RustType,
}

/// Per alias name, what it resolves to in one toolkit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct AliasTarget {
    /// The typedef `PFN_x` names in a default build.
    pub default: String,
    /// The typedef it names with `CUDA_API_PER_THREAD_DEFAULT_STREAM` defined.
    pub per_thread: String,
}

/// One `PFN_` typedef as one toolkit declares it: the parser's output, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    pub pfn: String,
    pub symbol: String,
    pub version: u32,
    pub variant: Option<Variant>,
    /// The typedef header's file name (`cudaTypedefs.h`).
    pub header: String,
    /// The manifest header row, and so the generated module (`cuda`, `gl`, `d3d9`).
    pub module: String,
    /// Where the driver has it.
    pub platforms: BTreeSet<Platform>,
    /// Declared only under `#if defined(__CUDA_API_VERSION_INTERNAL)`.
    pub legacy: bool,
    pub line: usize,
    pub params: Vec<Param>,
    pub returns: RustType,
    pub layouts: Vec<ParamLayout>,
}

impl Declaration {
    /// A declaration of `pfn` in `header` (module `module`) with no parameters, returning
    /// `CUresult`, on Linux, not legacy, at line 1: what tests and fuzzers build models from.
    pub fn bare(pfn: &str, header: &str, module: &str) -> Result<Declaration, crate::names::NameError> {
        let n = crate::names::split_pfn_name(pfn)?;
        Ok(Declaration {
            pfn: pfn.into(),
            symbol: n.symbol.into(),
            version: n.version,
            variant: n.variant,
            header: header.into(),
            module: module.into(),
            platforms: [Platform::Linux].into(),
            legacy: false,
            line: 1,
            params: vec![],
            returns: RustType::new(&syn::parse_quote!(CUresult)),
            layouts: vec![],
        })
    }
}

/// Per typedef header and toolkit: what was found, so that nothing is dropped silently.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HeaderCount {
    /// Versioned `PFN_..._vNNNN` typedefs declared in the header.
    pub typedefs: usize,
    /// `PFN_` typedefs skipped (reported, not emitted): no version in their final name, or a
    /// symbol that is a Rust keyword.
    pub unversioned: usize,
    /// `#define PFN_x ...` aliases, and how many of them name no typedef.
    pub aliases: usize,
    pub broken_aliases: usize,
}

/// Everything one toolkit contributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolkitInput {
    pub version: ToolkitVersion,
    /// Where the headers came from (`nvidia-cuda-runtime-cu12 12.9.79`, or a local path).
    pub source: String,
    pub declarations: Vec<Declaration>,
    /// Resolved `#define PFN_x` aliases; empty from 13.0 on.
    pub aliases: BTreeMap<String, AliasTarget>,
    /// Per typedef header file name.
    pub counts: BTreeMap<String, HeaderCount>,
    /// What each C name (`cuCtxCreate`) expands to in a C program of each stream mode.
    pub c_names: BTreeMap<String, CNameExports>,
}

/// The exported function a C name expands to, in a default build and with
/// `CUDA_API_PER_THREAD_DEFAULT_STREAM` (`None`: not a function name in that mode).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CNameExports {
    pub default: Option<String>,
    pub per_thread: Option<String>,
}
