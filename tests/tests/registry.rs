//! Properties of the committed registry (generated/registry.json and the generated crate):
//! no libclang and no headers needed.

use std::collections::BTreeMap;

use codegen::registry_json::Registry;
use cuda_driver_pfn::{Entry, StreamFlags, ENTRIES, TOOLKITS};
use cuda_sys_gen_tests::repo_root;

fn registry_text() -> String {
    std::fs::read_to_string(repo_root().join("generated/registry.json")).unwrap()
}

/// registry.json through the generator's own serde types, as min-driver reads it.
fn registry() -> Registry {
    Registry::parse(&registry_text()).unwrap()
}

/// registry.json, read through the generator's own types (`codegen::registry_json`), is the
/// static table, row for row.
#[test]
fn json_and_static_table_agree() {
    let v = registry();
    assert_eq!(v.entries.len(), ENTRIES.len());
    for (j, e) in v.entries.iter().zip(ENTRIES.iter()) {
        assert_eq!(j.pfn, e.pfn);
        assert_eq!(j.symbol, e.symbol);
        assert_eq!(j.version, e.version);
        assert_eq!(j.exported, e.exported);
        assert_eq!(j.legacy, e.legacy);
        assert_eq!(j.header, e.header);
        assert_eq!(j.module, e.module);
        let platforms: Vec<String> = j.platforms.iter().map(|p| p.to_string()).collect();
        let expected: Vec<&str> = [("linux", e.platforms.linux), ("windows", e.platforms.windows)]
            .iter()
            .filter(|p| p.1)
            .map(|p| p.0)
            .collect();
        assert_eq!(platforms, expected);
        // Each row writes only what differs from the table's common row: every field is
        // compared here, so that a wrong default shows.
        assert_eq!(j.arch.as_deref(), e.platforms.arch, "{}", e.pfn);
        assert_eq!(j.variant.is_some(), e.variant.is_some(), "{}", e.pfn);
        let toolkits: Vec<String> = j.toolkits.iter().map(|t| t.to_string()).collect();
        assert_eq!(toolkits, e.toolkits().collect::<Vec<_>>());
        assert_eq!(e.c_symbol.to_str().unwrap(), e.symbol);
        let flags =
            if e.variant.is_some() { StreamFlags::PER_THREAD_DEFAULT_STREAM } else { StreamFlags::LEGACY_STREAM };
        assert_eq!(e.flags, flags, "{}", e.pfn);
        // The version in the name is the version asked for.
        assert!(e.pfn.contains(&format!("_v{}", e.version)), "{}", e.pfn);
    }
    assert_eq!(v.toolkits.len(), TOOLKITS.len());
    assert_eq!(TOOLKITS.len(), 17);
    // Read back and written again, it is the same text: the types hold every field.
    assert_eq!(String::from_utf8(v.to_json().unwrap()).unwrap(), registry_text());
}

/// The crate docs' description of each entry field (`ENTRY_FIELDS`) is the field's doc in
/// `codegen::registry_json::Entry`: one text, in the type that reads and writes it.
#[test]
fn entry_field_docs_are_the_types_docs() {
    let source = std::fs::read_to_string(repo_root().join("codegen/src/registry_json.rs")).unwrap();
    let file = syn::parse_file(&source).unwrap();
    let entry = file
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Struct(s) if s.ident == "Entry" => Some(s),
            _ => None,
        })
        .unwrap();
    let docs: Vec<(String, String)> = entry
        .fields
        .iter()
        .map(|f| {
            let doc: Vec<String> = f
                .attrs
                .iter()
                .filter_map(|a| match &a.meta {
                    syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value().trim().to_owned()),
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            (f.ident.as_ref().unwrap().to_string(), doc.join(" "))
        })
        .collect();
    let fields: Vec<(String, String)> =
        codegen::registry_json::ENTRY_FIELDS.iter().map(|(f, d)| (f.to_string(), d.to_string())).collect();
    assert_eq!(docs, fields);
}

