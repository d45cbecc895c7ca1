//! `diff` and `generate --add-toolkit`: golden reports for fixture toolkits written for this
//! project (tests/diff-fixtures/), the report's content on real pairs of pinned toolkits, bad
//! input, the exit status policy, and pinning a new toolkit (with a stand-in pip, and once
//! against PyPI itself).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use codegen::diff::toolkits::{self, DiffConfig};
use codegen::diff::{self, markdown, AliasForm, AliasRule, ToolkitDiff, Verdict};
use codegen::fetch::Fetcher;
use codegen::locate::ToolkitSpec;
use codegen::manifest::Manifest;
use codegen::model::{Declaration, HeaderCount, Model, ToolkitInput};
use codegen::pipeline;
use codegen::platform::Platform;
use codegen::ToolkitVersion;
use cuda_sys_gen_tests::*;

fn v(s: &str) -> ToolkitVersion {
    s.parse().unwrap()
}

fn fixtures() -> PathBuf {
    repo_root().join("tests").join("diff-fixtures")
}

/// The two `cuda-*` folders of a diff fixture, oldest first.
fn fixture_toolkits(case: &str) -> (PathBuf, PathBuf) {
    let dir = fixtures().join(case);
    let mut tks: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("cuda-")))
        .collect();
    tks.sort();
    assert_eq!(tks.len(), 2, "{case}: a diff fixture has two toolkits");
    (tks[0].clone(), tks[1].clone())
}

fn run_diff(manifest: &Path, from: ToolkitSpec, to: ToolkitSpec) -> Result<ToolkitDiff, codegen::Error> {
    toolkits::diff_toolkits(&DiffConfig {
        manifest: manifest.to_owned(),
        cache_dir: cache_dir(),
        from,
        to,
        offline: false,
        progress: None,
    })
    .map(|r| r.diff)
}

/// The fixtures hold cuda.h and cudaTypedefs.h only: a manifest of that header row.
fn fixture_manifest() -> tempfile::TempDir {
    manifest_with(Some(&["cuda"]), &[])
}

fn fixture_diff(case: &str) -> ToolkitDiff {
    let (a, b) = fixture_toolkits(case);
    let m = fixture_manifest();
    run_diff(&m.path().join("headers-manifest.toml"), ToolkitSpec::Path(a), ToolkitSpec::Path(b))
        .unwrap_or_else(|e| panic!("{case}: {e}"))
}

/// Compares both renderings with `<case>/expected/` (bless: `CUDA_SYS_GEN_BLESS=1`).
fn check_golden(case: &str, d: &ToolkitDiff) {
    let mut actual = BTreeMap::new();
    actual.insert("report.md".to_owned(), markdown::render(d));
    actual.insert("report.json".to_owned(), diff::json(d).unwrap());
    if let Err(report) = compare_golden(&fixtures().join(case).join("expected"), &actual) {
        panic!("diff fixture {case} differs from its golden report:\n{report}");
    }
}

fn real_diff(from: &str, to: &str) -> ToolkitDiff {
    run_diff(&real_manifest(), ToolkitSpec::Version(v(from)), ToolkitSpec::Version(v(to)))
        .unwrap_or_else(|e| panic!("{from} -> {to}: {e}"))
}

fn pfns(entries: impl IntoIterator<Item = String>) -> BTreeSet<String> {
    entries.into_iter().collect()
}

// ---------------------------------------------------------------------------------------------
// Fixture toolkits: golden reports, and their content spelled out.

#[test]
fn fixture_that_differs_in_every_way() {
    let d = fixture_diff("everything");
    check_golden("everything", &d);

    assert_eq!((d.verdict, d.exit_status), (Verdict::Breaking, 3));
    assert_eq!((d.from.version, d.to.version), (v("12.9"), v("13.0")));
    assert_eq!((d.from.alias_rule, d.to.alias_rule), (AliasRule::HeaderMacro, AliasRule::HighestVersion));
    let added: Vec<&str> = d.symbols_added.iter().map(|c| c.symbol.as_str()).collect();
    assert_eq!(added, ["cuMemGetDefaultMemPool", "cuMemPrefetchBatchAsync"]);
    assert_eq!(d.symbols_added[1].entries.len(), 2, "the default and the _ptsz ABI");
    let removed: Vec<&str> = d.symbols_removed.iter().map(|c| c.symbol.as_str()).collect();
    assert_eq!(removed, ["cuDeviceComputeCapability"]);

    // New ABIs, each beside the newest ABI of its kind the older toolkit had.
    let new: Vec<(String, Option<String>)> =
        d.new_versions.iter().map(|n| (n.new.pfn.clone(), n.previous.as_ref().map(|p| p.pfn.clone()))).collect();
    assert_eq!(
        new,
        [
            ("PFN_cuCtxSynchronize_v13000".to_owned(), Some("PFN_cuCtxSynchronize_v2000".to_owned())),
            ("PFN_cuStreamGetCtx_v12050".to_owned(), Some("PFN_cuStreamGetCtx_v9020".to_owned())),
            ("PFN_cuStreamGetCtx_v12050_ptsz".to_owned(), Some("PFN_cuStreamGetCtx_v9020_ptsz".to_owned())),
        ]
    );
    assert_eq!(d.new_versions[0].new.signature(), "(ctx: CUcontext) -> CUresult");
    assert_eq!(d.new_versions[0].previous.as_ref().unwrap().signature(), "() -> CUresult");

    let gone: Vec<(&str, Option<&str>)> =
        d.entries_removed.iter().map(|r| (r.removed.pfn.as_str(), r.newest_left.as_deref())).collect();
    assert_eq!(
        gone,
        [
            ("PFN_cuStreamWaitValue32_v8000", Some("PFN_cuStreamWaitValue32_v11070")),
            ("PFN_cuStreamWaitValue32_v8000_ptsz", Some("PFN_cuStreamWaitValue32_v11070_ptsz")),
        ]
    );

    // Alias changes under each rule: a header macro, the 12.x "no macro for it" fallback, and
    // 13.x's highest version; per-thread forms only where the symbol has per-thread ABIs.
    type Row<'a> = (&'a str, AliasForm, Option<&'a str>, AliasRule, Option<&'a str>, AliasRule);
    let aliases: Vec<Row> = d
        .alias_changes
        .iter()
        .map(|a| (a.alias.as_str(), a.form, a.from.target.as_deref(), a.from.rule, a.to.target.as_deref(), a.to.rule))
        .collect();
    use AliasForm::*;
    use AliasRule::*;
    assert_eq!(
        aliases,
        [
            (
                "PFN_cuCtxCreate",
                Default,
                Some("PFN_cuCtxCreate_v11040"),
                HeaderMacro,
                Some("PFN_cuCtxCreate_v12050"),
                HighestVersion
            ),
            (
                "PFN_cuCtxSynchronize",
                Default,
                Some("PFN_cuCtxSynchronize_v2000"),
                HeaderMacro,
                Some("PFN_cuCtxSynchronize_v13000"),
                HighestVersion
            ),
            (
                "PFN_cuGraphInstantiate",
                Default,
                Some("PFN_cuGraphInstantiateWithFlags_v11040"),
                HeaderMacro,
                Some("PFN_cuGraphInstantiate_v11000"),
                HighestVersion
            ),
            (
                "PFN_cuStreamGetCtx",
                Default,
                Some("PFN_cuStreamGetCtx_v9020"),
                HighestVersionNoMacro,
                Some("PFN_cuStreamGetCtx_v12050"),
                HighestVersion
            ),
            (
                "PFN_cuStreamGetCtx",
                PerThread,
                Some("PFN_cuStreamGetCtx_v9020_ptsz"),
                HighestVersionNoMacro,
                Some("PFN_cuStreamGetCtx_v12050_ptsz"),
                HighestVersion
            ),
            (
                "PFN_cuStreamWaitValue32",
                Default,
                Some("PFN_cuStreamWaitValue32_v8000"),
                HeaderMacro,
                Some("PFN_cuStreamWaitValue32_v11070"),
                HighestVersion
            ),
            (
                "PFN_cuStreamWaitValue32",
                PerThread,
                Some("PFN_cuStreamWaitValue32_v8000_ptsz"),
                HeaderMacro,
                Some("PFN_cuStreamWaitValue32_v11070_ptsz"),
                HighestVersion
            ),
        ]
    );

    assert_eq!(d.drift.len(), 1);
    assert_eq!(d.drift[0].pfn, "PFN_cuTensorMapEncodeTiled_v12000");
    assert!(
        d.drift[0].after.contains("align 64) became struct CUtensorMap_st (128 bytes, align 128)"),
        "{:?}",
        d.drift[0]
    );
    assert_eq!(d.legacy_changes.len(), 1);
    assert_eq!(
        (d.legacy_changes[0].pfn.as_str(), d.legacy_changes[0].from, d.legacy_changes[0].to),
        ("PFN_cuGraphInstantiate_v11000", false, true)
    );

    let md = markdown::render(&d);
    assert!(md.contains("- **Verdict: breaking**"), "{md}");
    assert!(md.contains("- Alias rule: header macro in CUDA 12.9 (8 header aliases), highest version (no macros) in CUDA 13.0 (0 header aliases)"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&diff::json(&d).unwrap()).unwrap();
    assert_eq!(json["verdict"], "breaking");
    assert_eq!(json["alias_changes"][0]["from"]["rule"], "header macro");
    assert_eq!(json["alias_changes"][0]["to"]["rule"], "highest version (no macros)");
}

