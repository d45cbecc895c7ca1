//! aliases.rs declares, per toolkit, only what changed since the toolkit before and re-exports
//! the rest from it (to cut compile time). That must mean exactly what the flat listing
//! meant: every C name of every toolkit (registry.json's `c_names`) and every header alias
//! (`header_aliases`) resolves, in both stream modes, to the same typedef, and no name of an
//! older toolkit leaks into a newer one that lacks it.

use std::collections::{BTreeMap, BTreeSet};

use codegen::registry_json::{Modes, Registry};
use cuda_sys_gen_tests::repo_root;
use quote::ToTokens;

/// Per name, its declarations: (the `cfg` attributes, the last segment it re-exports).
type Names = BTreeMap<String, Vec<(String, String)>>;

fn last_segment(tree: &syn::UseTree) -> Option<(String, String)> {
    match tree {
        syn::UseTree::Path(p) => last_segment(&p.tree),
        syn::UseTree::Rename(r) => Some((r.rename.to_string(), r.ident.to_string())),
        syn::UseTree::Name(n) => Some((n.ident.to_string(), n.ident.to_string())),
        _ => None,
    }
}

fn glob_module(tree: &syn::UseTree) -> Option<String> {
    match tree {
        syn::UseTree::Path(p) if p.ident == "super" => match &*p.tree {
            syn::UseTree::Path(m) if matches!(&*m.tree, syn::UseTree::Glob(_)) => Some(m.ident.to_string()),
            _ => None,
        },
        _ => None,
    }
}

/// Every module's names as rustc resolves them: its own declarations, then the names of the
/// module it glob-imports that it does not declare itself; and the modules that glob-import one.
fn resolved_modules() -> (BTreeMap<String, Names>, BTreeSet<String>) {
    let text = std::fs::read_to_string(repo_root().join("generated/src/aliases.rs")).unwrap();
    let file: syn::File = syn::parse_file(&text).unwrap();
    let mut out: BTreeMap<String, Names> = BTreeMap::new();
    let mut chained = BTreeSet::new();
    for item in &file.items {
        let syn::Item::Mod(m) = item else { continue };
        let mut own = Names::new();
        let mut base = None;
        for item in m.content.as_ref().map(|c| &c.1[..]).unwrap_or(&[]) {
            let syn::Item::Use(u) = item else { panic!("{}: not a re-export", m.ident) };
            if let Some(b) = glob_module(&u.tree) {
                assert!(base.replace(b).is_none(), "{}: two globs", m.ident);
                continue;
            }
            let cfg: Vec<String> =
                u.attrs.iter().filter(|a| a.path().is_ident("cfg")).map(|a| a.to_token_stream().to_string()).collect();
            let (name, target) = last_segment(&u.tree).unwrap();
            own.entry(name).or_default().push((cfg.join(" "), target));
        }
        if let Some(b) = base {
            chained.insert(m.ident.to_string());
            let inherited = out.get(&b).unwrap_or_else(|| panic!("{}: glob of {b}, not declared before it", m.ident));
            for (name, decls) in inherited {
                match own.get(name) {
                    // Declared again: under exactly the same conditions, or the glob would
                    // fill in the older meaning where the new declaration is compiled out.
                    Some(new) => {
                        let conds = |d: &Vec<(String, String)>| d.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>();
                        assert_eq!(conds(new), conds(decls), "{}::{name}: other conditions than in {b}", m.ident);
                    }
                    None => {
                        own.insert(name.clone(), decls.clone());
                    }
                }
            }
        }
        out.insert(m.ident.to_string(), own);
    }
    (out, chained)
}

/// What a name means in one stream mode: the declaration compiled with or without the
/// `per-thread-default-stream` feature (its module's own feature taken as on).
fn meaning(decls: &[(String, String)], per_thread: bool) -> Option<String> {
    let not_ptds = "not (feature = \"per-thread-default-stream\")";
    let ptds = "feature = \"per-thread-default-stream\"";
    decls
        .iter()
        .find(
            |(cfg, _)| {
                if per_thread {
                    !cfg.contains(not_ptds)
                } else {
                    !cfg.contains(ptds) || cfg.contains(not_ptds)
                }
            },
        )
        .map(|(_, target)| target.trim_start_matches("PFN_").to_owned())
}