/// The crate docs describe `registry.json` from `codegen::registry_json::ENTRY_FIELDS`: every field
/// written is described there, in the order written, and nothing else.
#[test]
fn entry_fields_are_the_documented_ones() {
    let documented: Vec<&str> = codegen::registry_json::ENTRY_FIELDS.iter().map(|f| f.0).collect();
    // The raw JSON, not the typed registry: the order of the keys as written is the point.
    let raw: serde_json::Value = serde_json::from_str(&registry_text()).unwrap();
    for e in raw["entries"].as_array().unwrap() {
        let written: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(written, documented, "{}", e["pfn"]);
    }
    let lib = std::fs::read_to_string(repo_root().join("generated/src/lib.rs")).unwrap();
    for (field, _) in codegen::registry_json::ENTRY_FIELDS {
        assert!(lib.contains(&format!("//!   - `{field}`: ")), "lib.rs does not describe `{field}`");
    }
}

#[test]
fn sorted_and_unique() {
    let keys: Vec<(&str, u32, u8)> =
        ENTRIES.iter().map(|e| (e.symbol, e.version, e.variant.map_or(0, |v| v as u8 + 1))).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(keys, sorted);
}

#[test]
fn markers_carry_their_own_version() {
    use cuda_driver_pfn::entries::*;
    assert_eq!(cuMemAlloc_v3020::VERSION, 3020);
    assert_eq!(cuMemAlloc_v3020::SYMBOL, c"cuMemAlloc");
    assert_eq!(cuMemAlloc_v3020::FLAGS, StreamFlags::LEGACY_STREAM);
    assert_eq!(cuStreamBeginCapture_v10010_ptsz::VERSION, 10010);
    assert_eq!(cuStreamBeginCapture_v10010_ptsz::FLAGS, StreamFlags::PER_THREAD_DEFAULT_STREAM);
    assert_eq!(cuCtxCreate_v12050::INFO.exported, "cuCtxCreate_v4");
    assert_eq!(ENTRIES[cuMemcpy_v7000_ptds::INDEX].pfn, "PFN_cuMemcpy_v7000_ptds");
}

/// In every 11.x/12.x header, `__API_TYPEDEF_PTDS(api, d, p)` pairs a per-thread typedef with
/// its default: the exported name of the per-thread entry must be that default's plus the
/// suffix (the rule the model uses even where no alias exists, as in 13.x).
#[test]
fn per_thread_names_follow_the_header_pairing() {
    let v = registry();
    let by: BTreeMap<&str, &codegen::registry_json::Entry> = v.entries.iter().map(|e| (e.pfn.as_str(), e)).collect();
    let mut checked = 0;
    for aliases in v.header_aliases.values() {
        for t in aliases.values() {
            let (d, p) = (t.default.as_str(), t.per_thread.as_str());
            if d == p {
                continue;
            }
            let suffix = &p[p.len() - 5..];
            assert_eq!(by[p].exported, format!("{}{suffix}", by[d].exported), "{p} pairs with {d}");
            checked += 1;
        }
    }
    assert!(checked > 500, "only {checked} pairs checked");
}

// What `aliases::cuda_X_Y` means, per toolkit and stream mode, is checked against registry.json
// in tests/tests/aliases_chain.rs, which resolves the modules' re-exports of each other.

#[test]
fn every_generated_file_is_marked() {
    for rel in codegen::write::list_tree(&repo_root().join("generated")).unwrap() {
        let text = std::fs::read_to_string(repo_root().join("generated").join(&rel)).unwrap();
        let name = rel.strip_prefix("types/").unwrap_or(&rel);
        if name.starts_with("LICENSE-") {
            // A license is its text, verbatim: the repository's own (in both packages).
            let own = std::fs::read_to_string(repo_root().join(name)).unwrap();
            assert_eq!(text, own, "{rel} is not the repository's {rel}");
            continue;
        }
        assert!(
            text.contains("@generated by cuda-sys-gen") && text.contains("cargo xtask generate"),
            "{rel} has no marker"
        );
        assert!(
            !text.contains("/work/") && !text.contains("/tmp/") && !text.contains("/home/"),
            "{rel} holds a machine path"
        );
    }
}
