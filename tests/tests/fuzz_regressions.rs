//! Every finding of the fuzz targets (fuzz/, FUZZING.md) and of the review around them, as
//! the smallest input that showed it. Each was a panic, a hang, a wrong answer or a generated
//! crate that would not build; each now gets a clear error or the right answer.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use codegen::emit::{self, EmitOptions, ModuleSpec};
use codegen::manifest::Manifest;
use codegen::model::{Declaration, Model, ToolkitInput};
use codegen::read::{bindgen_output as parse, header_text as macros};
use codegen::ToolkitVersion;
use cuda_sys_gen_tests::*;

fn tk(s: &str) -> ToolkitVersion {
    s.parse().unwrap()
}

fn declarations(parsed: &parse::ParsedOutput) -> Vec<Declaration> {
    declarations_of(parsed, "cuda")
}

fn input(version: &str, declarations: Vec<Declaration>) -> ToolkitInput {
    ToolkitInput {
        version: tk(version),
        source: String::new(),
        declarations,
        aliases: BTreeMap::new(),
        counts: BTreeMap::new(),
        c_names: BTreeMap::new(),
    }
}

fn cuda_module() -> ModuleSpec {
    ModuleSpec {
        name: "cuda".into(),
        feature: None,
        default: false,
        api: "cuda.h".into(),
        typedefs: "cudaTypedefs.h".into(),
    }
}

fn opts() -> EmitOptions {
    EmitOptions::new("x", "cargo xtask generate")
}

/// The crate emitted from `model`, with `types` as the Linux unit's types and the header rows
/// `modules`.
fn emit_crate(model: &Model, types: syn::File, modules: &[ModuleSpec]) -> Result<emit::Files, codegen::Error> {
    emit::emit(emit::Input { model, types: codegen::model::CrateTypes::from_linux(types), modules, opts: &opts() })
}

/// The crate of one toolkit, CUDA 13.0, whose bindgen output is `parsed`.
fn emit_one(parsed: &parse::ParsedOutput, modules: &[ModuleSpec]) -> Result<emit::Files, codegen::Error> {
    emit_crate(&Model::build(vec![input("13.0", declarations(parsed))]), parsed.types.clone(), modules)
}

fn parse(rust: &str) -> Result<parse::ParsedOutput, String> {
    parse::parse_bindgen(rust, &BTreeMap::new())
}

/// parse_bindgen_text: `type X: = ..` (a type alias with an empty bound list) is syntax syn
/// keeps as `Item::Verbatim`, and prettyplease panicked (`unimplemented!`) printing it.
#[test]
fn verbatim_syntax_is_refused_not_a_panic() {
    for text in [
        "pub type PFN_cuX_v10010_pts: = ::core::option::Option<unsafe extern \"C\" fn()>;",
        "pub type CUstream: = u8; pub type PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn(s: CUstream)>;",
        "impl A { type B: = u8; }",
    ] {
        let err = parse(text).map(|_| ()).unwrap_err();
        assert!(err.contains("not bindgen's output") && err.contains("unparsed tokens"), "{text}: {err}");
    }
    // And should such an item reach the emitter anyway, it is an error too, not a panic.
    let verbatim: syn::Item = syn::Item::Verbatim(quote_tokens("pub type X: = u8;"));
    let types = syn::File { shebang: None, attrs: vec![], items: vec![verbatim] };
    let err = emit_crate(&Model::build(vec![]), types, &[cuda_module()]).unwrap_err().to_string();
    assert!(err.contains("types/src/types.rs") && err.contains("prettyplease cannot print it"), "{err}");
}

fn quote_tokens(text: &str) -> proc_macro2::TokenStream {
    text.parse().unwrap()
}

