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

pub fn types_rs(types: &syn::File) -> TokenStream {
    let items = system_abi(&types.items);
    quote! {
        //! The CUDA driver API's types, enums and constants, from the newest pinned toolkit
        //! (legacy `_v1` types included). bindgen's layout checks are kept: they fail the
        //! build on a target where a layout differs from x86-64 Linux.
        #![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]
        #![allow(clippy::all)]
        #(#items)*
    }
}