#[test]
fn fixture_with_additions_only() {
    let d = fixture_diff("additive");
    check_golden("additive", &d);
    assert_eq!((d.verdict, d.exit_status), (Verdict::Additive, 2));
    assert_eq!(d.symbols_added.len(), 1);
    assert!(d.alias_changes.is_empty(), "a new symbol's alias is not a change: {:?}", d.alias_changes);
}

#[test]
fn fixture_without_changes() {
    let d = fixture_diff("unchanged");
    check_golden("unchanged", &d);
    assert_eq!((d.verdict, d.exit_status), (Verdict::Unchanged, 0));
    assert!(markdown::render(&d).contains("nothing in the entry point surface changed"));
}

fn module_of(header: &str) -> &'static str {
    match header {
        "cudaTypedefs.h" => "cuda",
        "cudaGLTypedefs.h" => "gl",
        "cudaVDPAUTypedefs.h" => "vdpau",
        "cudaProfilerTypedefs.h" => "profiler",
        _ => "other",
    }
}

/// Headers gained and lost, and an ABI that moves between headers. Every Linux header row must
/// be present in every toolkit the pipeline reads (a missing one is an error), and `diff` leaves
/// the Windows rows out when a side lacks them, so these come from models built by hand.
#[test]
fn headers_gained_lost_and_moved() {
    let decl = |pfn: &str, header: &str| Declaration::bare(pfn, header, module_of(header)).unwrap();
    let input = |version: &str, decls: Vec<Declaration>| {
        // Counted per header row, as the pipeline does.
        let mut counts: BTreeMap<String, HeaderCount> = BTreeMap::new();
        for d in &decls {
            counts.entry(d.module.clone()).or_default().typedefs += 1;
        }
        counts.entry("cuda".into()).or_default();
        ToolkitInput {
            version: v(version),
            source: "by hand".into(),
            declarations: decls,
            aliases: BTreeMap::new(),
            counts,
            c_names: BTreeMap::new(),
        }
    };
    let old = input(
        "13.0",
        vec![
            decl("PFN_cuInit_v2000", "cudaTypedefs.h"),
            decl("PFN_cuVDPAUGetDevice_v3010", "cudaVDPAUTypedefs.h"),
            decl("PFN_cuGLGetDevices_v6050", "cudaTypedefs.h"),
        ],
    );
    let new = input(
        "13.1",
        vec![
            decl("PFN_cuInit_v2000", "cudaTypedefs.h"),
            decl("PFN_cuGLGetDevices_v6050", "cudaGLTypedefs.h"),
            decl("PFN_cuProfilerStart_v4000", "cudaProfilerTypedefs.h"),
            decl("PFN_cuProfilerStop_v4000", "cudaProfilerTypedefs.h"),
        ],
    );
    let model = Model::build(vec![old, new]);
    let d = diff::diff(&model, v("13.0"), v("13.1")).unwrap();
    let names = |h: &[diff::HeaderChange]| {
        h.iter()
            .map(|h| (h.header.clone(), h.file.clone().unwrap_or_default(), h.from_typedefs, h.to_typedefs))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&d.headers_gained),
        [
            ("gl".to_owned(), "cudaGLTypedefs.h".to_owned(), 0, 1),
            ("profiler".to_owned(), "cudaProfilerTypedefs.h".to_owned(), 0, 2)
        ]
    );
    assert_eq!(names(&d.headers_lost), [("vdpau".to_owned(), "cudaVDPAUTypedefs.h".to_owned(), 1, 0)]);
    assert_eq!(d.header_moves.len(), 1);
    assert_eq!(
        (d.header_moves[0].from.as_str(), d.header_moves[0].to.as_str()),
        ("cudaTypedefs.h", "cudaGLTypedefs.h")
    );
    assert_eq!(d.verdict, Verdict::Breaking);
    let md = markdown::render(&d);
    assert!(md.contains("| `cudaProfilerTypedefs.h` (`profiler`) | 0 | 2 | gained |"), "{md}");
    assert!(md.contains("| `cudaVDPAUTypedefs.h` (`vdpau`) | 1 | 0 | lost |"), "{md}");
    assert!(
        md.contains("| `PFN_cuGLGetDevices_v6050` | moved to another header | `cudaTypedefs.h` | `cudaGLTypedefs.h` |"),
        "{md}"
    );
    assert!(md.contains("- Typedef headers: 2 gained (`cudaGLTypedefs.h`, `cudaProfilerTypedefs.h`), 1 lost (`cudaVDPAUTypedefs.h`)"), "{md}");

    // A gained header alone is an addition.
    let old = input("13.0", vec![decl("PFN_cuInit_v2000", "cudaTypedefs.h")]);
    let new = input(
        "13.1",
        vec![decl("PFN_cuInit_v2000", "cudaTypedefs.h"), decl("PFN_cuProfilerStart_v4000", "cudaProfilerTypedefs.h")],
    );
    let d = diff::diff(&Model::build(vec![old, new]), v("13.0"), v("13.1")).unwrap();
    assert_eq!((d.verdict, d.headers_gained.len(), d.headers_lost.len()), (Verdict::Additive, 1, 0));
}

