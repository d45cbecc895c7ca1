//! cuda.h's enumerators by their bare names: every value of every enum of the
//! generated crate is a top-level constant, and each is used where the `api::` functions (or a
//! struct's field) take it. This test writes those uses, read from the generated sources with
//! syn, into `enumerator_uses/uses.rs` and fails when that file is not what the crate's sources
//! give (bless: `CUDA_SYS_GEN_BLESS=1`); `tests/enumerator_uses.rs` compiles the file, so a
//! constant of the wrong type fails the build of the tests.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use cuda_sys_gen_tests::repo_root;
use quote::ToTokens;

/// The generated files that define enums: the module path each is reached by, and its path.
const ENUM_FILES: &[(&str, &str)] = &[
    ("types", "generated/types/src/types.rs"),
    ("d3d9", "generated/types/src/d3d9.rs"),
    ("d3d10", "generated/types/src/d3d10.rs"),
    ("d3d11", "generated/types/src/d3d11.rs"),
];
const USES: &str = "tests/tests/enumerator_uses/uses.rs";

fn parse(path: &str) -> syn::File {
    let text = std::fs::read_to_string(repo_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn text(t: &impl ToTokens) -> String {
    t.to_token_stream().to_string().replace(' ', "")
}

fn doc(attrs: &[syn::Attribute]) -> String {
    attrs
        .iter()
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// What the crate defines that a use needs.
#[derive(Default)]
struct Crate {
    /// Enum name to its values, with the module that defines it.
    enums: BTreeMap<String, (String, Vec<String>)>,
    /// Every name of an enum (its aliases) to the enum.
    enum_of: BTreeMap<String, String>,
    /// Top-level constants: name to (module, type text, docs).
    consts: BTreeMap<String, (String, String, String)>,
    /// Records: name (and aliases) to fields (name, type text).
    fields: BTreeMap<String, Vec<(String, String)>>,
    /// `api::legacy` functions: name to parameters (name, type text).
    fns: BTreeMap<String, Vec<(String, String)>>,
}

fn read_crate() -> Crate {
    let mut c = Crate::default();
    let mut aliases: Vec<(String, String)> = Vec::new();
    for (module, path) in ENUM_FILES {
        let file = parse(path);
        let mut newtypes = BTreeSet::new();
        for item in &file.items {
            match item {
                syn::Item::Struct(s) => match &s.fields {
                    syn::Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                        newtypes.insert(s.ident.to_string());
                    }
                    syn::Fields::Named(f) => {
                        let fields = f.named.iter().map(|f| (f.ident.as_ref().unwrap().to_string(), text(&f.ty)));
                        c.fields.insert(s.ident.to_string(), fields.collect());
                    }
                    _ => {}
                },
                syn::Item::Union(u) => {
                    let fields = u.fields.named.iter().map(|f| (f.ident.as_ref().unwrap().to_string(), text(&f.ty)));
                    c.fields.insert(u.ident.to_string(), fields.collect());
                }
                syn::Item::Const(k) if k.ident != "_" => {
                    c.consts.insert(k.ident.to_string(), (module.to_string(), text(&k.ty), doc(&k.attrs)));
                }
                syn::Item::Type(t) => aliases.push((t.ident.to_string(), text(&t.ty))),
                syn::Item::Use(syn::ItemUse { tree: syn::UseTree::Path(p), .. }) => {
                    if let syn::UseTree::Rename(r) = &*p.tree {
                        aliases.push((r.rename.to_string(), r.ident.to_string()));
                    }
                }
                _ => {}
            }
        }
        for item in &file.items {
            let syn::Item::Impl(imp) = item else { continue };
            let name = text(&imp.self_ty);
            if !newtypes.contains(&name) || imp.trait_.is_some() {
                continue;
            }
            let values = imp.items.iter().filter_map(|i| match i {
                syn::ImplItem::Const(k) => Some(k.ident.to_string()),
                _ => None,
            });
            c.enums.entry(name.clone()).or_insert_with(|| (module.to_string(), Vec::new())).1.extend(values);
            c.enum_of.insert(name.clone(), name);
        }
    }
    // Aliases of aliases: until nothing changes.
    loop {
        let before = c.enum_of.len() + c.fields.len();
        for (alias, target) in &aliases {
            if let Some(e) = c.enum_of.get(target).cloned() {
                c.enum_of.insert(alias.clone(), e);
            }
            if let Some(f) = c.fields.get(target).cloned() {
                c.fields.insert(alias.clone(), f);
            }
        }
        if c.enum_of.len() + c.fields.len() == before {
            break;
        }
    }
    // `api::legacy` is `both` and `legacy`, with the interop headers' modules inside each.
    fn walk(items: &[syn::Item], fns: &mut BTreeMap<String, Vec<(String, String)>>) {
        for item in items {
            match item {
                syn::Item::Fn(f) => {
                    let params = f.sig.inputs.iter().filter_map(|i| match i {
                        syn::FnArg::Typed(p) => Some((text(&p.pat), text(&p.ty))),
                        syn::FnArg::Receiver(_) => None,
                    });
                    fns.insert(f.sig.ident.to_string(), params.collect());
                }
                syn::Item::Mod(m) if m.ident != "ptds" => {
                    walk(&m.content.as_ref().map(|c| c.1.clone()).unwrap_or_default(), fns)
                }
                _ => {}
            }
        }
    }
    walk(&parse("generated/src/api.rs").items, &mut c.fns);
    c
}

/// Where a value of enum `e`, or an integer named after `owner`'s `param`, goes.
enum Use {
    /// A function, the value at this parameter, passed as an array's pointer if `pointer`.
    Call { function: String, at: usize, pointer: Option<&'static str> },
    /// A record's field (an array's first element, or behind a pointer).
    Field { record: String, field: String, how: &'static str },
}

fn call_line(c: &Crate, function: &str, at: usize, pointer: Option<&str>, value: &str) -> String {
    let args: Vec<String> = (0..c.fns[function].len())
        .map(|i| match (i == at, pointer) {
            (false, _) => "z()".to_owned(),
            (true, None) => value.to_owned(),
            (true, Some(method)) => format!("[{value}].{method}()"),
        })
        .collect();
    format!("    let _ = api::legacy::{function}({});\n", args.join(", "))
}

fn field_line(record: &str, field: &str, how: &str, value: &str) -> String {
    match how {
        "[0]" => format!("    {{ let mut s: {record} = z(); s.{field}[0] = {value}; }}\n"),
        "ptr" => format!("    {{ let mut s: {record} = z(); s.{field} = [{value}].as_mut_ptr(); }}\n"),
        _ => format!("    {{ let mut s: {record} = z(); s.{field} = {value}; }}\n"),
    }
}

/// Every place that takes enum `e` as itself: function parameters first, then fields.
fn typed_uses(c: &Crate, e: &str) -> Vec<Use> {
    let is = |t: &str| c.enum_of.get(t).is_some_and(|x| x == e);
    let mut out = Vec::new();
    for (function, params) in &c.fns {
        for (at, (_, ty)) in params.iter().enumerate() {
            let pointer = if is(ty) {
                None
            } else if ty.strip_prefix("*const").is_some_and(is) {
                Some("as_ptr")
            } else if ty.strip_prefix("*mut").is_some_and(is) {
                Some("as_mut_ptr")
            } else {
                continue;
            };
            out.push(Use::Call { function: function.clone(), at, pointer });
        }
    }
    for (record, fields) in &c.fields {
        for (field, ty) in fields {
            let how = if is(ty) {
                ""
            } else if ty.strip_prefix("*mut").is_some_and(is) {
                "ptr"
            } else if ty.starts_with('[') && ty.split(';').next().is_some_and(|t| is(&t[1..])) {
                "[0]"
            } else {
                continue;
            };
            out.push(Use::Field { record: record.clone(), field: field.clone(), how });
        }
    }
    out
}

/// The file of uses: every bare enumerator where something takes it, and every taker of each
/// enum once; every record with `Default` checked to be all zero.
fn uses(c: &Crate) -> Result<String, String> {
    let mut s = String::from(
        "// @generated by tests/tests/enumerators.rs from the generated crate: do not edit. Bless with\n\
         // `CUDA_SYS_GEN_BLESS=1 cargo test -p cuda-sys-gen-tests --test enumerators`.\n\
         #![allow(clippy::all, unused_must_use, unused_unsafe, unused_assignments, unused_variables)]\n\
         use cuda_driver_pfn::api;\n\
         use cuda_driver_pfn::types::*;\n\
         use cuda_driver_pfn::{d3d10::*, d3d11::*, d3d9::*};\n\n\
         /// Any value of any type, for the arguments a use does not check (never run).\n\
         fn z<T>() -> T {\n    unsafe { core::mem::zeroed() }\n}\n\n\
         /// Compiled, never called: each line type-checks one bare enumerator where it goes.\n\
         pub unsafe fn enumerators() {\n",
    );
    let mut missing = Vec::new();
    for (e, (module, values)) in &c.enums {
        let typed = typed_uses(c, e);
        for (i, value) in values.iter().enumerate() {
            let Some((const_module, ty, docs)) = c.consts.get(value) else {
                missing.push(format!("{module}::{value} (of {e})"));
                continue;
            };
            if const_module != module {
                missing.push(format!("{module}::{value} (of {e}) is defined in {const_module}"));
                continue;
            }
            // A value that cuda.h also `#define`s (a constant of its own): not the enum's. The
            // crate's note follows cuda.h's own text on the value, if any.
            let Some(docs) = docs.rfind(" The enumerator `").map(|at| &docs[at..]) else {
                continue;
            };
            // The typed value where the first taker takes it; the enum's first value in every
            // taker, so that each parameter and field is tried.
            let takers: Vec<&Use> = if i == 0 { typed.iter().collect() } else { typed.iter().take(1).collect() };
            if c.enum_of.get(ty).is_some_and(|x| x == e) {
                for u in &takers {
                    s.push_str(&match u {
                        Use::Call { function, at, pointer } => call_line(c, function, *at, *pointer, value),
                        Use::Field { record, field, how } => field_line(record, field, how, value),
                    });
                }
                if takers.is_empty() {
                    writeln!(s, "    let _: {e} = {value};").unwrap();
                }
                continue;
            }
            // An integer: where its documentation says it goes (`as `owner`'s `param` takes it`).
            let owner = docs.split("`'s `").next().and_then(|d| d.rsplit('`').next());
            let param = docs.split("`'s `").nth(1).and_then(|d| d.split('`').next());
            match (owner, param) {
                (Some(owner), Some(param)) if docs.contains("takes it") => {
                    if let Some(at) = c.fns.get(owner).and_then(|p| p.iter().position(|(n, _)| n == param)) {
                        s.push_str(&call_line(c, owner, at, None, value));
                    } else if c.fields.get(owner).is_some_and(|f| f.iter().any(|(n, _)| n == param)) {
                        s.push_str(&field_line(owner, param, "", value));
                    } else if let Some(f) = c.fns.keys().rfind(|f| f.starts_with(&format!("{owner}_v"))) {
                        // A symbol whose C name is a later ABI (`cuStreamWaitValue32_v2`).
                        let at = c.fns[f].iter().position(|(n, _)| n == param).ok_or(format!("{f} has no {param}"))?;
                        s.push_str(&call_line(c, f, at, None, value));
                    } else {
                        missing.push(format!("{value}: its docs name `{owner}`'s `{param}`, which api::legacy lacks"));
                    }
                }
                _ => writeln!(s, "    let _: {ty} = {value};").unwrap(),
            }
        }
    }
    s.push_str("}\n\n/// Every record the crate gives `Default` (never called).\npub fn defaults() {\n");
    let types = std::fs::read_to_string(repo_root().join("generated/types/src/types.rs")).map_err(|e| e.to_string())?;
    let list =
        types.rsplit("zeroed_default!(").next().and_then(|t| t.split(')').next()).ok_or("no zeroed_default! list")?;
    for record in list.split_whitespace() {
        writeln!(s, "    let _ = {record}::default();").unwrap();
    }
    s.push_str("}\n");
    if missing.is_empty() {
        Ok(s)
    } else {
        Err(format!("enumerators without a bare constant of their own:\n{}", missing.join("\n")))
    }
}

#[test]
fn every_enumerator_has_a_use_that_compiles() {
    let c = read_crate();
    assert!(c.enums.len() > 100, "only {} enums read", c.enums.len());
    let uses = uses(&c).unwrap_or_else(|e| panic!("{e}"));
    let path = repo_root().join(USES);
    if std::env::var_os("CUDA_SYS_GEN_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &uses).unwrap();
        return;
    }
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        old == uses,
        "{USES} is not what the generated crate gives; run `CUDA_SYS_GEN_BLESS=1 cargo test -p cuda-sys-gen-tests --test enumerators`"
    );
}

/// The bare constants were about 6% of a default build, so each is compiled only
/// with the feature `bare-enumerators`, which `api` turns on. Every bare constant carries that
/// `cfg`, and nothing else does: the enums' own constants and cuda.h's `#define`s stay.
#[test]
fn bare_constants_are_behind_their_feature() {
    let c = read_crate();
    let values: BTreeSet<&str> = c.enums.values().flat_map(|(_, v)| v.iter().map(String::as_str)).collect();
    let (mut gated, mut plain) = (0, 0);
    for (_, path) in ENUM_FILES {
        for item in &parse(path).items {
            let syn::Item::Const(k) = item else { continue };
            if k.ident == "_" {
                continue;
            }
            let name = k.ident.to_string();
            let has_cfg = k.attrs.iter().any(|a| text(&a.meta) == r#"cfg(feature="bare-enumerators")"#);
            let bare = values.contains(name.as_str()) && doc(&k.attrs).contains(&format!("The enumerator `{name}`"));
            assert_eq!(has_cfg, bare, "{path}: `{name}` is a bare enumerator: {bare}, behind the feature: {has_cfg}");
            if bare {
                gated += 1;
            } else {
                plain += 1;
            }
        }
    }
    assert!(gated > 1000, "only {gated} bare constants");
    assert!(plain > 50, "only {plain} other constants (the #defines)");
    let manifest: toml::Table =
        std::fs::read_to_string(repo_root().join("generated/Cargo.toml")).unwrap().parse().unwrap();
    let features = manifest["features"].as_table().unwrap();
    let list = |f: &str| -> Vec<String> {
        features[f].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
    };
    // The constants are the types crate's: the feature only turns on its own there.
    assert_eq!(list("bare-enumerators"), ["cuda-driver-pfn-types/bare-enumerators"]);
    assert!(list("api").contains(&"bare-enumerators".to_owned()), "api must turn bare-enumerators on");
    assert!(!list("default").contains(&"bare-enumerators".to_owned()), "bare-enumerators must be off by default");
}
