//! What changed in the driver's entry point surface between two toolkits of one [`Model`]:
//! symbols and ABIs added or removed, unversioned aliases that changed meaning, ABI drift,
//! typedef headers gained or lost. Pure: it reads the model and returns data, no I/O.
//!
//! [`markdown`] renders a [`ToolkitDiff`] for a pull request; serde renders it as JSON.
//!
//! **Verdict.** Breaking: a symbol or ABI removed, drift, an unversioned alias that means another
//! typedef, an ABI turned legacy or moved to another header, a typedef header lost. Additive: new
//! symbols, new ABIs, an ABI no longer legacy, a header gained. Exit statuses 3, 2 and 0 (1 is an
//! error): [`EXIT_STATUSES`].

pub mod markdown;
pub mod toolkits;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::model::{declaration_drift, AliasTarget, Declaration, Drift, Entry, Model, Param, ToolkitSummary};
use crate::names::Variant;
use crate::platform::Platform;
use crate::syntax::RustType;
use crate::version::ToolkitVersion;
use crate::Error;

/// The report. Every list is sorted (by symbol, version, variant; drift by PFN and parameter).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolkitDiff {
    pub from: Side,
    pub to: Side,
    pub verdict: Verdict,
    /// The exit status of `diff` without `--fail-on`: 0, 2 or 3.
    pub exit_status: u8,
    pub counts: Vec<CountRow>,
    /// Symbols `to` declares and `from` does not, with every ABI `to` declares.
    pub symbols_added: Vec<SymbolChange>,
    /// Symbols `from` declares and `to` does not, with every ABI `from` declared.
    pub symbols_removed: Vec<SymbolChange>,
    /// New ABIs of symbols both declare, each beside the newest ABI `from` had.
    pub new_versions: Vec<NewVersion>,
    /// ABIs `to` no longer declares, of symbols it still has.
    pub entries_removed: Vec<RemovedEntry>,
    /// Unversioned `PFN_<symbol>` names that mean another typedef in `to`.
    pub alias_changes: Vec<AliasChange>,
    /// ABIs both declare whose parameter list, or a type a parameter reaches, changed.
    pub drift: Vec<Drift>,
    /// ABIs both declare that moved under `#if defined(__CUDA_API_VERSION_INTERNAL)` (C code
    /// without that define loses the typedef: breaking) or out of it (additive).
    pub legacy_changes: Vec<LegacyChange>,
    /// ABIs both declare that moved to another typedef header (breaking: another module).
    pub header_moves: Vec<HeaderMove>,
    /// Typedef headers with typedefs in `to` and none in `from`, and the other way round.
    pub headers_gained: Vec<HeaderChange>,
    pub headers_lost: Vec<HeaderChange>,
    /// ABIs both declare whose platforms changed (losing one is breaking, gaining one additive).
    pub platform_changes: Vec<PlatformChange>,
    /// What the caller left out of the comparison, and why (Windows headers a side lacks).
    pub notes: Vec<String>,
}

/// One side of the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Side {
    pub version: ToolkitVersion,
    /// Where its headers came from (`nvidia-cuda-runtime-cu12 12.9.79`, `a local toolkit`).
    pub source: String,
    /// The unversioned-alias rule of the toolkit as a whole.
    pub alias_rule: AliasRule,
}

/// How much a change matters to code built against `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Nothing in the entry point surface changed.
    Unchanged,
    /// Only additions: new symbols, new ABIs, new headers, an ABI out of the legacy guard or on
    /// a new platform.
    Additive,
    /// Something existing code may rely on went away or changed: a removal, an alias that
    /// means another typedef, ABI drift, an ABI moved under the legacy guard or to another
    /// header or off a platform, a lost header.
    Breaking,
}

/// `diff`'s exit statuses and what each means: the one source of `diff --help`'s table and of
/// docs/diff.md's (`tests/tests/diff.rs` checks both).
pub const EXIT_STATUSES: [(u8, &str); 4] = [
    (0, "nothing changed (or, with `--fail-on breaking`, additions only)"),
    (1, "error: bad arguments, a version that is not pinned, a path without headers, the same toolkit twice, a failed download"),
    (2, "additions only: new symbols, new ABI versions of existing symbols, new typedef headers, an ABI no longer legacy"),
    (
        3,
        "breaking: symbols or ABIs removed, ABI drift, an unversioned alias that now means another typedef, an ABI turned \
         legacy or moved to another header, a typedef header lost",
    ),
];