// ---------------------------------------------------------------------------------------------
// Real pairs of pinned toolkits.

/// The cached include folder of a pinned toolkit's Linux runtime wheel.
fn runtime_include(version: &str) -> PathBuf {
    let pin = Manifest::load(&real_manifest()).unwrap().toolkit(v(version)).unwrap().packages[0].clone();
    cache_dir().join("include").join(pin.file.trim_end_matches(".whl"))
}

/// The versioned PFN names a toolkit's cudaTypedefs.h spells out, read off the text: an
/// independent check of what the report says was added and removed.
fn header_pfns(version: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(runtime_include(version).join("cudaTypedefs.h")).unwrap();
    // 12.4 to 12.9 spell four typedefs without a version and rename them with an earlier
    // `#define PFN_x PFN_x_v12040`.
    let renamed: BTreeMap<&str, &str> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define")).then_some(())?;
            Some((w.next()?, w.next()?))
        })
        .collect();
    text.split("*PFN_")
        .skip(1)
        .map(|rest| {
            format!("PFN_{}", rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or(""))
        })
        .map(|n| {
            renamed
                .get(n.as_str())
                .filter(|t| codegen::names::split_pfn_name(t).is_ok())
                .map_or(n.clone(), |t| t.to_string())
        })
        .filter(|n| codegen::names::split_pfn_name(n).is_ok())
        .collect()
}

/// What the report lists as added and removed from cudaTypedefs.h is what the two texts differ by.
fn assert_matches_header_text(d: &ToolkitDiff) {
    let (from, to) = (header_pfns(&d.from.version.to_string()), header_pfns(&d.to.version.to_string()));
    let cuda = |e: &&diff::EntryView| e.header == "cudaTypedefs.h";
    let added = pfns(
        d.symbols_added
            .iter()
            .flat_map(|c| c.entries.iter())
            .chain(d.new_versions.iter().map(|n| &n.new))
            .filter(cuda)
            .map(|e| e.pfn.clone()),
    );
    let removed = pfns(
        d.symbols_removed
            .iter()
            .flat_map(|c| c.entries.iter())
            .chain(d.entries_removed.iter().map(|r| &r.removed))
            .filter(cuda)
            .map(|e| e.pfn.clone()),
    );
    assert_eq!(added, to.difference(&from).cloned().collect(), "{} -> {}: added", d.from.version, d.to.version);
    assert_eq!(removed, from.difference(&to).cloned().collect(), "{} -> {}: removed", d.from.version, d.to.version);
}

#[test]
fn real_11_7_to_11_8_shows_the_attribute_value_drift() {
    let d = real_diff("11.7", "11.8");
    assert_matches_header_text(&d);
    assert_eq!(d.verdict, Verdict::Breaking);
    let drifted: BTreeSet<&str> = d.drift.iter().map(|x| x.pfn.as_str()).collect();
    for pfn in [
        "PFN_cuStreamSetAttribute_v11000",
        "PFN_cuStreamSetAttribute_v11000_ptsz",
        "PFN_cuStreamGetAttribute_v11000",
        "PFN_cuStreamGetAttribute_v11000_ptsz",
        "PFN_cuGraphKernelNodeSetAttribute_v11000",
        "PFN_cuGraphKernelNodeGetAttribute_v11000",
    ] {
        assert!(drifted.contains(pfn), "no drift for {pfn}: {drifted:?}");
    }
    assert_eq!(drifted.len(), 6, "nothing else drifts: {drifted:?}");
    let stream = d.drift.iter().find(|x| x.pfn == "PFN_cuStreamSetAttribute_v11000").unwrap();
    assert_eq!(stream.param.as_deref(), Some("param: *const CUstreamAttrValue_v1"));
    assert!(stream.before.contains("CUstreamAttrValue_union (32 bytes)"), "{stream:?}");
    assert!(stream.after.contains("CUlaunchAttributeValue_union (64 bytes)"), "{stream:?}");
    assert!(d.symbols_removed.is_empty() && d.entries_removed.is_empty() && d.alias_changes.is_empty());
    assert!(d.symbols_added.iter().any(|c| c.symbol == "cuLaunchKernelEx"));
    let md = markdown::render(&d);
    assert!(md.contains("| `PFN_cuStreamSetAttribute_v11000` | `param: *const CUstreamAttrValue_v1` | points to union CUstreamAttrValue_union (32 bytes) |"), "{md}");
    assert!(md.contains("- ABI drift: 6 parameters in 6 PFNs"), "{md}");
}

#[test]
fn real_12_4_to_12_5_brings_cu_ctx_create_v4() {
    let d = real_diff("12.4", "12.5");
    assert_matches_header_text(&d);
    assert_eq!((d.verdict, d.exit_status), (Verdict::Additive, 2));
    let n = d.new_versions.iter().find(|n| n.symbol == "cuCtxCreate").expect("cuCtxCreate has a new ABI");
    let prev = n.previous.as_ref().unwrap();
    assert_eq!((prev.pfn.as_str(), prev.exported.as_str()), ("PFN_cuCtxCreate_v11040", "cuCtxCreate_v3"));
    assert_eq!((n.new.pfn.as_str(), n.new.exported.as_str()), ("PFN_cuCtxCreate_v12050", "cuCtxCreate_v4"));
    assert!(
        prev.signature().contains("paramsArray: *mut CUexecAffinityParam, numParams: c_int"),
        "{}",
        prev.signature()
    );
    assert!(n.new.signature().contains("ctxCreateParams: *mut CUctxCreateParams"), "{}", n.new.signature());
    // The 12.5 header keeps `PFN_cuCtxCreate` at v11040: no alias change.
    assert!(d.alias_changes.is_empty(), "{:?}", d.alias_changes);
    let md = markdown::render(&d);
    let row = md.lines().find(|l| l.starts_with("| `cuCtxCreate` |")).expect("a cuCtxCreate row");
    assert!(
        row.contains("`PFN_cuCtxCreate_v11040`, exported as `cuCtxCreate_v3`")
            && row.contains("`PFN_cuCtxCreate_v12050`, exported as `cuCtxCreate_v4`"),
        "{row}"
    );
    let streams: Vec<&str> =
        d.new_versions.iter().filter(|n| n.symbol == "cuStreamGetCtx").map(|n| n.new.pfn.as_str()).collect();
    assert_eq!(streams, ["PFN_cuStreamGetCtx_v12050", "PFN_cuStreamGetCtx_v12050_ptsz"]);
}

