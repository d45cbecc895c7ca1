//! The model: every entry point ABI of every toolkit, merged. Pure data, BTree-ordered, no I/O.
//!
//! Its vocabulary is its own: what the readers hand it (`input`: declarations, parameters,
//! alias targets, counts) and what the emitter renders beside it (`crate_parts`: the
//! crate's modules and types). Readers import the model, never the reverse.
//!
//! Built once from per-toolkit declarations ([`Model::build`]); everything derived (exported
//! names, the signature shown, drift) is computed from the full set, so the order in which
//! toolkits are given cannot change the result.
//!
//! # Rules it applies
//! - **Exported names.** Sort a symbol's distinct default-variant versions, legacy included: the
//!   first is exported as `S`, the k-th as `S_vk`. A per-thread variant takes the name of the
//!   newest default version at or below its own, plus `_ptds`/`_ptsz`. This reproduces every
//!   `__API_TYPEDEF_PTDS(api, d, p)` pairing of the 11.x and 12.x headers (tested).
//! - **Unversioned aliases** ([`Model::alias_in`]). In a toolkit whose headers define
//!   `PFN_<symbol>`, exactly that (12.9: `PFN_cuCtxCreate` is `_v11040`); otherwise, 13.x
//!   included, the highest default version that toolkit declares (per-thread form: the highest
//!   per-thread variant). The crate-level `pfn::PFN_<symbol>` follows the newest toolkit.
//! - **C names.** `api::cuX` and `aliases::cuda_X_Y::cuX` call the entry whose exported name is
//!   what cuda.h's preprocessor makes of `cuX` in that toolkit and stream mode (12.9:
//!   `cuCtxCreate` is `cuCtxCreate_v2`; 13.0: `cuCtxCreate_v4`; 12.0 on: `cuGraphInstantiate` is
//!   `cuGraphInstantiateWithFlags`). A name whose expansion is an inline function of the header
//!   (`cuGetProcAddress` under `CUDA_API_PER_THREAD_DEFAULT_STREAM`) has no function in that mode;
//!   one whose expansion no entry is exported under is `Error::UnresolvedCName`, and nothing is
//!   written. `tests/tests/c_names.rs` checks the whole map against clang's own name resolution.
//! - **Platforms.** An entry's platforms are its manifest row's `platforms` (where NVIDIA ships
//!   the typedef header), plus Windows when the Windows unit sees it: EGL and VDPAU are Linux only
//!   (no Windows wheel has them), D3D and WGL Windows only. The manifest's `[[arch_only]]`
//!   ([`Model::restrict_arch`]) narrows a symbol to one processor architecture where the drivers
//!   were measured to differ from the headers (`cuEventCreateFromEGLSync`: aarch64).
//! - **Measured driver floors** ([`Model::apply_driver_floors`]). Where NVIDIA's drivers were
//!   measured to lack an entry at the version its typedef names, the manifest's
//!   `[[driver_floor]]` gives the floor (`cuDeviceGetLuid`: 11.2, not 10.0: 418 and 450 lack it,
//!   460 has it): `Entry::min_driver`, the marker's `MIN_DRIVER` and min-driver's answer.
//!   `tests/tests/real_drivers.rs` holds each rule against every fetched driver. The lookup rule
//!   is unchanged by it: a lacking driver answers "not found", never a wrong ABI.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::error::Warning;
use crate::layout::layout_drift;
use crate::names::Variant;
use crate::platform::Platform;
use crate::syntax::RustType;
use crate::version::ToolkitVersion;

mod crate_parts;
mod input;

pub use crate_parts::{CDocs, CrateTypes, ModuleSpec};
pub use input::{AliasTarget, CNameExports, Declaration, HeaderCount, Param, ToolkitInput};

/// The most toolkits one crate is generated from: the registry keeps the toolkits that declare
/// an entry as the bits of a `u64` (`EntryInfo::toolkit_mask`). The manifest, the toolkits a
/// run collects, `--add-toolkit` and the emitter all refuse more.
pub const MAX_TOOLKITS: usize = u64::BITS as usize;

