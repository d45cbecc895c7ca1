//! Reading bindgen's output: every `PFN_<symbol>_v<version>[_ptds|_ptsz]` typedef with its
//! signature, and the layout of every type a parameter reaches (for ABI drift).
//!
//! Input is bindgen's Rust text, so this is syn, not C: the parser never builds tokens for
//! output and never looks at the headers (that is [`crate::macros`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use quote::ToTokens;
use serde::Serialize;

use crate::clang::SourceLine;

use crate::names::{split_pfn_name, NameError};

/// A parameter: its name as bindgen wrote it and its Rust type as text (`*mut CUdeviceptr`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
pub struct Param {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
}

/// One versioned typedef as declared by one toolkit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typedef {
    pub pfn: String,
    pub symbol: String,
    pub version: u32,
    pub variant: Option<crate::names::Variant>,
    pub params: Vec<Param>,
    /// The return type as text; `()` for void.
    pub returns: String,
    pub location: Option<SourceLine>,
    /// Per parameter, a digest of the full layout it reaches and a one-line description.
    pub layouts: Vec<ParamLayout>,
}

pub use crate::model::{Layout, ParamLayout};

/// What one toolkit's bindgen output holds.
#[derive(Debug, Clone)]
pub struct ParsedOutput {
    pub typedefs: Vec<Typedef>,
    /// `PFN_` typedefs whose final name has no version: reported, never emitted.
    pub unversioned: Vec<(String, Option<SourceLine>)>,
    /// `PFN_` typedefs whose name breaks the grammar otherwise (two versions, a version out
    /// of range): errors, with the rule broken.
    pub malformed: Vec<(String, Option<SourceLine>, NameError)>,
    /// Versioned `PFN_` typedefs whose symbol can be no Rust name (`self`, `fn`): reported,
    /// never emitted. The crate names a type after each symbol (`symbols::cuCtxCreate`).
    pub unnameable: Vec<(String, Option<SourceLine>)>,
    /// Every item that is not a `PFN_` typedef: the CUDA types.
    pub types: syn::File,
}

