//! The lookup shim's files and `codes.rs`. The shim does not depend on the model: it is
//! hand-written Rust in `codegen/src/shim/`, compiled there as it stands (against this
//! repository's generated tables, by the `cuda-sys-gen-shim-check` crate in
//! `codegen/shim-check/`), and written into every crate as it is after the `@generated`
//! marker, with the crate's name put in. What it needs from the inputs is rendered beside it:
//! `types/src/codes.rs`, the names and descriptions of the `CUresult` codes (which the shim's
//! `result.rs` gives `CUresult` as its name, `Debug` and `Display`).

use std::collections::BTreeMap;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// The shim's files: the path in the crate, and the source, `codegen/src/shim/<name>.rs`.
pub const SOURCES: [(&str, &str); 17] = [
    ("types/src/answer.rs", include_str!("../shim/answer.rs")),
    ("types/src/entry.rs", include_str!("../shim/entry.rs")),
    ("types/src/record.rs", include_str!("../shim/record.rs")),
    ("types/src/result.rs", include_str!("../shim/result.rs")),
    ("types/src/rule.rs", include_str!("../shim/rule.rs")),
    ("types/src/zeroed.rs", include_str!("../shim/zeroed.rs")),
    ("src/api_shim.rs", include_str!("../shim/api_shim.rs")),
    ("src/doctor.rs", include_str!("../shim/doctor.rs")),
    ("src/driver.rs", include_str!("../shim/driver.rs")),
    ("src/error.rs", include_str!("../shim/error.rs")),
    ("src/library.rs", include_str!("../shim/library.rs")),
    ("src/lookup.rs", include_str!("../shim/lookup.rs")),
    ("src/newest_abi.rs", include_str!("../shim/newest_abi.rs")),
    ("src/runtime.rs", include_str!("../shim/runtime.rs")),
    ("src/standin.rs", include_str!("../shim/standin.rs")),
    ("src/table.rs", include_str!("../shim/table.rs")),
    ("src/visitor.rs", include_str!("../shim/visitor.rs")),
];

/// The paths of [`SOURCES`], in its order.
pub const PATHS: [&str; SOURCES.len()] = paths_of!(SOURCES, 0);

pub const CODES_RS: &str = "types/src/codes.rs";

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
/// `codes.rs`: each `CUresult` code's name and cuda.h's description (`docs`, by name).
pub fn codes_rs(types: &syn::File, docs: &BTreeMap<String, String>) -> TokenStream {
    // The first name per value: later ones are deprecated aliases, if CUDA ever adds any.
    let mut by_value: BTreeMap<u32, String> = BTreeMap::new();
    for (v, name) in result_codes(types) {
        by_value.entry(v).or_insert(name);
    }
    let arms = by_value.iter().map(|(v, name)| {
        let v = Literal::u32_unsuffixed(*v);
        quote!(#v => Some(#name),)
    });
    // What cuda.h says of each code.
    let described = by_value.iter().filter_map(|(v, name)| {
        let doc = docs.get(name)?.trim();
        let v = Literal::u32_unsuffixed(*v);
        Some(quote!(#v => Some(#doc),))
    });
    quote! {
        //! The names of the `CUresult` codes, from the newest pinned toolkit's `cuda.h`: what
        //! the shim shows when the driver has no `cuGetErrorName`, or does not know a code,
        //! and what `CUresult`'s `Debug` and `Display` print.

        /// The name of a `CUresult` code, if the newest pinned toolkit defines it.
        pub fn result_name(code: u32) -> Option<&'static str> {
            match code {
                #(#arms)*
                _ => None,
            }
        }

        /// What cuda.h says of a `CUresult` code, if it says anything.
        pub fn result_description(code: u32) -> Option<&'static str> {
            match code {
                #(#described)*
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of `codegen/src/shim/` is written into the crate, and nothing else is taken
    /// for the shim: a file added there and not here would compile in the check crate and be
    /// missing from every generated one.
    #[test]
    fn every_shim_source_is_written() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shim");
        let mut on_disk: Vec<String> =
            std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        on_disk.sort();
        // Each source goes to the package that compiles it (`src/` or `types/src/`): the file
        // names are what must match.
        let mut written: Vec<&str> = PATHS.iter().map(|p| p.rsplit('/').next().unwrap_or(p)).collect();
        written.sort();
        assert_eq!(on_disk, written, "codegen/src/shim/ and emit::shim::SOURCES differ");
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
        let text = codes_rs(&types, &BTreeMap::new()).to_string();
        assert!(text.contains("500 => Some (\"CUDA_ERROR_NOT_FOUND\")"), "{text}");
        assert!(!text.contains("CUDA_ERROR_ALIAS") && !text.contains("CU_OTHER"), "{text}");
    }
}
