//! Properties of the model and the emitter over generated toolkits (proptest): merging in any
//! order gives one model; a newer version never renames what the driver exports; and
//! emit(parse(x)) is byte-for-byte deterministic, whatever order the toolkits come in.

use std::collections::BTreeMap;

use codegen::emit::{self, EmitOptions, ModuleSpec};
use codegen::layout::{Layout, ParamLayout};
use codegen::model::AliasTarget;
use codegen::model::Param;
use codegen::model::{Declaration, Model, ToolkitInput};
use codegen::names::Variant;
use codegen::platform::Platform;
use codegen::read::bindgen_output as parse;
use codegen::ToolkitVersion;
use proptest::prelude::*;

const SYMBOLS: &[&str] = &["cuA", "cuB", "cuCtxCreate", "cuMemcpy", "cuStreamBeginCapture"];
const VERSIONS: &[u32] = &[2000, 3000, 3020, 4000, 7000, 10010, 11040, 12000, 12050, 13000];
const TOOLKITS: &[&str] = &["11.7", "11.8", "12.0", "12.4", "12.9", "13.0", "13.1", "13.5"];

/// One ABI a toolkit may declare, and how it declares it.
#[derive(Debug, Clone)]
struct Abi {
    symbol: &'static str,
    version: u32,
    variant: Option<Variant>,
    /// Picks the parameter list and the size of the struct behind it: a change between
    /// toolkits is drift.
    flavor: u8,
    legacy: bool,
    windows: bool,
}

impl Abi {
    fn pfn(&self) -> String {
        format!("PFN_{}_v{}{}", self.symbol, self.version, self.variant.map_or("", |v| v.suffix()))
    }
}

#[derive(Debug, Clone)]
struct Tk {
    version: ToolkitVersion,
    abis: Vec<Abi>,
    /// `#define PFN_<symbol> <one of its ABIs>` (11.x and 12.x headers).
    aliases: Vec<(usize, usize)>,
}

fn variant() -> impl Strategy<Value = Option<Variant>> {
    prop_oneof![4 => Just(None), 1 => Just(Some(Variant::Ptds)), 1 => Just(Some(Variant::Ptsz))]
}

fn abi() -> impl Strategy<Value = Abi> {
    (0..SYMBOLS.len(), 0..VERSIONS.len(), variant(), 0u8..3, prop::bool::weighted(0.15), any::<bool>()).prop_map(
        |(s, v, variant, flavor, legacy, windows)| Abi {
            symbol: SYMBOLS[s],
            version: VERSIONS[v],
            variant,
            flavor,
            legacy,
            windows,
        },
    )
}

/// 1 to 5 toolkits of distinct versions, each declaring up to 12 distinct ABIs.
fn toolkits() -> impl Strategy<Value = Vec<Tk>> {
    prop::sample::subsequence(TOOLKITS, 1..=5).prop_flat_map(|versions| {
        let per_toolkit: Vec<_> = versions
            .into_iter()
            .map(|v| {
                let version: ToolkitVersion = v.parse().unwrap();
                (prop::collection::vec(abi(), 0..12), prop::collection::vec((0usize..12, 0usize..12), 0..4)).prop_map(
                    move |(abis, aliases)| {
                        let mut seen = std::collections::BTreeSet::new();
                        let abis: Vec<Abi> = abis.into_iter().filter(|a| seen.insert(a.pfn())).collect();
                        Tk { version, abis, aliases }
                    },
                )
            })
            .collect();
        per_toolkit
    })
}

fn params(flavor: u8) -> Vec<Param> {
    let p = |name: &str, ty: &str| Param { name: name.into(), ty: ty.parse().unwrap() };
    match flavor {
        0 => vec![p("dptr", "*mut CUdeviceptr"), p("bytesize", "usize")],
        1 => vec![p("dptr", "*mut CUdeviceptr")],
        _ => vec![p("params", "*mut CUparams"), p("flags", "c_uint")],
    }
}

fn record(size: u64) -> ParamLayout {
    let tree = Layout::Record { name: "CUparams".into(), union: false, size, align: 8, fields: vec![] };
    ParamLayout {
        tree: std::sync::Arc::new(Layout::Pointer(std::sync::Arc::new(tree))),
        summary: format!("points to struct CUparams ({size} bytes)"),
    }
}