/// [`crate::Error::TooManyToolkits`] where `versions` are more than [`MAX_TOOLKITS`].
pub fn check_toolkit_count(versions: impl IntoIterator<Item = ToolkitVersion>) -> Result<(), crate::Error> {
    let versions: BTreeSet<ToolkitVersion> = versions.into_iter().collect();
    match (versions.first(), versions.last()) {
        (Some(&first), Some(&last)) if versions.len() > MAX_TOOLKITS => {
            Err(crate::Error::TooManyToolkits { count: versions.len(), first, last, max: MAX_TOOLKITS })
        }
        _ => Ok(()),
    }
}

/// The registry entries a C name means in one toolkit, by the typedef of each (`pfn`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CNameTarget {
    pub default: Option<String>,
    pub per_thread: Option<String>,
}

/// A C name whose expansion no registry entry of its toolkit is exported as.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnresolvedCName {
    pub toolkit: ToolkitVersion,
    pub c_name: String,
    pub exported: String,
    pub per_thread: bool,
}

/// (symbol, version, variant): the identity of an ABI, and the registry's sort order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryKey {
    pub symbol: String,
    pub version: u32,
    pub variant: Option<Variant>,
}

/// One ABI of one symbol, merged over every toolkit that declares it.
///
/// Its first fields are `registry.json`'s row ([`crate::registry_json::Entry`]) by name, and
/// they stay two types: this one is the merge's, with what only the generator uses (the
/// parameters as parsed types, the floor's evidence, each toolkit's declaration), while the
/// file's row is plain data that min-driver and other readers take without the model (its
/// module is a leaf). `emit::registry` maps one to the other, field by field, in one place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub symbol: String,
    pub version: u32,
    pub variant: Option<Variant>,
    pub pfn: String,
    pub header: String,
    /// The manifest header row it belongs to: the generated module.
    pub module: String,
    /// Where the driver has it (`linux`, `windows`).
    pub platforms: BTreeSet<Platform>,
    /// The one processor architecture whose drivers have it (the manifest's `[[arch_only]]`),
    /// or `None`: every architecture of its platforms.
    pub arch: Option<String>,
    /// The oldest driver that has it, where NVIDIA's drivers were measured to lack it at its
    /// own version (the manifest's `[[driver_floor]]`); `None`: its version.
    pub min_driver: Option<u32>,
    /// How [`Entry::min_driver`] was found out (the rule's `evidence`).
    #[serde(skip)]
    pub min_driver_evidence: Option<String>,
    /// The name the driver library exports this ABI under (`cuMemAlloc_v2`).
    pub exported: String,
    pub legacy: bool,
    pub toolkits: BTreeSet<ToolkitVersion>,
    /// From the newest toolkit that declares it.
    pub params: Vec<Param>,
    pub returns: RustType,
    #[serde(skip)]
    pub declared: BTreeMap<ToolkitVersion, Declaration>,
}

impl Entry {
    pub fn key(&self) -> EntryKey {
        EntryKey { symbol: self.symbol.clone(), version: self.version, variant: self.variant }
    }
}

