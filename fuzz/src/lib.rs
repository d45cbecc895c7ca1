//! What the fuzz targets check, beyond "no panic": each reader's own promises about its
//! output, so that a wrong answer is a finding too. The targets in `fuzz_targets/` only feed
//! these functions; a finding is then replayed as a regression test in `tests/`.

pub mod grammar;
pub mod zips;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use codegen::read::clang::SourceLine;
use codegen::emit::{self, EmitOptions, ModuleSpec};
use codegen::manifest::Manifest;
use codegen::model::{Declaration, Model, ToolkitInput};
use codegen::read::bindgen_output as parse;
use codegen::ToolkitVersion;

/// Where every `PFN_` typedef of `rust` was "declared": line n for the n-th item.
pub fn fake_locations(rust: &str) -> BTreeMap<String, SourceLine> {
    let mut out = BTreeMap::new();
    let mut line = 0;
    for word in rust.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if word.starts_with("PFN_") {
            line += 1;
            out.entry(word.to_owned()).or_insert(SourceLine { file: PathBuf::from("/fixture/cudaTypedefs.h"), line });
        }
    }
    out
}

/// The model input of one toolkit's parse, through the pipeline's own typedef -> declaration
/// step.
pub fn declarations(parsed: &parse::ParsedOutput) -> Vec<Declaration> {
    codegen::read::declarations::declarations(parsed, &codegen::manifest::HeaderSpec::linux("cuda", "cuda.h", "cudaTypedefs.h"))
}

fn tk(major: u32, minor: u32) -> ToolkitVersion {
    ToolkitVersion { major, minor }
}

fn input(version: ToolkitVersion, declarations: Vec<Declaration>) -> ToolkitInput {
    ToolkitInput { version, source: "fuzz".into(), declarations, aliases: BTreeMap::new(), counts: BTreeMap::new(), c_names: BTreeMap::new() }
}

pub fn cuda_module() -> ModuleSpec {
    ModuleSpec {
        name: "cuda".into(),
        feature: None,
        default: false,
        api: "cuda.h".into(),
        typedefs: "cudaTypedefs.h".into(),
    }
}

pub fn emit_options() -> EmitOptions {
    EmitOptions::new("fuzzed", "cargo xtask generate")
}

/// bindgen-like text through the parser, the model (the same declarations as two toolkits,
/// so that drift compares them) and the emitter.
///
/// Promises checked: each typedef's name splits into its symbol, version and variant; one
/// layout per parameter; every type the parser wrote down parses back as a Rust type (the
/// emitter needs it to); and whatever the parser accepts, the emitter renders without error,
/// with one distinct marker per entry.
pub fn check_parse(rust: &str) {
    let locations = fake_locations(rust);
    let Ok(parsed) = parse::parse_bindgen(rust, &locations) else { return };
    for t in &parsed.typedefs {
        let n = codegen::names::split_pfn_name(&t.pfn).unwrap_or_else(|e| panic!("{}: {e}", t.pfn));
        assert_eq!((n.symbol, n.version, n.variant), (t.symbol.as_str(), t.version, t.variant), "{}", t.pfn);
        assert_eq!(t.params.len(), t.layouts.len(), "{}", t.pfn);
        for ty in t.params.iter().map(|p| &p.ty).chain([&t.returns]) {
            assert!(
                syn::parse_str::<syn::Type>(ty.as_str()).is_ok(),
                "{}: the parser wrote `{ty}`, which is no Rust type",
                t.pfn
            );
        }
    }
    let decls = declarations(&parsed);
    let model = Model::build(vec![input(tk(12, 9), decls.clone()), input(tk(13, 0), decls)]);
    // The same declarations twice: nothing can have drifted.
    assert!(model.drift.is_empty(), "drift between identical declarations: {:?}", model.drift);
    let files = emit::emit(emit::Input { model: &model, types: codegen::model::CrateTypes::from_linux(parsed.types.clone()), modules: &[cuda_module()], opts: &emit_options() });
    let files = match files {
        Ok(f) => f,
        Err(e) => panic!("the emitter refused what the parser accepted: {e}"),
    };
    let registry = String::from_utf8_lossy(&files["types/src/registry.rs"]).into_owned();
    let markers = marker_names(&registry);
    assert_eq!(markers.len(), model.entries.len(), "one marker per entry");
    let distinct: BTreeSet<&String> = markers.iter().collect();
    assert_eq!(distinct.len(), markers.len(), "two entries got one marker type");
}

