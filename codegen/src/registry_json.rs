//! `registry.json`, typed: the one set of serde types the emitter writes it with
//! (`emit::registry`) and min-driver and the tests read it with. Each field's doc is what the
//! generated crate's docs say of it (the entry fields' through [`ENTRY_FIELDS`], checked
//! against these docs by a test).
//!
//! Architecture Invariant: a leaf. It names the model's words (versions, variants, platforms)
//! but holds plain data only, so that a reader of the file needs nothing of the generator.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::names::Variant;
use crate::platform::Platform;
use crate::version::ToolkitVersion;

/// The schema this generator writes and reads.
pub const SCHEMA: u32 = 1;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registry {
    /// The generator's marker: what made the file and how to make it again.
    #[serde(rename = "@generated")]
    pub generated: String,
    /// The generator that wrote the file: `cuda-sys-gen 0.1.0` (absent in files written before
    /// it was recorded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub generator: String,
    /// [`SCHEMA`].
    pub schema: u32,
    /// The pinned toolkits, oldest first.
    pub toolkits: Vec<ToolkitVersion>,
    /// Per toolkit: where its headers came from and what each typedef header held.
    pub toolkit_details: Vec<ToolkitDetails>,
    /// Every entry point ABI, in the registry's order (symbol, version, variant).
    pub entries: Vec<Entry>,
    /// Per toolkit, what each `#define PFN_x` alias of its headers names, in each stream mode
    /// (empty from 13.0 on).
    pub header_aliases: BTreeMap<ToolkitVersion, BTreeMap<String, Modes<String>>>,
    /// Typedefs that kept their name while their ABI changed between two toolkits.
    pub drift: Vec<Drift>,
    /// Per toolkit, the entry (its typedef) each C name of its cuda.h calls, in each stream
    /// mode (`null`: no function of that name in that mode).
    pub c_names: BTreeMap<ToolkitVersion, BTreeMap<String, Modes<Option<String>>>>,
}

/// One toolkit's row of `toolkit_details`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolkitDetails {
    pub version: ToolkitVersion,
    /// The packages (or the local path) its headers came from.
    pub source: String,
    /// Per typedef header row: what was found in it.
    pub headers: BTreeMap<String, HeaderCount>,
    /// Whether its headers define `PFN_x` aliases (11.x and 12.x do, 13.x does not).
    pub has_alias_macros: bool,
}

/// What one typedef header of one toolkit held, so that nothing is dropped silently.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderCount {
    /// Versioned `PFN_..._vNNNN` typedefs.
    pub typedefs: usize,
    /// `PFN_` typedefs skipped (no version in their name, or a symbol that is a keyword).
    pub unversioned: usize,
    /// `#define PFN_x ...` aliases.
    pub aliases: usize,
    /// Aliases that name no typedef.
    pub broken_aliases: usize,
}

/// One row of `entries`: the published form of the model's entry (`model::Entry`), kept a type
/// of its own so that a reader of the file needs nothing of the generator (see there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// the name asked for (`cuMemAlloc`)
    pub symbol: String,
    /// integer, `major*1000 + minor*10`: the ABI's introducing version
    pub version: u32,
    /// `null`, `"ptds"` or `"ptsz"`
    pub variant: Option<Variant>,
    /// the typedef (`PFN_cuMemAlloc_v3020`)
    pub pfn: String,
    /// the typedef header that declares it
    pub header: String,
    /// the manifest header row it belongs to (`cuda`, `gl`): the generated module
    pub module: String,
    /// where the driver has it: `"linux"`, `"windows"`
    pub platforms: Vec<Platform>,
    /// `null`, or the one processor architecture whose drivers alone have it (`"aarch64"`)
    pub arch: Option<String>,
    /// `null`, or the oldest driver (`major*1000 + minor*10`) that has it where NVIDIA's drivers were measured to lack it at `version` (the generator manifest's `[[driver_floor]]`)
    pub min_driver: Option<u32>,
    /// the driver library's name for this ABI
    pub exported: String,
    /// declared only under `__CUDA_API_VERSION_INTERNAL`
    pub legacy: bool,
    /// the pinned toolkits that declare it
    pub toolkits: Vec<ToolkitVersion>,
    /// list of `{name, type}`, Rust types
    pub params: Vec<Param>,
    /// the Rust return type
    pub returns: String,
}

/// A parameter: its name and its Rust type, as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
}

/// A meaning in a default build and with `CUDA_API_PER_THREAD_DEFAULT_STREAM`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Modes<T> {
    pub default: T,
    pub per_thread: T,
}

/// One row of `drift`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drift {
    pub pfn: String,
    pub from: ToolkitVersion,
    pub to: ToolkitVersion,
    /// The parameter, or `null` when the parameter list itself changed.
    pub param: Option<String>,
    pub before: String,
    pub after: String,
}

/// The fields of each `entries` row, with what they hold: the crate docs' schema is rendered
/// from this list; a test checks it against [`Entry`]'s field docs.
pub const ENTRY_FIELDS: &[(&str, &str)] = &[
    ("symbol", "the name asked for (`cuMemAlloc`)"),
    ("version", "integer, `major*1000 + minor*10`: the ABI's introducing version"),
    ("variant", "`null`, `\"ptds\"` or `\"ptsz\"`"),
    ("pfn", "the typedef (`PFN_cuMemAlloc_v3020`)"),
    ("header", "the typedef header that declares it"),
    ("module", "the manifest header row it belongs to (`cuda`, `gl`): the generated module"),
    ("platforms", "where the driver has it: `\"linux\"`, `\"windows\"`"),
    ("arch", "`null`, or the one processor architecture whose drivers alone have it (`\"aarch64\"`)"),
    (
        "min_driver",
        "`null`, or the oldest driver (`major*1000 + minor*10`) that has it where NVIDIA's drivers were measured to \
         lack it at `version` (the generator manifest's `[[driver_floor]]`)",
    ),
    ("exported", "the driver library's name for this ABI"),
    ("legacy", "declared only under `__CUDA_API_VERSION_INTERNAL`"),
    ("toolkits", "the pinned toolkits that declare it"),
    ("params", "list of `{name, type}`, Rust types"),
    ("returns", "the Rust return type"),
];

impl Registry {
    /// Reads a registry.json: its text, or what is wrong with it.
    pub fn parse(text: &str) -> Result<Registry, String> {
        #[derive(Deserialize)]
        struct Schema {
            schema: u32,
        }
        let schema: Schema = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if schema.schema != SCHEMA {
            return Err(format!(
                "registry schema {}; this cuda-sys-gen reads schema {SCHEMA}: use the cuda-sys-gen that generated it",
                schema.schema
            ));
        }
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// The file's text: two-space indented, keys in the order above, a trailing newline.
    pub fn to_json(&self) -> Result<Vec<u8>, String> {
        let mut out = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        out.push(b'\n');
        Ok(out)
    }
}
