//! The headers' own documentation on the crate's items: [`CDocs`] rendered by
//! [`super::doxygen`], with intra-doc links only to items that the documented item's features
//! imply, so that every feature set documents cleanly (`cargo doc -D warnings`).
//!
//! Where each comment goes: a type's, field's and enumerator's on that item (and an
//! enumerator's also on its bare constant); a function's in full on its `api::` function, and
//! its summary (`\brief`) first on every `pfn::` type and `entries::` marker of its symbol.
//! The crate's own note follows cuda.h's text.

use std::collections::{BTreeMap, BTreeSet};

use super::doxygen;
use crate::model::{CDocs, Entry, Model, ModuleSpec};

/// A link target: the item's path, and the crate features it needs.
#[derive(Debug, Clone)]
struct Target {
    path: String,
    needs: BTreeSet<String>,
}

/// What the documented item is compiled with: its features, and whether it is an `api::`
/// function (which links functions to their `api::` siblings rather than to `pfn::` types).
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    features: BTreeSet<String>,
    api: bool,
}

impl Context {
    /// An item of module `m` (`types.rs` is a module without a feature).
    pub fn module(m: Option<&ModuleSpec>) -> Context {
        Context { features: m.and_then(|m| m.feature.clone()).into_iter().collect(), api: false }
    }

    /// An `api::` function of module `m`.
    pub fn api(m: Option<&ModuleSpec>) -> Context {
        let mut cx = Context::module(m);
        cx.features.insert("api".into());
        cx.api = true;
        cx
    }
}

pub(crate) struct Docs<'a> {
    c: &'a CDocs,
    /// Types, enumerators and constants by C name.
    items: BTreeMap<String, Target>,
    /// Functions by C name, symbol and exported name: the `pfn::` type of the newest ABI.
    pfns: BTreeMap<String, Target>,
    /// Functions by C name: the `api::` function.
    api: BTreeMap<String, Target>,
    /// Per symbol, the comment of its newest documented ABI.
    by_symbol: BTreeMap<&'a str, &'a str>,
    /// Enumerators documented otherwise (the result codes, from cuda.h's text).
    skip: BTreeSet<String>,
}

fn needs(m: Option<&ModuleSpec>) -> BTreeSet<String> {
    m.and_then(|m| m.feature.clone()).into_iter().collect()
}

