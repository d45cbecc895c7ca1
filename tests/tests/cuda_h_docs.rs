//! The headers' own documentation reaches the crate's rustdoc. What the headers
//! document comes from clang (the newest pinned toolkit, read through the pipeline); what the
//! crate carries is read back from the committed generated/ with syn, word for word, so a
//! comment the emitter drops or misplaces fails here.
//!
//! `cargo test -p cuda-sys-gen-tests --test cuda_h_docs -- --nocapture` prints the counts.

use std::collections::{BTreeMap, BTreeSet};

use codegen::fetch::Fetcher;
use codegen::manifest::Manifest;
use codegen::pipeline;
use cuda_sys_gen_tests::*;

/// Docs of every item of the generated crate by name (`CUjit_option_enum`, `cuLinkCreate`),
/// of fields as `Record.field` and of enum values as `Enum::VALUE`; an item named in several
/// modules (`api::legacy::cuMemcpy`, `api::ptds::cuMemcpy`) has each doc.
#[derive(Default)]
struct CrateDocs {
    items: BTreeMap<String, Vec<String>>,
    /// The outermost inline module being walked.
    module: Option<String>,
}

fn doc_of(attrs: &[syn::Attribute]) -> String {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(syn::MetaNameValue {
                value: syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }),
                ..
            }) => Some(s.value()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl CrateDocs {
    fn add(&mut self, name: String, attrs: &[syn::Attribute]) {
        self.items.entry(name).or_default().push(doc_of(attrs));
    }

    fn walk(&mut self, items: &[syn::Item]) {
        for item in items {
            match item {
                syn::Item::Struct(s) => {
                    self.add(s.ident.to_string(), &s.attrs);
                    if let syn::Fields::Named(f) = &s.fields {
                        for f in &f.named {
                            self.add(format!("{}.{}", s.ident, f.ident.as_ref().unwrap()), &f.attrs);
                        }
                    }
                }
                syn::Item::Union(u) => {
                    self.add(u.ident.to_string(), &u.attrs);
                    for f in &u.fields.named {
                        self.add(format!("{}.{}", u.ident, f.ident.as_ref().unwrap()), &f.attrs);
                    }
                }
                syn::Item::Type(t) => self.add(t.ident.to_string(), &t.attrs),
                syn::Item::Const(c) => self.add(c.ident.to_string(), &c.attrs),
                syn::Item::Enum(e) => self.add(e.ident.to_string(), &e.attrs),
                syn::Item::Fn(f) => {
                    self.add(f.sig.ident.to_string(), &f.attrs);
                    if let Some(module) = &self.module {
                        self.add(format!("{module}::{}", f.sig.ident), &f.attrs);
                    }
                }
                syn::Item::Impl(imp) => {
                    let syn::Type::Path(p) = &*imp.self_ty else { continue };
                    let Some(ty) = p.path.get_ident() else { continue };
                    for ii in &imp.items {
                        if let syn::ImplItem::Const(c) = ii {
                            self.add(format!("{ty}::{}", c.ident), &c.attrs);
                        }
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        // Functions are also kept by their outermost module (`legacy::cuX`).
                        let outer = self.module.is_none();
                        if outer {
                            self.module = Some(m.ident.to_string());
                        }
                        self.walk(items);
                        if outer {
                            self.module = None;
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn get(&self, name: &str) -> &[String] {
        self.items.get(name).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// The words of a text, lower case, without markup: Doxygen's commands and `::`, Markdown's
/// code spans, emphasis, escapes and link targets.
fn words(text: &str) -> Vec<String> {
    // Link targets go first: `[`x`](crate::a::x)` reads `x`.
    // Doxygen's commands (`\\p`, `\\n`) and Markdown's entities and line breaks.
    let text = text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    let mut bare = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(|n| n.is_ascii_alphabetic()) {
            while chars.peek().is_some_and(|n| n.is_ascii_alphanumeric() || *n == '_') {
                chars.next();
            }
            bare.push(' ');
        } else {
            bare.push(c);
        }
    }
    let mut plain = String::new();
    let mut rest = bare.as_str();
    while let Some(at) = rest.find("](") {
        plain.push_str(&rest[..at]);
        rest = &rest[at + 2..];
        rest = rest.find(')').map_or("", |end| &rest[end + 1..]);
    }
    plain.push_str(rest);
    plain
        .split_whitespace()
        .map(|w| w.chars().filter(|c| c.is_alphanumeric()).collect::<String>().to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The first words (up to 8) of a comment's first paragraph: its summary.
fn summary(raw: &str) -> Vec<String> {
    // The first paragraph: to a blank line or a line that starts another command.
    let starts_section = |l: &str| l.trim_start().starts_with('\\') && !l.trim_start().starts_with("\\brief");
    // `\struct X`, `\typedef ...`: a line that names the item, not text.
    let names_item =
        |l: &str| ["\\struct", "\\typedef", "\\union", "\\enum"].iter().any(|c| l.trim_start().starts_with(c));
    let mut lines = raw.lines().skip_while(|l| l.trim().is_empty() || names_item(l));
    let first: Vec<&str> =
        lines.next().into_iter().chain(lines.take_while(|l| !l.trim().is_empty() && !starts_section(l))).collect();
    words(&first.join(" ")).into_iter().take(8).collect()
}

/// Whether `doc` holds the first words of the header's comment `raw` (its summary), in order.
fn carries(doc: &str, raw: &str) -> bool {
    let want = summary(raw);
    if want.is_empty() {
        return true;
    }
    words(doc).windows(want.len()).any(|w| w == want.as_slice())
}

#[test]
fn every_comment_of_the_newest_headers_is_in_the_crates_rustdoc() {
    let root = repo_root();
    let real = Manifest::load(&real_manifest()).unwrap();
    let newest = real.toolkits.iter().map(|t| t.version).max().unwrap().to_string();
    let m = manifest_with_toolkits(&[&newest]);
    let manifest = Manifest::load(&m.path().join("headers-manifest.toml")).unwrap();
    let fetcher = Fetcher::new(cache_dir(), &manifest);
    let toolkits: Vec<_> = manifest.toolkits.iter().map(|p| fetcher.toolkit(p).unwrap()).collect();
    let built = pipeline::build_model(&manifest, &fetcher, &toolkits).unwrap();
    let c = built.types.expect("the newest toolkit's types").docs;

    // The files that declare what the headers do: types and `pfn::` types (types.rs, pfn.rs and
    // the interop modules), `entries::` markers (registry.rs) and `api::` functions (api.rs).
    // Not aliases.rs, newest.rs or visit.rs, whose items share the C names.
    let read = |names: &[&str]| {
        let mut docs = CrateDocs::default();
        let crate_files = std::fs::read_dir(root.join("generated/src")).unwrap();
        for entry in crate_files.chain(std::fs::read_dir(root.join("generated/types/src")).unwrap()) {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
            if names.contains(&stem.as_str()) {
                let file: syn::File = syn::parse_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                docs.walk(&file.items);
            }
        }
        docs
    };
    let krate = read(&["types", "pfn", "gl", "egl", "vdpau", "profiler", "d3d9", "d3d10", "d3d11", "wgl"]);
    let markers = read(&["registry"]);
    let api = read(&["api"]);

    // (what, documented in the headers, declared by the crate, carrying the comment)
    let mut table: Vec<(&str, usize, usize, usize)> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    let mut count = |what: &'static str, docs: Vec<(String, &String, Vec<Vec<String>>)>| {
        let documented = docs.len();
        let debug = std::env::var("CUDA_H_DOCS_DEBUG").unwrap_or_default();
        let (mut declared, mut carried) = (0, 0);
        for (name, raw, places) in docs {
            if places.iter().all(|p| p.is_empty()) {
                continue;
            }
            declared += 1;
            if name == debug {
                eprintln!("{name}: {raw:?}\n{places:#?}");
            }
            if places.iter().all(|p| p.iter().all(|doc| carries(doc, raw))) {
                carried += 1;
            } else {
                missing.push(format!("{what} {name}: {:?}", summary(raw)));
            }
        }
        table.push((what, documented, declared, carried));
    };

    count("types", c.items.iter().map(|(n, raw)| (n.clone(), raw, vec![krate.get(n).to_vec()])).collect());
    count(
        "fields",
        c.fields
            .iter()
            .map(|((r, f), raw)| (format!("{r}.{f}"), raw, vec![krate.get(&format!("{r}.{f}")).to_vec()]))
            .collect(),
    );
    // An enum value: on the value (`Enum::VALUE`) and on its bare constant.
    let values: BTreeMap<String, Vec<String>> = krate
        .items
        .keys()
        .filter_map(|k| k.split_once("::").map(|(_, v)| (v.to_owned(), k.clone())))
        .fold(BTreeMap::new(), |mut m, (v, k)| {
            m.entry(v).or_default().push(k);
            m
        });
    count(
        "enumerators",
        c.enumerators
            .iter()
            .map(|(n, raw)| {
                let mut places: Vec<Vec<String>> =
                    values.get(n).into_iter().flatten().map(|k| krate.get(k).to_vec()).collect();
                if !places.is_empty() {
                    places.push(krate.get(n).to_vec());
                }
                (n.clone(), raw, places)
            })
            .collect(),
    );
    // A function: its summary on each ABI's `pfn::` type and `entries::` marker whose export
    // it declares, its whole comment on the `api::` functions that call one.
    let model = &built.model;
    let newest_names = model.c_names.values().last().cloned().unwrap_or_default();
    let mut api_docs = 0;
    count(
        "functions",
        c.functions
            .iter()
            .map(|(f, raw)| {
                let mut places: Vec<Vec<String>> = Vec::new();
                for e in model.entries.values().filter(|e| &e.exported == f) {
                    places.push(krate.get(&e.pfn).to_vec());
                    places.push(markers.get(e.pfn.trim_start_matches("PFN_")).to_vec());
                    for (c_name, t) in &newest_names {
                        // The function of each stream mode whose C name means this entry.
                        for (target, mode) in [(&t.default, "legacy"), (&t.per_thread, "ptds")] {
                            if target.as_deref() != Some(e.pfn.as_str()) || e.returns.as_str() != "CUresult" {
                                continue;
                            }
                            let mut fns = api.get(&format!("{mode}::{c_name}")).to_vec();
                            fns.extend(api.get(&format!("both::{c_name}")).iter().cloned());
                            if raw.contains("\\param")
                                && !fns.is_empty()
                                && fns.iter().all(|d| d.contains("# Parameters"))
                            {
                                api_docs += 1;
                            }
                            places.push(fns);
                        }
                    }
                }
                (f.clone(), raw, places)
            })
            .collect(),
    );
    eprintln!("CUDA {newest}'s header comments in the crate's rustdoc:");
    eprintln!("{:<12} {:>10} {:>18} {:>9}", "", "documented", "declared by crate", "carrying");
    for (what, documented, declared, carried) in &table {
        eprintln!("{what:<12} {documented:>10} {declared:>18} {carried:>9}");
    }
    eprintln!("api:: functions with their `\\param`s as a Parameters list: {api_docs}");
    assert!(missing.is_empty(), "{} comments missing from the crate's rustdoc:\n{}", missing.len(), missing.join("\n"));
    let total: BTreeSet<&str> = table.iter().filter(|t| t.2 == 0).map(|t| t.0).collect();
    assert!(total.is_empty(), "the crate declares none of these documented items: {total:?}");
    // The JIT linker's hard part, per option: what `optionValues[i]` is.
    let wall = krate.get("CU_JIT_WALL_TIME").join("\n");
    assert!(wall.contains("Option type: float"), "{wall}");
    assert!(api_docs > 300, "{api_docs}");
}