/// A PFN that kept its name while its ABI changed between two toolkits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Drift {
    pub pfn: String,
    pub from: ToolkitVersion,
    pub to: ToolkitVersion,
    /// The parameter, or `None` when the parameter list itself changed.
    pub param: Option<String>,
    pub before: String,
    pub after: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolkitSummary {
    pub version: ToolkitVersion,
    pub source: String,
    pub headers: BTreeMap<String, HeaderCount>,
    /// Whether its headers define `PFN_x` aliases (11.x and 12.x do, 13.x does not).
    pub has_alias_macros: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Model {
    pub toolkits: Vec<ToolkitSummary>,
    #[serde(serialize_with = "entries_as_list")]
    pub entries: BTreeMap<EntryKey, Entry>,
    pub header_aliases: BTreeMap<ToolkitVersion, BTreeMap<String, AliasTarget>>,
    pub drift: Vec<Drift>,
    /// Per toolkit, what each of its C names means: the entries a C program of that
    /// toolkit calls, in each stream mode.
    pub c_names: BTreeMap<ToolkitVersion, BTreeMap<String, CNameTarget>>,
    /// C names whose expansion is no entry of their toolkit: a generate error.
    #[serde(skip)]
    pub unresolved_c_names: Vec<UnresolvedCName>,
    /// Problems found while merging (a per-thread typedef without a default ABI, say).
    pub warnings: Vec<Warning>,
}

fn entries_as_list<S: serde::Serializer>(entries: &BTreeMap<EntryKey, Entry>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(entries.values())
}

impl Model {
    /// Merges toolkits. Deterministic and independent of the order of `inputs`; if the same
    /// toolkit version appears twice, the later input replaces the earlier one.
    /// Gives each `[[arch_only]]` symbol's entries their one architecture. A rule whose symbol
    /// no toolkit declares (a manifest without that header row, say) is a warning.
    pub fn restrict_arch<'a>(&mut self, rules: impl IntoIterator<Item = (&'a str, &'a str)>) {
        for (symbol, arch) in rules {
            let mut found = false;
            for e in self.entries.values_mut().filter(|e| e.symbol == symbol) {
                e.arch = Some(arch.to_owned());
                found = true;
            }
            if !found {
                self.warnings.push(Warning::general(format!(
                    "the manifest's [[arch_only]] names `{symbol}`, which no toolkit declares: the rule does nothing"
                )));
            }
        }
    }

    /// Gives each `[[driver_floor]]` typedef its measured floor. A rule for a typedef no
    /// toolkit declares is a warning, as with `[[arch_only]]`.
    /// `rules`: (typedef, floor as `major * 1000 + minor * 10`, evidence).
    pub fn apply_driver_floors<'a>(&mut self, rules: impl IntoIterator<Item = (&'a str, u32, &'a str)>) {
        for (pfn, floor, evidence) in rules {
            match self.entries.values_mut().find(|e| e.pfn == pfn) {
                Some(e) => {
                    e.min_driver = Some(floor);
                    e.min_driver_evidence = Some(evidence.to_owned());
                }
                None => self.warnings.push(Warning::general(format!(
                    "the manifest's [[driver_floor]] names `{pfn}`, which no toolkit declares: the rule does nothing"
                ))),
            }
        }
    }

    pub fn build(inputs: Vec<ToolkitInput>) -> Model {
        let mut by_version: BTreeMap<ToolkitVersion, ToolkitInput> = BTreeMap::new();
        for input in inputs {
            by_version.insert(input.version, input);
        }
        let mut entries: BTreeMap<EntryKey, Entry> = BTreeMap::new();
        for (&tk, input) in &by_version {
            for d in &input.declarations {
                let key = EntryKey { symbol: d.symbol.clone(), version: d.version, variant: d.variant };
                let e = entries.entry(key).or_insert_with(|| Entry {
                    symbol: d.symbol.clone(),
                    version: d.version,
                    variant: d.variant,
                    pfn: d.pfn.clone(),
                    header: String::new(),
                    module: String::new(),
                    platforms: BTreeSet::new(),
                    arch: None,
                    min_driver: None,
                    min_driver_evidence: None,
                    exported: String::new(),
                    legacy: false,
                    toolkits: BTreeSet::new(),
                    params: vec![],
                    returns: RustType::unit(),
                    declared: BTreeMap::new(),
                });
                e.toolkits.insert(tk);
                e.platforms.extend(d.platforms.iter().copied());
                e.declared.insert(tk, d.clone());
            }
        }
        let mut drift = Vec::new();
        for e in entries.values_mut() {
            // The newest declaration speaks for the entry; iteration is in toolkit order.
            if let Some(newest) = e.declared.values().next_back() {
                e.header = newest.header.clone();
                e.module = newest.module.clone();
                e.legacy = newest.legacy;
                e.params = newest.params.clone();
                e.returns = newest.returns.clone();
            }
            drift.extend(entry_drift(e));
        }
        let warnings = assign_exported_names(&mut entries);
        let toolkits = by_version
            .values()
            .map(|t| ToolkitSummary {
                version: t.version,
                source: t.source.clone(),
                headers: t.counts.clone(),
                has_alias_macros: !t.aliases.is_empty(),
            })
            .collect();
        let header_aliases =
            by_version.values().filter(|t| !t.aliases.is_empty()).map(|t| (t.version, t.aliases.clone())).collect();
        drift.sort();
        let (c_names, unresolved_c_names) = resolve_c_names(&by_version, &entries);
        Model { toolkits, entries, header_aliases, drift, c_names, unresolved_c_names, warnings }
    }

    pub fn newest_toolkit(&self) -> Option<ToolkitVersion> {
        self.toolkits.last().map(|t| t.version)
    }

    /// Entries of one symbol, in (version, variant) order.
    pub fn symbol_entries<'a>(&'a self, symbol: &'a str) -> impl Iterator<Item = &'a Entry> + 'a {
        let start = EntryKey { symbol: symbol.to_owned(), version: 0, variant: None };
        self.entries.range(start..).map(|(_, e)| e).take_while(move |e| e.symbol == symbol)
    }

    /// Symbols in order.
    pub fn symbols(&self) -> BTreeSet<&str> {
        self.entries.keys().map(|k| k.symbol.as_str()).collect()
    }

    /// What the unversioned `PFN_<symbol>` means in `toolkit`, or `None` if the toolkit
    /// declares no default ABI of the symbol.
    ///
    /// The rule: where the toolkit's own headers define `PFN_<symbol>` (11.x and 12.x),
    /// exactly that; otherwise (13.x, and symbols a 12.x header forgot) the highest version
    /// the toolkit declares, and for the per-thread form the highest per-thread variant, or
    /// the default where the symbol has none.
    pub fn alias_in(&self, toolkit: ToolkitVersion, symbol: &str) -> Option<AliasTarget> {
        let alias = format!("PFN_{symbol}");
        if let Some(t) = self.header_aliases.get(&toolkit).and_then(|m| m.get(&alias)) {
            return Some(t.clone());
        }
        let declared: Vec<&Entry> = self.symbol_entries(symbol).filter(|e| e.toolkits.contains(&toolkit)).collect();
        let default = declared.iter().filter(|e| e.variant.is_none()).max_by_key(|e| e.version)?;
        let per_thread =
            declared.iter().filter(|e| e.variant.is_some()).max_by_key(|e| (e.version, e.variant)).unwrap_or(default);
        Some(AliasTarget { default: default.pfn.clone(), per_thread: per_thread.pfn.clone() })
    }
}