/// A toolkit's model input, built directly (no parse).
fn input(tk: &Tk, order_seed: u64) -> ToolkitInput {
    let mut declarations: Vec<Declaration> = tk
        .abis
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let params = params(a.flavor);
            let layouts = params.iter().map(|_| record(32 << a.flavor)).collect();
            let mut platforms: std::collections::BTreeSet<Platform> = [Platform::Linux].into();
            if a.windows {
                platforms.insert(Platform::Windows);
            }
            Declaration {
                pfn: a.pfn(),
                symbol: a.symbol.into(),
                version: a.version,
                variant: a.variant,
                header: "cudaTypedefs.h".into(),
                module: "cuda".into(),
                platforms,
                legacy: a.legacy,
                line: i + 1,
                params,
                returns: "CUresult".parse().unwrap(),
                layouts,
            }
        })
        .collect();
    shuffle(&mut declarations, order_seed);
    ToolkitInput {
        version: tk.version,
        source: format!("toolkit {}", tk.version),
        declarations,
        aliases: aliases(tk),
        counts: BTreeMap::new(),
        c_names: BTreeMap::new(),
    }
}

fn aliases(tk: &Tk) -> BTreeMap<String, AliasTarget> {
    let mut out = BTreeMap::new();
    if tk.version.major >= 13 || tk.abis.is_empty() {
        return out;
    }
    for &(from, to) in &tk.aliases {
        let (from, to) = (&tk.abis[from % tk.abis.len()], &tk.abis[to % tk.abis.len()]);
        out.insert(format!("PFN_{}", from.symbol), AliasTarget { default: to.pfn(), per_thread: to.pfn() });
    }
    out
}