/// parse_bindgen (grammar): the marker type of `PFN_PFN_1x_v999` (symbol `PFN_1x`) was named
/// with every `PFN_` prefix trimmed, `1x_v999`: not an identifier, and `Ident::new` panicked.
/// Trimming all of them also gave `PFN_PFN_cuX_v1` and `PFN_cuX_v1` one marker name.
#[test]
fn marker_names_take_one_pfn_prefix_off() {
    let text = "pub type PFN_PFN_1x_v999 = ::core::option::Option<unsafe extern \"C\" fn()>;\n\
                pub type PFN_PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn()>;\n\
                pub type PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn()>;\n";
    let parsed = parse(text).unwrap();
    let files = emit_one(&parsed, &[cuda_module()]).unwrap();
    let registry = String::from_utf8(files["types/src/registry.rs"].clone()).unwrap();
    let flat = registry.split_whitespace().collect::<Vec<_>>().join(" ");
    for marker in [
        "pub enum PFN_1x_v999 {} impl super::sealed::Sealed for PFN_1x_v999 {} unsafe impl super::Entry for PFN_1x_v999 { type Fn = crate::pfn::PFN_PFN_1x_v999;",
        "pub enum PFN_cuX_v1 {} impl super::sealed::Sealed for PFN_cuX_v1 {} unsafe impl super::Entry for PFN_cuX_v1 { type Fn = crate::pfn::PFN_PFN_cuX_v1;",
        "pub enum cuX_v1 {} impl super::sealed::Sealed for cuX_v1 {} unsafe impl super::Entry for cuX_v1 { type Fn = crate::pfn::PFN_cuX_v1;",
    ] {
        assert!(flat.contains(marker), "no marker `{marker}` in:\n{registry}");
    }
}

/// macros (line-endings oracle): a header with lone `\r` line ends read as one long line:
/// its aliases were lost and the INTERNAL guard covered nothing, while clang reads it fine
/// and numbers its lines by `\r`. Also cuda.h's `CUDA_VERSION` was not found in such a file.
#[test]
fn cr_line_ends_read_like_lf() {
    let lf = "#define PFN_cuA PFN_cuA_v3020\n#if defined(__CUDA_API_VERSION_INTERNAL)\ntypedef int PFN_cuA_v2000;\n#endif\n#define PFN_cuB __API_TYPEDEF_PTDS(PFN_cuB, 3020, 7000)\n";
    assert_eq!(macros::alias_macros(lf).len(), 2);
    for ends in ["\r\n", "\r"] {
        let text = lf.replace('\n', ends);
        assert_eq!(macros::alias_macros(&text), macros::alias_macros(lf), "{ends:?}");
        assert_eq!(macros::internal_guard_lines(&text), vec![(2, 4)], "{ends:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cuda.h"), "#ifndef CUDA_H\r#define CUDA_H\r#define CUDA_VERSION 12090\r#endif\r")
        .unwrap();
    assert_eq!(codegen::locate::read_cuda_version(dir.path()).unwrap(), tk("12.9"));
}

/// macros (guard-range oracle): `\` before a lone `\r` counted a line that `str::lines` did
/// not, so an unterminated guard's range ended before it began ((4, 2)).
#[test]
fn guard_ranges_stay_inside_the_text() {
    let text = "\\\r\\\r\n#ifdef __CUDA_API_VERSION_INTERNAL";
    let ranges = macros::internal_guard_lines(text);
    assert_eq!(ranges.len(), 1, "the unterminated guard: {ranges:?}");
    for (a, b) in ranges {
        assert!(a <= b && b <= 4, "({a}, {b})");
    }
    // A `//` comment ending in `\` continues on the next line, as in C: no alias there.
    let text = "// a comment \\\n#define PFN_cuA PFN_cuA_v3020\n#define PFN_cuB PFN_cuB_v3020\n";
    let names: Vec<String> = macros::alias_macros(text).into_iter().map(|m| m.name).collect();
    assert_eq!(names, ["PFN_cuB"]);
}

/// The whole pipeline over the internal-guard fixture with LF, CRLF and CR line ends: one
/// crate (clang reads all three; now the macro reader does too).
#[test]
fn line_ends_do_not_change_the_crate() {
    let case = repo_root().join("tests/fixtures/internal-guard/cuda-12.9");
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let mut trees = Vec::new();
    for ends in ["\n", "\r\n", "\r"] {
        let tk = tempfile::tempdir().unwrap();
        for f in ["cuda.h", "cudaTypedefs.h"] {
            let text = std::fs::read_to_string(case.join(f)).unwrap();
            std::fs::write(tk.path().join(f), text.replace('\n', ends)).unwrap();
        }
        let out = tempfile::tempdir().unwrap();
        generate_local(manifest.path(), vec![tk.path().to_owned()], out.path(), "fixture").unwrap();
        trees.push(read_tree(out.path()));
    }
    assert!(trees[0]["registry.json"].contains("\"legacy\": true"));
    assert_eq!(trees[0], trees[1], "CRLF differs from LF");
    assert_eq!(trees[0], trees[2], "CR differs from LF");
}