/// Compares each declaration with the previous toolkit's.
fn entry_drift(e: &Entry) -> Vec<Drift> {
    let decls: Vec<(&ToolkitVersion, &Declaration)> = e.declared.iter().collect();
    decls
        .windows(2)
        .flat_map(|pair| match pair {
            [(from, a), (to, b)] => declaration_drift(&e.pfn, **from, a, **to, b),
            _ => Vec::new(),
        })
        .collect()
}

/// Where two declarations of one PFN differ in ABI: the parameter list itself, or the layout
/// of what a parameter reaches ([`layout_drift`]). Any two toolkits, not only consecutive ones.
pub fn declaration_drift(
    pfn: &str,
    from: ToolkitVersion,
    a: &Declaration,
    to: ToolkitVersion,
    b: &Declaration,
) -> Vec<Drift> {
    let types = |d: &Declaration| d.params.iter().map(|p| p.ty.to_string()).collect::<Vec<_>>();
    if types(a) != types(b) || a.returns != b.returns {
        return vec![Drift {
            pfn: pfn.to_owned(),
            from,
            to,
            param: None,
            before: format!("({}) -> {}", types(a).join(", "), a.returns),
            after: format!("({}) -> {}", types(b).join(", "), b.returns),
        }];
    }
    let mut out = Vec::new();
    for ((p, la), lb) in b.params.iter().zip(&a.layouts).zip(&b.layouts) {
        if let Some(why) = layout_drift(&la.tree, &lb.tree) {
            out.push(Drift {
                pfn: pfn.to_owned(),
                from,
                to,
                param: Some(format!("{}: {}", p.name, p.ty)),
                before: la.summary.clone(),
                after: format!("{} ({why})", lb.summary),
            });
        }
    }
    out
}

