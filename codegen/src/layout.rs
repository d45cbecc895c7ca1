//! What a parameter's ABI depends on, as far as drift goes: the layout tree of every type a
//! parameter reaches (read from bindgen's output and its layout tests), and the rule that
//! says when two such trees differ in a way a caller would notice. The model decides which
//! declarations to compare; what counts as drift is only here. A leaf: it imports nothing of
//! the pipeline but [`crate::syntax`].
//!
//! **Drift**: a PFN keeps its name across toolkits, but the types behind its parameters may
//! change. Between two consecutive toolkits that declare it, drift is a changed parameter list, or
//! a record reached from a parameter through pointers, typedefs and struct fields that changes
//! size or alignment, or a non-padding field present in both that moves. Union members and fields
//! carved out of `reserved` bytes are not drift. Found: 11.7 -> 11.8 `CUstreamAttrValue_v1` (32 ->
//! 64 bytes), 12.9 -> 13.0 `CUtensorMap` (align 64 -> 128), 13.0 -> 13.1 `CUdevResource` (align
//! 4 -> 8).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::syntax::render_type;

/// What a parameter's ABI depends on, as far as drift goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// A primitive, by its x86-64 meaning (`u32`, `i64`, `void`).
    Primitive(String),
    Pointer(Arc<Layout>),
    Array(Arc<Layout>, u64),
    /// A struct with its fields (name, offset, layout), or a union (members not kept: only
    /// its size and alignment are its ABI).
    Record {
        name: String,
        union: bool,
        size: u64,
        align: u64,
        fields: Vec<(String, u64, Arc<Layout>)>,
    },
    /// A function pointer (callbacks are not followed).
    Function,
    /// A type declared but not defined, or one we cannot see into.
    Opaque(String),
    /// A type already being described further up (a self-referential struct).
    Cycle,
}

/// A parameter's layout tree and a one-line description of it for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamLayout {
    pub tree: Arc<Layout>,
    pub summary: String,
}

/// Where two layouts of one parameter differ in a way that matters to a caller compiled
/// against the old one: a size or alignment of a record reached through pointers and struct
/// fields, a field (present in both, not padding) that moved, a pointer that became a value, a changed
/// array length at the top. Added struct fields that fit the old size, changed union
/// members and renamed types are not drift.
pub fn layout_drift(old: &Layout, new: &Layout) -> Option<String> {
    drift_at(old, new, 0, true)
}

fn drift_at(old: &Layout, new: &Layout, depth: usize, top: bool) -> Option<String> {
    if depth > 48 {
        return None;
    }
    use Layout::*;
    match (old, new) {
        (Pointer(a), Pointer(b)) => drift_at(a, b, depth + 1, top),
        (Array(a, n), Array(b, m)) => {
            if top && n != m {
                return Some(format!("array length {n} became {m}"));
            }
            drift_at(a, b, depth + 1, false)
        }
        (Primitive(a), Primitive(b)) => (top && a != b).then(|| format!("{a} became {b}")),
        (
            Record { name: na, union: ua, size: sa, align: aa, fields: fa },
            Record { name: nb, union: ub, size: sb, align: ab, fields: fb },
        ) => {
            if ua != ub || sa != sb || aa != ab {
                let kind = |u: &bool| if *u { "union" } else { "struct" };
                return Some(format!(
                    "{} {na} ({sa} bytes, align {aa}) became {} {nb} ({sb} bytes, align {ab})",
                    kind(ua),
                    kind(ub)
                ));
            }
            // Padding (`reserved`, `_internal_padding`) shrinks when a field is carved out of
            // it; that is how CUDA grows a struct without breaking its ABI.
            for (f, off, l) in fa.iter().filter(|(f, _, _)| !is_padding(f)) {
                let Some((_, off2, l2)) = fb.iter().find(|(g, _, _)| g == f) else { continue };
                if off != off2 {
                    return Some(format!("field {nb}.{f} moved from offset {off} to {off2}"));
                }
                if let Some(why) = drift_at(l, l2, depth + 1, false) {
                    return Some(format!("{nb}.{f}: {why}"));
                }
            }
            None
        }
        (Function, Function) | (Cycle, _) | (_, Cycle) | (Opaque(_), Opaque(_)) => None,
        (a, b) => top.then(|| format!("{} became {}", kind_name(a), kind_name(b))),
    }
}

fn is_padding(field: &str) -> bool {
    field.starts_with("reserved") || field.starts_with('_')
}

fn kind_name(l: &Layout) -> &'static str {
    match l {
        Layout::Primitive(_) => "a primitive",
        Layout::Pointer(_) => "a pointer",
        Layout::Array(..) => "an array",
        Layout::Record { union: true, .. } => "a union",
        Layout::Record { .. } => "a struct",
        Layout::Function => "a function pointer",
        Layout::Opaque(_) => "an opaque type",
        Layout::Cycle => "a recursive type",
    }
}

enum Def {
    Alias(syn::Type),
    Record { union: bool, fields: Vec<(String, syn::Type)> },
    Newtype(syn::Type),
}

/// Just enough of bindgen's output to describe layouts: aliases, structs, unions, newtype
/// enums, and the sizes, alignments and offsets of bindgen's layout tests.
pub struct TypeTable {
    defs: BTreeMap<String, Def>,
    size: BTreeMap<String, u64>,
    align: BTreeMap<String, u64>,
    offset: BTreeMap<(String, String), u64>,
    /// Named types whose tree is the same wherever it is reached, with its unfolded size.
    memo: std::cell::RefCell<BTreeMap<String, (Arc<Layout>, u64)>>,
}

impl TypeTable {
    pub fn new(items: &[syn::Item]) -> TypeTable {
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
            let Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(label), .. })) = label.elems.first() else {
                continue;
            };
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

    /// A parameter's layout tree, capped at [`MAX_LAYOUT_NODES`], and its summary.
    pub fn param_layout(&self, ty: &syn::Type) -> ParamLayout {
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
    fields.filter_map(|f| Some((f.ident.as_ref()?.to_string(), f.ty.clone()))).collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_rules() {
        let rec = |name: &str, size, align, fields: Vec<(&str, u64, Arc<Layout>)>| {
            Arc::new(Layout::Record {
                name: name.into(),
                union: false,
                size,
                align,
                fields: fields.into_iter().map(|(f, o, l)| (f.to_string(), o, l)).collect(),
            })
        };
        let int = || Arc::new(Layout::Primitive("i32".into()));
        let ptr = |l: Arc<Layout>| Layout::Pointer(l);
        let a = rec("A", 64, 8, vec![("x", 0, int()), ("reserved", 4, int())]);
        // A field carved out of the reserved bytes: no drift.
        let b = rec("A", 64, 8, vec![("x", 0, int()), ("y", 4, int()), ("reserved", 8, int())]);
        assert_eq!(layout_drift(&ptr(a.clone()), &ptr(b)), None);
        // Growth behind a pointer: drift.
        let c = rec("A", 128, 8, vec![("x", 0, int())]);
        assert!(layout_drift(&ptr(a.clone()), &ptr(c)).unwrap().contains("64 bytes"));
        // A moved field: drift.
        let d = rec("A", 64, 8, vec![("x", 8, int())]);
        assert!(layout_drift(&ptr(a), &ptr(d)).unwrap().contains("moved from offset 0 to 8"));
    }
}