/// The marker type names in a generated registry.rs: each `name =>` in `mod entries`'s
/// `entries! { .. }`.
pub fn marker_names(registry_rs: &str) -> Vec<String> {
    let file = syn::parse_file(registry_rs).expect("the generated registry.rs parses");
    let mut out = Vec::new();
    for item in &file.items {
        let syn::Item::Mod(m) = item else { continue };
        if m.ident != "entries" {
            continue;
        }
        for inner in m.content.iter().flat_map(|(_, items)| items) {
            let syn::Item::Macro(mac) = inner else { continue };
            let toks: Vec<proc_macro2::TokenTree> = mac.mac.tokens.clone().into_iter().collect();
            for w in toks.windows(3) {
                if let [proc_macro2::TokenTree::Ident(name), proc_macro2::TokenTree::Punct(a), proc_macro2::TokenTree::Punct(b)] =
                    w
                {
                    if a.as_char() == '=' && b.as_char() == '>' {
                        out.push(name.to_string());
                    }
                }
            }
        }
    }
    out
}

/// Items of one file in reverse order, when no two items share a name: the typedefs and
/// their layouts must not depend on where in the file a declaration sits.
pub fn check_order_independent(forward: &str, backward: &str) {
    let (Ok(a), Ok(b)) =
        (parse::parse_bindgen(forward, &BTreeMap::new()), parse::parse_bindgen(backward, &BTreeMap::new()))
    else {
        return;
    };
    let key = |p: &parse::ParsedOutput| {
        let mut v: Vec<(String, Vec<codegen::model::Param>, codegen::syntax::RustType, Vec<codegen::layout::ParamLayout>)> = p
            .typedefs
            .iter()
            .map(|t| (t.pfn.clone(), t.params.clone(), t.returns.clone(), t.layouts.clone()))
            .collect();
        v.sort_by(|x, y| x.0.cmp(&y.0));
        v
    };
    let (ka, kb) = (key(&a), key(&b));
    assert_eq!(ka.len(), kb.len());
    for (x, y) in ka.iter().zip(&kb) {
        assert_eq!(x.0, y.0);
        assert_eq!(x.1, y.1, "{}: parameters depend on item order", x.0);
        for (i, (la, lb)) in x.3.iter().zip(&y.3).enumerate() {
            assert!(
                la.tree == lb.tree,
                "{}: layout of parameter {i} depends on item order:\n{:?}\nvs\n{:?}",
                x.0,
                la.tree,
                lb.tree
            );
        }
    }
}

/// The header-macro reader over arbitrary text.
///
/// Promises checked: logical lines are numbered from 1, in order, and never past the text's
/// last line; guard ranges are well-formed and inside the text; every alias is a `PFN_` name
/// without a version; resolving is total (each alias ends up resolved or reported).
pub fn check_macros(text: &str) {
    // Lines as clang counts them: `\n`, `\r\n` and a lone `\r` each end one.
    let last = count_lines(text);
    let lines = codegen::read::header_text::logical_lines(text);
    let mut prev = 0;
    for l in &lines {
        assert!(l.line >= 1 && l.line >= prev, "line numbers go backwards: {} after {prev}", l.line);
        assert!(l.line <= last, "logical line {} past the text's last line {last}", l.line);
        assert!(!l.text.contains('\n'), "a logical line holds a newline");
        prev = l.line;
    }
    for (a, b) in codegen::read::header_text::internal_guard_lines(text) {
        assert!(1 <= a && a <= b && b <= last, "guard range {a}..={b} in a text of {last} lines");
    }
    let macros = codegen::read::header_text::alias_macros(text);
    for m in &macros {
        assert!(codegen::names::split_pfn_name(&m.name).is_err_and(|e| e.is_unversioned()), "{}", m.name);
        assert!(m.line >= 1 && m.line <= last);
    }
    let names: BTreeSet<&str> = macros.iter().map(|m| m.name.as_str()).collect();
    let typedef_exists = |n: &str| n.len() % 2 == 0;
    let (ok, broken) = codegen::read::header_text::resolve_aliases(&macros, typedef_exists, |_| true);
    for (name, target) in &ok {
        assert!(names.contains(name.as_str()));
        assert!(typedef_exists(&target.default) && typedef_exists(&target.per_thread));
    }
    let accounted: BTreeSet<&str> =
        ok.keys().map(String::as_str).chain(broken.iter().map(|b| b.name.as_str())).collect();
    assert_eq!(accounted, names, "an alias was neither resolved nor reported");
    assert_eq!(codegen::read::header_text::resolve_aliases(&macros, typedef_exists, |_| true), (ok, broken));
    check_line_endings(text);
}

