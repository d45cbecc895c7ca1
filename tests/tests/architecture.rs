//! The generator's layers: every file of `codegen/src` imports only files on lower
//! layers, as ARCHITECTURE.md's "Layers" section lists them, so no import circle can come back.
//!
//! Imports are read with syn: `use` trees and paths in code that start with `crate::`,
//! `super::`, `self::` or a child module's name (paths inside macros such as `quote!` are
//! tokens, not imports, and doc links are text). `crate::Error` and the crate root's other
//! re-exports count as imports of the module they come from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use cuda_sys_gen_tests::*;
use syn::visit_mut::VisitMut;

/// A file of codegen/src as a module path: `lib.rs` is `""`, `emit/mod.rs` is `emit`,
/// `emit/pfn.rs` is `emit::pfn`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel.with_extension("").iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts.join("::")
}

/// Every path a file names, as segments, with how many inline `mod` blocks it sits in.
#[derive(Default)]
struct Paths {
    depth: usize,
    found: Vec<(usize, Vec<String>)>,
}

impl Paths {
    fn tree(&mut self, prefix: Vec<String>, tree: &syn::UseTree) {
        let with = |mut p: Vec<String>, s: String| {
            p.push(s);
            p
        };
        match tree {
            syn::UseTree::Path(p) => self.tree(with(prefix, p.ident.to_string()), &p.tree),
            syn::UseTree::Name(n) => self.found.push((self.depth, with(prefix, n.ident.to_string()))),
            syn::UseTree::Rename(r) => self.found.push((self.depth, with(prefix, r.ident.to_string()))),
            syn::UseTree::Glob(_) => self.found.push((self.depth, prefix)),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.tree(prefix.clone(), t)),
        }
    }
}

impl VisitMut for Paths {
    fn visit_item_use_mut(&mut self, u: &mut syn::ItemUse) {
        self.tree(Vec::new(), &u.tree);
    }
    fn visit_item_mod_mut(&mut self, m: &mut syn::ItemMod) {
        self.depth += 1;
        syn::visit_mut::visit_item_mod_mut(self, m);
        self.depth -= 1;
    }
    // `pub(crate)` holds the path `crate`, which imports nothing.
    fn visit_visibility_mut(&mut self, _: &mut syn::Visibility) {}
    fn visit_path_mut(&mut self, p: &mut syn::Path) {
        self.found.push((self.depth, p.segments.iter().map(|s| s.ident.to_string()).collect()));
        syn::visit_mut::visit_path_mut(self, p);
    }
}

/// The modules a file imports.
fn imports(
    module: &str,
    file: &syn::File,
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let mut paths = Paths::default();
    paths.visit_file_mut(&mut file.clone());
    let here: Vec<String> = if module.is_empty() { vec![] } else { module.split("::").map(String::from).collect() };
    let mut out = BTreeSet::new();
    for (depth, segs) in paths.found {
        let Some(first) = segs.first() else { continue };
        // Where the path starts, as module segments.
        let (mut base, rest): (Vec<String>, &[String]) = match first.as_str() {
            "crate" => (vec![], &segs[1..]),
            // `super` in an inline `mod tests` is the file itself.
            "super" if depth > 0 => (here.clone(), &segs[1..]),
            "super" => (here[..here.len().saturating_sub(1)].to_vec(), &segs[1..]),
            "self" => (here.clone(), &segs[1..]),
            child if depth == 0 && modules.contains(&[here.as_slice(), &[child.to_owned()]].concat().join("::")) => {
                (here.clone(), &segs[..])
            }
            _ => continue,
        };
        // The longest prefix that is a module; a root re-export names its source module.
        let mut target = base.join("::");
        for s in rest {
            base.push(s.clone());
            let m = base.join("::");
            if modules.contains(&m) {
                target = m;
            } else {
                if target.is_empty() {
                    if let Some(src) = reexports.get(s) {
                        target = src.clone();
                    }
                }
                break;
            }
        }
        if target != module {
            out.insert(target);
        }
    }
    out
}

/// ARCHITECTURE.md's layers: lines `N. `a`, `b::c`, ...` under `## Layers`, lowest first.
fn layers() -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(repo_root().join("ARCHITECTURE.md")).unwrap();
    let section = text.split("\n## Layers").nth(1).expect("ARCHITECTURE.md has a `## Layers` section");
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut out = BTreeMap::new();
    for line in section.lines() {
        let Some((n, rest)) = line.split_once(". ") else { continue };
        let Ok(n) = n.trim().parse::<usize>() else { continue };
        for name in rest.split('`').skip(1).step_by(2) {
            assert!(out.insert(name.to_owned(), n).is_none(), "`{name}` is on two layers of ARCHITECTURE.md");
        }
    }
    out
}

