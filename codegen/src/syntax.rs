//! Small readings of Rust syntax that several stages share: a type as compact text, a type
//! kept both as syntax and as that text ([`RustType`]), the name an item of bindgen's output
//! declares, and prettyplease with its panics turned into errors. A leaf: it imports nothing
//! of the pipeline.

use std::fmt;

use syn::visit_mut::VisitMut;

/// A type as compact text: `*mut CUdeviceptr_v2`, `c_uint`, `*const *mut c_void`.
pub fn render_type(ty: &syn::Type) -> String {
    let item: syn::Item = syn::parse_quote!(type __T = #ty;);
    let file = syn::File { shebang: None, attrs: vec![], items: vec![item] };
    let text = prettyplease::unparse(&file);
    let text = text.trim().trim_start_matches("type __T = ").trim_end_matches(';').trim();
    text.replace("::core::ffi::", "").replace("::core::option::", "")
}

/// A type from bindgen's output, read once: the syntax the emitter writes out, and its
/// compact text ([`render_type`]) that registry.json, messages and comparisons use. Equal,
/// ordered and hashed by the text. The syntax is the text's own: `::core::ffi::c_uint` is
/// `c_uint`, as the generated modules import it.
#[derive(Clone)]
pub struct RustType {
    text: String,
    ty: syn::Type,
}

impl RustType {
    pub fn new(ty: &syn::Type) -> RustType {
        let mut short = ty.clone();
        ShortPaths.visit_type_mut(&mut short);
        RustType { text: render_type(ty), ty: short }
    }

    /// The unit type, for a function that returns nothing.
    pub fn unit() -> RustType {
        RustType::new(&syn::parse_quote!(()))
    }

    pub fn is_unit(&self) -> bool {
        matches!(&self.ty, syn::Type::Tuple(t) if t.elems.is_empty())
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn syntax(&self) -> &syn::Type {
        &self.ty
    }
}

/// `::core::ffi::X` and `::core::option::X` as `X`: what [`render_type`] does to the text,
/// done to the syntax.
struct ShortPaths;

impl VisitMut for ShortPaths {
    fn visit_path_mut(&mut self, p: &mut syn::Path) {
        let names: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let short = p.leading_colon.is_some()
            && names.len() == 3
            && names[0] == "core"
            && (names[1] == "ffi" || names[1] == "option");
        if short {
            let last = p.segments.pop().map(|pair| pair.into_value());
            p.segments.clear();
            p.segments.extend(last);
            p.leading_colon = None;
        }
        syn::visit_mut::visit_path_mut(self, p);
    }
}

impl std::str::FromStr for RustType {
    type Err = String;
    fn from_str(text: &str) -> Result<RustType, String> {
        let ty: syn::Type = syn::parse_str(text).map_err(|e| format!("`{text}` is no Rust type: {e}"))?;
        Ok(RustType::new(&ty))
    }
}

impl PartialEq for RustType {
    fn eq(&self, other: &RustType) -> bool {
        self.text == other.text
    }
}

impl Eq for RustType {}

impl PartialOrd for RustType {
    fn partial_cmp(&self, other: &RustType) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RustType {
    fn cmp(&self, other: &RustType) -> std::cmp::Ordering {
        self.text.cmp(&other.text)
    }
}

impl std::hash::Hash for RustType {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.text.hash(h)
    }
}

impl fmt::Display for RustType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for RustType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text)
    }
}

impl serde::Serialize for RustType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for RustType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RustType, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
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