/// Reads bindgen's output. Errors are messages; the caller adds the toolkit.
pub fn parse_bindgen(rust: &str, locations: &BTreeMap<String, SourceLine>) -> Result<ParsedOutput, String> {
    // Lexing is iterative; parsing (syn), printing (prettyplease) and quoting recurse once per
    // level, so depth is checked on the tokens first.
    let tokens: proc_macro2::TokenStream = rust.parse().map_err(|e| format!("not valid Rust: {e}"))?;
    let depth = nesting(tokens.clone());
    if depth > MAX_NESTING {
        return Err(format!("not bindgen's output: nested {depth} levels deep (bindgen's output nests a few; at most {MAX_NESTING} are read)"));
    }
    let mut file: syn::File = syn::parse2(tokens).map_err(|e| format!("not valid Rust: {e}"))?;
    if let Some(tokens) = find_verbatim(&mut file) {
        return Err(format!("not bindgen's output: syn keeps `{tokens}` only as unparsed tokens, which cannot be printed back"));
    }
    let table = TypeTable::new(&file.items);
    let mut typedefs = Vec::new();
    let mut unversioned = Vec::new();
    let mut malformed = Vec::new();
    let mut unnameable = Vec::new();
    let mut others = Vec::new();
    for item in file.items {
        let syn::Item::Type(t) = &item else {
            others.push(item);
            continue;
        };
        let name = t.ident.to_string();
        if !name.starts_with("PFN_") {
            others.push(item);
            continue;
        }
        let location = locations.get(&name).cloned();
        let (symbol, version, variant) = match split_pfn_name(&name) {
            Ok(n) => (n.symbol, n.version, n.variant),
            Err(e) if e.is_unversioned() => {
                unversioned.push((name, location));
                continue;
            }
            Err(e) => {
                malformed.push((name, location, e));
                continue;
            }
        };
        // A keyword (`fn`, `self`, `Self`, `crate`, `_`) cannot name the symbol's marker.
        if syn::parse_str::<syn::Ident>(symbol).is_err() {
            unnameable.push((name, location));
            continue;
        }
        let f = fn_pointer(&t.ty).ok_or_else(|| format!("`{name}` is not a function pointer type: `{}`", t.ty.to_token_stream()))?;
        let mut params = Vec::new();
        let mut layouts = Vec::new();
        for (i, arg) in f.inputs.iter().enumerate() {
            let name = arg.name.as_ref().map(|(n, _)| n.to_string()).unwrap_or_else(|| format!("arg{}", i + 1));
            params.push(Param { name, ty: render_type(&arg.ty) });
            layouts.push(table.param_layout(&arg.ty));
        }
        if f.variadic.is_some() {
            return Err(format!("`{name}` is variadic, which no CUDA entry point is"));
        }
        let returns = match &f.output {
            syn::ReturnType::Default => "()".to_owned(),
            syn::ReturnType::Type(_, ty) => render_type(ty),
        };
        typedefs.push(Typedef {
            pfn: name.clone(),
            symbol: symbol.to_owned(),
            version,
            variant,
            params,
            returns,
            location,
            layouts,
        });
    }
    Ok(ParsedOutput { typedefs, unversioned, malformed, unnameable, types: syn::File { shebang: None, attrs: file.attrs, items: others } })
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

/// Nesting past this is refused before syn sees it. Measured with [`nesting`], bindgen's
/// output for the pinned toolkits (and the fixtures) nests 6. An unoptimized syn needs up to
/// 40 KB of stack per level (generic arguments), so the 2 MiB stack of the pipeline's worker
/// threads overflowed at about 50 levels of `Option<`, 80 of `*mut`, 88 of `(`: 32 keeps a
/// margin on both sides.
pub const MAX_NESTING: usize = 32;

/// How deep the syntax of `tokens` can nest, as the parsers that recurse see it: groups
/// (`( [ {`), plus generic angle brackets and runs of prefix tokens (`*mut`, `&`, `!`, `-`,
/// `dyn`, `impl`) within each group, summed along the deepest path. Iterative.
pub fn nesting(tokens: proc_macro2::TokenStream) -> usize {
    use proc_macro2::{Spacing, TokenTree};
    struct Level {
        rest: proc_macro2::token_stream::IntoIter,
        base: usize,
        angle: usize,
        run: usize,
        /// The previous token was a joint `-` or `=` (so a `>` closes `->` or `=>`).
        arrow: bool,
    }
    let mut max = 0;
    let mut stack = vec![Level { rest: tokens.into_iter(), base: 0, angle: 0, run: 0, arrow: false }];
    while let Some(level) = stack.last_mut() {
        let Some(token) = level.rest.next() else {
            stack.pop();
            continue;
        };
        let mut arrow = false;
        match &token {
            TokenTree::Group(g) => {
                let base = level.base + level.angle + level.run + 1;
                level.run = 0;
                max = max.max(base);
                let inner = Level { rest: g.stream().into_iter(), base, angle: 0, run: 0, arrow: false };
                stack.push(inner);
                continue;
            }
            TokenTree::Punct(p) => match p.as_char() {
                '<' => level.angle += 1,
                '>' if !level.arrow => level.angle = level.angle.saturating_sub(1),
                '*' | '&' | '!' | '-' => {
                    level.run += 1;
                    arrow = p.as_char() == '-' && p.spacing() == Spacing::Joint;
                }
                '=' => arrow = p.spacing() == Spacing::Joint,
                _ => level.run = 0,
            },
            TokenTree::Ident(i) if ["mut", "const", "dyn", "impl"].contains(&i.to_string().as_str()) => level.run += 1,
            _ => level.run = 0,
        }
        level.arrow = arrow;
        max = max.max(level.base + level.angle + level.run);
    }
    max
}

/// The first piece of syntax that syn accepts but keeps only as tokens (`Verbatim`): a type
/// alias with bounds, an item with a default body, and the like. bindgen never writes one, and
/// prettyplease cannot print one back (it panics), so such input is refused up front.
fn find_verbatim(file: &mut syn::File) -> Option<String> {
    use syn::visit_mut::{self, VisitMut};
    struct Finder(Option<String>);
    macro_rules! check {
        ($method:ident, $ty:ty, $walk:path, $($variant:path),+) => {
            fn $method(&mut self, node: &mut $ty) {
                if self.0.is_some() {
                    return;
                }
                match node {
                    $($variant(t) => self.0 = Some(t.to_string()),)+
                    _ => $walk(self, node),
                }
            }
        };
    }
    impl VisitMut for Finder {
        check!(visit_item_mut, syn::Item, visit_mut::visit_item_mut, syn::Item::Verbatim);
        check!(visit_impl_item_mut, syn::ImplItem, visit_mut::visit_impl_item_mut, syn::ImplItem::Verbatim);
        check!(visit_trait_item_mut, syn::TraitItem, visit_mut::visit_trait_item_mut, syn::TraitItem::Verbatim);
        check!(visit_foreign_item_mut, syn::ForeignItem, visit_mut::visit_foreign_item_mut, syn::ForeignItem::Verbatim);
        check!(visit_expr_mut, syn::Expr, visit_mut::visit_expr_mut, syn::Expr::Verbatim);
        check!(visit_type_mut, syn::Type, visit_mut::visit_type_mut, syn::Type::Verbatim);
        check!(visit_pat_mut, syn::Pat, visit_mut::visit_pat_mut, syn::Pat::Verbatim);
        check!(visit_type_param_bound_mut, syn::TypeParamBound, visit_mut::visit_type_param_bound_mut, syn::TypeParamBound::Verbatim);
    }
    let mut f = Finder(None);
    f.visit_file_mut(file);
    f.0
}

/// `Option<unsafe extern "C" fn(..) -> R>` (bindgen's spelling of a C function pointer).
fn fn_pointer(ty: &syn::Type) -> Option<&syn::TypeBareFn> {
    match ty {
        syn::Type::BareFn(f) => Some(f),
        syn::Type::Path(p) => {
            let last = p.path.segments.last()?;
            if last.ident != "Option" {
                return None;
            }
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
            match args.args.first()? {
                syn::GenericArgument::Type(syn::Type::BareFn(f)) => Some(f),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A type as compact text: `*mut CUdeviceptr_v2`, `c_uint`, `*const *mut c_void`.
pub fn render_type(ty: &syn::Type) -> String {
    let item: syn::Item = syn::parse_quote!(type __T = #ty;);
    let file = syn::File { shebang: None, attrs: vec![], items: vec![item] };
    let text = prettyplease::unparse(&file);
    let text = text.trim().trim_start_matches("type __T = ").trim_end_matches(';').trim();
    text.replace("::core::ffi::", "").replace("::core::option::", "")
}

enum Def {
    Alias(syn::Type),
    Record { union: bool, fields: Vec<(String, syn::Type)> },
    Newtype(syn::Type),
}

/// Just enough of bindgen's output to describe layouts: aliases, structs, unions, newtype
/// enums, and the sizes, alignments and offsets of bindgen's layout tests.
struct TypeTable {
    defs: BTreeMap<String, Def>,
    size: BTreeMap<String, u64>,
    align: BTreeMap<String, u64>,
    offset: BTreeMap<(String, String), u64>,
    /// Named types whose tree is the same wherever it is reached, with its unfolded size.
    memo: std::cell::RefCell<BTreeMap<String, (Arc<Layout>, u64)>>,
}

impl TypeTable {
    fn new(items: &[syn::Item]) -> TypeTable {
        let mut t = TypeTable {
            defs: BTreeMap::new(),
            size: BTreeMap::new(),
            align: BTreeMap::new(),
            offset: BTreeMap::new(),
            memo: Default::default(),
        };
        for item in items {
            match item {
                syn::Item::Type(a) => {
                    t.defs.insert(a.ident.to_string(), Def::Alias((*a.ty).clone()));
                }
                syn::Item::Struct(s) => {
                    let def = match &s.fields {
                        syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => Def::Newtype(u.unnamed[0].ty.clone()),
                        fields => Def::Record { union: false, fields: named_fields(fields.iter()) },
                    };
                    t.defs.insert(s.ident.to_string(), def);
                }
                syn::Item::Union(u) => {
                    let fields = named_fields(u.fields.named.iter());
                    t.defs.insert(u.ident.to_string(), Def::Record { union: true, fields });
                }
                syn::Item::Const(c) if c.ident == "_" => t.read_layout_tests(&c.expr),
                _ => {}
            }
        }
        t
    }

    /// bindgen writes `["Size of X"][size_of::<X>() - 64usize];` and the like.
    fn read_layout_tests(&mut self, expr: &syn::Expr) {
        let syn::Expr::Block(b) = expr else { return };
        for stmt in &b.block.stmts {
            let syn::Stmt::Expr(syn::Expr::Index(ix), _) = stmt else { continue };
            let syn::Expr::Array(label) = &*ix.expr else { continue };
            let Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(label), .. })) = label.elems.first() else { continue };
            let syn::Expr::Binary(bin) = &*ix.index else { continue };
            let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) = &*bin.right else { continue };
            let Ok(n) = n.base10_parse::<u64>() else { continue };
            let label = label.value();
            if let Some(name) = label.strip_prefix("Size of ") {
                self.size.insert(name.to_owned(), n);
            } else if let Some(name) = label.strip_prefix("Alignment of ") {
                self.align.insert(name.to_owned(), n);
            } else if let Some((ty, field)) = label.strip_prefix("Offset of field: ").and_then(|r| r.split_once("::")) {
                self.offset.insert((ty.to_owned(), field.to_owned()), n);
            }
        }
    }

    fn param_layout(&self, ty: &syn::Type) -> ParamLayout {
        let mut walk = Walk { visiting: Vec::new(), spent: 0 };
        let out = self.layout(ty, &mut walk, 0);
        let tree = if walk.spent > MAX_LAYOUT_NODES {
            Arc::new(Layout::Opaque(format!("(a layout of more than {MAX_LAYOUT_NODES} nodes)")))
        } else {
            out.tree
        };
        ParamLayout { tree, summary: self.summary(ty) }
    }

    /// Follows pointers and aliases to the record a parameter is about, and describes it.
    fn summary(&self, ty: &syn::Type) -> String {
        let mut ty = ty;
        let mut pointers = 0;
        for _ in 0..64 {
            match ty {
                syn::Type::Ptr(p) => {
                    pointers += 1;
                    ty = &p.elem;
                }
                syn::Type::Path(p) => {
                    let Some(name) = p.path.segments.last().map(|s| s.ident.to_string()) else { break };
                    match self.defs.get(&name) {
                        Some(Def::Alias(t)) | Some(Def::Newtype(t)) => ty = t,
                        Some(Def::Record { union, .. }) => {
                            let kind = if *union { "union" } else { "struct" };
                            let size = self.size.get(&name).map_or("unknown size".into(), |s| format!("{s} bytes"));
                            let via = if pointers > 0 { "points to " } else { "" };
                            return format!("{via}{kind} {name} ({size})");
                        }
                        None => return format!("{}{}", "*".repeat(pointers), render_type(ty)),
                    }
                }
                _ => break,
            }
        }
        format!("{}{}", "*".repeat(pointers), render_type(ty))
    }

    /// The layout tree of a type: through aliases, pointers, arrays and struct fields, with
    /// the sizes, alignments and offsets of bindgen's layout tests.
    ///
    /// A parameter's tree is the unfolding of the type graph from that parameter, cut at a
    /// type already being described further up ([`Layout::Cycle`]) and at depth 48. The tree
    /// of a named type is shared (memoized) only when it is the same from any starting point:
    /// no cut below it, and no cycle back to it or to a type above it. So a parameter's tree does not
    /// depend on which typedefs came before it in the file, and a diamond of types is walked
    /// once. An unfolding larger than [`MAX_LAYOUT_NODES`] (shared subtrees counted at their
    /// full size) makes the parameter opaque instead, so comparing two trees stays cheap.
    fn layout(&self, ty: &syn::Type, w: &mut Walk, depth: usize) -> Unfolded {
        w.spent += 1;
        if w.spent > MAX_LAYOUT_NODES {
            return Unfolded { cut: true, ..Unfolded::leaf(Layout::Opaque("(too large)".into())) };
        }
        if depth > 48 {
            return Unfolded { cut: true, ..Unfolded::leaf(Layout::Opaque("(too deep)".into())) };
        }
        match ty {
            syn::Type::Ptr(p) => self.layout(&p.elem, w, depth + 1).wrap(Layout::Pointer),
            syn::Type::Array(a) => {
                let len = match &a.len {
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) => n.base10_parse().unwrap_or(0),
                    _ => 0,
                };
                self.layout(&a.elem, w, depth + 1).wrap(|t| Layout::Array(t, len))
            }
            syn::Type::BareFn(_) => Unfolded::leaf(Layout::Function),
            syn::Type::Path(p) => {
                let Some(last) = p.path.segments.last() else { return Unfolded::leaf(Layout::Opaque("?".into())) };
                if last.ident == "Option" {
                    if let syn::PathArguments::AngleBracketed(a) = &last.arguments {
                        if let Some(syn::GenericArgument::Type(t)) = a.args.first() {
                            return self.layout(t, w, depth + 1);
                        }
                    }
                }
                let name = last.ident.to_string();
                if let Some(prim) = primitive(&name) {
                    return Unfolded::leaf(Layout::Primitive(prim.into()));
                }
                if let Some((tree, size)) = self.memo.borrow().get(&name) {
                    w.spent += size - 1;
                    return Unfolded { tree: Arc::clone(tree), lowest: usize::MAX, size: *size, cut: false };
                }
                if let Some(i) = w.visiting.iter().position(|v| *v == name) {
                    return Unfolded { lowest: i, ..Unfolded::leaf(Layout::Cycle) };
                }
                let me = w.visiting.len();
                w.visiting.push(name.clone());
                let mut out = match self.defs.get(&name) {
                    Some(Def::Alias(t)) | Some(Def::Newtype(t)) => self.layout(t, w, depth + 1),
                    Some(Def::Record { union, fields }) => {
                        let mut out = Unfolded::leaf(Layout::Cycle);
                        let mut laid = Vec::new();
                        if !*union {
                            for (f, t) in fields {
                                let off = self.offset.get(&(name.clone(), f.clone())).copied().unwrap_or(0);
                                let field = self.layout(t, w, depth + 1);
                                out.absorb(&field);
                                laid.push((f.clone(), off, field.tree));
                            }
                        }
                        out.tree = Arc::new(Layout::Record {
                            name: name.clone(),
                            union: *union,
                            size: self.size.get(&name).copied().unwrap_or(0),
                            align: self.align.get(&name).copied().unwrap_or(0),
                            fields: laid,
                        });
                        out
                    }
                    None => Unfolded::leaf(Layout::Opaque(name.clone())),
                };
                w.visiting.pop();
                if !out.cut && out.lowest > me {
                    // No cycle through it: its tree is the same from wherever it is reached
                    // (a type on a cycle unfolds differently from each of the cycle's types).
                    self.memo.borrow_mut().insert(name, (Arc::clone(&out.tree), out.size));
                    out.lowest = usize::MAX;
                }
                out
            }
            syn::Type::Tuple(t) if t.elems.is_empty() => Unfolded::leaf(Layout::Primitive("()".into())),
            other => Unfolded::leaf(Layout::Opaque(render_type(other))),
        }
    }
}

/// Unfolded nodes one parameter's layout may have; past it the parameter is opaque. The
/// largest in the pinned toolkits is far below it.
pub const MAX_LAYOUT_NODES: u64 = 1 << 16;

/// One parameter's walk: the named types being described, outermost first, and the nodes
/// unfolded so far.
struct Walk {
    visiting: Vec<String>,
    spent: u64,
}

/// A subtree and what its sharing depends on.
struct Unfolded {
    tree: Arc<Layout>,
    /// The outermost entry of [`Walk::visiting`] that a [`Layout::Cycle`] below refers to;
    /// `usize::MAX` for none.
    lowest: usize,
    /// Nodes, shared subtrees counted in full.
    size: u64,
    /// Cut by the depth or size limit: depends on where the walk started.
    cut: bool,
}

impl Unfolded {
    fn leaf(l: Layout) -> Unfolded {
        Unfolded { tree: Arc::new(l), lowest: usize::MAX, size: 1, cut: false }
    }

    fn wrap(self, f: impl FnOnce(Arc<Layout>) -> Layout) -> Unfolded {
        Unfolded { tree: Arc::new(f(self.tree)), size: self.size + 1, ..self }
    }

    fn absorb(&mut self, child: &Unfolded) {
        self.lowest = self.lowest.min(child.lowest);
        self.size += child.size;
        self.cut |= child.cut;
    }
}

fn named_fields<'a>(fields: impl Iterator<Item = &'a syn::Field>) -> Vec<(String, syn::Type)> {
    fields
        .filter_map(|f| Some((f.ident.as_ref()?.to_string(), f.ty.clone())))
        .collect()
}

/// x86-64 meaning of the primitive names bindgen uses.
fn primitive(name: &str) -> Option<&'static str> {
    Some(match name {
        "c_char" | "c_schar" | "i8" => "i8",
        "c_uchar" | "u8" => "u8",
        "c_short" | "i16" => "i16",
        "c_ushort" | "u16" => "u16",
        "c_int" | "i32" => "i32",
        "c_uint" | "u32" => "u32",
        "c_long" | "c_longlong" | "i64" | "isize" => "i64",
        "c_ulong" | "c_ulonglong" | "u64" | "usize" => "u64",
        "c_float" | "f32" => "f32",
        "c_double" | "f64" => "f64",
        "c_void" => "void",
        "bool" => "bool",
        "i128" => "i128",
        "u128" => "u128",
        _ => return None,
    })
}