#[test]
fn codegen_imports_only_lower_layers() {
    let src = repo_root().join("codegen/src");
    let mut files = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            // codegen/src/shim/ holds the generated crate's modules, not the generator's.
            } else if p.extension().is_some_and(|x| x == "rs") && !p.starts_with(src.join("shim")) {
                let rel = p.strip_prefix(&src).unwrap().to_owned();
                let file: syn::File = syn::parse_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
                files.insert(module_of(&rel), file);
            }
        }
    }
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    // `pub use error::Error;` at the root: `crate::Error` is an import of `error`.
    let mut reexports = BTreeMap::new();
    let mut root = Paths::default();
    root.visit_file_mut(&mut files[""].clone());
    for (_, segs) in root.found {
        if let [m, name] = &segs[..] {
            if modules.contains(m) {
                reexports.insert(name.clone(), m.clone());
            }
        }
    }
    let layer = layers();
    let mut problems = Vec::new();
    for (module, file) in files.iter().filter(|(m, _)| !m.is_empty()) {
        let Some(&mine) = layer.get(module) else {
            problems.push(format!("`{module}` is on no layer of ARCHITECTURE.md: add it there"));
            continue;
        };
        for target in imports(module, file, &modules, &reexports) {
            match layer.get(&target) {
                Some(&theirs) if theirs < mine => {}
                Some(&theirs) => problems.push(format!(
                    "`{module}` (layer {mine}) imports `{target}` (layer {theirs}), which is not below it"
                )),
                None if target.is_empty() => {
                    problems.push(format!("`{module}` imports the crate root, which only declares modules"))
                }
                None => problems.push(format!("`{module}` imports `{target}`, which is on no layer")),
            }
        }
    }
    for name in layer.keys().filter(|n| !modules.contains(*n)) {
        problems.push(format!("ARCHITECTURE.md's layers name `{name}`, which is no file of codegen/src"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Each published package carries the licences in its own folder (a `.crate` holds only its
/// package's files, and the generator writes the generated crate's licences from codegen's):
/// each copy says what the repository's own files say.
#[test]
fn published_packages_carry_the_repository_licences() {
    let root = repo_root();
    let mut problems = Vec::new();
    for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
        let ours = std::fs::read(root.join(licence)).unwrap();
        for package in ["codegen", "cuda-sys-gen", "min-driver", "generated", "generated/types"] {
            let path = root.join(package).join(licence);
            match std::fs::read(&path) {
                Ok(theirs) if theirs == ours => {}
                Ok(_) => problems.push(format!("{} differs from {licence}: copy it again", path.display())),
                Err(e) => problems.push(format!("{}: {e}", path.display())),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Where the tokens of one `quote!` declare a piece of the generated crate's runtime: a type,
/// trait or macro whose name is not interpolated (`#name`), an `impl` whose header
/// interpolates nothing, or an `unsafe` block or function outside the body of an item that
/// is per entry. Such code belongs in `codegen/src/shim/`, where it is compiled and linted as
/// it is edited; the emitters render only tables of the model.
fn runtime_in_quote(tokens: proc_macro2::TokenStream, per_entry: bool, out: &mut Vec<String>) {
    use proc_macro2::TokenTree;
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let is_hash = |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == '#');
    let mut i = 0;
    // Whether the next brace group is the body of a per-entry item.
    let mut body_per_entry = per_entry;
    // The item after `#[cfg(doctest)]` is the docs' test harness, not the crate's runtime.
    let mut doctest_only = false;
    while i < tokens.len() {
        if is_hash(tokens.get(i))
            && matches!(tokens.get(i + 1), Some(TokenTree::Group(g)) if g.stream().to_string() == "cfg (doctest)")
        {
            doctest_only = true;
            i += 2;
            continue;
        }
        match &tokens[i] {
            TokenTree::Ident(id) => {
                let word = id.to_string();
                match word.as_str() {
                    "struct" | "enum" | "union" | "trait" | "fn" | "type" | "const" | "static" | "mod" => {
                        let named = is_hash(tokens.get(i + 1));
                        let runtime = matches!(word.as_str(), "struct" | "enum" | "union" | "trait");
                        if !named && !per_entry && !doctest_only && runtime {
                            out.push(format!(
                                "`{word} {}`",
                                tokens.get(i + 1).map_or(String::new(), |t| t.to_string())
                            ));
                        }
                        body_per_entry = per_entry || named;
                        doctest_only = false;
                    }
                    "macro_rules" => {
                        let named = is_hash(tokens.get(i + 2));
                        if !named && !per_entry {
                            out.push(format!(
                                "`macro_rules! {}`",
                                tokens.get(i + 2).map_or(String::new(), |t| t.to_string())
                            ));
                        }
                        body_per_entry = per_entry || named;
                    }
                    "impl" => {
                        let end = tokens[i..]
                            .iter()
                            .position(
                                |t| matches!(t, TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace),
                            )
                            .map_or(tokens.len(), |n| i + n);
                        let interpolated = tokens[i..end].iter().any(|t| is_hash(Some(t)));
                        if !interpolated && !per_entry {
                            let header: Vec<String> = tokens[i..end].iter().map(|t| t.to_string()).collect();
                            out.push(format!("`{}`", header.join(" ")));
                        }
                        body_per_entry = per_entry || interpolated;
                    }
                    "unsafe" if !per_entry => {
                        if matches!(tokens.get(i + 1), Some(TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::Brace)
                        {
                            out.push(format!("an `unsafe` block: `unsafe {}`", tokens[i + 1]));
                        }
                    }
                    _ => {}
                }
            }
            TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => {
                runtime_in_quote(g.stream(), body_per_entry, out);
                body_per_entry = per_entry;
            }
            TokenTree::Group(g) => runtime_in_quote(g.stream(), per_entry, out),
            TokenTree::Punct(p) if p.as_char() == ';' => body_per_entry = per_entry,
            _ => {}
        }
        i += 1;
    }
}

/// Every `quote!` of a file.
#[derive(Default)]
struct Quotes(Vec<proc_macro2::TokenStream>);

impl VisitMut for Quotes {
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        if m.path.segments.last().is_some_and(|s| s.ident == "quote" || s.ident == "quote_spanned") {
            self.0.push(m.tokens.clone());
        }
    }
}

/// The generated crate's runtime is hand-written Rust in `codegen/src/shim/`, compiled where it
/// is edited: no emitter writes a type, trait, macro, impl or `unsafe` block of its own inside
/// a `quote!` (only items named by the model: a marker, an enum per symbol, their impls).
#[test]
fn no_runtime_inside_quote() {
    let dir = repo_root().join("codegen/src/emit");
    let mut problems = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths.iter().filter(|p| p.extension().is_some_and(|x| x == "rs")) {
        let mut file: syn::File = syn::parse_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut quotes = Quotes::default();
        quotes.visit_file_mut(&mut file);
        let mut found = Vec::new();
        for q in quotes.0 {
            runtime_in_quote(q, false, &mut found);
        }
        problems
            .extend(found.into_iter().map(|f| format!("{}: {f}", path.strip_prefix(repo_root()).unwrap().display())));
    }
    // What stays, each for its reason; the list is exact, so a fragment moved out must leave it.
    let known: Vec<String> = STILL_QUOTED.iter().map(|(file, what, _)| format!("{file}: {what}")).collect();
    let new: Vec<&String> = problems.iter().filter(|p| !known.contains(p)).collect();
    let gone: Vec<&String> = known.iter().filter(|k| !problems.contains(k)).collect();
    assert!(
        new.is_empty(),
        "runtime code inside quote! (move it to codegen/src/shim/, where it is compiled and linted):\n{}",
        new.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
    );
    assert!(gone.is_empty(), "no longer inside a quote!, so drop it from STILL_QUOTED: {gone:?}");
}

/// The runtime pieces still written inside `quote!`, and why.
const STILL_QUOTED: &[(&str, &str, &str)] = &[
    (
        "codegen/src/emit/standin.rs",
        "`macro_rules! __standin_exports`",
        "the per-entry exported functions and their table, which `export_libcuda!` (hand-written, \
         shim/standin.rs) expands in the user's cdylib: a table of the model that only a macro can carry",
    ),
    (
        "codegen/src/emit/standin.rs",
        "an `unsafe` block: `unsafe { :: core :: mem :: transmute ::< _ , usize > (v) }`",
        "a fragment of a per-entry exported function (an output argument shown as an address)",
    ),
    (
        "codegen/src/emit/standin.rs",
        "an `unsafe` block: `unsafe { :: core :: ptr :: read (p as * const # elem) }`",
        "a fragment of a per-entry exported function (an output argument read after the call)",
    ),
    (
        "codegen/src/emit/standin.rs",
        "an `unsafe` block: `unsafe { :: core :: mem :: transmute ::< _ , usize > (# a) }`",
        "a fragment of a per-entry exported function (a function-pointer argument shown as an address)",
    ),
];

/// The check above finds what it looks for: each kind of runtime item, and none of the
/// per-entry ones.
#[test]
fn runtime_in_quote_finds_runtime_items() {
    let mut found = Vec::new();
    let runtime: proc_macro2::TokenStream = quote::quote! {
        pub struct Table(u8);
        trait Seal {}
        impl Table { fn get(&self) -> u8 { unsafe { core::ptr::read(&self.0) } } }
        #[macro_export]
        macro_rules! call { () => {} }
    };
    runtime_in_quote(runtime, false, &mut found);
    assert_eq!(found.len(), 5, "{found:?}");
    let mut none = Vec::new();
    let per_entry: proc_macro2::TokenStream = "pub enum #marker {} impl super::Entry for #marker { const X: u8 = 1; } \
         unsafe extern \"C\" fn #name() { unsafe { f() } } pub static #m: R = R { a: 1 };"
        .parse()
        .unwrap();
    runtime_in_quote(per_entry, false, &mut none);
    assert!(none.is_empty(), "{none:?}");
}