#[test]
fn every_toolkit_s_names_mean_what_its_headers_say() {
    let text = std::fs::read_to_string(repo_root().join("generated/registry.json")).unwrap();
    let registry = Registry::parse(&text).unwrap();
    let (modules, chained) = resolved_modules();
    let mut checked = 0;
    let mut refused = 0;
    // Both stream modes of a name against what registry.json says (a `None`: no meaning, which
    // no older module's meaning may fill in either).
    let mut check = |module: &str, name: &str, decls: &[(String, String)], want: [Option<&str>; 2]| {
        for (per_thread, want) in [false, true].into_iter().zip(want) {
            let want = want.map(|pfn| pfn.trim_start_matches("PFN_"));
            assert_eq!(meaning(decls, per_thread).as_deref(), want, "{module}::{name} (per-thread: {per_thread})");
            checked += 1;
        }
    };
    // Header aliases of a symbol (`PFN_cuCtxCreate`); not the headers' quirks of no symbol
    // (`PFN_GraphConditionalHandleCreate`), which the crate does not declare.
    let symbols: BTreeSet<&str> = registry.entries.iter().map(|e| e.symbol.as_str()).collect();
    let no_names = BTreeMap::new();
    let mut previous: Option<&BTreeMap<String, Modes<Option<String>>>> = None;
    for tk in &registry.toolkits {
        let module = format!("cuda_{}", tk.to_string().replace('.', "_"));
        let names = &modules[&module];
        let missing = |name: &str| -> ! { panic!("{module}::{name} missing") };
        let c_names = registry.c_names.get(tk).unwrap_or(&no_names);
        for (name, m) in c_names {
            let decls = names.get(name).unwrap_or_else(|| missing(name));
            check(&module, name, decls, [m.default.as_deref(), m.per_thread.as_deref()]);
        }
        let aliases = registry.header_aliases.get(tk).into_iter().flatten();
        for (name, m) in aliases.filter(|(n, _)| symbols.contains(n.trim_start_matches("PFN_"))) {
            let decls = names.get(name).unwrap_or_else(|| missing(name));
            check(&module, name, decls, [Some(&m.default), Some(&m.per_thread)]);
        }
        // No name of another toolkit that this one lacks: a `cu...` name here is one of its own
        // C names, a `PFN_x` one of a symbol it declares.
        let declared: BTreeSet<String> =
            registry.entries.iter().filter(|e| e.toolkits.contains(tk)).map(|e| format!("PFN_{}", e.symbol)).collect();
        for name in names.keys() {
            if name.starts_with("PFN_") {
                assert!(declared.contains(name), "{module}::{name}: CUDA {tk} declares no such symbol (leaked?)");
            } else {
                assert!(c_names.contains_key(name), "{module}::{name}: not a C name of CUDA {tk} (leaked?)");
            }
        }
        // A toolkit that drops a C name of the one before must not re-export that module.
        if let Some(before) = previous.replace(c_names) {
            if before.keys().any(|n| !c_names.contains_key(n)) {
                assert!(!chained.contains(&module), "{module} drops names of the toolkit before, yet re-exports it");
                refused += 1;
            }
        }
    }
    assert!(checked > 25_000, "{checked} meanings checked");
    // 12.9's well-known quirks, and the 13.x rule (the highest version the toolkit declares).
    let pfn = |module: &str, name: &str| meaning(&modules[module][name], false).unwrap();
    assert_eq!(pfn("cuda_12_9", "PFN_cuCtxCreate"), "cuCtxCreate_v11040");
    assert_eq!(pfn("cuda_12_9", "PFN_cuGraphInstantiate"), "cuGraphInstantiateWithFlags_v11040");
    assert_eq!(pfn("cuda_12_4", "PFN_cuCtxCreate"), "cuCtxCreate_v11040");
    assert_eq!(pfn("cuda_13_0", "PFN_cuCtxCreate"), "cuCtxCreate_v12050");
    assert_eq!(pfn("cuda_13_5", "PFN_cuCtxCreate"), "cuCtxCreate_v12050");
    assert!(chained.len() >= 10, "only {} modules re-export the one before", chained.len());
    assert!(refused >= 1, "no toolkit dropped a name: the refusal to chain went unchecked");
    eprintln!("{checked} meanings checked, {} modules chained, {refused} refused", chained.len());
}