impl Verdict {
    /// 0 unchanged, 2 additive, 3 breaking (1 is left to errors): [`EXIT_STATUSES`].
    pub fn exit_status(self) -> u8 {
        match self {
            Verdict::Unchanged => 0,
            Verdict::Additive => 2,
            Verdict::Breaking => 3,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Unchanged => "unchanged",
            Verdict::Additive => "additive",
            Verdict::Breaking => "breaking",
        }
    }
}

/// Which rule gives the unversioned `PFN_<symbol>` its meaning in one toolkit
/// (see [`Model::alias_in`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum AliasRule {
    /// The toolkit's headers `#define PFN_<symbol>` (11.x, 12.x).
    #[serde(rename = "header macro")]
    HeaderMacro,
    /// The toolkit's headers define no aliases at all (13.x): the highest version declared.
    #[serde(rename = "highest version (no macros)")]
    HighestVersion,
    /// The headers define aliases, but not this one: the highest version declared.
    #[serde(rename = "highest version (no macro for this symbol)")]
    HighestVersionNoMacro,
}

impl AliasRule {
    pub fn as_str(self) -> &'static str {
        match self {
            AliasRule::HeaderMacro => "header macro",
            AliasRule::HighestVersion => "highest version (no macros)",
            AliasRule::HighestVersionNoMacro => "highest version (no macro for this symbol)",
        }
    }
}

/// One line of the per-toolkit counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CountRow {
    pub what: String,
    pub from: usize,
    pub to: usize,
}

/// One ABI as one toolkit declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntryView {
    pub pfn: String,
    pub version: u32,
    pub variant: Option<Variant>,
    /// The name the driver exports it under (`cuCtxCreate_v4`).
    pub exported: String,
    pub legacy: bool,
    pub header: String,
    /// Where the driver has it.
    pub platforms: BTreeSet<Platform>,
    pub params: Vec<Param>,
    pub returns: RustType,
}