impl<'a> Docs<'a> {
    /// `linux` and `windows` are the crate's types (the Windows ones per module row), `api`
    /// the `api::` functions: C name, the mode module that has it (`legacy`, `ptds`) and the
    /// entry it calls.
    pub fn new(
        c: &'a CDocs,
        model: &'a Model,
        modules: &[ModuleSpec],
        linux: &syn::File,
        windows: &BTreeMap<String, Vec<syn::Item>>,
        api: &[(&str, &str, &Entry)],
        skip: BTreeSet<String>,
    ) -> Docs<'a> {
        let module_of = |row: &str| modules.iter().find(|m| m.name == row);
        let mut items = BTreeMap::new();
        let mut add_items = |module: &str, m: Option<&ModuleSpec>, list: &[syn::Item]| {
            for item in list {
                let (name, consts) = match item {
                    syn::Item::Struct(s) => (s.ident.to_string(), None),
                    syn::Item::Union(u) => (u.ident.to_string(), None),
                    syn::Item::Type(t) => (t.ident.to_string(), None),
                    syn::Item::Const(c) => (c.ident.to_string(), None),
                    syn::Item::Impl(imp) => match &*imp.self_ty {
                        syn::Type::Path(p) => match p.path.get_ident() {
                            Some(ty) => (ty.to_string(), Some(&imp.items)),
                            None => continue,
                        },
                        _ => continue,
                    },
                    _ => continue,
                };
                match consts {
                    None => {
                        items
                            .entry(name.clone())
                            .or_insert(Target { path: format!("crate::{module}::{name}"), needs: needs(m) });
                    }
                    Some(consts) => {
                        for ii in consts {
                            if let syn::ImplItem::Const(c) = ii {
                                let value = c.ident.to_string();
                                items.entry(value.clone()).or_insert(Target {
                                    path: format!("crate::{module}::{name}::{value}"),
                                    needs: needs(m),
                                });
                            }
                        }
                    }
                }
            }
        };
        add_items("types", None, &linux.items);
        for (row, list) in windows {
            let m = module_of(row);
            add_items(m.map_or("types", |m| m.module()), m, list);
        }
        let mut pfns = BTreeMap::new();
        // Newest first, the default variant before the per-thread ones: a name links to the
        // newest default ABI.
        let mut entries: Vec<&Entry> = model.entries.values().collect();
        entries.sort_by_key(|e| (e.variant.is_some(), std::cmp::Reverse(e.version)));
        let mut by_symbol = BTreeMap::new();
        for e in &entries {
            let m = module_of(&e.module);
            let target =
                Target { path: format!("crate::{}::{}", m.map_or("pfn", |m| m.module()), e.pfn), needs: needs(m) };
            for name in [&e.symbol, &e.exported] {
                pfns.entry(name.clone()).or_insert(target.clone());
            }
            if let Some(doc) = c.functions.get(&e.exported) {
                by_symbol.entry(e.symbol.as_str()).or_insert(doc.as_str());
            }
        }
        for e in &entries {
            if let Some(doc) = c.functions.get(&e.symbol) {
                by_symbol.entry(e.symbol.as_str()).or_insert(doc.as_str());
            }
        }
        let mut api_targets = BTreeMap::new();
        for (c_name, mode, e) in api {
            let m = module_of(&e.module);
            let mut need = needs(m);
            need.insert("api".into());
            api_targets
                .entry(c_name.to_string())
                .or_insert(Target { path: format!("crate::api::{mode}::{c_name}"), needs: need });
            if let Some(t) = pfns.get(e.exported.as_str()).cloned() {
                pfns.entry(c_name.to_string()).or_insert(t);
            }
        }
        Docs { c, items, pfns, api: api_targets, by_symbol, skip }
    }

    fn link(&self, name: &str, cx: &Context) -> Option<String> {
        let usable = |t: &Target| t.needs.is_subset(&cx.features).then(|| t.path.clone());
        let api = if cx.api { self.api.get(name).and_then(usable) } else { None };
        api.or_else(|| self.items.get(name).and_then(usable)).or_else(|| self.pfns.get(name).and_then(usable))
    }

    fn render(&self, raw: &str, cx: &Context) -> doxygen::Converted {
        doxygen::convert(raw, &|name| self.link(name, cx))
    }

    /// The comment of the function an entry's ABI belongs to: its own declaration's, else the
    /// newest documented ABI's of its symbol.
    fn function_raw(&self, e: &Entry) -> Option<&str> {
        self.c.functions.get(&e.exported).map(String::as_str).or_else(|| self.by_symbol.get(e.symbol.as_str()).copied())
    }

    /// An `api::` function's doc: cuda.h's whole comment, as doc text (each line after a space).
    pub fn function(&self, e: &Entry, cx: &Context) -> Option<String> {
        self.function_raw(e).map(|raw| doc_text(&self.render(raw, cx).full)).filter(|d| !d.trim().is_empty())
    }

    /// cuda.h's whole comment on the declaration of exactly this ABI (its exported name), if
    /// the headers document that one: an older ABI's function must not carry the newest
    /// one's parameters.
    pub fn function_exact(&self, e: &Entry, cx: &Context) -> Option<String> {
        let raw = self.c.functions.get(&e.exported)?;
        Some(doc_text(&self.render(raw, cx).full)).filter(|d| !d.trim().is_empty())
    }

    /// A `pfn::` type's or `entries::` marker's first paragraph: the function's summary.
    pub fn function_brief(&self, e: &Entry, cx: &Context) -> Option<String> {
        self.function_raw(e).map(|raw| doc_text(&self.render(raw, cx).brief)).filter(|d| !d.trim().is_empty())
    }

    /// Puts the comments on `items` (types, their fields, enum values, constants) first in
    /// their docs.
    pub fn attach(&self, items: &mut [syn::Item], cx: &Context) {
        let put = |attrs: &mut Vec<syn::Attribute>, raw: Option<&String>| {
            let Some(raw) = raw else { return };
            let text = doc_text(&self.render(raw, cx).full);
            if text.trim().is_empty() {
                return;
            }
            let mut docs: Vec<syn::Attribute> = vec![syn::parse_quote!(#[doc = #text])];
            // The crate's own doc (if any) follows, a paragraph of its own.
            if attrs.iter().any(|a| a.path().is_ident("doc")) {
                docs.push(syn::parse_quote!(#[doc = ""]));
            }
            let at = attrs.iter().position(|a| a.path().is_ident("doc")).unwrap_or(0);
            attrs.splice(at..at, docs);
        };
        for item in items {
            match item {
                syn::Item::Struct(s) => {
                    let name = s.ident.to_string();
                    put(&mut s.attrs, self.c.items.get(&name));
                    if let syn::Fields::Named(f) = &mut s.fields {
                        for f in f.named.iter_mut() {
                            let Some(field) = &f.ident else { continue };
                            put(&mut f.attrs, self.c.fields.get(&(name.clone(), field.to_string())));
                        }
                    }
                }
                syn::Item::Union(u) => {
                    let name = u.ident.to_string();
                    put(&mut u.attrs, self.c.items.get(&name));
                    for f in u.fields.named.iter_mut() {
                        let Some(field) = &f.ident else { continue };
                        put(&mut f.attrs, self.c.fields.get(&(name.clone(), field.to_string())));
                    }
                }
                syn::Item::Type(t) => put(&mut t.attrs, self.c.items.get(&t.ident.to_string())),
                syn::Item::Const(c) => put(&mut c.attrs, self.c.items.get(&c.ident.to_string())),
                syn::Item::Impl(imp) => {
                    for ii in &mut imp.items {
                        if let syn::ImplItem::Const(c) = ii {
                            let name = c.ident.to_string();
                            if !self.skip.contains(&name) {
                                put(&mut c.attrs, self.c.enumerators.get(&name));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Markdown as the text of a `#[doc]` attribute: each line after a space, as `///` writes it.
fn doc_text(markdown: &str) -> String {
    markdown.lines().map(|l| if l.is_empty() { String::new() } else { format!(" {l}") }).collect::<Vec<_>>().join("\n")
}