const HEAD: &str = "schema = 1\n[fetch]\nplatform = \"manylinux2014_x86_64\"\n[[header]]\nname = \"cuda\"\napi = \"cuda.h\"\ntypedefs = \"cudaTypedefs.h\"\n";

fn manifest_err(text: &str) -> String {
    match Manifest::parse(Path::new("headers-manifest.toml"), text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// manifest: an include folder with a control character (`"libcl\ng-18.1.1.data/..."`) was
/// accepted, though no archive entry can be under it (the extractor refuses such names).
#[test]
fn manifest_include_folder_follows_the_extractor_rules() {
    for bad in ["libcl\\ng/native", "inc\\u0000", "C:/inc", "inc\\\\x"] {
        let text = format!(
            "{HEAD}[[toolkit]]\nversion = \"12.9\"\n[[toolkit.package]]\nname = \"p\"\nversion = \"1\"\nfile = \"p-1-py3-none-any.whl\"\nsha256 = \"{}\"\ninclude = \"{bad}\"\n",
            "0".repeat(64)
        );
        let err = manifest_err(&text);
        assert!(
            err.contains("must be a relative path inside the wheel") && err.contains("headers-manifest.toml:"),
            "{bad}: {err}"
        );
    }
}

/// manifest (found reading the emitter for the oracle, which then confirmed each): a row
/// named like one of the crate's own files overwrote it (`types` replaced src/types.rs), a
/// keyword made the emitter fail, and feature `default` or one feature on two rows wrote a
/// Cargo.toml with a key twice.
#[test]
fn manifest_names_the_generated_crate_cannot_hold() {
    let row = |name: &str, feature: &str| {
        format!("[[header]]\nname = \"{name}\"\napi = \"cudaGL.h\"\ntypedefs = \"cudaGLTypedefs.h\"\nfeature = \"{feature}\"\n")
    };
    for name in codegen::reserved::RESERVED_MODULES {
        let err = manifest_err(&format!("{HEAD}{}", row(name, "gl")));
        assert!(
            err.contains(&format!("header name `{name}` is taken by the generated crate itself"))
                && err.contains(":9:"),
            "{err}"
        );
    }
    for name in ["fn", "self", "type", "match"] {
        let err = manifest_err(&format!("{HEAD}{}", row(name, "gl")));
        assert!(err.contains("not a keyword"), "{name}: {err}");
    }
    let err = manifest_err(&format!("{HEAD}{}", row("gl", "default")));
    assert!(err.contains("feature `default` is Cargo's own"), "{err}");
    // Found in review: `runtime` is the crate's own feature (a second `runtime = []`).
    let err = manifest_err(&format!("{HEAD}{}", row("gl", "runtime")));
    assert!(err.contains("feature `runtime` is the generated crate's own") && err.contains(":12:"), "{err}");
    let err = manifest_err(&format!("{HEAD}{}{}", row("gl", "gfx"), row("egl", "gfx")));
    assert!(err.contains("feature `gfx` is given to both `gl` and `egl`"), "{err}");
    // The real manifest is still fine.
    Manifest::load(&real_manifest()).unwrap();
}

/// Found reviewing the layout walk (the grammar target's order check now guards it): a named
/// type's tree was memoized the first time it was reached, so on a cycle (A points to B,
/// B to A) a parameter's tree depended on which typedef came first in the file, and drift
/// behind the cycle could be missed.
#[test]
fn layouts_do_not_depend_on_typedef_order() {
    let types = |extra: &str, size: u32| {
        format!(
            "pub type CUresult = u32; #[repr(C)] pub struct A {{ pub b: *mut B, pub n: u32, {extra} }} #[repr(C)] pub struct B {{ pub a: *mut A }}\n\
             const _: () = {{ [\"Size of A\"][::core::mem::size_of::<A>() - {size}usize]; [\"Size of B\"][::core::mem::size_of::<B>() - 8usize]; }};\n"
        )
    };
    let pfn_a = "pub type PFN_cuA_v1 = ::core::option::Option<unsafe extern \"C\" fn(a: *mut A) -> CUresult>;\n";
    let pfn_b = "pub type PFN_cuB_v1 = ::core::option::Option<unsafe extern \"C\" fn(b: *mut B) -> CUresult>;\n";
    let layout =
        |text: &str, pfn: &str| parse(text).unwrap().typedefs.into_iter().find(|t| t.pfn == pfn).unwrap().layouts;
    let old = types("", 16);
    assert_eq!(
        layout(&format!("{old}{pfn_a}{pfn_b}"), "PFN_cuB_v1"),
        layout(&format!("{old}{pfn_b}{pfn_a}"), "PFN_cuB_v1")
    );
    // A grows behind B's pointer: drift of cuB whatever the order of the typedefs.
    let new = types("pub m: u64,", 24);
    for (first, second) in [(pfn_a, pfn_b), (pfn_b, pfn_a)] {
        let a = parse(&format!("{old}{first}{second}")).unwrap();
        let b = parse(&format!("{new}{first}{second}")).unwrap();
        let model = Model::build(vec![input("12.9", declarations(&a)), input("13.0", declarations(&b))]);
        let drifted: Vec<&str> = model.drift.iter().map(|d| d.pfn.as_str()).collect();
        assert_eq!(drifted, ["PFN_cuA_v1", "PFN_cuB_v1"], "typedef order {:?}", &first[9..19]);
    }
}

/// Found reviewing drift: layouts share subtrees, so a diamond of types (each struct holding
/// two of the next) is a small tree in memory but 2^40 nodes to walk, and comparing two
/// toolkits' declarations never ended. A parameter's unfolded layout is now capped.
#[test]
fn a_diamond_of_types_is_compared_quickly() {
    let mut text = String::from("pub type CUresult = u32;\n");
    for k in 0..40 {
        text.push_str(&format!("#[repr(C)] pub struct D{k} {{ pub x: D{n}, pub y: D{n} }}\n", n = k + 1));
    }
    text.push_str("#[repr(C)] pub struct D40 { pub v: u32 }\n");
    text.push_str("pub type PFN_cuD_v1 = ::core::option::Option<unsafe extern \"C\" fn(d: *mut D0) -> CUresult>;\n");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let p = parse(&text).unwrap();
        let model = Model::build(vec![input("12.9", declarations(&p)), input("13.0", declarations(&p))]);
        let _ = tx.send((model.drift.len(), format!("{:?}", p.typedefs[0].layouts[0].tree)));
    });
    let (drift, tree) =
        rx.recv_timeout(Duration::from_secs(60)).expect("parse and merge of a diamond took over a minute");
    assert_eq!(drift, 0);
    assert!(tree.contains("more than 65536 nodes"), "{tree}");
}

