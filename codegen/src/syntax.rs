//! Small readings of Rust syntax that several stages share: a type as compact text, the name an
//! item of bindgen's output declares, and prettyplease with its panics turned into errors. A
//! leaf: it imports nothing of the pipeline.

/// A type as compact text: `*mut CUdeviceptr_v2`, `c_uint`, `*const *mut c_void`.
pub fn render_type(ty: &syn::Type) -> String {
    let item: syn::Item = syn::parse_quote!(type __T = #ty;);
    let file = syn::File { shebang: None, attrs: vec![], items: vec![item] };
    let text = prettyplease::unparse(&file);
    let text = text.trim().trim_start_matches("type __T = ").trim_end_matches(';').trim();
    text.replace("::core::ffi::", "").replace("::core::option::", "")
}

/// The name an item of bindgen's output declares: types, constants, `impl X` for impls of them,
/// and `pub use` renames.
pub fn item_name(item: &syn::Item) -> Option<String> {
    Some(match item {
        syn::Item::Struct(s) => s.ident.to_string(),
        syn::Item::Union(u) => u.ident.to_string(),
        syn::Item::Type(t) => t.ident.to_string(),
        syn::Item::Enum(e) => e.ident.to_string(),
        syn::Item::Const(c) if c.ident != "_" => c.ident.to_string(),
        syn::Item::Impl(i) => match &*i.self_ty {
            syn::Type::Path(p) => format!("impl {}", p.path.segments.last()?.ident),
            _ => return None,
        },
        syn::Item::Use(u) => match &u.tree {
            syn::UseTree::Path(p) => match &*p.tree {
                syn::UseTree::Rename(r) => r.rename.to_string(),
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    })
}

/// prettyplease, with its panics (`unimplemented!` on syntax it cannot print) as errors: the
/// types it prints come from headers, which are outside input.
pub(crate) fn unparse(file: &syn::File) -> Result<String, String> {
    std::panic::catch_unwind(|| prettyplease::unparse(file)).map_err(|panic| {
        let why = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "it panicked".into());
        format!("prettyplease cannot print it: {why}")
    })
}