/// The same text with LF, CRLF or CR line ends reads the same: clang takes all three as line
/// ends (and numbers its source locations so), and a header may come with any of them.
pub fn check_line_endings(text: &str) {
    let lf = normalize_line_ends(text);
    let read = |t: &str| (codegen::read::header_text::alias_macros(t), codegen::read::header_text::internal_guard_lines(t));
    let want = read(&lf);
    for (name, variant) in [("CRLF", lf.replace('\n', "\r\n")), ("CR", lf.replace('\n', "\r"))] {
        assert_eq!(read(&variant), want, "{name} line ends read differently from LF");
    }
}

/// Every `\r\n` and lone `\r` as `\n`.
pub fn normalize_line_ends(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// 1 + the number of line ends (`\r\n`, `\n` or a lone `\r`), as clang numbers lines.
pub fn count_lines(text: &str) -> usize {
    let b = text.as_bytes();
    let mut n = 1;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => n += 1,
            b'\r' => {
                n += 1;
                if b.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    n
}

/// The manifest loader over arbitrary text.
///
/// Promises checked: an error points inside the text; an accepted manifest describes a crate
/// the emitter can write: one file per module, distinct paths, module names that are Rust
/// identifiers, a Cargo.toml that is valid TOML with each feature once.
pub fn check_manifest(text: &str) {
    let path = Path::new("headers-manifest.toml");
    let m = match Manifest::parse(path, text) {
        Err(codegen::Error::Manifest { line, col, message, .. }) => {
            let lines: Vec<&str> = text.split('\n').collect();
            assert!(line >= 1 && line <= lines.len(), "error line {line} of {}: {message}", lines.len());
            assert!(col >= 1 && col <= lines[line - 1].len() + 1, "error column {col} past line {line}: {message}");
            assert!(!message.is_empty());
            return;
        }
        Err(e) => panic!("a manifest error that is not Error::Manifest: {e}"),
        Ok(m) => m,
    };
    for p in m.toolkits.iter().flat_map(|t| &t.packages).chain(&m.libclang) {
        assert!(!p.file.contains('/') && !p.file.contains('\\'), "{}", p.file);
        assert!(
            codegen::archive::entry_path_under(&format!("{}/x.h", p.include), &p.include).is_ok(),
            "include `{}`",
            p.include
        );
    }
    let modules: Vec<ModuleSpec> = m.headers.iter().map(codegen::manifest::HeaderSpec::module_spec).collect();
    for spec in &modules {
        assert!(syn::parse_str::<syn::Ident>(spec.module()).is_ok(), "module `{}` is no identifier", spec.module());
    }
    let model = Model::build(vec![]);
    let types = codegen::model::CrateTypes::from_linux(syn::File { shebang: None, attrs: vec![], items: vec![] });
    let files = match emit::emit(emit::Input { model: &model, types, modules: &modules, opts: &emit_options() }) {
        Ok(f) => f,
        Err(e) => panic!("an accepted manifest gives a crate the emitter cannot write: {e}"),
    };
    // Cargo.toml, lib.rs, types.rs, aliases.rs, registry.rs, registry.json and one per module.
    assert_eq!(
        files.len(),
        6 + modules.len(),
        "two modules (or a module and another file) share a path: {:?}",
        files.keys().collect::<Vec<_>>()
    );
    let cargo = String::from_utf8_lossy(&files["Cargo.toml"]).into_owned();
    if let Err(e) = cargo.parse::<toml::Table>() {
        panic!("the generated Cargo.toml is not valid TOML: {e}\n{cargo}");
    }
}

/// What the extraction fuzzer lets one archive write: small, so that a bomb costs little.
pub const FUZZ_LIMITS: codegen::archive::Limits =
    codegen::archive::Limits { file_bytes: 64 << 10, total_bytes: 256 << 10, files: 64 };

/// The wheel extractor over arbitrary archive bytes, into a scratch folder.
///
/// Promises checked: nothing appears outside the destination; a refused archive leaves no
/// destination and no scratch folder; an accepted one holds only regular files under the
/// destination, within the limits, and the stamp.
pub fn check_extract(zip_bytes: &[u8], include: &str) {
    // On tmpfs where there is one: a disk's create-and-remove per input costs milliseconds.
    let shm = Path::new("/dev/shm");
    let scratch = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.expect("temp dir");
    let wheel = scratch.path().join("in.whl");
    std::fs::write(&wheel, zip_bytes).expect("write the archive");
    let cache = scratch.path().join("cache");
    let dest = cache.join("include").join("pkg-1.0");
    let r = codegen::archive::extract_with_limits(&wheel, include, &dest, "stamp", &FUZZ_LIMITS);
    let all = walk(scratch.path());
    let wheel_rel = PathBuf::from("in.whl");
    match r {
        Err(e) => {
            assert!(
                matches!(e, codegen::Error::UnsafeArchive { .. } | codegen::Error::Io { .. }),
                "unexpected error kind: {e}"
            );
            let left: Vec<&PathBuf> = all.iter().filter(|(p, _)| *p != wheel_rel).map(|(p, _)| p).collect();
            let allowed = [PathBuf::from("cache"), PathBuf::from("cache/include")];
            assert!(left.iter().all(|p| allowed.contains(p)), "a refused archive left {left:?} ({e})");
        }
        Ok(()) => {
            let mut total = 0;
            let mut files = 0;
            for (p, kind) in &all {
                if *p == wheel_rel || p.as_path() == Path::new("cache") || p.as_path() == Path::new("cache/include") {
                    continue;
                }
                assert!(p.starts_with("cache/include/pkg-1.0"), "written outside the destination: {}", p.display());
                match kind {
                    Kind::Dir => {}
                    Kind::File(n) => {
                        assert!(*n <= FUZZ_LIMITS.file_bytes, "{} is {n} bytes", p.display());
                        if p.file_name().is_some_and(|f| f != ".sha256") {
                            total += n;
                            files += 1;
                        }
                    }
                    Kind::Other => panic!("{} is neither a file nor a folder (a symlink?)", p.display()),
                }
            }
            assert!(total <= FUZZ_LIMITS.total_bytes && files <= FUZZ_LIMITS.files, "{files} files, {total} bytes");
            assert_eq!(std::fs::read_to_string(dest.join(".sha256")).ok().as_deref(), Some("stamp"));
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File(u64),
    Other,
}

/// Every path under `root`, relative, with what it is (links not followed).
pub fn walk(root: &Path) -> Vec<(PathBuf, Kind)> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(root.join(&rel)) else { continue };
        for e in rd.flatten() {
            let child = rel.join(e.file_name());
            let Ok(meta) = std::fs::symlink_metadata(root.join(&child)) else { continue };
            let kind = if meta.is_dir() {
                stack.push(child.clone());
                Kind::Dir
            } else if meta.is_file() {
                Kind::File(meta.len())
            } else {
                Kind::Other
            };
            out.push((child, kind));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
