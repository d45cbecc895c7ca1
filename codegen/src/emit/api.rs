//! `src/api.rs` (feature `api`): cuda.h's own function names (`cuCtxCreate`), each calling
//! the ABI that cuda.h's macros make of the name in the newest toolkit, in the stream mode
//! the crate's `per-thread-default-stream` feature chooses.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::ctx::{c_name_rows, marker_ident, Ctx};
use crate::model::CNameTarget;
use crate::version::format_cuda_version;

pub const API_RS: &str = "src/api.rs";

/// The newest toolkit's C names, with the entry each means in each stream mode.
fn newest_c_names<'a>(ctx: &'a Ctx<'a>) -> impl Iterator<Item = (&'a str, &'a CNameTarget)> + 'a {
    let newest = ctx.all_toolkits.last();
    newest.and_then(|t| ctx.model.c_names.get(t)).into_iter().flatten().map(|(c, t)| (c.as_str(), t))
}

pub fn api_rs(ctx: &Ctx<'_>) -> TokenStream {
    let newest = ctx.all_toolkits.last().map_or_else(String::new, |t| t.to_string());
    // Per module: its functions, which name its own types (the D3D interfaces) unqualified.
    let mut fns: std::collections::BTreeMap<&str, Vec<TokenStream>> = Default::default();
    let mut table = Vec::new();
    for (c_name, target) in newest_c_names(ctx) {
        // Entries that return no `CUresult` are left out: the function could not report a
        // missing driver.
        for (mode, e) in c_name_rows(ctx, target).into_iter().filter(|(_, e)| e.returns.as_str() == "CUresult") {
            let Some((_, module_cfg)) = ctx.pfn_path(&e.pfn) else { continue };
            let Some(&index) = ctx.index_of.get(e.pfn.as_str()) else { continue };
            let name = Ident::new(c_name, Span::call_site());
            let marker = marker_ident(e);
            let args: Vec<Ident> = e
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    // The header's name where it is an identifier used once and not
                    // SCREAMING_CASE (that could be a constant of `types` in scope, which a
                    // parameter pattern would match instead of binding), else `arg<i>`.
                    let ok = p.name.contains(|c: char| c.is_ascii_lowercase())
                        && !p.name.starts_with("__")
                        && e.params.iter().filter(|q| q.name == p.name).count() == 1
                        && !p.name.starts_with("arg");
                    ok.then(|| syn::parse_str::<Ident>(&p.name).ok())
                        .flatten()
                        .unwrap_or_else(|| Ident::new(&format!("arg{i}"), Span::call_site()))
                })
                .collect();
            let tys = e.params.iter().map(|p| p.ty.syntax());
            let how = if e.exported == *c_name {
                "exported under the same name".to_owned()
            } else {
                format!("`#define {c_name}` makes it `{}`", e.exported)
            };
            let doc = format!(
                " `{c_name}` as cuda.h {newest} means it{}: {how}, the ABI of version {} \
                 (CUDA {}), [`entries::{marker}`](crate::entries::{marker}).\n\n \
                 [`api::UNAVAILABLE`](crate::api::UNAVAILABLE) without a driver or without \
                 this entry: see the [module](crate::api).",
                match (&mode.is_empty(), e.variant) {
                    (true, _) => String::new(),
                    (false, None) => " without `CUDA_API_PER_THREAD_DEFAULT_STREAM`".to_owned(),
                    (false, Some(_)) => " under `CUDA_API_PER_THREAD_DEFAULT_STREAM`".to_owned(),
                },
                e.version,
                format_cuda_version(e.version),
            );
            fns.entry(e.module.as_str()).or_default().push(quote! {
                #[doc = #doc]
                #module_cfg
                #mode
                #[inline]
                pub unsafe fn #name(#(#args: #tys),*) -> CUresult {
                    match crate::api_shim::resolve::<crate::entries::#marker>() {
                        Some(__entry_point) => __entry_point(#(#args),*),
                        None => crate::api_shim::UNAVAILABLE,
                    }
                }
            });
            table.push(quote!(#module_cfg #mode (#c_name, #index),));
        }
    }
    let mut modules = Vec::new();
    for (row, items) in fns {
        let Some(spec) = ctx.module_of(row) else { continue };
        if spec.module() == "pfn" {
            modules.extend(items);
            continue;
        }
        let (cfg, module) = (spec.cfg(), Ident::new(spec.module(), Span::call_site()));
        modules.push(quote! {
            #cfg
            mod #module {
                use super::*;
                use crate::#module::*;
                #(#items)*
            }
            #cfg
            pub use self::#module::*;
        });
    }
    // Examples from this crate's own map, where it has them.
    let example = ["cuCtxCreate", "cuGraphInstantiate", "cuMemAlloc"]
        .iter()
        .filter_map(|c| {
            let pfn = newest_c_names(ctx).find(|(n, _)| n == c)?.1.default.as_deref()?;
            let e = ctx.by_pfn.get(pfn)?;
            Some(format!("`{c}` is `{}`, the {} ABI", e.exported, e.version))
        })
        .collect::<Vec<_>>();
    let example = if example.is_empty() { String::new() } else { format!(" ({})", example.join("; ")) };
    let doc = format!(
        " cuda.h's own names: `api::cuX(..)` calls the ABI that a C program compiled against \
         CUDA {newest}'s cuda.h calls by `cuX`{example}. Needs the crate's `api` feature.\n\n \
         With the `per-thread-default-stream` feature each name means what it means under \
         `CUDA_API_PER_THREAD_DEFAULT_STREAM` (`cuMemcpy` is `cuMemcpy_ptds`). Cargo unifies \
         features: when any crate in the build turns it on, every user of this crate in that \
         build gets the per-thread names. cuda.h's `cuGetProcAddress` is an inline wrapper in \
         that mode, so it has no function here then (use [`Driver::get`](crate::Driver::get)).\n\n \
         Each function resolves its entry once through one process-wide [`Driver`](crate::Driver) \
         ([`driver`], loaded on first use) and then calls it. Nothing here panics: without a \
         driver, or with a driver that lacks the entry, a function returns [`UNAVAILABLE`], and \
         [`error_of`] gives the full [`Error`](crate::Error): which library, which lookup, why.\n\n \
         Each function is `unsafe` with the driver function's own contract: the pointers and \
         handles must be what CUDA's documentation of that function asks for.\n\n \
         What the C names meant in each pinned toolkit is in [`aliases`](crate::aliases) \
         (feature `aliases`): `aliases::cuda_X_Y::cuX` is the marker of the entry that \
         toolkit's cuda.h meant by `cuX`."
    );
    quote! {
        #![doc = #doc]
        #![allow(non_snake_case, clippy::too_many_arguments, clippy::missing_safety_doc, unused_imports)]
        use core::ffi::{c_char, c_int, c_uint, c_void, c_longlong, c_ulonglong, c_short, c_ushort, c_uchar, c_float, c_double};
        use crate::types::*;
        pub use crate::api_shim::{check, driver, error_of, UNAVAILABLE};

        /// Every function of this module, by C name, with the index in
        /// [`ENTRIES`](crate::ENTRIES) of the entry it calls, sorted by name.
        pub static C_NAMES: &[(&str, usize)] = &[#(#table)*];

        #(#modules)*
    }
}