/// Per toolkit, each C name's expansions as the entries of that toolkit exported so.
#[allow(clippy::type_complexity)]
fn resolve_c_names(
    by_version: &BTreeMap<ToolkitVersion, ToolkitInput>,
    entries: &BTreeMap<EntryKey, Entry>,
) -> (BTreeMap<ToolkitVersion, BTreeMap<String, CNameTarget>>, Vec<UnresolvedCName>) {
    let mut out = BTreeMap::new();
    let mut unresolved = Vec::new();
    for (&tk, input) in by_version.iter().filter(|(_, i)| !i.c_names.is_empty()) {
        let exported: BTreeMap<&str, &Entry> =
            entries.values().filter(|e| e.toolkits.contains(&tk)).map(|e| (e.exported.as_str(), e)).collect();
        let mut names = BTreeMap::new();
        for (c, exports) in &input.c_names {
            let mut target = CNameTarget::default();
            for (per_thread, name, slot) in
                [(false, &exports.default, &mut target.default), (true, &exports.per_thread, &mut target.per_thread)]
            {
                let Some(name) = name else { continue };
                match exported.get(name.as_str()) {
                    Some(e) => *slot = Some(e.pfn.clone()),
                    None => unresolved.push(UnresolvedCName {
                        toolkit: tk,
                        c_name: c.clone(),
                        exported: name.clone(),
                        per_thread,
                    }),
                }
            }
            names.insert(c.clone(), target);
        }
        out.insert(tk, names);
    }
    (out, unresolved)
}