/// Found by review, beyond what the text target's 64 KiB inputs reach: syn, prettyplease and
/// quote recurse once per level of nesting, and an unoptimized syn overflowed the 2 MiB stack
/// of the pipeline's worker threads (an abort, not an error) at 50 levels of `Option<`.
/// Depth is now measured on the tokens first (bindgen's real output nests 6, the limit is 32);
/// up to the limit everything parses, prints and quotes on such a stack.
#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    type Shape = Box<dyn Fn(usize) -> String>;
    let kinds: Vec<(&str, Shape)> = vec![
        (
            "pointers",
            Box::new(|n| {
                format!(
                    "pub type PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn(a: {}u8) -> u32>;",
                    "*mut ".repeat(n)
                )
            }),
        ),
        (
            "parentheses",
            Box::new(|n| {
                format!(
                    "pub type PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn(a: {}u8{}) -> u32>;",
                    "(".repeat(n),
                    ")".repeat(n)
                )
            }),
        ),
        (
            "arrays",
            Box::new(|n| {
                format!(
                    "pub type PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn(a: *mut {}u8{}) -> u32>;",
                    "[".repeat(n),
                    "; 1]".repeat(n)
                )
            }),
        ),
        (
            "generics",
            Box::new(|n| {
                format!(
                    "pub type PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn(a: {}u8{}) -> u32>;",
                    "Option<".repeat(n),
                    ">".repeat(n)
                )
            }),
        ),
        (
            "generics in groups",
            Box::new(|n| format!("pub type A = {}u8{};", "(Option<".repeat(n / 2), ">,)".repeat(n / 2))),
        ),
        ("negations", Box::new(|n| format!("const _: () = {{ {}1; }};", "-".repeat(n)))),
        ("blocks", Box::new(|n| format!("const _: () = {{ {}1{}; }};", "{".repeat(n), "}".repeat(n)))),
    ];
    let on_small_stack = |text: String| {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let parsed = parse(&text)?;
                emit_one(&parsed, &[cuda_module()]).map_err(|e| e.to_string())?;
                Ok::<usize, String>(parsed.typedefs.len())
            })
            .unwrap()
            .join()
            .expect("the parser panicked")
    };
    for (kind, make) in &kinds {
        let err = on_small_stack(make(20000)).expect_err("20000 levels accepted");
        assert!(err.contains("nested") && err.contains("levels deep"), "{kind}: {err}");
        // As deep as the limit lets through: read and emitted (or refused for another reason),
        // no overflow.
        let n = (1..=parse::MAX_NESTING)
            .rev()
            .find(|&n| parse::nesting(make(n).parse().unwrap()) <= parse::MAX_NESTING)
            .unwrap();
        if let Err(e) = on_small_stack(make(n)) {
            assert!(!e.contains("levels deep"), "{kind} at {n} levels: {e}");
        }
    }
}

