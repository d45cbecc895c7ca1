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

pub fn types_rs(types: &syn::File) -> TokenStream {
    let mut file = types.clone();
    SystemAbi.visit_file_mut(&mut file);
    let items = &file.items;
    quote! {
        //! The CUDA driver API's types, enums and constants, from the newest pinned toolkit
        //! (legacy `_v1` types included). bindgen's layout checks are kept: they fail the
        //! build on a target where a layout differs from x86-64 Linux.
        #![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]
        #![allow(clippy::all)]
        #(#items)*
    }
}