/// The driver exports the k-th distinct default version of `S` as `S_vk` (the first as `S`),
/// legacy versions included; a per-thread variant takes the name of the newest default ABI
/// at or below its version, plus `_ptds`/`_ptsz`.
fn assign_exported_names(entries: &mut BTreeMap<EntryKey, Entry>) -> Vec<Warning> {
    let mut defaults: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for k in entries.keys().filter(|k| k.variant.is_none()) {
        defaults.entry(k.symbol.clone()).or_default().push(k.version);
    }
    let name_of = |symbol: &str, versions: &[u32], v: u32| -> Option<String> {
        let k = versions.iter().position(|&x| x == v)?;
        Some(if k == 0 { symbol.to_owned() } else { format!("{symbol}_v{}", k + 1) })
    };
    let mut warnings = Vec::new();
    for e in entries.values_mut() {
        let versions = defaults.get(&e.symbol).map(Vec::as_slice).unwrap_or(&[]);
        e.exported = match e.variant {
            None => name_of(&e.symbol, versions, e.version).unwrap_or_else(|| e.symbol.clone()),
            Some(variant) => {
                let paired = versions.iter().copied().filter(|&v| v <= e.version).max();
                let base = paired.and_then(|v| name_of(&e.symbol, versions, v));
                if base.is_none() {
                    warnings.push(Warning::general(format!(
                        "{} has no default ABI at or below version {}; its exported name is a guess",
                        e.pfn, e.version
                    )));
                }
                format!("{}{}", base.unwrap_or_else(|| e.symbol.clone()), variant.suffix())
            }
        };
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tk(s: &str) -> ToolkitVersion {
        s.parse().unwrap()
    }

    fn decl(pfn: &str) -> Declaration {
        let d = Declaration::bare(pfn, "cudaTypedefs.h", "cuda").unwrap();
        Declaration { legacy: d.version == 2000, ..d }
    }

    fn input(v: &str, pfns: &[&str], aliases: &[(&str, &str)]) -> ToolkitInput {
        ToolkitInput {
            version: tk(v),
            source: String::new(),
            declarations: pfns.iter().map(|p| decl(p)).collect(),
            aliases: aliases
                .iter()
                .map(|(a, t)| (a.to_string(), AliasTarget { default: t.to_string(), per_thread: t.to_string() }))
                .collect(),
            counts: BTreeMap::new(),
            c_names: BTreeMap::new(),
        }
    }

    #[test]
    fn an_arch_only_rule_marks_every_abi_of_its_symbol_and_an_unknown_symbol_is_an_error() {
        let mut m = Model::build(vec![input("13.0", &["PFN_cuX_v2000", "PFN_cuX_v3020", "PFN_cuY_v4000"], &[])]);
        m.restrict_arch([("cuX", "aarch64")]);
        let arch: Vec<(&str, Option<&str>)> = m.entries.values().map(|e| (e.pfn.as_str(), e.arch.as_deref())).collect();
        assert_eq!(
            arch,
            [("PFN_cuX_v2000", Some("aarch64")), ("PFN_cuX_v3020", Some("aarch64")), ("PFN_cuY_v4000", None)]
        );
        let before = m.warnings.len();
        m.restrict_arch([("cuZ", "aarch64")]);
        assert!(m.warnings[before..].iter().any(|w| w.text.contains("`cuZ`")), "{:?}", m.warnings);
    }

    #[test]
    fn exported_names_and_aliases() {
        let old = input(
            "12.9",
            &["PFN_cuX_v2000", "PFN_cuX_v3020", "PFN_cuX_v7000_ptds", "PFN_cuY_v4000"],
            &[("PFN_cuX", "PFN_cuX_v2000")],
        );
        let new = input(
            "13.0",
            &["PFN_cuX_v2000", "PFN_cuX_v3020", "PFN_cuX_v7000_ptds", "PFN_cuX_v12000", "PFN_cuY_v4000"],
            &[],
        );
        let m = Model::build(vec![new.clone(), old.clone()]);
        let names: Vec<(&str, &str)> = m.entries.values().map(|e| (e.pfn.as_str(), e.exported.as_str())).collect();
        assert_eq!(
            names,
            [
                ("PFN_cuX_v2000", "cuX"),
                ("PFN_cuX_v3020", "cuX_v2"),
                ("PFN_cuX_v7000_ptds", "cuX_v2_ptds"),
                ("PFN_cuX_v12000", "cuX_v3"),
                ("PFN_cuY_v4000", "cuY"),
            ]
        );
        // 12.9's header says v2000; 13.0 has no macros: the highest it declares.
        assert_eq!(m.alias_in(tk("12.9"), "cuX").unwrap().default, "PFN_cuX_v2000");
        assert_eq!(m.alias_in(tk("13.0"), "cuX").unwrap().default, "PFN_cuX_v12000");
        assert_eq!(m.alias_in(tk("13.0"), "cuX").unwrap().per_thread, "PFN_cuX_v7000_ptds");
        assert_eq!(m.alias_in(tk("12.9"), "cuY").unwrap().default, "PFN_cuY_v4000");
        assert_eq!(m.alias_in(tk("12.9"), "cuZ"), None);
        // Order of inputs does not matter.
        assert_eq!(m, Model::build(vec![old, new]));
    }

    #[test]
    fn c_names_resolve_by_exported_name_and_unknown_ones_are_kept() {
        let mut t = input("13.0", &["PFN_cuX_v2000", "PFN_cuX_v3020", "PFN_cuX_v7000_ptds"], &[]);
        let exports = |d: Option<&str>, p: Option<&str>| CNameExports {
            default: d.map(str::to_owned),
            per_thread: p.map(str::to_owned),
        };
        t.c_names.insert("cuX".into(), exports(Some("cuX_v2"), Some("cuX_v2_ptds")));
        t.c_names.insert("cuGone".into(), exports(Some("cuGone_v2"), None));
        let m = Model::build(vec![t]);
        let names = &m.c_names[&tk("13.0")];
        assert_eq!(names["cuX"].default.as_deref(), Some("PFN_cuX_v3020"));
        assert_eq!(names["cuX"].per_thread.as_deref(), Some("PFN_cuX_v7000_ptds"));
        assert_eq!(
            m.unresolved_c_names,
            [UnresolvedCName {
                toolkit: tk("13.0"),
                c_name: "cuGone".into(),
                exported: "cuGone_v2".into(),
                per_thread: false
            }]
        );
    }
}