/// parse_bindgen (emitter oracle): a typedef of symbol `self` (`PFN_self_v1`) was accepted,
/// and the emitter could name neither its enum (`Self`) nor its marker (`symbols::self`).
/// Keywords cannot name a symbol: such typedefs are skipped and reported, like unversioned ones.
#[test]
fn keyword_symbols_are_skipped_not_emitted() {
    let mut text = String::new();
    for kw in ["self", "Self", "crate", "super", "fn", "type", "_", "async"] {
        text.push_str(&format!("pub type PFN_{kw}_v1000 = ::core::option::Option<unsafe extern \"C\" fn()>;\n"));
    }
    text.push_str("pub type PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn()>;\n");
    // parse_bindgen_text: `cuSelf` is a fine symbol, but its enum would be `Self`.
    text.push_str("pub type PFN_cuSelf_v1 = ::core::option::Option<unsafe extern \"C\" fn()>;\n");
    let parsed = parse(&text).unwrap();
    assert_eq!(parsed.typedefs.iter().map(|t| t.pfn.as_str()).collect::<Vec<_>>(), ["PFN_cuX_v1", "PFN_cuSelf_v1"]);
    assert_eq!(parsed.unnameable.len(), 8, "{:?}", parsed.unnameable);
    let files = emit_one(&parsed, &[cuda_module()]).unwrap();
    let newest = String::from_utf8(files["src/newest.rs"].clone()).unwrap();
    assert!(newest.contains("pub enum CuSelf {"), "{newest}");
}

/// Found in review: the reserved list named the crate's files of one issue and not the later
/// ones (`driver`, `error`, `newest`, ...), so a header row `error` replaced src/error.rs. The
/// lists are now checked against what the emitter writes: every module and re-exported name
/// at the root of lib.rs, and every feature of Cargo.toml, is a header row's or reserved.
#[test]
fn every_root_name_of_the_crate_is_reserved() {
    let gl = ModuleSpec {
        name: "gl".into(),
        feature: Some("gl".into()),
        default: false,
        api: "cudaGL.h".into(),
        typedefs: "cudaGLTypedefs.h".into(),
    };
    let parsed = parse("pub type PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn()>;\n").unwrap();
    let files = emit_one(&parsed, &[cuda_module(), gl]).unwrap();
    let lib: syn::File = syn::parse_str(std::str::from_utf8(&files["src/lib.rs"]).unwrap()).unwrap();
    let mut root = Vec::new();
    for item in &lib.items {
        match item {
            syn::Item::Mod(m) => root.push(m.ident.to_string()),
            syn::Item::Use(u) => use_leaves(&u.tree, &mut root),
            _ => {}
        }
    }
    let lower: Vec<&String> = root.iter().filter(|n| n.starts_with(|c: char| c.is_ascii_lowercase())).collect();
    assert!(lower.len() > 10, "{root:?}");
    for name in lower {
        assert!(
            codegen::reserved::RESERVED_MODULES.contains(&name.as_str()) || name == "gl",
            "`{name}` at the root of lib.rs is not in RESERVED_MODULES"
        );
    }
    let cargo: toml::Table = std::str::from_utf8(&files["Cargo.toml"]).unwrap().parse().unwrap();
    let features = cargo["features"].as_table().unwrap();
    assert!(features.contains_key("runtime"), "{features:?}");
    for name in features.keys() {
        assert!(
            codegen::reserved::RESERVED_FEATURES.contains(&name.as_str()) || name == "gl",
            "feature `{name}` of Cargo.toml is not in RESERVED_FEATURES"
        );
    }
}

