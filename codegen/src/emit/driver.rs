//! The lookup shim of the generated crate. Its logic does not depend on the model, so it is
//! hand-written Rust in `templates/` (where it keeps its comments), written verbatim after
//! the `@generated` marker: `src/driver.rs`, `src/error.rs`, `src/runtime.rs`. What it needs
//! from the inputs is emitted beside it: `src/codes.rs`, the names of the `CUresult` codes.

use std::collections::BTreeMap;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

pub const DRIVER_RS: &str = "src/driver.rs";
pub const ERROR_RS: &str = "src/error.rs";
pub const RUNTIME_RS: &str = "src/runtime.rs";
pub const CODES_RS: &str = "src/codes.rs";
pub const TABLE_RS: &str = "src/table.rs";
pub const API_SHIM_RS: &str = "src/api_shim.rs";

pub const DRIVER_TEMPLATE: &str = include_str!("templates/driver.rs");
pub const ERROR_TEMPLATE: &str = include_str!("templates/error.rs");
pub const RUNTIME_TEMPLATE: &str = include_str!("templates/runtime.rs");
pub const TABLE_TEMPLATE: &str = include_str!("templates/table.rs");
pub const API_SHIM_TEMPLATE: &str = include_str!("templates/api_shim.rs");

/// The constants of bindgen's `impl cudaError_enum` (`pub const X: cudaError_enum =
/// cudaError_enum(N);`), in declaration order.
fn result_consts(types: &syn::File) -> impl Iterator<Item = &syn::ImplItemConst> {
    types
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Impl(imp) => match &*imp.self_ty {
                syn::Type::Path(p) if p.path.is_ident("cudaError_enum") => Some(&imp.items),
                _ => None,
            },
            _ => None,
        })
        .flatten()
        .filter_map(|it| match it {
            syn::ImplItem::Const(c) => Some(c),
            _ => None,
        })
}

/// `(value, name)` of every `cudaError_enum` constant in bindgen's types, in declaration
/// order.
fn result_codes(types: &syn::File) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for c in result_consts(types) {
        let syn::Expr::Call(call) = &c.expr else { continue };
        let [syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. })] = call.args.iter().collect::<Vec<_>>()[..]
        else {
            continue;
        };
        if let Ok(v) = n.base10_parse::<u32>() {
            out.push((v, c.ident.to_string()));
        }
    }
    out
}

/// The rustdoc of each `cudaError_enum` constant, by name.
fn result_docs(types: &syn::File) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for c in result_consts(types) {
        let doc: Vec<String> = c
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
        if !doc.is_empty() {
            out.insert(c.ident.to_string(), doc.join(" "));
        }
    }
    out
}

pub fn codes_rs(types: &syn::File) -> TokenStream {
    // The first name per value: later ones are deprecated aliases, if CUDA ever adds any.
    let mut by_value: BTreeMap<u32, String> = BTreeMap::new();
    for (v, name) in result_codes(types) {
        by_value.entry(v).or_insert(name);
    }
    let arms = by_value.iter().map(|(v, name)| {
        let v = Literal::u32_unsuffixed(*v);
        quote!(#v => Some(#name),)
    });
    // What cuda.h says of each code: the doc the pipeline put on its constant.
    let docs = result_docs(types);
    let described = by_value.iter().filter_map(|(v, name)| {
        let doc = docs.get(name)?;
        let v = Literal::u32_unsuffixed(*v);
        Some(quote!(#v => Some(#doc),))
    });
    // `CUresult` prints as its name, with no driver, where the headers define the type.
    let impls = (!by_value.is_empty()).then(|| {
        quote! {
            impl crate::types::cudaError_enum {
                /// The code's name in the newest pinned toolkit's `cuda.h`
                /// (`CUDA_ERROR_INVALID_VALUE`), if it defines the code.
                pub fn name(self) -> Option<&'static str> {
                    result_name(self.0)
                }

                /// What the newest pinned toolkit's `cuda.h` says of the code, if it does.
                pub fn description(self) -> Option<&'static str> {
                    result_description(self.0)
                }

                /// `Ok` for `CUDA_SUCCESS`, else the code as the error, for `?`.
                pub fn result(self) -> Result<(), crate::types::cudaError_enum> {
                    if self.0 == 0 { Ok(()) } else { Err(self) }
                }
            }

            /// `CUDA_ERROR_INVALID_VALUE`, or `CUresult(999)` for a code the headers lack.
            impl core::fmt::Debug for crate::types::cudaError_enum {
                fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    match result_name(self.0) {
                        Some(name) => f.write_str(name),
                        None => write!(f, "CUresult({})", self.0),
                    }
                }
            }

            /// `CUDA_ERROR_INVALID_VALUE (1): This indicates that ...` (cuda.h's words), or
            /// `CUresult 999 (not in cuda.h of this crate)`.
            impl core::fmt::Display for crate::types::cudaError_enum {
                fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    match (result_name(self.0), result_description(self.0)) {
                        (Some(name), Some(what)) => write!(f, "{name} ({}): {what}", self.0),
                        (Some(name), None) => write!(f, "{name} ({})", self.0),
                        _ => write!(f, "CUresult {} (not in cuda.h of this crate)", self.0),
                    }
                }
            }

            impl std::error::Error for crate::types::cudaError_enum {}
        }
    });
    quote! {
        //! The names of the `CUresult` codes, from the newest pinned toolkit's `cuda.h`: what
        //! the shim shows when the driver has no `cuGetErrorName`, or does not know a code,
        //! and what `CUresult`'s `Debug` and `Display` print.

        /// The name of a `CUresult` code, if the newest pinned toolkit defines it.
        pub(crate) fn result_name(code: u32) -> Option<&'static str> {
            match code {
                #(#arms)*
                _ => None,
            }
        }

        /// What cuda.h says of a `CUresult` code, if it says anything.
        #[allow(dead_code)]
        pub(crate) fn result_description(code: u32) -> Option<&'static str> {
            match code {
                #(#described)*
                _ => None,
            }
        }

        #impls
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_rust() {
        for (name, t) in [
            ("driver", DRIVER_TEMPLATE),
            ("error", ERROR_TEMPLATE),
            ("runtime", RUNTIME_TEMPLATE),
            ("table", TABLE_TEMPLATE),
            ("api_shim", API_SHIM_TEMPLATE),
        ] {
            if let Err(e) = syn::parse_file(t) {
                panic!("templates/{name}.rs does not parse: {e}");
            }
        }
    }

    #[test]
    fn result_codes_are_read_in_order() {
        let types: syn::File = syn::parse_quote! {
            impl cudaError_enum {
                pub const CUDA_SUCCESS: cudaError_enum = cudaError_enum(0);
                pub const CUDA_ERROR_NOT_FOUND: cudaError_enum = cudaError_enum(500);
                pub const CUDA_ERROR_ALIAS: cudaError_enum = cudaError_enum(500);
            }
            impl CUother_enum {
                pub const CU_OTHER: CUother_enum = CUother_enum(7);
            }
        };
        assert_eq!(
            result_codes(&types),
            vec![(0, "CUDA_SUCCESS".into()), (500, "CUDA_ERROR_NOT_FOUND".into()), (500, "CUDA_ERROR_ALIAS".into())]
        );
        let text = codes_rs(&types).to_string();
        assert!(text.contains("500 => Some (\"CUDA_ERROR_NOT_FOUND\")"), "{text}");
        assert!(!text.contains("CUDA_ERROR_ALIAS") && !text.contains("CU_OTHER"), "{text}");
    }
}
