//! `src/types.rs`: the CUDA types, as bindgen wrote them for the newest toolkit.

use proc_macro2::TokenStream;
use quote::quote;
use syn::visit_mut::VisitMut;

pub const TYPES_RS: &str = "src/types.rs";

/// `CUDAAPI` and `CUDA_CB` are `__stdcall` on Windows, nothing elsewhere: `extern "system"`.
struct SystemAbi;

impl VisitMut for SystemAbi {
    fn visit_abi_mut(&mut self, abi: &mut syn::Abi) {
        if abi.name.as_ref().is_some_and(|n| n.value() == "C") {
            abi.name = Some(syn::LitStr::new("system", proc_macro2::Span::call_site()));
        }
    }
}

/// Rewrites every `extern "C"` to `extern "system"`.
pub(crate) fn system_abi(items: &[syn::Item]) -> Vec<syn::Item> {
    let mut items = items.to_vec();
    for item in &mut items {
        SystemAbi.visit_item_mut(item);
    }
    items
}

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

/// For each flags enum (`CUctx_flags_enum`: a bindgen newtype whose name says `flags`), its
/// values as plain constants of the integer type the functions' `flags` parameters take, as C
/// spells them: `CU_CTX_SCHED_AUTO | CU_CTX_MAP_HOST`, no `.0`. A name the types already use
/// at the top level is left out, and so is every enum that a parameter (`used`: the words of
/// the entries' parameter types) or a struct field takes as itself: there the typed constant
/// is the one that fits.
fn flag_constants(types: &syn::File, used: &std::collections::BTreeSet<String>) -> Vec<TokenStream> {
    let mut taken: std::collections::BTreeSet<String> = used.clone();
    for item in &types.items {
        if let syn::Item::Struct(st) = item {
            if let syn::Fields::Named(f) = &st.fields {
                for field in &f.named {
                    let ty = &field.ty;
                    taken.extend(words(&quote!(#ty).to_string()).map(str::to_owned));
                }
            }
        }
    }
    // `pub use self::CUctx_flags_enum as CUctx_flags;`: an enum is taken under either name.
    for item in &types.items {
        if let syn::Item::Use(u) = item {
            if let syn::UseTree::Path(p) = &u.tree {
                if let syn::UseTree::Rename(r) = &*p.tree {
                    if taken.contains(&r.rename.to_string()) {
                        taken.insert(r.ident.to_string());
                    }
                }
            }
        }
    }
    let mut top = std::collections::BTreeSet::new();
    let mut inner: std::collections::BTreeMap<String, syn::Type> = Default::default();
    for item in &types.items {
        match item {
            syn::Item::Const(c) => {
                top.insert(c.ident.to_string());
            }
            syn::Item::Struct(st) => {
                if let syn::Fields::Unnamed(f) = &st.fields {
                    if let (1, Some(field)) = (f.unnamed.len(), f.unnamed.first()) {
                        inner.insert(st.ident.to_string(), field.ty.clone());
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for item in &types.items {
        let syn::Item::Impl(imp) = item else { continue };
        let syn::Type::Path(self_ty) = &*imp.self_ty else { continue };
        let Some(name) = self_ty.path.get_ident().map(ToString::to_string) else { continue };
        let Some(int) = inner.get(&name).filter(|_| name.contains("flags") && !taken.contains(&name)) else { continue };
        let ty = syn::Ident::new(&name, proc_macro2::Span::call_site());
        for ii in &imp.items {
            let syn::ImplItem::Const(c) = ii else { continue };
            let value = c.ident.to_string();
            if !top.insert(value.clone()) {
                continue;
            }
            let ident = &c.ident;
            let doc = format!(" [`{name}::{value}`]`.0`: the value as the functions' `flags` parameters take it.");
            out.push(quote!(#[doc = #doc] pub const #ident: #int = #ty::#ident.0;));
        }
    }
    out
}

/// The identifiers in a type's text (`*mut CUmemAccessDesc` has `mut`, `CUmemAccessDesc`).
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c == '_' || c.is_ascii_alphanumeric())).filter(|w| !w.is_empty())
}

/// `types.rs`: bindgen's types, cuda.h's cast constants, and the plain flag constants;
/// `used_types`: the words of every entry's parameter types.
pub fn types_rs(types: &syn::File, used_types: &std::collections::BTreeSet<String>) -> TokenStream {
    let items = system_abi(&types.items);
    let casts = cast_constants(types);
    let flags = flag_constants(types, used_types);
    quote! {
        //! The CUDA driver API's types, enums and constants, from the newest pinned toolkit
        //! (legacy `_v1` types included). bindgen's layout checks are kept: they fail the
        //! build on a target where a layout differs from x86-64 Linux.
        #![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]
        #![allow(clippy::all)]
        #(#items)*
        #(#casts)*
        #(#flags)*
    }
}
