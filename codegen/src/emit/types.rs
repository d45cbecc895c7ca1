//! `types/src/types.rs` (in the types crate): the CUDA types, as bindgen wrote them for the newest toolkit.
//!
//! # Rules it applies
//! - **Enumerators.** Every value of every enum (of `types.rs` and of a module's own types) is also
//!   a top-level constant by its bare name (feature `bare-enumerators`), unless a `#define`
//!   already took the name. Its type: the enum, where an entry's parameter or return type or a
//!   struct field names the enum (under any alias); otherwise the integer that the `flags`
//!   parameters and fields of the C names and structs starting with the enum's stem take, where
//!   they agree in size (`CUgraphInstantiate_flags` -> `cuGraphInstantiate`'s `c_ulonglong`), else
//!   the enum's own. `tests/tests/enumerators.rs` writes a use of each where it goes and
//!   `enumerator_uses.rs` compiles them.
//! - **Records.** `Default` is all zero bytes for every struct and union whose fields are
//!   integers, floats, raw pointers, `Option`s (bindgen's nullable function pointers), enum
//!   newtypes or such records, found to a fixpoint (a bare function pointer or a reference would
//!   make zero invalid). A struct with exactly one anonymous member (`__bindgen_anon_1`) derefs to
//!   it, so C's `loc.id = dev` compiles as written.
//! - **Compile time.** bindgen's derived `Eq` on the enum newtypes is an empty `impl Eq`
//!   (`eq_by_hand`), and its layout checks are compiled only where they can fail (every target
//!   but x86-64 Linux, and the crate's own tests: `LAYOUT_CHECKS_CFG`).

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::quote;
use syn::visit_mut::VisitMut;

pub const TYPES_RS: &str = "types/src/types.rs";

/// `CUDAAPI` and `CUDA_CB` are `__stdcall` on Windows, nothing elsewhere: `extern "system"`.
struct SystemAbi;

impl VisitMut for SystemAbi {
    fn visit_abi_mut(&mut self, abi: &mut syn::Abi) {
        if abi.name.as_ref().is_some_and(|n| n.value() == "C") {
            abi.name = Some(syn::LitStr::new("system", proc_macro2::Span::call_site()));
        }
    }
}

/// Rewrites every `extern "C"` to `extern "system"`, compiles bindgen's layout checks only
/// where they can fail for a user (see [`LAYOUT_CHECKS_CFG`]), and implements `Eq` and `Clone`
/// by hand (see [`eq_by_hand`], [`clone_by_hand`]).
pub(crate) fn system_abi(items: &[syn::Item]) -> Vec<syn::Item> {
    let when: TokenStream = LAYOUT_CHECKS_CFG.parse().unwrap_or_default();
    let cfg: syn::Attribute = syn::parse_quote!(#[cfg(#when)]);
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let mut item = item.clone();
        SystemAbi.visit_item_mut(&mut item);
        if let syn::Item::Const(c) = &mut item {
            let unit = matches!(&*c.ty, syn::Type::Tuple(t) if t.elems.is_empty());
            if c.ident == "_" && unit {
                c.attrs.insert(0, cfg.clone());
            }
        }
        let eq = eq_by_hand(&mut item);
        let clone = clone_by_hand(&mut item);
        out.push(item);
        out.extend(eq);
        out.extend(clone);
    }
    out
}

