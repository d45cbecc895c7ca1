//! The headers' Doxygen comments, taken off bindgen's output into [`CDocs`].
//!
//! bindgen runs with `generate_comments(true)` and declares the headers' functions, so its
//! output carries each comment as a `#[doc]` attribute on the item clang attached it to. This
//! takes every one of them off the tree (and the function declarations with them: the crate
//! links no function), so that everything downstream sees the same tree as without comments,
//! and keeps them as data for the emitter, which renders them (`emit::doxygen`).

use crate::model::CDocs;

/// The text of `attrs`' `#[doc]` attributes, removed from them.
fn take_doc(attrs: &mut Vec<syn::Attribute>) -> Option<String> {
    let mut lines = Vec::new();
    attrs.retain(|a| {
        if !a.path().is_ident("doc") {
            return true;
        }
        if let syn::Meta::NameValue(syn::MetaNameValue {
            value: syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }),
            ..
        }) = &a.meta
        {
            lines.push(s.value());
        }
        false
    });
    let text = lines.join("\n");
    // A group's comment (`\defgroup CUDA_LOGS ...`), which clang attaches to the first
    // declaration after it, documents the group, not that item.
    let group = text.lines().any(|l| ["\\defgroup", "\\addtogroup"].iter().any(|c| l.trim_start().starts_with(c)));
    (!text.trim().is_empty() && !group).then_some(text)
}

fn named_fields(fields: &mut syn::Fields) -> impl Iterator<Item = &mut syn::Field> {
    match fields {
        syn::Fields::Named(f) => Some(f.named.iter_mut()),
        _ => None,
    }
    .into_iter()
    .flatten()
}

/// Takes every doc comment off `file` (and its function declarations out of it).
pub fn take_docs(file: &mut syn::File) -> CDocs {
    let mut docs = CDocs::default();
    let _ = take_doc(&mut file.attrs);
    file.items.retain_mut(|item| {
        match item {
            syn::Item::ForeignMod(m) => {
                for f in &mut m.items {
                    if let syn::ForeignItem::Fn(f) = f {
                        if let Some(d) = take_doc(&mut f.attrs) {
                            docs.functions.insert(f.sig.ident.to_string(), d);
                        }
                    }
                }
                return false;
            }
            syn::Item::Struct(s) => {
                let name = s.ident.to_string();
                if let Some(d) = take_doc(&mut s.attrs) {
                    docs.items.insert(name.clone(), d);
                }
                for f in named_fields(&mut s.fields) {
                    if let (Some(d), Some(ident)) = (take_doc(&mut f.attrs), &f.ident) {
                        docs.fields.insert((name.clone(), ident.to_string()), d);
                    }
                }
                if let syn::Fields::Unnamed(f) = &mut s.fields {
                    for f in f.unnamed.iter_mut() {
                        let _ = take_doc(&mut f.attrs);
                    }
                }
            }
            syn::Item::Union(u) => {
                let name = u.ident.to_string();
                if let Some(d) = take_doc(&mut u.attrs) {
                    docs.items.insert(name.clone(), d);
                }
                for f in u.fields.named.iter_mut() {
                    if let (Some(d), Some(ident)) = (take_doc(&mut f.attrs), &f.ident) {
                        docs.fields.insert((name.clone(), ident.to_string()), d);
                    }
                }
            }
            syn::Item::Enum(e) => {
                if let Some(d) = take_doc(&mut e.attrs) {
                    docs.items.insert(e.ident.to_string(), d);
                }
                for v in e.variants.iter_mut() {
                    if let Some(d) = take_doc(&mut v.attrs) {
                        docs.enumerators.insert(v.ident.to_string(), d);
                    }
                }
            }
            syn::Item::Type(t) => {
                // NVIDIA's typedef headers document no `PFN_` typedef; what clang attaches to
                // the first is the file's own comment ("Type definitions for functions
                // defined in cudaGL.h"), which is no function's.
                let name = t.ident.to_string();
                if let Some(d) = take_doc(&mut t.attrs).filter(|_| !name.starts_with("PFN_")) {
                    docs.items.insert(name, d);
                }
            }
            syn::Item::Const(c) => {
                if let Some(d) = take_doc(&mut c.attrs) {
                    docs.items.insert(c.ident.to_string(), d);
                }
            }
            syn::Item::Impl(imp) => {
                for ii in &mut imp.items {
                    if let syn::ImplItem::Const(c) = ii {
                        if let Some(d) = take_doc(&mut c.attrs) {
                            docs.enumerators.insert(c.ident.to_string(), d);
                        }
                    }
                }
            }
            _ => {}
        }
        true
    });
    docs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_come_off_every_kind_of_item() {
        let mut file: syn::File = syn::parse_str(
            r#"
            #[doc = " A record"] #[repr(C)] pub struct R { #[doc = "< a field"] pub f: i32 }
            #[doc = " An enum"] pub struct E(pub u32);
            impl E { #[doc = "< its value"] pub const E_A: E = E(0); }
            #[doc = " A typedef"] pub type T = R;
            unsafe extern "C" { #[doc = " \\brief Does it"] pub fn cuDo_v2(x: i32) -> i32; }
            "#,
        )
        .unwrap();
        let docs = take_docs(&mut file);
        assert_eq!(docs.items.get("R").map(String::as_str), Some(" A record"));
        assert_eq!(docs.items.get("E").map(String::as_str), Some(" An enum"));
        assert_eq!(docs.items.get("T").map(String::as_str), Some(" A typedef"));
        assert_eq!(docs.fields.get(&("R".into(), "f".into())).map(String::as_str), Some("< a field"));
        assert_eq!(docs.enumerators.get("E_A").map(String::as_str), Some("< its value"));
        assert_eq!(docs.functions.get("cuDo_v2").map(String::as_str), Some(" \\brief Does it"));
        let left = quote::quote!(#file).to_string();
        assert!(!left.contains("doc") && !left.contains("cuDo_v2"), "{left}");
    }
}
