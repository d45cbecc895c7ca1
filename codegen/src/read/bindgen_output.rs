//! Reading bindgen's output: every `PFN_<symbol>_v<version>[_ptds|_ptsz]` typedef with its
//! signature, and the layout of every type a parameter reaches (for ABI drift).
//!
//! Input is bindgen's Rust text, so this is syn, not C: the parser never builds tokens for
//! output and never looks at the headers (that is [`super::header_text`]).

use std::collections::BTreeMap;

use quote::ToTokens;

use crate::layout::{ParamLayout, TypeTable};
use crate::model::Param;
use crate::read::clang::SourceLine;
use crate::syntax::RustType;

use crate::names::{split_pfn_name, NameError};

/// One versioned typedef as declared by one toolkit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typedef {
    pub pfn: String,
    pub symbol: String,
    pub version: u32,
    pub variant: Option<crate::names::Variant>,
    pub params: Vec<Param>,
    /// The return type; `()` for void.
    pub returns: RustType,
    pub location: Option<SourceLine>,
    /// Per parameter, a digest of the full layout it reaches and a one-line description.
    pub layouts: Vec<ParamLayout>,
}

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
    /// Every item that is not a `PFN_` typedef: the CUDA types (without their comments).
    pub types: syn::File,
    /// The headers' comments, taken off the items.
    pub docs: crate::model::CDocs,
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
    let docs = super::doc_comments::take_docs(&mut file);
    if let Some(tokens) = find_verbatim(&mut file) {
        return Err(format!(
            "not bindgen's output: syn keeps `{tokens}` only as unparsed tokens, which cannot be printed back"
        ));
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
        let f = fn_pointer(&t.ty)
            .ok_or_else(|| format!("`{name}` is not a function pointer type: `{}`", t.ty.to_token_stream()))?;
        let mut params = Vec::new();
        let mut layouts = Vec::new();
        for (i, arg) in f.inputs.iter().enumerate() {
            let name = arg.name.as_ref().map(|(n, _)| n.to_string()).unwrap_or_else(|| format!("arg{}", i + 1));
            params.push(Param { name, ty: RustType::new(&arg.ty) });
            layouts.push(table.param_layout(&arg.ty));
        }
        if f.variadic.is_some() {
            return Err(format!("`{name}` is variadic, which no CUDA entry point is"));
        }
        let returns = match &f.output {
            syn::ReturnType::Default => RustType::unit(),
            syn::ReturnType::Type(_, ty) => RustType::new(ty),
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
    Ok(ParsedOutput {
        typedefs,
        unversioned,
        malformed,
        unnameable,
        types: syn::File { shebang: None, attrs: file.attrs, items: others },
        docs,
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
        check!(
            visit_type_param_bound_mut,
            syn::TypeParamBound,
            visit_mut::visit_type_param_bound_mut,
            syn::TypeParamBound::Verbatim
        );
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

/// What a C program of one stream mode can call: per C name, the function it names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CNames {
    /// C name (`cuCtxCreate`) to the declared function it expands to (`cuCtxCreate_v4`).
    pub names: BTreeMap<String, String>,
    /// Declared functions no candidate reached (the text reader missed a spelling).
    pub unnamed: Vec<String>,
}

/// Reads a [`crate::read::clang::run_c_names`] output: the declared `cu*` functions and the struct
/// whose fields pair each candidate with its expansion. A candidate that expands to no
/// declared function (a macro of something else, a name in a disabled branch) is no C name.
pub fn parse_c_names(rust: &str) -> Result<CNames, String> {
    use crate::read::clang::{C_NAMES_SEPARATOR, C_NAMES_STRUCT};
    // Read as text, not with syn: the output is bindgen's declarations of some 700 functions
    // in each of 68 runs, of which only the names matter; a syn parse of them all cost
    // seconds of every run. `fn NAME (` declares a function (a function pointer type is
    // `fn (`), and the struct's fields are the only identifiers with the separator.
    let ident_at = |i: usize| -> &str {
        let end = rust[i..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(rust.len(), |e| i + e);
        &rust[i..end]
    };
    let mut declared = std::collections::BTreeSet::new();
    for (at, _) in rust.match_indices("fn ") {
        if at > 0 && rust[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let name = ident_at(at + 3);
        if name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            declared.insert(name.to_owned());
        }
    }
    let mut pairs = Vec::new();
    let mut from = 0;
    while let Some(found) = rust[from..].find(C_NAMES_SEPARATOR) {
        let at = from + found;
        let start = rust[..at].rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |s| s + 1);
        let field = ident_at(start);
        from = start + field.len().max(1);
        if let Some((c, expanded)) = field.split_once(C_NAMES_SEPARATOR) {
            pairs.push((c.to_owned(), expanded.to_owned()));
        }
    }
    if !rust.contains(C_NAMES_STRUCT) && !declared.is_empty() {
        return Err(format!("bindgen's C-name output has no {C_NAMES_STRUCT}"));
    }
    if pairs.is_empty() && !declared.is_empty() {
        return Err(format!("bindgen's C-name output has no {C_NAMES_STRUCT} fields"));
    }
    let names: BTreeMap<String, String> = pairs.into_iter().filter(|(_, e)| declared.contains(e)).collect();
    let reached: std::collections::BTreeSet<&String> = names.values().collect();
    let unnamed = declared.iter().filter(|d| !reached.contains(d)).cloned().collect();
    Ok(CNames { names, unnamed })
}

#[cfg(test)]
mod c_name_tests {
    use super::*;

    #[test]
    fn c_names_pair_candidates_with_declared_functions() {
        let rust = "extern \"C\" { pub fn cuCtxCreate_v4 (pctx : * mut CUcontext , cb : :: core :: option :: Option < unsafe extern \"C\" fn (x : i32) > , dev : CUdevice) -> CUresult ; } \
                    extern \"C\" { pub fn cuInit (Flags : :: core :: ffi :: c_uint) -> CUresult ; } \
                    extern \"C\" { pub fn cuHidden_v2 () -> CUresult ; } \
                    # [repr (C)] pub struct cuda_sys_gen_c_names { pub unused : :: core :: ffi :: c_int , \
                    pub cuCtxCreate__expands_to__cuCtxCreate_v4 : :: core :: ffi :: c_int , \
                    pub cuInit__expands_to__cuInit : :: core :: ffi :: c_int , \
                    pub CU_STREAM_LEGACY__expands_to__CU_STREAM_LEGACY : :: core :: ffi :: c_int , }";
        let read = parse_c_names(rust).unwrap();
        let names: Vec<(&str, &str)> = read.names.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(names, [("cuCtxCreate", "cuCtxCreate_v4"), ("cuInit", "cuInit")]);
        assert_eq!(read.unnamed, ["cuHidden_v2"], "a function no candidate reaches; `fn (` is a type, not a function");
        assert!(parse_c_names("extern \"C\" { pub fn cuInit () ; }").is_err(), "functions without the struct");
    }
}