#[test]
fn real_12_9_to_13_0_loses_the_header_aliases() {
    let d = real_diff("12.9", "13.0");
    assert_matches_header_text(&d);
    assert_eq!(d.verdict, Verdict::Breaking);
    assert_eq!((d.from.alias_rule, d.to.alias_rule), (AliasRule::HeaderMacro, AliasRule::HighestVersion));
    let aliases = d.counts.iter().find(|c| c.what == diff::HEADER_ALIASES).unwrap();
    assert!(aliases.from > 400 && aliases.to == 0, "{aliases:?}");
    let ctx = d.alias_changes.iter().find(|a| a.alias == "PFN_cuCtxCreate").expect("PFN_cuCtxCreate changes meaning");
    assert_eq!((ctx.from.target.as_deref(), ctx.from.rule), (Some("PFN_cuCtxCreate_v11040"), AliasRule::HeaderMacro));
    assert_eq!((ctx.to.target.as_deref(), ctx.to.rule), (Some("PFN_cuCtxCreate_v12050"), AliasRule::HighestVersion));
    // An alias that named another symbol in 12.9.
    let gi = d.alias_changes.iter().find(|a| a.alias == "PFN_cuGraphInstantiate").unwrap();
    assert_eq!(gi.from.target.as_deref(), Some("PFN_cuGraphInstantiateWithFlags_v11040"));
    // Every changed alias is one whose 12.9 macro was not the highest version 13.0 declares.
    assert!(d
        .alias_changes
        .iter()
        .all(|a| a.from.rule == AliasRule::HeaderMacro && a.to.rule == AliasRule::HighestVersion));
    let drifted: BTreeSet<&str> = d.drift.iter().map(|x| x.pfn.as_str()).collect();
    assert_eq!(
        drifted,
        [
            "PFN_cuTensorMapEncodeIm2colWide_v12080",
            "PFN_cuTensorMapEncodeIm2col_v12000",
            "PFN_cuTensorMapEncodeTiled_v12000",
            "PFN_cuTensorMapReplaceAddress_v12000"
        ]
        .into()
    );
    assert!(d.drift.iter().all(|x| x.after.contains("align 64) became struct CUtensorMap_st (128 bytes, align 128)")));
    assert!(d.new_versions.iter().any(|n| n.new.pfn == "PFN_cuCtxSynchronize_v13000"));
    let md = markdown::render(&d);
    assert!(md.contains("| `PFN_cuCtxCreate` | default | `PFN_cuCtxCreate_v11040` | header macro | `PFN_cuCtxCreate_v12050` | highest version (no macros) |"), "{md}");
    assert!(md.contains("header macro in CUDA 12.9 (512 header aliases), highest version (no macros) in CUDA 13.0 (0 header aliases)"), "{md}");
}

#[test]
fn real_13_4_to_13_5_adds_three_abis() {
    let d = real_diff("13.4", "13.5");
    assert_matches_header_text(&d);
    assert_eq!((d.verdict, d.exit_status), (Verdict::Additive, 2));
    let added = pfns(d.symbols_added.iter().flat_map(|c| c.entries.iter().map(|e| e.pfn.clone())));
    assert_eq!(
        added,
        pfns(
            [
                "PFN_cuFabricCpyBatchAsync_v13050",
                "PFN_cuFabricCpyBatchAsync_v13050_ptsz",
                "PFN_cuTensorMapSetAllocationClass_v13050"
            ]
            .map(String::from)
        )
    );
    assert!(d.new_versions.is_empty() && d.alias_changes.is_empty() && d.drift.is_empty());
    assert_eq!((d.from.alias_rule, d.to.alias_rule), (AliasRule::HighestVersion, AliasRule::HighestVersion));
    let cuda = d.counts.iter().find(|c| c.what == "cudaTypedefs.h (cuda): typedefs").unwrap();
    assert_eq!((cuda.from, cuda.to), (682, 685));
    assert_eq!(d.counts[0].to - d.counts[0].from, 3, "no other header changed: {:?}", d.counts);
}

/// In a model of more toolkits, a pair is compared directly: drift across a gap is found, and
/// a consecutive pair gives the same report as a model of those two alone.
#[test]
fn pairs_inside_a_larger_model() {
    let m = manifest_with_toolkits(&["11.7", "11.8", "12.4", "12.9", "13.0"]);
    let manifest = Manifest::load(&m.path().join("headers-manifest.toml")).unwrap();
    let fetcher = Fetcher::new(cache_dir(), &manifest);
    let toolkits: Vec<_> = manifest.toolkits.iter().map(|p| fetcher.toolkit(p).unwrap()).collect();
    let built = pipeline::build_model(&manifest, &fetcher, &toolkits).unwrap();
    let params = |d: &ToolkitDiff| d.drift.iter().filter_map(|x| x.param.clone()).collect::<BTreeSet<String>>();
    // 11.8 lies between: the drift is still 11.7 -> 12.4's.
    let d = diff::diff(&built.model, v("11.7"), v("12.4")).unwrap();
    assert!(params(&d).contains("param: *const CUstreamAttrValue_v1"), "{:?}", params(&d));
    assert!(d.drift.iter().all(|x| (x.from, x.to) == (v("11.7"), v("12.4"))));
    // 12.9 lies between.
    let d = diff::diff(&built.model, v("12.4"), v("13.0")).unwrap();
    assert_eq!(params(&d), ["tensorMap: *mut CUtensorMap".to_owned()].into());
    assert_eq!(d.drift.len(), 3, "the three CUtensorMap entry points 12.4 has: {:?}", d.drift);
    assert_eq!(diff::diff(&built.model, v("12.9"), v("13.0")).unwrap(), real_diff("12.9", "13.0"));
}