fn use_leaves(tree: &syn::UseTree, out: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(p) => use_leaves(&p.tree, out),
        syn::UseTree::Name(n) => out.push(n.ident.to_string()),
        syn::UseTree::Rename(r) => out.push(r.rename.to_string()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_leaves(t, out)),
        syn::UseTree::Glob(_) => {}
    }
}

/// Found in review: a symbol whose enum name is one newest.rs imports (`cuVariant` ->
/// `Variant`, `cuENTRIES`, `cuNonNull`, `cuEntryInfo`) would define it twice (E0255). Every
/// name in the module's type namespace is now one of a kind.
#[test]
fn newest_enum_names_never_clash_with_the_module_s_own() {
    let mut text = String::new();
    for s in ["cuVariant", "cuEntryInfo", "cuNonNull", "cuENTRIES", "cuCandidate", "cuSymbol", "cuNewestAbi", "cuX"] {
        text.push_str(&format!("pub type PFN_{s}_v1 = ::core::option::Option<unsafe extern \"C\" fn()>;\n"));
    }
    let parsed = parse(&text).unwrap();
    let files = emit_one(&parsed, &[cuda_module()]).unwrap();
    let newest: syn::File = syn::parse_str(std::str::from_utf8(&files["src/newest.rs"]).unwrap()).unwrap();
    let mut names = Vec::new();
    for item in &newest.items {
        match item {
            syn::Item::Enum(e) => names.push(e.ident.to_string()),
            syn::Item::Struct(s) => names.push(s.ident.to_string()),
            syn::Item::Trait(t) => names.push(t.ident.to_string()),
            syn::Item::Mod(m) => names.push(m.ident.to_string()),
            syn::Item::Type(t) => names.push(t.ident.to_string()),
            syn::Item::Use(u) => use_leaves(&u.tree, &mut names),
            _ => {}
        }
    }
    assert!(names.iter().any(|n| n == "CuVariant") && names.iter().any(|n| n == "X"), "{names:?}");
    let mut seen = std::collections::BTreeSet::new();
    for n in &names {
        assert!(seen.insert(n), "`{n}` is defined twice in newest.rs: {names:?}");
    }
}

/// emit: the registry records an entry's toolkits as the bits of a `u64`; a 65th toolkit made
/// `1u64 << 64`, a panic in a debug build and a wrong mask in a release one. 64 toolkits are a
/// crate whose entry all of them declare has every bit; 65 are an error that says the limit.
#[test]
fn more_toolkits_than_mask_bits_are_refused() {
    let parsed = parse("pub type PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn()>;\n").unwrap();
    // And one entry only the newest toolkit declares: its mask is the top bit alone.
    let newest = parse(
        "pub type PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn()>;\n\
         pub type PFN_cuY_v1 = ::core::option::Option<unsafe extern \"C\" fn()>;\n",
    )
    .unwrap();
    let render = |n: usize| {
        let inputs = (0..n)
            .map(|minor| input(&format!("13.{minor}"), declarations(if minor + 1 == n { &newest } else { &parsed })))
            .collect();
        emit_crate(&Model::build(inputs), parsed.types.clone(), &[cuda_module()])
    };
    let files = render(codegen::model::MAX_TOOLKITS).unwrap();
    let registry = String::from_utf8(files["types/src/registry.rs"].clone()).unwrap();
    assert!(registry.contains(&format!("toolkit_mask: {}", u64::MAX)), "{registry}");
    assert!(registry.contains(&format!("toolkit_mask: {}", 1u64 << 63)), "{registry}");
    let err = render(codegen::model::MAX_TOOLKITS + 1).unwrap_err().to_string();
    assert!(err.contains("65 toolkits (13.0 to 13.64)") && err.contains("at most 64"), "{err}");
}