impl EntryView {
    /// `(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> CUresult`
    pub fn signature(&self) -> String {
        let params: Vec<String> = self.params.iter().map(|p| format!("{}: {}", p.name, p.ty)).collect();
        format!("({}) -> {}", params.join(", "), self.returns)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SymbolChange {
    pub symbol: String,
    pub entries: Vec<EntryView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewVersion {
    pub symbol: String,
    /// The newest ABI of the same kind (default or per-thread) `from` declared below the
    /// new one; `None` only if `from` had no ABI of that kind at all.
    pub previous: Option<EntryView>,
    pub new: EntryView,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RemovedEntry {
    pub symbol: String,
    pub removed: EntryView,
    /// The newest ABI of the symbol `to` still declares.
    pub newest_left: Option<String>,
}

/// The default form (`PFN_x`) or, under `CUDA_API_PER_THREAD_DEFAULT_STREAM`, the per-thread one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AliasForm {
    Default,
    PerThread,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AliasChange {
    /// `PFN_cuCtxCreate`.
    pub alias: String,
    pub form: AliasForm,
    pub from: AliasMeaning,
    pub to: AliasMeaning,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AliasMeaning {
    /// The typedef the alias names; `None` if the toolkit has no ABI of that kind.
    pub target: Option<String>,
    pub rule: AliasRule,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LegacyChange {
    pub pfn: String,
    /// Legacy in `from`, and in `to`.
    pub from: bool,
    pub to: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeaderMove {
    pub pfn: String,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlatformChange {
    pub pfn: String,
    pub from: BTreeSet<Platform>,
    pub to: BTreeSet<Platform>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeaderChange {
    /// The manifest's header row (`profiler`), which is also the generated module.
    pub header: String,
    /// Its typedef header file (`cudaProfilerTypedefs.h`), as the declarations say.
    pub file: Option<String>,
    pub from_typedefs: usize,
    pub to_typedefs: usize,
}

/// The report as JSON (pretty, in field order), for tools.
pub fn json(d: &ToolkitDiff) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(d).map(|mut s| {
        s.push('\n');
        s
    })
}

/// The count row of resolved `#define PFN_x` aliases.
pub const HEADER_ALIASES: &str = "header aliases (#define PFN_x, resolved)";

/// Compares toolkit `from` with toolkit `to`, both of which `model` must hold. The model may
/// hold others: drift is found by comparing the two declarations directly, not only between
/// consecutive toolkits.
pub fn diff(model: &Model, from: ToolkitVersion, to: ToolkitVersion) -> Result<ToolkitDiff, Error> {
    if from == to {
        return Err(Error::SameToolkit { version: from, detail: "the report compares two different toolkits".into() });
    }
    let summary = |v: ToolkitVersion| -> Result<&ToolkitSummary, Error> {
        model.toolkits.iter().find(|t| t.version == v).ok_or_else(|| Error::NotInModel {
            version: v,
            present: model.toolkits.iter().map(|t| t.version.to_string()).collect::<Vec<_>>().join(", "),
        })
    };
    let (fs, ts) = (summary(from)?, summary(to)?);
    let in_tk = |e: &Entry, tk: ToolkitVersion| e.declared.contains_key(&tk);
    let symbols_of = |tk: ToolkitVersion| -> BTreeSet<&str> {
        model.entries.values().filter(|e| in_tk(e, tk)).map(|e| e.symbol.as_str()).collect()
    };
    let (from_syms, to_syms) = (symbols_of(from), symbols_of(to));
    let symbol_change = |s: &str, tk: ToolkitVersion| SymbolChange {
        symbol: s.to_owned(),
        entries: model.symbol_entries(s).filter(|e| in_tk(e, tk)).filter_map(|e| view(e, tk)).collect(),
    };
    let symbols_added: Vec<SymbolChange> = to_syms.difference(&from_syms).map(|s| symbol_change(s, to)).collect();
    let symbols_removed: Vec<SymbolChange> = from_syms.difference(&to_syms).map(|s| symbol_change(s, from)).collect();

    let mut new_versions = Vec::new();
    let mut entries_removed = Vec::new();
    let mut drift = Vec::new();
    let mut legacy_changes = Vec::new();
    let mut header_moves = Vec::new();
    let mut platform_changes = Vec::new();
    for e in model.entries.values() {
        match (e.declared.get(&from), e.declared.get(&to)) {
            (None, Some(b)) if from_syms.contains(e.symbol.as_str()) => new_versions.push(NewVersion {
                symbol: e.symbol.clone(),
                previous: previous_in(model, e, from).and_then(|p| view(p, from)),
                new: view_of(e, b),
            }),
            (Some(a), None) if to_syms.contains(e.symbol.as_str()) => entries_removed.push(RemovedEntry {
                symbol: e.symbol.clone(),
                removed: view_of(e, a),
                newest_left: model
                    .symbol_entries(&e.symbol)
                    .filter(|x| in_tk(x, to) && x.variant == e.variant)
                    .max_by_key(|x| x.version)
                    .map(|x| x.pfn.clone()),
            }),
            (Some(a), Some(b)) => {
                drift.extend(declaration_drift(&e.pfn, from, a, to, b));
                if a.legacy != b.legacy {
                    legacy_changes.push(LegacyChange { pfn: e.pfn.clone(), from: a.legacy, to: b.legacy });
                }
                if a.header != b.header {
                    header_moves.push(HeaderMove { pfn: e.pfn.clone(), from: a.header.clone(), to: b.header.clone() });
                }
                if a.platforms != b.platforms {
                    platform_changes.push(PlatformChange {
                        pfn: e.pfn.clone(),
                        from: a.platforms.clone(),
                        to: b.platforms.clone(),
                    });
                }
            }
            _ => {}
        }
    }
    drift.sort();

    let shared: BTreeSet<&str> = from_syms.intersection(&to_syms).copied().collect();
    let alias_changes = alias_changes(model, from, to, &shared);

    let headers: BTreeSet<&str> = fs.headers.keys().chain(ts.headers.keys()).map(String::as_str).collect();
    let files = header_files(model);
    let typedefs = |t: &ToolkitSummary, h: &str| t.headers.get(h).map_or(0, |c| c.typedefs);
    let (mut headers_gained, mut headers_lost) = (Vec::new(), Vec::new());
    for h in &headers {
        let change = HeaderChange {
            header: h.to_string(),
            file: files.get(*h).cloned(),
            from_typedefs: typedefs(fs, h),
            to_typedefs: typedefs(ts, h),
        };
        match (change.from_typedefs, change.to_typedefs) {
            (0, n) if n > 0 => headers_gained.push(change),
            (n, 0) if n > 0 => headers_lost.push(change),
            _ => {}
        }
    }

    let counts = counts(model, fs, ts, &headers, &files);

    let breaking = !symbols_removed.is_empty()
        || !entries_removed.is_empty()
        || !alias_changes.is_empty()
        || !drift.is_empty()
        || legacy_changes.iter().any(|c| c.to)
        || !header_moves.is_empty()
        || platform_changes.iter().any(|c| !c.from.is_subset(&c.to))
        || !headers_lost.is_empty();
    let additive = !symbols_added.is_empty()
        || !new_versions.is_empty()
        || legacy_changes.iter().any(|c| !c.to)
        || !platform_changes.is_empty()
        || !headers_gained.is_empty();
    let verdict = if breaking {
        Verdict::Breaking
    } else if additive {
        Verdict::Additive
    } else {
        Verdict::Unchanged
    };
    let side = |t: &ToolkitSummary| Side {
        version: t.version,
        source: t.source.clone(),
        alias_rule: if t.has_alias_macros { AliasRule::HeaderMacro } else { AliasRule::HighestVersion },
    };
    Ok(ToolkitDiff {
        from: side(fs),
        to: side(ts),
        verdict,
        exit_status: verdict.exit_status(),
        counts,
        symbols_added,
        symbols_removed,
        new_versions,
        entries_removed,
        alias_changes,
        drift,
        legacy_changes,
        header_moves,
        headers_gained,
        headers_lost,
        platform_changes,
        notes: Vec::new(),
    })
}

/// Per symbol both toolkits declare: its unversioned alias, default and per-thread form, where
/// the two toolkits' meanings differ.
fn alias_changes(model: &Model, from: ToolkitVersion, to: ToolkitVersion, shared: &BTreeSet<&str>) -> Vec<AliasChange> {
    let mut alias_changes = Vec::new();
    for &s in shared {
        let (a, b) = (model.alias_in(from, s), model.alias_in(to, s));
        let meaning = |tk: ToolkitVersion, t: &Option<AliasTarget>, per_thread: bool| AliasMeaning {
            target: t.as_ref().map(|t| if per_thread { t.per_thread.clone() } else { t.default.clone() }),
            rule: rule_in(model, tk, s),
        };
        let (da, db) = (meaning(from, &a, false), meaning(to, &b, false));
        let (pa, pb) = (meaning(from, &a, true), meaning(to, &b, true));
        if da.target != db.target {
            alias_changes.push(AliasChange {
                alias: format!("PFN_{s}"),
                form: AliasForm::Default,
                from: da.clone(),
                to: db.clone(),
            });
        }
        // A symbol without per-thread ABIs has a per-thread form equal to its default: one row.
        let has_own_per_thread = pa.target != da.target || pb.target != db.target;
        if pa.target != pb.target && has_own_per_thread {
            alias_changes.push(AliasChange { alias: format!("PFN_{s}"), form: AliasForm::PerThread, from: pa, to: pb });
        }
    }

    alias_changes
}

/// The per-toolkit counts: entries by kind, header aliases, and per typedef header.
fn counts(
    model: &Model,
    fs: &ToolkitSummary,
    ts: &ToolkitSummary,
    headers: &BTreeSet<&str>,
    files: &BTreeMap<String, String>,
) -> Vec<CountRow> {
    let (from, to) = (fs.version, ts.version);
    let in_tk = |e: &Entry, tk: ToolkitVersion| e.declared.contains_key(&tk);
    let symbols = |tk: ToolkitVersion| {
        model.entries.values().filter(|e| in_tk(e, tk)).map(|e| e.symbol.as_str()).collect::<BTreeSet<_>>().len()
    };
    let mut counts = Vec::new();
    let count = |tk: ToolkitVersion, f: &dyn Fn(&Entry) -> bool| {
        model.entries.values().filter(|e| in_tk(e, tk) && f(e)).count()
    };
    let mut row = |what: &str, f: usize, t: usize| counts.push(CountRow { what: what.into(), from: f, to: t });
    row("entries (ABIs)", count(from, &|_| true), count(to, &|_| true));
    row("symbols", symbols(from), symbols(to));
    row("default-stream ABIs", count(from, &|e| e.variant.is_none()), count(to, &|e| e.variant.is_none()));
    row("per-thread ABIs (_ptds, _ptsz)", count(from, &|e| e.variant.is_some()), count(to, &|e| e.variant.is_some()));
    let legacy = |tk: ToolkitVersion| count(tk, &|e| e.declared.get(&tk).is_some_and(|d| d.legacy));
    row("legacy ABIs (only under __CUDA_API_VERSION_INTERNAL)", legacy(from), legacy(to));
    let aliases = |tk: ToolkitVersion| model.header_aliases.get(&tk).map_or(0, |m| m.len());
    row(HEADER_ALIASES, aliases(from), aliases(to));
    for &h in headers {
        let get = |t: &ToolkitSummary| t.headers.get(h).cloned().unwrap_or_default();
        let (a, b) = (get(fs), get(ts));
        let label = files.get(h).map_or_else(|| h.to_owned(), |f| format!("{f} ({h})"));
        row(&format!("{label}: typedefs"), a.typedefs, b.typedefs);
        // Only the headers that have alias macros at all: 11.x/12.x cudaTypedefs.h.
        if a.aliases + b.aliases > 0 {
            row(&format!("{label}: alias macros"), a.aliases, b.aliases);
        }
        if a.broken_aliases + b.broken_aliases > 0 {
            row(&format!("{label}: broken alias macros"), a.broken_aliases, b.broken_aliases);
        }
    }
    counts
}

/// Per header row (module), the typedef header file its declarations name.
fn header_files(model: &Model) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for d in model.entries.values().flat_map(|e| e.declared.values()) {
        out.entry(d.module.clone()).or_insert_with(|| d.header.clone());
    }
    out
}

/// `e` as toolkit `tk` declares it.
fn view(e: &Entry, tk: ToolkitVersion) -> Option<EntryView> {
    e.declared.get(&tk).map(|d| view_of(e, d))
}

fn view_of(e: &Entry, d: &Declaration) -> EntryView {
    EntryView {
        pfn: e.pfn.clone(),
        version: e.version,
        variant: e.variant,
        exported: e.exported.clone(),
        legacy: d.legacy,
        header: d.header.clone(),
        platforms: d.platforms.clone(),
        params: d.params.clone(),
        returns: d.returns.clone(),
    }
}

/// The ABI of `e`'s symbol that `tk` declared last before `e`: the highest version below it
/// of the same variant, else the highest of that variant, else the highest default one.
fn previous_in<'a>(model: &'a Model, e: &'a Entry, tk: ToolkitVersion) -> Option<&'a Entry> {
    let declared: Vec<&Entry> = model.symbol_entries(&e.symbol).filter(|x| x.declared.contains_key(&tk)).collect();
    let best =
        |f: &dyn Fn(&Entry) -> bool| declared.iter().copied().filter(|x| f(x)).max_by_key(|x| (x.version, x.variant));
    best(&|x| x.variant == e.variant && x.version < e.version)
        .or_else(|| best(&|x| x.variant == e.variant))
        .or_else(|| best(&|x| x.variant.is_none()))
}

/// Which rule [`Model::alias_in`] follows for `symbol` in `tk`.
fn rule_in(model: &Model, tk: ToolkitVersion, symbol: &str) -> AliasRule {
    match model.header_aliases.get(&tk) {
        Some(m) if m.contains_key(&format!("PFN_{symbol}")) => AliasRule::HeaderMacro,
        Some(_) => AliasRule::HighestVersionNoMacro,
        None => AliasRule::HighestVersion,
    }
}