/// bindgen derives `Eq` on each enum newtype; the derive writes a method per type that the
/// crate then compiles (130 of them in cuda.h's types: a percent of a default build, issue
/// 28). An empty `impl Eq for T {}` is the same promise without the method; the derived
/// `PartialEq` stays, so the enum's constants still work as patterns. Takes `Eq` out of the
/// derive of a non-generic struct whose derive also has `PartialEq`, and returns the impl.
fn eq_by_hand(item: &mut syn::Item) -> Option<syn::Item> {
    let syn::Item::Struct(st) = item else { return None };
    if !st.generics.params.is_empty() {
        return None;
    }
    if !take_from_derive(&mut st.attrs, "Eq", "PartialEq") {
        return None;
    }
    let name = &st.ident;
    Some(syn::parse_quote!(impl Eq for #name {}))
}

/// Takes `taken` out of the first `#[derive]` of `attrs` that has both it and `beside`; whether
/// it did.
fn take_from_derive(attrs: &mut [syn::Attribute], taken: &str, beside: &str) -> bool {
    for attr in attrs.iter_mut() {
        if !attr.path().is_ident("derive") {
            continue;
        }
        let Ok(paths) =
            attr.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
        else {
            continue;
        };
        if !paths.iter().any(|p| p.is_ident(beside)) || !paths.iter().any(|p| p.is_ident(taken)) {
            continue;
        }
        let kept = paths.iter().filter(|p| !p.is_ident(taken));
        *attr = syn::parse_quote!(#[derive(#(#kept),*)]);
        return true;
    }
    false
}

/// bindgen derives `Clone` beside `Copy` on each struct and union; the derive checks that every
/// field is `Clone` (a line per field) before its `*self`, 290 bodies in cuda.h's types. The
/// same `impl Clone` written by hand is `*self` alone: the same impl, less for rustc to expand
/// and check (docs/performance.md). Takes `Clone` out of the derive of a non-generic struct or
/// union whose derive also has `Copy`, and returns the impl.
fn clone_by_hand(item: &mut syn::Item) -> Option<syn::Item> {
    let (attrs, name, generics) = match item {
        syn::Item::Struct(s) => (&mut s.attrs, &s.ident, &s.generics),
        syn::Item::Union(u) => (&mut u.attrs, &u.ident, &u.generics),
        _ => return None,
    };
    if !generics.params.is_empty() {
        return None;
    }
    if !take_from_derive(attrs, "Clone", "Copy") {
        return None;
    }
    Some(syn::parse_quote! {
        impl Clone for #name {
            #[inline]
            fn clone(&self) -> Self {
                *self
            }
        }
    })
}

/// Where bindgen's layout checks (`const _: () = { ["Size of X"][..]; .. }`) are compiled:
/// every target but x86-64 Linux, and the crate's own tests everywhere. bindgen computed the
/// layouts for x86-64 Linux, so there a user's build would only re-prove what the crate's
/// tests (`cargo test -p <crate>`) prove once; elsewhere (Windows' 32-bit `long`, aarch64)
/// they are what stops a build whose layout differs. They were a fifth of a clean debug
/// build (`cargo xtask bench --only compile`, docs/performance.md).
pub const LAYOUT_CHECKS_CFG: &str = r#"any(test, not(all(target_arch = "x86_64", target_os = "linux")))"#;

/// cuda.h's handle and launch constants that are casts (`#define CU_STREAM_LEGACY
/// ((CUstream)0x1)`), which bindgen does not translate: `(name, Rust type, C type, value, doc)`. A test
/// (`real_headers::cast_constants_are_cuda_h_s`) reads each from the newest cuda.h's text.
pub const CAST_CONSTANTS: &[(&str, &str, &str, &str, &str)] = &[
    ("CU_STREAM_LEGACY", "CUstream", "CUstream", "0x1", "The legacy default stream, whatever the per-thread setting."),
    ("CU_STREAM_PER_THREAD", "CUstream", "CUstream", "0x2", "The calling thread's per-thread default stream."),
    ("CU_LAUNCH_PARAM_END", "*mut ::core::ffi::c_void", "void*", "0x00", "Ends `cuLaunchKernel`'s `extra` array."),
    (
        "CU_LAUNCH_PARAM_BUFFER_POINTER",
        "*mut ::core::ffi::c_void",
        "void*",
        "0x01",
        "Precedes the argument buffer in `extra`.",
    ),
    (
        "CU_LAUNCH_PARAM_BUFFER_SIZE",
        "*mut ::core::ffi::c_void",
        "void*",
        "0x02",
        "Precedes a pointer to the buffer's size in `extra`.",
    ),
    ("CU_DEVICE_CPU", "CUdevice", "CUdevice", "-1", "The host, as a device (for memory advice and prefetch)."),
    ("CU_DEVICE_INVALID", "CUdevice", "CUdevice", "-2", "No device."),
];

/// The [`CAST_CONSTANTS`] whose type the headers define.
fn cast_constants(types: &syn::File) -> Vec<TokenStream> {
    let defined = |name: &str| {
        name.starts_with('*')
            || types.items.iter().any(|i| match i {
                syn::Item::Type(t) => t.ident == name,
                _ => false,
            })
    };
    let mut out = Vec::new();
    for (name, ty, c_type, value, what) in CAST_CONSTANTS {
        if !defined(ty) {
            continue;
        }
        let doc = format!(" cuda.h's `#define {name} (({c_type}){value})`. {what}");
        let (Ok(name), Ok(ty), Ok(value)) =
            (syn::parse_str::<syn::Ident>(name), syn::parse_str::<syn::Type>(ty), syn::parse_str::<syn::Expr>(value))
        else {
            continue;
        };
        out.push(quote!(#[doc = #doc] pub const #name: #ty = #value as #ty;));
    }
    out
}

/// How well an owner names where an enum's values go: `...Create` first, then shorter names.
type Rank = (bool, usize, String);

/// A parameter of an entry, as the enumerator constants read it: `(C name or symbol, name,
/// Rust type)`; the return type is a parameter without a name.
pub(crate) type ParamUse<'a> = (&'a str, &'a str, &'a str);

/// The enums of `items`: bindgen's newtypes (`pub struct CUstreamCaptureMode_enum(pub c_uint)`)
/// with their values (`impl CUstreamCaptureMode_enum { pub const CU_STREAM_CAPTURE_MODE_GLOBAL ... }`),
/// in the order of the items: `(name, inner integer type, values)`.
/// An enum value with its doc attributes.
type Value = (syn::Ident, Vec<syn::Attribute>);

fn enums(items: &[syn::Item]) -> Vec<(syn::Ident, syn::Type, Vec<Value>)> {
    let mut inner: BTreeMap<String, syn::Type> = BTreeMap::new();
    for item in items {
        if let syn::Item::Struct(st) = item {
            if let syn::Fields::Unnamed(f) = &st.fields {
                if let (1, Some(field)) = (f.unnamed.len(), f.unnamed.first()) {
                    inner.insert(st.ident.to_string(), field.ty.clone());
                }
            }
        }
    }
    let mut out = Vec::new();
    for item in items {
        let syn::Item::Impl(imp) = item else { continue };
        let syn::Type::Path(self_ty) = &*imp.self_ty else { continue };
        let Some(name) = self_ty.path.get_ident() else { continue };
        let Some(int) = inner.get(&name.to_string()) else { continue };
        // Each value with its docs (cuda.h's comment), which its bare constant repeats.
        let values: Vec<Value> = imp
            .items
            .iter()
            .filter_map(|ii| match ii {
                syn::ImplItem::Const(c) => {
                    Some((c.ident.clone(), c.attrs.iter().filter(|a| a.path().is_ident("doc")).cloned().collect()))
                }
                _ => None,
            })
            .collect();
        out.push((name.clone(), int.clone(), values));
    }
    out
}

/// The fields of every struct and union of `items`: `(record, field, type text)`.
fn fields(items: &[syn::Item]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for item in items {
        let (record, named) = match item {
            syn::Item::Struct(st) => match &st.fields {
                syn::Fields::Named(f) => (&st.ident, &f.named),
                _ => continue,
            },
            syn::Item::Union(u) => (&u.ident, &u.fields.named),
            _ => continue,
        };
        for field in named {
            let Some(name) = &field.ident else { continue };
            let ty = &field.ty;
            out.push((record.to_string(), name.to_string(), quote!(#ty).to_string()));
        }
    }
    out
}

/// The fixed-size integer an integer type name stands for (`c_ulonglong` and `cuuint64_t` are
/// both `u64`), or `None` for anything else.
fn integer_of(ty: &str) -> Option<&'static str> {
    Some(match ty.rsplit("::").next()?.trim() {
        "c_uint" | "cuuint32_t" | "u32" => "u32",
        "c_int" | "i32" => "i32",
        "c_ulonglong" | "cuuint64_t" | "u64" => "u64",
        "c_longlong" | "i64" => "i64",
        "c_ushort" | "u16" => "u16",
        "c_short" | "i16" => "i16",
        "c_uchar" | "u8" => "u8",
        _ => return None,
    })
}

/// A name reduced to what an enum and the functions and structs that take its values share:
/// `CUgraphInstantiate_flags_enum` and `cuGraphInstantiateWithFlags` both start with
/// `graphinstantiate`, `CUDA_GRAPH_INSTANTIATE_PARAMS_st` too.
fn stem(name: &str) -> String {
    let mut s = name.strip_suffix("_enum").unwrap_or(name).to_owned();
    for suffix in ["_flags", "Flags", "_FLAGS", "_flag", "Flag"] {
        if let Some(rest) = s.strip_suffix(suffix) {
            s = rest.to_owned();
            break;
        }
    }
    let s = s.strip_suffix("_st").unwrap_or(&s);
    let s = ["CUDA_", "CU", "cu"].iter().find_map(|p| s.strip_prefix(p)).unwrap_or(s);
    s.replace('_', "").to_ascii_lowercase()
}

/// The feature that compiles the enumerators' bare constants in: `api` turns it on.
pub const BARE_ENUMERATORS: &str = "bare-enumerators";

/// The headers' enumerators by their bare names, as C spells them (`CU_STREAM_CAPTURE_MODE_GLOBAL`,
/// `CU_STREAM_NON_BLOCKING`), each of the type the functions take it as:
/// - an enum that a parameter (`params`: every entry's) or a field of `items` or `context` takes
///   as itself: the enum (`CU_STREAM_CAPTURE_MODE_GLOBAL: CUstreamCaptureMode_enum`);
/// - an enum whose values go into integers (flags): the integer type of the `flags`
///   parameters and fields of the functions and structs named after it, where they agree
///   (`CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD: c_ulonglong`, as `cuGraphInstantiate`'s `flags`),
///   else the enum's own integer type.
///
/// A name already defined at the top level of `items` (a `#define` of cuda.h) is left out.
/// Each is compiled only with the feature [`BARE_ENUMERATORS`].
pub(crate) fn enum_constants(items: &[syn::Item], context: &[syn::Item], params: &[ParamUse<'_>]) -> Vec<TokenStream> {
    let mut fields = fields(items);
    fields.extend(self::fields(context));
    let mut taken: BTreeSet<String> = params.iter().flat_map(|(_, _, ty)| words(ty)).map(str::to_owned).collect();
    taken.extend(fields.iter().flat_map(|(_, _, ty)| words(ty)).map(str::to_owned));
    // `pub use self::CUctx_flags_enum as CUctx_flags;`, `pub type CUctx_flags = ...`: an enum is
    // taken under any of its names (aliases of aliases too, so until nothing changes).
    let mut renames: Vec<(String, String)> = Vec::new();
    for item in items.iter().chain(context) {
        match item {
            syn::Item::Use(u) => {
                if let syn::UseTree::Path(p) = &u.tree {
                    if let syn::UseTree::Rename(r) = &*p.tree {
                        renames.push((r.ident.to_string(), r.rename.to_string()));
                    }
                }
            }
            syn::Item::Type(t) => {
                if let syn::Type::Path(p) = &*t.ty {
                    if let Some(target) = p.path.get_ident() {
                        renames.push((target.to_string(), t.ident.to_string()));
                    }
                }
            }
            _ => {}
        }
    }
    while renames.iter().any(|(from, to)| taken.contains(to) && !taken.contains(from)) {
        for (from, to) in &renames {
            if taken.contains(to) {
                taken.insert(from.clone());
            }
        }
    }
    let mut top: BTreeSet<String> = items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Const(c) => Some(c.ident.to_string()),
            _ => None,
        })
        .collect();
    let attribute_of = attribute_returns(items, context, params, &renames);
    let mut out = Vec::new();
    for (name, int, values) in enums(items) {
        let typed = taken.contains(&name.to_string());
        // Where the values go into integers: an attribute that returns them (item 1 of issue
        // 28), else the `flags` of what is named after the enum.
        let mut into = if typed { None } else { attribute_of.get(&name.to_string()).cloned() };
        if !typed && into.is_none() {
            let stem = stem(&name.to_string());
            let flags = |field: &str| field.to_ascii_lowercase().contains("flag");
            // Per integer size, the owner that names it in the docs: a `...Create` first (where
            // a C program passes flags most), then the shortest name.
            let mut found: BTreeMap<&str, (Rank, String, String)> = BTreeMap::new();
            let candidates = params
                .iter()
                .map(|(symbol, p, ty)| (symbol.to_string(), p.to_string(), ty.to_string()))
                .chain(fields.iter().cloned());
            for (owner, field, ty) in candidates {
                if stem.len() < 3 || !flags(&field) || !self::stem(&owner).starts_with(&stem) {
                    continue;
                }
                if let Some(size) = integer_of(&ty) {
                    let rank = (!owner.contains("Create"), owner.len(), owner.clone());
                    let what = format!("as `{owner}`'s `{field}` takes it");
                    match found.get(size) {
                        Some((best, _, _)) if *best <= rank => {}
                        _ => {
                            found.insert(size, (rank, what, ty));
                        }
                    }
                }
            }
            if found.len() == 1 {
                into = found.into_values().next().map(|(_, what, ty)| (what, ty));
            }
        }
        for (value, docs) in values {
            if !top.insert(value.to_string()) {
                continue;
            }
            // cuda.h's comment, then the crate's note a paragraph below.
            let docs = if docs.is_empty() { quote!() } else { quote!(#(#docs)* #[doc = ""]) };
            // Behind a feature (which `api` turns on): over a thousand constants were about 6%
            // of a default build (docs/performance.md), for a spelling that C ports want and the
            // rest do not need (the enum's own constant is the same value).
            let docs = quote!(#[cfg(feature = #BARE_ENUMERATORS)] #docs);
            out.push(if typed {
                let doc = format!(" The enumerator `{value}` by its bare name, as C has it: [`{name}::{value}`].");
                quote!(#docs #[doc = #doc] pub const #value: #name = #name::#value;)
            } else if let Some((what, ty)) = &into {
                let doc = format!(" The enumerator `{value}` {what}: [`{name}::{value}`]`.0`.");
                // The parameter's own spelling, from `core::ffi` where it is a C type.
                let last = ty.rsplit("::").next().unwrap_or(ty).trim();
                let path = if last.starts_with("c_") { format!("::core::ffi::{last}") } else { last.to_owned() };
                let ty: syn::Type = syn::parse_str(&path).unwrap_or_else(|_| int.clone());
                quote!(#docs #[doc = #doc] pub const #value: #ty = #name::#value.0 as #ty;)
            } else {
                let doc = format!(" The enumerator `{value}` as the integer it is passed as: [`{name}::{value}`]`.0`.");
                quote!(#docs #[doc = #doc] pub const #value: #int = #name::#value.0;)
            });
        }
    }
    out
}

/// The enums whose values come back through an attribute getter: a function with an integer
/// out-parameter (`cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)`)
/// and an attribute enum, one of whose values' docs names the enum (cuda.h's
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_MODE`: "See ::CUcomputemode for details"). Per such enum, under
/// any of its names: what its bare constants say and the integer type the getter writes,
/// `(what, type)`, where that is one type. A C program compares the `int` it got with the
/// bare enumerator (`computeMode != CU_COMPUTEMODE_PROHIBITED`), so the constant has that type.
fn attribute_returns(
    items: &[syn::Item],
    context: &[syn::Item],
    params: &[ParamUse<'_>],
    renames: &[(String, String)],
) -> BTreeMap<String, (String, String)> {
    let all: Vec<syn::Item> = items.iter().chain(context).cloned().collect();
    let enums = enums(&all);
    // Any name of an enum -> its own name.
    let mut enum_of: BTreeMap<String, String> = BTreeMap::new();
    for (e, _, _) in &enums {
        let mut names = BTreeSet::from([e.to_string()]);
        while let Some(more) =
            renames.iter().find(|(from, to)| names.contains(from) && !names.contains(to)).map(|(_, to)| to.clone())
        {
            names.insert(more);
        }
        for n in names {
            enum_of.insert(n, e.to_string());
        }
    }
    let mut by_owner: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (owner, _, ty) in params {
        by_owner.entry(owner).or_default().push(ty);
    }
    // Per enum: every (what, integer type) a getter returns it as.
    let mut found: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for (owner, types) in &by_owner {
        let outs: BTreeSet<&str> = types
            .iter()
            .filter_map(|t| t.trim().strip_prefix("*mut "))
            .map(str::trim)
            .filter(|t| integer_of(t).is_some())
            .collect();
        let [out] = outs.into_iter().collect::<Vec<_>>()[..] else { continue };
        for ty in types {
            let Some(attribute) = enum_of.get(ty.trim()) else { continue };
            let Some((_, _, values)) = enums.iter().find(|(e, _, _)| e == attribute) else { continue };
            for (value, attrs) in values {
                let doc: String = attrs
                    .iter()
                    .filter_map(|a| match &a.meta {
                        syn::Meta::NameValue(syn::MetaNameValue {
                            value: syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }),
                            ..
                        }) => Some(s.value()),
                        _ => None,
                    })
                    .collect();
                // Names in code spans (cuda.h's `::CUcomputemode`, a link's label), not in
                // link targets (`crate::types::CUstreamWaitValue_flags_enum::...`, which only
                // names a value's enum).
                for word in doc.split('`').skip(1).step_by(2) {
                    let Some(named) = enum_of.get(word) else { continue };
                    if named == attribute {
                        continue;
                    }
                    let what = format!("as `{owner}` returns it for `{value}`, to compare with what it wrote");
                    found.entry(named.clone()).or_default().insert((what, out.to_owned()));
                }
            }
        }
    }
    found
        .into_iter()
        .filter_map(|(e, ways)| {
            // One integer type, named by the first getter and attribute that return it.
            let types: BTreeSet<&String> = ways.iter().map(|(_, t)| t).collect();
            (types.len() == 1).then(|| ways.into_iter().next()).flatten().map(|w| (e, w))
        })
        .collect()
}

/// The identifiers in a type's text (`*mut CUmemAccessDesc` has `mut`, `CUmemAccessDesc`).
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c == '_' || c.is_ascii_alphanumeric())).filter(|w| !w.is_empty())
}

/// Puts each code's comment on its constant in `impl cudaError_enum`, as rustdoc.
pub fn document_result_codes(types: &mut syn::File, docs: &BTreeMap<String, String>) {
    for item in &mut types.items {
        let syn::Item::Impl(imp) = item else { continue };
        let syn::Type::Path(p) = &*imp.self_ty else { continue };
        if !p.path.is_ident("cudaError_enum") {
            continue;
        }
        for ii in &mut imp.items {
            let syn::ImplItem::Const(c) = ii else { continue };
            if let Some(doc) = docs.get(&c.ident.to_string()) {
                let doc = format!(" {doc}");
                c.attrs.push(syn::parse_quote!(#[doc = #doc]));
            }
        }
    }
}

/// `types.rs`: bindgen's types, cuda.h's cast constants, the enumerators by their bare names,
/// `Default` for the plain-data records and the anonymous members' fields reached as in C;
/// `params`: every entry's parameters.
pub fn types_rs(types: &syn::File, params: &[ParamUse<'_>]) -> TokenStream {
    let items = system_abi(&types.items);
    let casts = cast_constants(types);
    let enumerators = enum_constants(&types.items, &[], params);
    let records = record_impls(&types.items);
    quote! {
        //! The CUDA driver API's types, enums and constants, from the newest pinned toolkit
        //! (legacy `_v1` types included). bindgen's layout checks are kept: they fail the
        //! build on a target where a layout differs from x86-64 Linux (on x86-64 Linux, where
        //! bindgen computed them, they are compiled only into the crate's own tests).
        #![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]
        #![allow(clippy::all)]
        #(#items)*
        #(#casts)*
        #(#enumerators)*
        #records
    }
}

/// Whether a field of this type may be all zero bytes: integers, floats, `bool`, raw pointers,
/// `Option`s (bindgen's nullable function pointers) and arrays and records of those
/// (`zeroable`: the records known so far). A reference, a bare function pointer or an unknown
/// type may not.
fn zero_is_valid(ty: &syn::Type, zeroable: &BTreeSet<String>) -> bool {
    match ty {
        syn::Type::Ptr(_) => true,
        syn::Type::Array(a) => zero_is_valid(&a.elem, zeroable),
        syn::Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else { return false };
            let name = last.ident.to_string();
            name == "Option"
                || name.starts_with("c_")
                || matches!(name.as_str(), "bool" | "f32" | "f64")
                || integer_of(&name).is_some()
                || matches!(name.as_str(), "u128" | "i128" | "usize" | "isize" | "i8")
                || zeroable.contains(&name)
        }
        _ => false,
    }
}

/// The records of `items` that are all zero bytes with `Default`, as C's `= {0}`: every struct
/// and union whose fields may all be zero (bindgen's enum newtypes and type aliases included),
/// found until nothing changes; opaque handles (`_unused: [u8; 0]`) are left out.
fn zeroable_records(items: &[syn::Item]) -> Vec<syn::Ident> {
    let mut zeroable: BTreeSet<String> = BTreeSet::new();
    let mut records: Vec<(&syn::Ident, Vec<&syn::Type>)> = Vec::new();
    let mut aliases: Vec<(syn::Ident, syn::Type)> = Vec::new();
    for item in items {
        match item {
            syn::Item::Struct(st) if st.generics.params.is_empty() => match &st.fields {
                syn::Fields::Named(f) if !f.named.iter().any(|f| f.ident.as_ref().is_some_and(|i| i == "_unused")) => {
                    records.push((&st.ident, f.named.iter().map(|f| &f.ty).collect()))
                }
                // An enum newtype: an integer.
                syn::Fields::Unnamed(f)
                    if f.unnamed.len() == 1 && f.unnamed.iter().all(|f| zero_is_valid(&f.ty, &zeroable)) =>
                {
                    zeroable.insert(st.ident.to_string());
                }
                _ => {}
            },
            syn::Item::Union(u) if u.generics.params.is_empty() => {
                records.push((&u.ident, u.fields.named.iter().map(|f| &f.ty).collect()))
            }
            syn::Item::Type(t) if t.generics.params.is_empty() => aliases.push((t.ident.clone(), (*t.ty).clone())),
            syn::Item::Use(u) => {
                if let syn::UseTree::Path(p) = &u.tree {
                    if let syn::UseTree::Rename(r) = &*p.tree {
                        let target = syn::Type::Path(syn::TypePath { qself: None, path: r.ident.clone().into() });
                        aliases.push((r.rename.clone(), target));
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    loop {
        let before = zeroable.len();
        for (name, ty) in &aliases {
            if zero_is_valid(ty, &zeroable) {
                zeroable.insert(name.to_string());
            }
        }
        for (name, fields) in &records {
            if !zeroable.contains(&name.to_string()) && fields.iter().all(|t| zero_is_valid(t, &zeroable)) {
                zeroable.insert(name.to_string());
                out.push((*name).clone());
            }
        }
        if zeroable.len() == before {
            break;
        }
    }
    out.sort();
    out
}

/// The enum newtypes of `items` with an enumerator of value zero, each with its first such
/// enumerator in the header's order (`CUjit_option_enum`: `CU_JIT_MAX_REGISTERS`).
fn enum_zeros(items: &[syn::Item]) -> Vec<(syn::Ident, syn::Ident)> {
    let newtypes: BTreeSet<String> = items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Struct(st) if matches!(&st.fields, syn::Fields::Unnamed(f) if f.unnamed.len() == 1) => {
                Some(st.ident.to_string())
            }
            _ => None,
        })
        .collect();
    let mut out: BTreeMap<String, (syn::Ident, syn::Ident)> = BTreeMap::new();
    for item in items {
        let syn::Item::Impl(imp) = item else { continue };
        let syn::Type::Path(self_ty) = &*imp.self_ty else { continue };
        let Some(name) = self_ty.path.get_ident() else { continue };
        if imp.trait_.is_some() || !newtypes.contains(&name.to_string()) || out.contains_key(&name.to_string()) {
            continue;
        }
        for ii in &imp.items {
            let syn::ImplItem::Const(c) = ii else { continue };
            let syn::Expr::Call(call) = &c.expr else { continue };
            let [syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(v), .. })] =
                &call.args.iter().collect::<Vec<_>>()[..]
            else {
                continue;
            };
            if v.base10_digits() == "0" {
                out.insert(name.to_string(), (name.clone(), c.ident.clone()));
                break;
            }
        }
    }
    out.into_values().collect()
}

/// `Default` (all zero) for the zeroable records of `items`, the enumerator of value zero for
/// each enum that has one, and `Deref`/`DerefMut` from each
/// struct with one anonymous member (bindgen's `__bindgen_anon_1`) to that member, so that C's
/// `prop.location.id = dev` is Rust's too.
pub(crate) fn record_impls(items: &[syn::Item]) -> TokenStream {
    let zeroed = zeroable_records(items);
    let (enums, zeros): (Vec<syn::Ident>, Vec<syn::Ident>) = enum_zeros(items).into_iter().unzip();
    let mut anon = Vec::new();
    for item in items {
        let syn::Item::Struct(st) = item else { continue };
        let syn::Fields::Named(f) = &st.fields else { continue };
        let members: Vec<&syn::Field> = f
            .named
            .iter()
            .filter(|f| f.ident.as_ref().is_some_and(|i| i.to_string().starts_with("__bindgen_anon_")))
            .collect();
        let [member] = members.as_slice() else { continue };
        let (name, field, ty) = (&st.ident, &member.ident, &member.ty);
        anon.push(quote! {
            impl ::core::ops::Deref for #name {
                type Target = #ty;
                #[inline]
                fn deref(&self) -> &#ty { &self.#field }
            }
            impl ::core::ops::DerefMut for #name {
                #[inline]
                fn deref_mut(&mut self) -> &mut #ty { &mut self.#field }
            }
        });
    }
    let enum_default: TokenStream = enums
        .iter()
        .zip(&zeros)
        .map(|(name, zero)| {
            let doc = format!(" [`{zero}`]({name}::{zero}), the enumerator of value zero, as C's `= {{0}}`.");
            quote! {
                impl Default for #name {
                    #[doc = #doc]
                    #[inline]
                    fn default() -> Self {
                        Self::#zero
                    }
                }
            }
        })
        .collect();
    if zeroed.is_empty() && anon.is_empty() {
        return enum_default;
    }
    quote! {
        #enum_default
        use super::zeroed::zeroed_default;
        zeroed_default!(#(#zeroed)*);
        #(#anon)*
    }
}

#[cfg(test)]
mod tests {
    use quote::ToTokens;

    fn out(src: &str) -> String {
        let file: syn::File = syn::parse_str(src).unwrap();
        let items = super::system_abi(&file.items);
        items.iter().map(|i| i.to_token_stream().to_string()).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn eq_is_an_empty_impl_where_partial_eq_is_derived() {
        let got = out("#[derive(Copy, Clone, Hash, PartialEq, Eq)] #[repr(transparent)] pub struct E(pub u32);");
        assert_eq!(
            got,
            "# [derive (Copy , Hash , PartialEq)] # [repr (transparent)] pub struct E (pub u32) ;\nimpl Eq for E { }\n\
             impl Clone for E { # [inline] fn clone (& self) -> Self { * self } }"
        );
        // Left alone: no PartialEq beside it, a generic struct, no Eq at all, no Copy.
        for src in [
            "#[derive(Eq)] pub struct A(u32);",
            "#[derive(PartialEq, Eq)] pub struct G<T>(T);",
            "#[derive(Clone, PartialEq)] pub struct P(u32);",
            "#[derive(Copy, Clone)] pub struct C<T>(T);",
        ] {
            let file: syn::File = syn::parse_str(src).unwrap();
            assert_eq!(out(src), file.items[0].to_token_stream().to_string(), "{src}");
        }
    }

    #[test]
    fn clone_is_written_by_hand_where_copy_is_derived() {
        for (src, kept) in [
            ("#[derive(Copy, Clone)] pub union U { a: u32 }", "# [derive (Copy)] pub union U { a : u32 }"),
            (
                "#[derive(Copy, Clone)] #[repr(C)] pub struct S { pub a: u32 }",
                "# [derive (Copy)] # [repr (C)] pub struct S { pub a : u32 }",
            ),
        ] {
            let name = if src.contains("union") { "U" } else { "S" };
            assert_eq!(
                out(src),
                format!("{kept}\nimpl Clone for {name} {{ # [inline] fn clone (& self) -> Self {{ * self }} }}"),
                "{src}"
            );
        }
    }
}