/// A deterministic shuffle (xorshift), so that a failing case replays.
fn shuffle<T>(v: &mut [T], mut seed: u64) {
    seed |= 1;
    for i in (1..v.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        v.swap(i, (seed % (i as u64 + 1)) as usize);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// Model::build over the toolkits in any order, their declarations in any order: one model.
    #[test]
    fn merge_order_does_not_matter(tks in toolkits(), seed in any::<u64>()) {
        let inputs: Vec<ToolkitInput> = tks.iter().map(|t| input(t, 0)).collect();
        let model = Model::build(inputs.clone());
        let mut shuffled: Vec<ToolkitInput> = tks.iter().enumerate().map(|(i, t)| input(t, seed.wrapping_add(i as u64))).collect();
        shuffle(&mut shuffled, seed);
        prop_assert_eq!(&Model::build(shuffled), &model);
        let mut reversed = inputs;
        reversed.reverse();
        prop_assert_eq!(&Model::build(reversed), &model);
    }

    /// A toolkit newer than all the others that adds versions above every existing version of
    /// their symbol (and drops old ones, or keeps them) changes no existing exported name.
    #[test]
    fn a_newer_version_renames_nothing(
        tks in toolkits(),
        added in prop::collection::vec((0..SYMBOLS.len(), 1u32..5, variant()), 0..6),
        keep in prop::collection::vec(any::<bool>(), 12),
    ) {
        let base = Model::build(tks.iter().map(|t| input(t, 0)).collect());
        let newest = tks.iter().map(|t| t.version).max().unwrap();
        let version = ToolkitVersion { major: newest.major + 1, minor: 0 };
        let top = |symbol: &str| base.symbol_entries(symbol).map(|e| e.version).max().unwrap_or(0);
        let mut abis: Vec<Abi> = tks.iter().flat_map(|t| t.abis.clone()).enumerate().filter(|(i, _)| keep[i % keep.len()]).map(|(_, a)| a).collect();
        for (s, step, variant) in added {
            let symbol = SYMBOLS[s];
            abis.push(Abi { symbol, version: top(symbol) + 10 * step, variant, flavor: 0, legacy: false, windows: false });
        }
        let mut seen = std::collections::BTreeSet::new();
        abis.retain(|a| seen.insert(a.pfn()));
        let mut all: Vec<ToolkitInput> = tks.iter().map(|t| input(t, 0)).collect();
        all.push(input(&Tk { version, abis, aliases: vec![] }, 0));
        let extended = Model::build(all);
        for (key, e) in &base.entries {
            prop_assert_eq!(&extended.entries[key].exported, &e.exported, "{} was renamed", e.pfn);
        }
    }

}

proptest! {
    // Each case parses and emits three times: fewer of them.
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// bindgen-like text per toolkit, parsed, merged and emitted: byte-identical files twice
    /// over, and when the toolkits come in another order.
    #[test]
    fn emit_of_parse_is_deterministic(tks in toolkits(), seed in any::<u64>()) {
        let texts: Vec<(ToolkitVersion, String)> = tks.iter().map(|t| (t.version, bindgen_text(t))).collect();
        let first = render(&texts, &tks)?;
        prop_assert_eq!(&render(&texts, &tks)?, &first);
        let mut shuffled = texts.clone();
        shuffle(&mut shuffled, seed);
        prop_assert_eq!(&render(&shuffled, &tks)?, &first);
    }
}

fn bindgen_text(tk: &Tk) -> String {
    // The struct behind `CUparams` grows by toolkit: drift between some pairs.
    let size = 16 + 8 * tk.version.minor as u64;
    let mut s = format!(
        "pub type CUresult = ::core::ffi::c_uint; pub type CUdeviceptr = ::core::ffi::c_ulonglong;\n\
         #[repr(C)] #[derive(Copy, Clone)] pub struct CUparams {{ pub flags: ::core::ffi::c_uint, pub reserved: [u8; {r}usize] }}\n\
         const _: () = {{ [\"Size of CUparams\"][::core::mem::size_of::<CUparams>() - {size}usize]; [\"Alignment of CUparams\"][::core::mem::align_of::<CUparams>() - 4usize]; }};\n",
        r = size - 4
    );
    for a in &tk.abis {
        let params: Vec<String> = params(a.flavor)
            .iter()
            .map(|p| format!("{}: {}", p.name, p.ty.as_str().replace("c_uint", "::core::ffi::c_uint")))
            .collect();
        s.push_str(&format!(
            "pub type {} = ::core::option::Option<unsafe extern \"C\" fn({}) -> CUresult>;\n",
            a.pfn(),
            params.join(", ")
        ));
    }
    s
}

fn render(texts: &[(ToolkitVersion, String)], tks: &[Tk]) -> Result<emit::Files, TestCaseError> {
    let mut inputs = Vec::new();
    let mut newest: Option<(ToolkitVersion, parse::ParsedOutput)> = None;
    for (version, text) in texts {
        let parsed = parse::parse_bindgen(text, &BTreeMap::new()).map_err(TestCaseError::fail)?;
        let tk = tks.iter().find(|t| t.version == *version).unwrap();
        let mut declarations = cuda_sys_gen_tests::declarations_of(&parsed, "cuda");
        // The header text's facts: legacy and platforms, as the pipeline adds them.
        for d in &mut declarations {
            let a = tk.abis.iter().find(|a| a.pfn() == d.pfn).unwrap();
            d.legacy = a.legacy;
            if a.windows {
                d.platforms.insert(Platform::Windows);
            }
        }
        inputs.push(ToolkitInput {
            version: *version,
            source: "generated".into(),
            declarations,
            aliases: aliases(tk),
            counts: BTreeMap::new(),
            c_names: BTreeMap::new(),
        });
        if newest.as_ref().is_none_or(|(v, _)| v < version) {
            newest = Some((*version, parsed));
        }
    }
    let model = Model::build(inputs);
    let types = newest.map(|(_, p)| p.types).unwrap();
    let module = ModuleSpec {
        name: "cuda".into(),
        feature: None,
        default: false,
        api: "cuda.h".into(),
        typedefs: "cudaTypedefs.h".into(),
    };
    let opts = EmitOptions::new("prop", "cargo xtask generate");
    emit::emit(emit::Input {
        model: &model,
        types: codegen::model::CrateTypes::from_linux(types.clone()),
        modules: &[module],
        opts: &opts,
    })
    .map_err(|e| TestCaseError::fail(e.to_string()))
}