/// A local toolkit folder made of a pinned toolkit's cached Linux wheels (runtime and
/// profiler-api), as an install would have them: no Windows headers.
fn local_copy_of(version: &str, relabel: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let pin = Manifest::load(&real_manifest()).unwrap().toolkit(v(version)).unwrap().clone();
    for p in pin.packages.iter().filter(|p| p.target == Platform::Linux) {
        for (name, mut body) in read_tree(&cache_dir().join("include").join(p.file.trim_end_matches(".whl"))) {
            if let (Some(to), "cuda.h") = (relabel, name.as_str()) {
                let (a, b) = (v(version).cuda_version(), v(to).cuda_version());
                body = body.replacen(&format!("#define CUDA_VERSION {a}"), &format!("#define CUDA_VERSION {b}"), 1);
            }
            let path = dir.path().join(&name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
    }
    dir
}

/// A local Linux toolkit has no Windows headers: of a pinned version it takes the pin's (as
/// `generate` does), otherwise the Windows rows are left out on both sides, with a note,
/// instead of being reported lost.
#[test]
fn local_toolkits_and_the_windows_headers() {
    let local = local_copy_of("13.1", None);
    let d = run_diff(&real_manifest(), ToolkitSpec::Version(v("13.0")), ToolkitSpec::Path(local.path().to_owned()))
        .unwrap();
    let mut real = real_diff("13.0", "13.1");
    assert!(d.notes.is_empty(), "{:?}", d.notes);
    assert_eq!(d.to.source, "a local toolkit");
    real.to.source = d.to.source.clone();
    assert_eq!(d, real, "a local copy of 13.1 gives the pinned 13.1's report");
    assert!(
        d.drift.iter().any(|x| x.after.contains("CUdevResource_st (144 bytes, align 8)")),
        "13.0 -> 13.1 drift: {:?}",
        d.drift
    );

    let newer = local_copy_of("13.5", Some("13.6"));
    let d = run_diff(&real_manifest(), ToolkitSpec::Version(v("13.5")), ToolkitSpec::Path(newer.path().to_owned()))
        .unwrap();
    assert_eq!(d.verdict, Verdict::Unchanged, "{}", markdown::render(&d));
    assert!(d.headers_lost.is_empty() && d.platform_changes.is_empty());
    assert_eq!(
        d.notes,
        [format!(
            "the Windows typedef headers (cudaD3D9Typedefs.h, cudaD3D10Typedefs.h, cudaD3D11Typedefs.h, cudaGLTypedefs.h) are not compared: CUDA 13.6 ({}) has none",
            newer.path().display()
        )]
    );
    assert!(markdown::render(&d).contains("Note: the Windows typedef headers"));
}

// ---------------------------------------------------------------------------------------------
// Bad input.

fn diff_error(from: ToolkitSpec, to: ToolkitSpec) -> String {
    match run_diff(&real_manifest(), from, to) {
        Ok(d) => panic!("expected an error, got a report:\n{}", markdown::render(&d)),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unknown_version() {
    let err = diff_error(ToolkitSpec::Version(v("12.7")), ToolkitSpec::Version(v("13.0")));
    assert!(err.contains("CUDA 12.7 is not pinned in") && err.contains("headers-manifest.toml"), "{err}");
    assert!(err.contains("(pinned: 11.7, 11.8, 12.0,") && err.contains("12.6, 12.8, 12.9"), "{err}");
    assert!(err.contains("generate --add-toolkit 12.7"), "the message says what to do: {err}");
}

#[test]
fn path_without_headers() {
    let empty = tempfile::tempdir().unwrap();
    let err = diff_error(ToolkitSpec::Version(v("12.9")), ToolkitSpec::Path(empty.path().to_owned()));
    assert!(err.contains(&empty.path().display().to_string()) && err.contains("no cuda.h in it"), "{err}");
    // cuda.h without its typedef header.
    std::fs::copy(fixture_toolkits("additive").0.join("cuda.h"), empty.path().join("cuda.h")).unwrap();
    let err = diff_error(ToolkitSpec::Path(empty.path().to_owned()), ToolkitSpec::Version(v("12.9")));
    assert!(
        err.contains("toolkit 13.1: cudaTypedefs.h not found in") && err.contains(&empty.path().display().to_string()),
        "{err}"
    );
    // Neither a version nor a path.
    let err = diff_error("cuda-12.9.1".parse().unwrap(), ToolkitSpec::Version(v("13.0")));
    assert!(
        err.contains("cuda-12.9.1: no such file or directory (and it is not a toolkit version of the form major.minor"),
        "{err}"
    );
    // Digits and dots are a version written wrong, not a path (`13.05` was once taken for 13.5).
    for (arg, says) in [
        ("12.9.1", "not a toolkit version of the form major.minor"),
        ("13.05", "write `13.5` (no leading zeros)"),
        ("13", "major.minor"),
    ] {
        let err = arg.parse::<ToolkitSpec>().unwrap_err();
        assert!(err.contains(says) && err.contains(&format!("./{arg}")), "{arg}: {err}");
    }
}

#[test]
fn same_toolkit_twice() {
    let err = diff_error(ToolkitSpec::Version(v("12.9")), ToolkitSpec::Version(v("12.9")));
    assert_eq!(err, "both sides are CUDA 12.9: give two different toolkits");
    let local = fixture_toolkits("everything").0;
    let err = diff_error(ToolkitSpec::Path(local.clone()), ToolkitSpec::Version(v("12.9")));
    assert!(
        err.starts_with("both sides are CUDA 12.9: `--from ")
            && err.contains(&local.display().to_string())
            && err.contains("one toolkit per version"),
        "{err}"
    );
    // And the pure function, on a model that lacks a side.
    let model = Model::build(vec![]);
    let err = diff::diff(&model, v("12.9"), v("12.9")).unwrap_err().to_string();
    assert!(err.starts_with("both sides are CUDA 12.9"), "{err}");
    let err = diff::diff(&model, v("12.9"), v("13.0")).unwrap_err().to_string();
    assert!(err.contains("CUDA 12.9 is not in the model"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// The command line: exit statuses and output.

/// `cuda-sys-gen diff` over a fixture's two toolkits, with extra arguments.
fn cli_diff(case: &str, extra: &[&str]) -> Output {
    let (a, b) = fixture_toolkits(case);
    let m = fixture_manifest();
    let manifest = m.path().join("headers-manifest.toml");
    let cache = cache_dir();
    let mut args = vec!["diff", "--manifest", manifest.to_str().unwrap(), "--cache", cache.to_str().unwrap()];
    args.extend(["--from", a.to_str().unwrap(), "--to", b.to_str().unwrap()]);
    args.extend(extra);
    cargo_run("cuda-sys-gen", &args, &[])
}

#[test]
fn exit_status_policy() {
    let cases: &[(&str, &[&str], i32)] = &[
        ("everything", &[], 3),
        ("everything", &["--fail-on", "additive"], 3),
        ("everything", &["--fail-on", "breaking"], 3),
        ("additive", &[], 2),
        ("additive", &["--fail-on", "additive"], 2),
        ("additive", &["--fail-on", "breaking"], 0),
        ("unchanged", &[], 0),
        ("unchanged", &["--fail-on", "additive"], 0),
    ];
    for (case, extra, code) in cases {
        let o = cli_diff(case, extra);
        assert_eq!(o.status.code(), Some(*code), "{case} {extra:?}: {}", text(&o.stderr));
        assert!(text(&o.stdout).starts_with("## CUDA "), "{case}: markdown on stdout");
        assert!(text(&o.stderr).contains(&format!("(exit status {code})")), "{case} {extra:?}: {}", text(&o.stderr));
    }
    // Errors are 1, whatever --fail-on says.
    let o = cargo_run("cuda-sys-gen", &["diff", "--from", "12.7", "--to", "13.0", "--fail-on", "breaking"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("error: could not compare 12.7 with 13.0: CUDA 12.7 is not pinned"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn json_for_tools() {
    let o = cli_diff("everything", &["--json"]);
    assert_eq!(o.status.code(), Some(3));
    let json: serde_json::Value = serde_json::from_str(&text(&o.stdout)).expect("stdout is JSON");
    assert_eq!(json["verdict"], "breaking");
    assert_eq!(json["exit_status"], 3);
    assert_eq!(json["from"]["version"], "12.9");
    assert_eq!(json["symbols_removed"][0]["symbol"], "cuDeviceComputeCapability");
    assert_eq!(json["new_versions"][0]["new"]["pfn"], "PFN_cuCtxSynchronize_v13000");
    assert_eq!(json["new_versions"][0]["previous"]["pfn"], "PFN_cuCtxSynchronize_v2000");
}

#[test]
fn xtask_diff_and_help() {
    let o = cargo_run("xtask", &["diff", "--from", "12.4", "--to", "12.5"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("## CUDA 12.4 → CUDA 12.5: driver entry points"), "{out}");
    assert!(out.contains("`PFN_cuCtxCreate_v12050`, exported as `cuCtxCreate_v4`"), "{out}");
    for package in ["xtask", "cuda-sys-gen"] {
        let o = cargo_run(package, &["diff", "--help"], &[]);
        let help = text(&o.stdout);
        assert!(o.status.success());
        for line in [
            "Exit status:",
            "0  nothing changed",
            "1  error",
            "2  additions only",
            "3  breaking",
            "--fail-on breaking lets additions through",
        ] {
            assert!(help.contains(line), "{package}: {line:?} not in:\n{help}");
        }
    }
}

/// docs/diff.md's exit-status table is `diff::EXIT_STATUSES`, row for row, and `Verdict` agrees.
#[test]
fn docs_exit_statuses_are_the_codes() {
    let page = std::fs::read_to_string(repo_root().join("docs/diff.md")).unwrap();
    let table = page.split("**Exit status**").nth(1).expect("docs/diff.md has an exit-status table");
    let rows: Vec<String> = table
        .lines()
        .filter(|l| l.starts_with("| ") && l.chars().nth(2).is_some_and(|c| c.is_ascii_digit()))
        .map(String::from)
        .collect();
    let expected: Vec<String> =
        diff::EXIT_STATUSES.iter().map(|(code, meaning)| format!("| {code} | {meaning} |")).collect();
    assert_eq!(rows, expected);
    for (v, code) in [(Verdict::Unchanged, 0), (Verdict::Additive, 2), (Verdict::Breaking, 3)] {
        assert_eq!(v.exit_status(), code);
        assert!(
            diff::EXIT_STATUSES
                .iter()
                .any(|(c, m)| *c == code
                    && (code == 0 || m.starts_with(if code == 2 { "additions" } else { "breaking" })))
        );
    }
}

/// docs/diff-examples.md is what the command prints today.
#[test]
fn diff_examples_are_current() {
    let doc = std::fs::read_to_string(repo_root().join("docs/diff-examples.md")).unwrap();
    for (from, to) in [("12.9", "13.0"), ("12.4", "12.5")] {
        let report = markdown::render(&real_diff(from, to));
        assert!(
            doc.contains(&report),
            "docs/diff-examples.md: the {from} -> {to} report is stale; regenerate it with the command at its top"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// generate --add-toolkit.

/// The real manifest without one toolkit's block (text cut out, comments untouched).
fn manifest_without(version: &str) -> String {
    let text = std::fs::read_to_string(real_manifest()).unwrap();
    let start = text.find(&format!("[[toolkit]]\nversion = \"{version}\"\n")).unwrap();
    let end = start + text[start..].find("\n\n").unwrap() + 2;
    format!("{}{}", &text[..start], &text[end..])
}

#[test]
fn inserted_pins_reproduce_the_manifest() {
    let real = std::fs::read_to_string(real_manifest()).unwrap();
    let full = Manifest::load(&real_manifest()).unwrap();
    // 11.7's block has a comment of its own inside, which a new pin has no reason to carry.
    for version in ["13.5", "11.8", "12.4"] {
        let cut = manifest_without(version);
        let manifest = Manifest::parse(Path::new("m.toml"), &cut).unwrap();
        assert_eq!(manifest.toolkits.len(), full.toolkits.len() - 1);
        let pin = full.toolkit(v(version)).unwrap();
        let back = codegen::add_toolkit::insert_pin(&cut, &manifest, pin);
        assert_eq!(back, real, "adding {version} back does not give the manifest");
    }
}

/// A wheel holding the given include files under `nvidia/cu13/include/`.
fn fake_wheel(dir: &Path, file: &str, files: &BTreeMap<String, String>) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(file);
    let mut z = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    for (name, body) in files {
        z.start_file(format!("nvidia/cu13/include/{name}"), zip::write::SimpleFileOptions::default()).unwrap();
        z.write_all(body.as_bytes()).unwrap();
    }
    z.finish().unwrap();
    path
}

/// A stand-in for `python3 -m pip`: `index versions` prints `index`; `download NAME==V` copies
/// the wheel of that name and version for the asked platform out of `wheels`. Every command
/// line is appended to `<dir>/pip.log`.
fn fake_pip(dir: &Path, index: &str, wheels: &Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("fake-python");
    let script = format!(
        "#!/bin/sh\necho \"$@\" >> '{log}'\ncase \"$*\" in *' index versions '*) printf '%s\\n' '{index}'; exit 0;; esac\n\
         while [ $# -gt 0 ]; do case \"$1\" in --dest) dest=$2; shift;; --platform) plat=$2; shift;; *) spec=$1;; esac; shift; done\n\
         stem=$(echo \"${{spec%%==*}}\" | tr - _); ver=${{spec##*==}}\n\
         case \"$plat\" in win*) tag=win_amd64;; *) tag=manylinux;; esac\n\
         cp '{wheels}'/$stem-$ver-*$tag*.whl \"$dest/\"\n",
        log = dir.join("pip.log").display(),
        wheels = wheels.display(),
    );
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

const RUNTIME_13_6: &str = "nvidia_cuda_runtime-13.6.12-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl";
const PROFILER_13_6: &str = "nvidia_cuda_profiler_api-13.6.12-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl";
const WINDOWS_13_6: &str = "nvidia_cuda_runtime-13.6.12-py3-none-win_amd64.whl";
const INDEX: &str = "nvidia-cuda-runtime (13.6.12)\nAvailable versions: 13.6.12, 13.6.3, 13.5.37, 13.4.92";

/// The cached include files of one of 13.5's wheels (0: Linux runtime, 1: profiler-api,
/// 2: Windows runtime), cuda.h relabelled CUDA 13.6.
fn files_13_5_as_13_6(package: usize) -> BTreeMap<String, String> {
    let pin = Manifest::load(&real_manifest()).unwrap().toolkit(v("13.5")).unwrap().packages[package].clone();
    let mut files = read_tree(&cache_dir().join("include").join(pin.file.trim_end_matches(".whl")));
    files.remove(".sha256");
    if let Some(cuda) = files.get_mut("cuda.h") {
        *cuda = cuda.replacen("#define CUDA_VERSION 13050", "#define CUDA_VERSION 13060", 1);
    }
    files
}

/// Stand-ins for 13.6's three wheels: 13.5's headers, relabelled, with one entry point more.
/// `edit` changes the Linux runtime's files first.
fn wheels_13_6(dir: &Path, edit: impl FnOnce(&mut BTreeMap<String, String>)) -> PathBuf {
    let mut runtime = files_13_5_as_13_6(0);
    let typedefs = runtime.get_mut("cudaTypedefs.h").unwrap();
    let at = typedefs.rfind("#endif").unwrap();
    typedefs.insert_str(at, "typedef CUresult (CUDAAPI *PFN_cuFutureCall_v13060)(CUcontext ctx);\n");
    edit(&mut runtime);
    fake_wheel(dir, RUNTIME_13_6, &runtime);
    fake_wheel(dir, PROFILER_13_6, &files_13_5_as_13_6(1));
    fake_wheel(dir, WINDOWS_13_6, &files_13_5_as_13_6(2));
    dir.to_owned()
}

#[test]
fn add_toolkit_finds_the_newest_patch_and_pins_it() {
    let scratch = tempfile::tempdir().unwrap();
    let wheels = wheels_13_6(&scratch.path().join("wheels"), |_| {});
    let m = manifest_with_toolkits(&["13.4", "13.5"]);
    let manifest_path = m.path().join("headers-manifest.toml");
    let manifest = Manifest::load(&manifest_path).unwrap();
    let mut fetcher = Fetcher::new(scratch.path().join("cache"), &manifest);
    fetcher.python = fake_pip(scratch.path(), INDEX, &wheels);
    let new = codegen::add_toolkit::prepare(&manifest, &fetcher, &ToolkitSpec::Version(v("13.6")))
        .unwrap_or_else(|e| panic!("{e}"));
    // The packages of the newest pin (13.5), at 13.6's newest patch, each hashed.
    let got: Vec<(&str, &str, &str, Option<&str>, Platform)> = new
        .pin
        .packages
        .iter()
        .map(|p| (p.name.as_str(), p.version.as_str(), p.file.as_str(), p.platform.as_deref(), p.target))
        .collect();
    assert_eq!(
        got,
        [
            ("nvidia-cuda-runtime", "13.6.12", RUNTIME_13_6, None, Platform::Linux),
            ("nvidia-cuda-profiler-api", "13.6.12", PROFILER_13_6, None, Platform::Linux),
            ("nvidia-cuda-runtime", "13.6.12", WINDOWS_13_6, Some("win_amd64"), Platform::Windows),
        ]
    );
    for p in &new.pin.packages {
        assert_eq!(p.sha256.0, codegen::archive::sha256_file(&wheels.join(&p.file)).unwrap(), "{}", p.file);
        assert_eq!(p.include, "nvidia/cu13/include");
        assert!(
            scratch.path().join("cache/wheels").join(&p.file).is_file(),
            "{} is cached for the regeneration",
            p.file
        );
    }
    assert_eq!(new.previous, Some(v("13.5")));
    let log = std::fs::read_to_string(scratch.path().join("pip.log")).unwrap();
    assert!(log.contains("-m pip index versions nvidia-cuda-runtime --only-binary=:all: --disable-pip-version-check --platform manylinux2014_x86_64"), "{log}");
    assert!(log.contains("-m pip index versions nvidia-cuda-runtime --only-binary=:all: --disable-pip-version-check --platform win_amd64"), "{log}");
    assert!(log.contains("download --no-deps") && log.contains("nvidia-cuda-profiler-api==13.6.12"), "{log}");
    // The new text: the old one with the block after 13.5's, before the [libclang] comment.
    let old = std::fs::read_to_string(&manifest_path).unwrap();
    let mut block = String::from("[[toolkit]]\nversion = \"13.6\"\n");
    for p in &new.pin.packages {
        block.push_str(&format!(
            "[[toolkit.package]]\nname = \"{}\"\nversion = \"13.6.12\"\nfile = \"{}\"\nsha256 = \"{}\"\ninclude = \"nvidia/cu13/include\"\n",
            p.name, p.file, p.sha256
        ));
    }
    block.push_str("platform = \"win_amd64\"\ntarget = \"windows\"\n\n");
    let at = old.find("# Used only when no libclang").unwrap();
    assert_eq!(new.text, format!("{}{block}{}", &old[..at], &old[at..]));
    assert_eq!(Manifest::parse(&manifest_path, &new.text).unwrap().toolkits.len(), 3);
    assert_eq!(std::fs::read_to_string(&manifest_path).unwrap(), old, "prepare does not write the manifest");

    // A local toolkit names the version through its cuda.h, and is compared with the wheels.
    let local = scratch.path().join("local/include");
    std::fs::create_dir_all(&local).unwrap();
    let mut files = files_13_5_as_13_6(0);
    files.extend(files_13_5_as_13_6(1));
    let typedefs = files.get_mut("cudaTypedefs.h").unwrap();
    let at = typedefs.rfind("#endif").unwrap();
    typedefs.insert_str(at, "typedef CUresult (CUDAAPI *PFN_cuFutureCall_v13060)(CUcontext ctx);\n");
    for (name, body) in &files {
        let path = local.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    let new =
        codegen::add_toolkit::prepare(&manifest, &fetcher, &ToolkitSpec::Path(local.parent().unwrap().to_owned()))
            .unwrap();
    assert_eq!(new.pin.version, v("13.6"));
    let pinned = "nvidia-cuda-runtime 13.6.12, nvidia-cuda-profiler-api 13.6.12";
    assert_eq!(new.notes, [format!("the headers at {} are identical to the pinned {pinned}", local.display())]);
    std::fs::write(local.join("cudaTypedefs.h"), "/* edited */\n").unwrap();
    let new = codegen::add_toolkit::prepare(&manifest, &fetcher, &ToolkitSpec::Path(local.clone())).unwrap();
    assert!(new.notes[0].contains(&format!("differ from the pinned {pinned}: cudaTypedefs.h;")), "{:?}", new.notes);
}

#[test]
fn add_toolkit_errors() {
    let scratch = tempfile::tempdir().unwrap();
    let m = manifest_with_toolkits(&["13.4", "13.5"]);
    let manifest_path = m.path().join("headers-manifest.toml");
    let manifest = Manifest::load(&manifest_path).unwrap();
    let mut fetcher = Fetcher::new(scratch.path().join("cache"), &manifest);
    let wheels = wheels_13_6(&scratch.path().join("wheels"), |_| {});

    fetcher.python = fake_pip(
        scratch.path(),
        "nvidia-cuda-runtime (13.5.37)\nAvailable versions: 13.5.37, 13.4.92, 13.4.49",
        &wheels,
    );
    let err =
        codegen::add_toolkit::prepare(&manifest, &fetcher, &ToolkitSpec::Version(v("13.6"))).unwrap_err().to_string();
    assert_eq!(err, "CUDA 13.6 is not on PyPI: nvidia-cuda-runtime has releases for CUDA 13.4, 13.5 only");

    // 13.5 pinned, and PyPI's newest 13.5 patch no later than each pin (the profiler API's
    // 13.5.25; the runtime's 13.5.37 is kept, never stepped back).
    let mut pinned_newest = Fetcher::new(scratch.path().join("cache"), &manifest);
    pinned_newest.python = fake_pip(
        &scratch.path().join("pip-13.5"),
        "nvidia-cuda-profiler-api (13.5.25)\nAvailable versions: 13.5.25, 13.4.92",
        &wheels,
    );
    let err = codegen::add_toolkit::prepare(&manifest, &pinned_newest, &ToolkitSpec::Version(v("13.5")))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("CUDA 13.5 is already pinned (nvidia-cuda-runtime 13.5.37, nvidia-cuda-profiler-api 13.5.25, nvidia-cuda-runtime 13.5.37 (win_amd64), the newest patch PyPI has); nothing to add"), "{err}");
    assert!(err.contains(&format!("{}:", manifest_path.display())), "{err}");

    // A wheel whose cuda.h is another toolkit's.
    let liars = wheels_13_6(&scratch.path().join("liars"), |f| {
        let cuda = f.get_mut("cuda.h").unwrap();
        *cuda = cuda.replacen("CUDA_VERSION 13060", "CUDA_VERSION 13050", 1);
    });
    fetcher.python = fake_pip(scratch.path(), INDEX, &liars);
    let err =
        codegen::add_toolkit::prepare(&manifest, &fetcher, &ToolkitSpec::Version(v("13.6"))).unwrap_err().to_string();
    assert!(err.ends_with("its cuda.h says CUDA 13.5, but the package version is 13.6.12"), "{err}");
}

/// `generate --add-toolkit` end to end, with a stand-in pip: the manifest gains the pin, the
/// crate is regenerated with the new toolkit, and the report compares it with 13.5. A failed
/// regeneration changes nothing.
#[test]
fn generate_add_toolkit_on_the_command_line() {
    let scratch = tempfile::tempdir().unwrap();
    let cache = scratch.path().join("cache");
    let m = manifest_with_toolkits(&["13.5"]);
    let manifest_path = m.path().join("headers-manifest.toml");
    // 13.5 from the shared cache, so that nothing real is downloaded.
    std::fs::create_dir_all(cache.join("wheels")).unwrap();
    for p in &Manifest::load(&manifest_path).unwrap().toolkits[0].packages {
        std::fs::copy(cache_dir().join("wheels").join(&p.file), cache.join("wheels").join(&p.file))
            .expect("13.5's wheels in the shared cache");
    }
    let out = scratch.path().join("out");
    let run = |spec: &str, python: &str| {
        let (m, o, c) = (manifest_path.display().to_string(), out.display().to_string(), cache.display().to_string());
        let args = [
            "generate",
            "--pinned-only",
            "--verbose",
            "--add-toolkit",
            spec,
            "--manifest",
            &m,
            "--out",
            &o,
            "--cache",
            &c,
        ];
        cargo_run("cuda-sys-gen", &args, &[("PYTHON", python)])
    };
    let before = std::fs::read_to_string(&manifest_path).unwrap();

    // A wheel that does not generate: an empty typedef header. The crate is rendered before
    // anything is written, so neither the manifest nor the output folder changes.
    let bad = wheels_13_6(&scratch.path().join("bad"), |f| {
        f.insert("cudaTypedefs.h".into(), String::new());
    });
    let o = run("13.6", &fake_pip(&scratch.path().join("bad"), INDEX, &bad));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("the file is empty")
            && text(&o.stderr).contains(&format!("could not add CUDA 13.6; {} and", manifest_path.display()))
            && text(&o.stderr).contains("are unchanged"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&manifest_path).unwrap(), before);
    assert!(!out.exists(), "a failed run writes no output");
    for f in [RUNTIME_13_6, PROFILER_13_6, WINDOWS_13_6] {
        std::fs::remove_file(cache.join("wheels").join(f)).unwrap();
    }

    let wheels = wheels_13_6(&scratch.path().join("wheels"), |_| {});
    let python = fake_pip(scratch.path(), INDEX, &wheels);
    let o = run("13.6", &python);
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!("pinned CUDA 13.6: nvidia-cuda-runtime 13.6.12 ({RUNTIME_13_6}, sha256 ")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("pinned CUDA 13.6: nvidia-cuda-runtime 13.6.12 ({WINDOWS_13_6}, sha256 ")),
        "{stderr}"
    );
    let manifest = Manifest::load(&manifest_path).unwrap();
    assert_eq!(manifest.toolkits.iter().map(|t| t.version.to_string()).collect::<Vec<_>>(), ["13.5", "13.6"]);
    assert!(stdout.lines().any(|l| l.starts_with("CUDA 13.6") && l.contains("cuda: 686 typedefs")), "{stdout}");
    assert!(stdout.contains("2 toolkits (13.5 to 13.6): 781 entries of 562 symbols"), "{stdout}");
    assert!(stdout.contains("## CUDA 13.5 → CUDA 13.6: driver entry points"), "{stdout}");
    assert!(
        stdout.contains(
            "| `cuFutureCall` | `PFN_cuFutureCall_v13060` | `cuFutureCall` | `(ctx: CUcontext) -> CUresult` |"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("- **Verdict: additive**") && stdout.contains("- Symbols: 1 added (1 ABI), 0 removed (0 ABIs)"),
        "{stdout}"
    );
    let registry = std::fs::read_to_string(out.join("registry.json")).unwrap();
    assert!(registry.contains("PFN_cuFutureCall_v13060"));

    // Again: already pinned, and nothing changes.
    let after = std::fs::read_to_string(&manifest_path).unwrap();
    let o = run("13.6", &python);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("could not add CUDA 13.6") && text(&o.stderr).contains("CUDA 13.6 is already pinned"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&manifest_path).unwrap(), after);
}

/// Against PyPI itself: the newest 13.5 patch and its sha256 are what the real manifest pins,
/// and 12.7 (NVIDIA never shipped it) is reported as missing.
#[test]
fn add_toolkit_against_pypi() {
    let m = manifest_with_toolkits(&["13.4"]);
    let manifest_path = m.path().join("headers-manifest.toml");
    let manifest = Manifest::load(&manifest_path).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(scratch.path().to_owned(), &manifest);
    let new = codegen::add_toolkit::prepare(&manifest, &fetcher, &ToolkitSpec::Version(v("13.5")))
        .unwrap_or_else(|e| panic!("{e}"));
    let real = Manifest::load(&real_manifest()).unwrap();
    assert_eq!(&new.pin, real.toolkit(v("13.5")).unwrap());
    let err =
        codegen::add_toolkit::prepare(&manifest, &fetcher, &ToolkitSpec::Version(v("12.7"))).unwrap_err().to_string();
    assert!(
        err.starts_with("CUDA 12.7 is not on PyPI: nvidia-cuda-runtime-cu12 has releases for CUDA 12.0, 12.1,"),
        "{err}"
    );
    assert!(err.contains("12.6, 12.8, 12.9"), "{err}");
}

/// `--from latest` of a manifest that pins nothing: says the manifest pins none and how to pin
/// one (was "CUDA 0.0 is not pinned").
#[test]
fn latest_of_a_manifest_without_pins_says_it_pins_none() {
    let m = manifest_with_toolkits(&[]);
    let manifest = m.path().join("headers-manifest.toml");
    let o = cargo_run(
        "cuda-sys-gen",
        &["diff", "--manifest", manifest.to_str().unwrap(), "--from", "latest", "--to", "latest"],
        &[],
    );
    let said = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(said.contains("pins none") && said.contains("--add-toolkit"), "{said}");
    assert!(!said.contains("0.0"), "{said}");
}
