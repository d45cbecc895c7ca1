//! One pass over a file's tokens: every identifier and string that may name an entry point,
//! with the path written before it; every `use` and every item a program binds under a name;
//! `mod x;`, `include!`-family calls and string literals that hold PTX.
//!
//! Tokens, not syntax: a macro's body and its invocations are tokens too, so nothing a macro
//! does with a name can hide it. The pass is linear in the tokens (each token is looked at a
//! bounded number of times: once, plus a look back of at most [`MAX_PREFIX`] path segments).

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// How many path segments before a name are kept (`a::b::c::name` keeps `c`, `b`, `a`).
const MAX_PREFIX: usize = 8;

/// A name in the sources.
#[derive(Debug, Clone)]
pub(super) struct Hit {
    /// The identifier (without `r#`), or a string's value (without a trailing NUL).
    pub name: String,
    pub line: usize,
    /// The path written before it, nearest segment last (`["aliases", "cuda_12_9"]`), with
    /// whether it starts with `::`; empty for a bare name or a string.
    pub prefix: Vec<String>,
    pub leading: bool,
    /// The macro whose arguments it opens (`cu` for `cu!(cuInit(0))`).
    pub opens_macro: Option<String>,
    /// A string literal rather than an identifier.
    pub string: bool,
}

impl Hit {
    /// How the source spells it: `cu!(cuInit)`, `api::ptds::cuCtxCreate`, `"cuInit"`.
    pub fn spelled(&self) -> String {
        if self.string {
            return format!("{:?}", self.name);
        }
        if let Some(m) = &self.opens_macro {
            return format!("{m}!({})", self.name);
        }
        let mut s = if self.leading { "::".to_owned() } else { String::new() };
        for p in &self.prefix {
            s.push_str(p);
            s.push_str("::");
        }
        s.push_str(&self.name);
        s
    }
}

/// `include!`, `include_str!` or `include_bytes!` and what it names.
#[derive(Debug, Clone)]
pub(super) struct Include {
    pub line: usize,
    /// `include`, `include_str` or `include_bytes`.
    pub kind: String,
    pub target: IncludeTarget,
}

#[derive(Debug, Clone)]
pub(super) enum IncludeTarget {
    /// Relative to the including file's folder.
    Relative(String),
    /// `concat!(env!("CARGO_MANIFEST_DIR"), "...")`: relative to the package root.
    ManifestDir(String),
    /// Anything else (`env!("OUT_DIR")`, a macro): the tokens, as written.
    Unreadable(String),
}

/// `mod x;` (a file module), with its `#[path]` if it has one.
#[derive(Debug, Clone)]
pub(super) struct ModDecl {
    pub name: String,
    pub path_attr: Option<String>,
    /// `#[cfg_attr(.., path = "x.rs")]`: files it may be instead, by the build's configuration.
    pub cfg_paths: Vec<String>,
    /// The inline modules it is declared in (`mod gpu { mod launch; }`: `["gpu"]`).
    pub inline: Vec<String>,
    pub line: usize,
}

/// A lookup by name that the scan reads the version of: `get_raw(c"cuX", 12050, ..)`,
/// `cuGetProcAddress("cuX", &mut p, 12050, ..)`. `version` is `None` where it is a value.
#[derive(Debug, Clone)]
pub(super) struct Lookup {
    pub line: usize,
    pub function: String,
    pub symbol: Option<String>,
    pub version: Option<u32>,
}

/// One name a `use` declaration binds: the path it names (`["cuda_driver_pfn", "aliases"]`)
/// and the name it is bound under (`None` for a glob).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct UseBinding {
    pub path: Vec<String>,
    pub name: Option<String>,
}

/// Everything [`scan`] found in one file.
#[derive(Debug, Default)]
pub(super) struct Scanned {
    pub hits: Vec<Hit>,
    pub uses: Vec<UseBinding>,
    /// Names the program declares itself (`mod x`, `struct x`, `let x`, `extern crate .. as x`).
    pub bound: Vec<String>,
    pub mods: Vec<ModDecl>,
    pub includes: Vec<Include>,
    /// String literals that look like PTX: line and text.
    pub ptx: Vec<(usize, String)>,
    /// Macros that build identifiers out of pieces (`paste!`, `concat_idents!`): line, name.
    pub pasted: Vec<(usize, String)>,
    /// Lookups by name with their versions.
    pub lookups: Vec<Lookup>,
    /// Strings naming kernel files the program reads at run time (`"k.ptx"`): line, text.
    pub runtime_files: Vec<(usize, String)>,
    /// Walks of the registry's table (`ENTRIES`, `visit_entries`): line, name.
    pub tables: Vec<(usize, String)>,
    /// Lines of `transmute` calls (a pointer used as a type of the program's own).
    pub transmutes: Vec<usize>,
}

/// The registry's table and what walks it: which entries a program that uses them looks up is
/// known only at run time. `doctor` is the crate's module that looks every entry up
/// (`doctor::main()`, `doctor::check`): a name `doctor` of another meaning only makes the floor
/// "at least", never too low.
const TABLES: &[&str] = &["ENTRIES", "visit_entries", "of_symbol", "doctor"];

/// Functions that look an entry up by a name and a version given as arguments.
const LOOKUPS: &[&str] = &["get_raw", "cuGetProcAddress", "cuGetProcAddress_v2", "cudaGetDriverEntryPointByVersion"];

/// Keywords after which an identifier is a name the program declares.
/// (`as` only outside `use`, where [`use_tree`] reads it.)
const BINDERS: &[&str] = &["mod", "struct", "enum", "union", "trait", "type", "const", "static", "let", "as", "fn"];

/// Reads `text` (a whole `.rs` file). `wanted` says which identifiers and strings to report
/// as hits; every other identifier is only looked at for `use` and bindings.
pub(super) fn scan(text: &str, wanted: &dyn Fn(&str) -> bool) -> Result<Scanned, (usize, usize, String)> {
    let stream: TokenStream = text.parse().map_err(|e: proc_macro2::LexError| {
        let at = e.span().start();
        (at.line, at.column + 1, e.to_string())
    })?;
    let mut out = Scanned::default();
    // Each group is read as a list; a brace group right after `::` (a `use` tree, or a path
    // in a macro) inherits the path before it.
    let mut stack = vec![Level { tokens: stream.into_iter().collect(), ..Level::default() }];
    while let Some(level) = stack.pop() {
        read_level(&level, wanted, &mut out, &mut stack);
    }
    Ok(out)
}

/// A group's tokens, and what it inherits from around it.
#[derive(Default)]
struct Level {
    tokens: Vec<TokenTree>,
    /// The path before a brace group after `::`, and whether it starts with `::`.
    inherited: Vec<String>,
    leading: bool,
    /// The macro whose arguments this group holds.
    opened_by: Option<String>,
    /// Inside a `use` declaration.
    in_use: bool,
    /// The inline modules the group is in.
    mod_path: Vec<String>,
}

fn ident_text(t: &TokenTree) -> Option<String> {
    match t {
        TokenTree::Ident(i) => {
            let s = i.to_string();
            Some(s.strip_prefix("r#").map(str::to_owned).unwrap_or(s))
        }
        _ => None,
    }
}

fn is_punct(t: Option<&TokenTree>, c: char) -> bool {
    matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c)
}

/// Whether `tokens[i-2..i]` is `::`.
fn colons_before(tokens: &[TokenTree], i: usize) -> bool {
    i >= 2
        && matches!(tokens.get(i - 2), Some(TokenTree::Punct(p)) if p.as_char() == ':' && p.spacing() == Spacing::Joint)
        && is_punct(tokens.get(i - 1), ':')
}

/// The path written before `tokens[i]`: segments nearest last, and whether it starts with `::`.
/// An element of a brace group after `::` (a `use` tree) starts with the path before the group.
fn prefix_of(tokens: &[TokenTree], i: usize, inherited: &[String], inherited_leading: bool) -> (Vec<String>, bool) {
    let mut segments = Vec::new();
    let mut j = i;
    let mut leading = false;
    while colons_before(tokens, j) {
        match j.checked_sub(3).and_then(|k| tokens.get(k)).and_then(ident_text) {
            Some(seg) if segments.len() < MAX_PREFIX => {
                segments.push(seg);
                j -= 3;
            }
            Some(_) => break,
            None => {
                // `::name` at the start of a path; not after a generic (`Vec::<u8>::new`).
                leading = j == 2 || !is_punct(tokens.get(j - 3), '>');
                j -= 2;
                break;
            }
        }
    }
    segments.reverse();
    let starts_element = j == 0 || is_punct(tokens.get(j - 1), ',');
    if starts_element && !leading && !inherited.is_empty() {
        let mut all = inherited.to_vec();
        all.extend(segments);
        return (all, inherited_leading);
    }
    (segments, leading)
}

fn string_value(lit: &proc_macro2::Literal) -> Option<String> {
    let tree = TokenStream::from(TokenTree::Literal(lit.clone()));
    match syn::parse2::<syn::Lit>(tree).ok()? {
        syn::Lit::Str(s) => Some(s.value()),
        syn::Lit::ByteStr(b) => String::from_utf8(b.value()).ok(),
        syn::Lit::CStr(c) => c.value().into_string().ok(),
        _ => None,
    }
}

fn read_level(level: &Level, wanted: &dyn Fn(&str) -> bool, out: &mut Scanned, stack: &mut Vec<Level>) {
    let tokens = &level.tokens[..];
    let (inherited, inherited_leading, opened_by) = (&level.inherited[..], level.leading, level.opened_by.as_deref());
    let in_use_group = level.in_use;
    let mut use_end = 0;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => {
                let (inherit, leading) = if g.delimiter() == Delimiter::Brace && colons_before(tokens, i) {
                    prefix_of(tokens, i, inherited, inherited_leading)
                } else {
                    (Vec::new(), false)
                };
                // `name!( .. )`: the macro this group holds the arguments of.
                let opener = if is_punct(i.checked_sub(1).and_then(|k| tokens.get(k)), '!') {
                    i.checked_sub(2).and_then(|k| tokens.get(k)).and_then(ident_text)
                } else {
                    None
                };
                if let Some(m) = &opener {
                    macro_call(m, g, tokens, i, wanted, out);
                }
                if g.delimiter() == Delimiter::Bracket {
                    byte_array(g, out);
                }
                // `mod gpu { .. }`: the `mod x;` inside it are files of `gpu/`.
                let mut mod_path = level.mod_path.clone();
                if g.delimiter() == Delimiter::Brace
                    && ident_text_at(tokens, i.wrapping_sub(2)).as_deref() == Some("mod")
                {
                    mod_path.extend(i.checked_sub(1).and_then(|k| tokens.get(k)).and_then(ident_text));
                }
                stack.push(Level {
                    tokens: g.stream().into_iter().collect(),
                    inherited: inherit,
                    leading,
                    opened_by: opener,
                    in_use: in_use_group || i < use_end,
                    mod_path,
                });
            }
            TokenTree::Ident(id) => {
                let name = ident_text(&tokens[i]).unwrap_or_default();
                let line = id.span().start().line;
                let before = i.checked_sub(1).and_then(|k| tokens.get(k)).and_then(ident_text);
                let in_use = i < use_end || in_use_group;
                let binds = before.as_deref().is_some_and(|b| BINDERS.contains(&b) && !(in_use && b == "as"))
                    && before.as_deref() != Some("crate")
                    || (before.as_deref() == Some("mut")
                        && i.checked_sub(2).and_then(|k| tokens.get(k)).and_then(ident_text).as_deref() == Some("let"))
                    || (is_punct(i.checked_sub(1).and_then(|k| tokens.get(k)), '!')
                        && i.checked_sub(2).and_then(|k| tokens.get(k)).and_then(ident_text).as_deref()
                            == Some("macro_rules"));
                if binds {
                    out.bound.push(name.clone());
                }
                if name == "use" && !colons_before(tokens, i) {
                    let end = (i + 1..tokens.len()).find(|&k| is_punct(tokens.get(k), ';')).unwrap_or(tokens.len());
                    use_tree(&tokens[i + 1..end], &mut Vec::new(), &mut out.uses);
                    // Its names are bindings, not uses of entries, except for what they name:
                    // the hits inside it are still read (a `use` of an entry counts).
                    use_end = end;
                }
                if name == "crate" && before.as_deref() == Some("extern") {
                    // `extern crate x as y;`: y is x.
                    if let Some(x) = tokens.get(i + 1).and_then(ident_text) {
                        let renamed = (ident_text_at(tokens, i + 2).as_deref() == Some("as"))
                            .then(|| ident_text_at(tokens, i + 3))
                            .flatten();
                        out.uses.push(UseBinding { path: vec![x.clone()], name: Some(renamed.unwrap_or(x)) });
                    }
                }
                if name == "mod" {
                    if let (Some(n), true) = (tokens.get(i + 1).and_then(ident_text), is_punct(tokens.get(i + 2), ';'))
                    {
                        out.mods.push(ModDecl {
                            name: n,
                            path_attr: path_attribute(tokens, i),
                            cfg_paths: cfg_path_attributes(tokens, i),
                            inline: level.mod_path.clone(),
                            line,
                        });
                    }
                }
                let declares = matches!(before.as_deref(), Some("fn" | "static" | "const"));
                if matches!(name.as_str(), "transmute" | "transmute_copy") && !declares {
                    out.transmutes.push(line);
                }
                if TABLES.contains(&name.as_str()) && !declares {
                    out.tables.push((line, name.clone()));
                }
                if LOOKUPS.contains(&name.as_str()) && before.as_deref() != Some("fn") {
                    if let Some(args) = call_args(tokens, i) {
                        out.lookups.push(lookup_of(&name, line, &args));
                    }
                }
                if wanted(&name) {
                    let (prefix, leading) = prefix_of(tokens, i, inherited, inherited_leading);
                    let opens_macro = if i == 0 { opened_by.map(str::to_owned) } else { None };
                    out.hits.push(Hit { name, line, prefix, leading, opens_macro, string: false });
                }
            }
            TokenTree::Literal(lit) => {
                if let Some(value) = string_value(lit) {
                    let line = lit.span().start().line;
                    let bare = value.strip_suffix('\0').unwrap_or(&value);
                    if wanted(bare) {
                        out.hits.push(Hit {
                            name: bare.to_owned(),
                            line,
                            prefix: Vec::new(),
                            leading: false,
                            opens_macro: None,
                            string: true,
                        });
                    }
                    let file = value.trim_end_matches('\0');
                    let reads_file = [".ptx", ".cubin", ".fatbin"].iter().any(|x| file.ends_with(x));
                    let included = opened_by.is_some_and(|m| m.starts_with("include") || m == "concat");
                    if reads_file && !included {
                        out.runtime_files.push((line, file.to_owned()));
                    }
                    if super::kernels::is_ptx(&value) {
                        out.ptx.push((line, value));
                    }
                }
            }
            TokenTree::Punct(_) => {}
        }
        i += 1;
    }
}

fn ident_text_at(tokens: &[TokenTree], i: usize) -> Option<String> {
    tokens.get(i).and_then(ident_text)
}

/// The bindings of a `use` tree (the tokens after `use`, up to its `;`), each path after
/// `prefix`: `a::b::{c, d as e, f::*}` binds `c`, `e` (to `a::b::d`) and a glob of `a::b::f`.
fn use_tree(tokens: &[TokenTree], prefix: &mut Vec<String>, out: &mut Vec<UseBinding>) {
    let depth = prefix.len();
    let mut k = 0;
    // A leading `::` (2018: a crate name follows).
    while is_punct(tokens.get(k), ':') {
        k += 1;
    }
    while k < tokens.len() {
        match &tokens[k] {
            TokenTree::Ident(_) => {
                let seg = ident_text(&tokens[k]).unwrap_or_default();
                if colons_before(tokens, k + 3) {
                    prefix.push(seg);
                    k += 3;
                    continue;
                }
                let mut path = prefix.clone();
                path.push(seg.clone());
                let name = if ident_text_at(tokens, k + 1).as_deref() == Some("as") {
                    k += 2;
                    if is_punct(tokens.get(k), '$') {
                        // `as $name` in a macro's body: a name the macro's caller chooses.
                        k += 1;
                        format!("${}", ident_text_at(tokens, k).unwrap_or_default())
                    } else {
                        ident_text_at(tokens, k).unwrap_or(seg)
                    }
                } else if seg == "self" {
                    path.pop();
                    path.last().cloned().unwrap_or(seg)
                } else {
                    seg
                };
                out.push(UseBinding { path, name: Some(name) });
                k += 1;
            }
            TokenTree::Punct(p) if p.as_char() == '*' => {
                out.push(UseBinding { path: prefix.clone(), name: None });
                k += 1;
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                for part in inner.split(|t| is_punct(Some(t), ',')) {
                    use_tree(part, &mut prefix.clone(), out);
                }
                k += 1;
            }
            TokenTree::Punct(p) if p.as_char() == ',' => {
                prefix.truncate(depth);
                k += 1;
            }
            _ => k += 1,
        }
    }
    prefix.truncate(depth);
}

/// `#[cfg_attr(.., path = "x.rs")]` right before `mod`: the files it may name.
fn cfg_path_attributes(tokens: &[TokenTree], mod_at: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut k = mod_at;
    while k > 0 {
        k -= 1;
        match &tokens[k] {
            TokenTree::Ident(i) if *i == "pub" => {}
            TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => {}
            TokenTree::Group(g)
                if g.delimiter() == Delimiter::Bracket
                    && is_punct(k.checked_sub(1).and_then(|j| tokens.get(j)), '#') =>
            {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                if let [name, TokenTree::Group(args)] = inner.as_slice() {
                    if ident_text(name).as_deref() == Some("cfg_attr") {
                        let args: Vec<TokenTree> = args.stream().into_iter().collect();
                        for w in args.windows(3) {
                            if ident_text(&w[0]).as_deref() == Some("path") && is_punct(Some(&w[1]), '=') {
                                if let TokenTree::Literal(l) = &w[2] {
                                    out.extend(string_value(l));
                                }
                            }
                        }
                    }
                }
                k -= 1;
            }
            _ => break,
        }
    }
    out
}

/// `#[path = "x.rs"]` right before `mod` (through `pub`, `pub(crate)` and other attributes).
fn path_attribute(tokens: &[TokenTree], mod_at: usize) -> Option<String> {
    let mut k = mod_at;
    while k > 0 {
        k -= 1;
        match &tokens[k] {
            TokenTree::Ident(i) if *i == "pub" => {}
            TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => {}
            TokenTree::Group(g)
                if g.delimiter() == Delimiter::Bracket
                    && is_punct(k.checked_sub(1).and_then(|j| tokens.get(j)), '#') =>
            {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                if inner.len() == 3 && ident_text(&inner[0]).as_deref() == Some("path") && is_punct(inner.get(1), '=') {
                    if let TokenTree::Literal(l) = &inner[2] {
                        return string_value(l);
                    }
                }
                k -= 1;
            }
            _ => return None,
        }
    }
    None
}

/// The argument group of a call of the function at `tokens[at]` (`f(..)`, `f::<T>(..)`), split
/// at its top-level commas.
fn call_args(tokens: &[TokenTree], at: usize) -> Option<Vec<Vec<TokenTree>>> {
    let mut k = at + 1;
    // A turbofish: `::<` .. `>`, a few tokens at most.
    if is_punct(tokens.get(k), ':') {
        let end = (k..tokens.len().min(k + 16)).find(|&j| matches!(tokens.get(j), Some(TokenTree::Group(_))))?;
        k = end;
    }
    match tokens.get(k) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            Some(inner.split(|t| is_punct(Some(t), ',')).map(<[TokenTree]>::to_vec).collect())
        }
        _ => None,
    }
}

/// A lookup's symbol (its first string argument) and version (an integer literal argument of
/// 1000 or more; `None` where no argument is one).
fn lookup_of(function: &str, line: usize, args: &[Vec<TokenTree>]) -> Lookup {
    let symbol = args.iter().find_map(|a| match a.as_slice() {
        [TokenTree::Literal(l)] => string_value(l).map(|v| v.trim_end_matches('\0').to_owned()),
        _ => None,
    });
    let version = args.iter().find_map(|a| match a.as_slice() {
        [TokenTree::Literal(l)] => {
            // `12050`, `12_050`, `12050u32`, `12050_i32`.
            let digits: String = l.to_string().replace('_', "").chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok().filter(|&v| v >= 1000)
        }
        _ => None,
    });
    Lookup { line, function: function.to_owned(), symbol, version }
}

/// `[0x2e, 0x76, ...]`: an array of byte literals that spells PTX.
fn byte_array(g: &proc_macro2::Group, out: &mut Scanned) {
    let mut bytes = Vec::new();
    for t in g.stream() {
        match t {
            TokenTree::Literal(l) => {
                let text = l.to_string().replace('_', "");
                let text = text.trim_end_matches("u8");
                let v = if let Some(h) = text.strip_prefix("0x") {
                    u8::from_str_radix(h, 16).ok()
                } else if text.starts_with("b'") {
                    match syn::parse2::<syn::Lit>(TokenStream::from(TokenTree::Literal(l.clone()))) {
                        Ok(syn::Lit::Byte(b)) => Some(b.value()),
                        _ => None,
                    }
                } else {
                    text.parse::<u8>().ok()
                };
                match v {
                    Some(b) => bytes.push(b),
                    None => return,
                }
            }
            TokenTree::Punct(p) if p.as_char() == ',' => {}
            _ => return,
        }
    }
    if bytes.len() >= 16 {
        let text = String::from_utf8_lossy(&bytes);
        if super::kernels::is_ptx(&text) {
            let line = g.span().start().line;
            out.ptx.push((line, text.into_owned()));
        }
    }
}

/// What a macro call at `tokens[at]` (its argument group) means for the scan.
fn macro_call(
    name: &str,
    args: &proc_macro2::Group,
    tokens: &[TokenTree],
    at: usize,
    wanted: &dyn Fn(&str) -> bool,
    out: &mut Scanned,
) {
    let line = tokens[at - 2].span().start().line;
    match name {
        // `concat!("cu", "CtxCreate")`, a PTX module in pieces: read where every piece is a
        // literal; listed as unread where a piece is not and the literal ones look like a name
        // or PTX.
        "concat" => {
            let inner: Vec<TokenTree> = args.stream().into_iter().collect();
            let mut value = String::new();
            let mut whole = true;
            for part in inner.split(|t| is_punct(Some(t), ',')) {
                match part {
                    [TokenTree::Literal(l)] => match string_value(l) {
                        Some(v) => value.push_str(&v),
                        None => value.push_str(&l.to_string()),
                    },
                    [] => {}
                    _ => whole = false,
                }
            }
            let bare = value.trim_end_matches('\0');
            if whole {
                if wanted(bare) {
                    out.hits.push(Hit {
                        name: bare.to_owned(),
                        line,
                        prefix: Vec::new(),
                        leading: false,
                        opens_macro: None,
                        string: true,
                    });
                }
                if super::kernels::is_ptx(&value) {
                    out.ptx.push((line, value));
                }
            } else if value.starts_with("cu") || value.contains(".version") {
                out.pasted.push((line, name.to_owned()));
            }
        }
        // `include_ptx!` (the generated crate's) is `include_str!` with a NUL after it.
        "include" | "include_str" | "include_bytes" | "include_ptx" => {
            let inner: Vec<TokenTree> = args.stream().into_iter().collect();
            out.includes.push(Include { line, kind: name.to_owned(), target: include_target(&inner) });
        }
        "paste" | "concat_idents" | "item_with_name" => out.pasted.push((line, name.to_owned())),
        _ => {
            // `[< cu Init >]` in any macro: paste's syntax for a pasted identifier.
            let inner: Vec<TokenTree> = args.stream().into_iter().collect();
            if inner.iter().any(|t| {
                matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket
                && g.stream().into_iter().next().is_some_and(|f| is_punct(Some(&f), '<')))
            }) {
                out.pasted.push((line, name.to_owned()));
            }
        }
    }
}

fn include_target(inner: &[TokenTree]) -> IncludeTarget {
    let written = TokenStream::from_iter(inner.iter().cloned()).to_string();
    if let [TokenTree::Literal(l)] = inner {
        if let Some(p) = string_value(l) {
            return IncludeTarget::Relative(p);
        }
    }
    // concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/k.ptx")
    if let [first, bang, TokenTree::Group(g)] = inner {
        if ident_text(first).as_deref() == Some("concat") && is_punct(Some(bang), '!') {
            let parts: Vec<TokenTree> = g.stream().into_iter().collect();
            if let [env, bang2, TokenTree::Group(var), comma, TokenTree::Literal(rest)] = parts.as_slice() {
                let var: Vec<TokenTree> = var.stream().into_iter().collect();
                let is_manifest_dir = matches!(var.as_slice(), [TokenTree::Literal(v)]
                    if string_value(v).as_deref() == Some("CARGO_MANIFEST_DIR"));
                if ident_text(env).as_deref() == Some("env")
                    && is_punct(Some(bang2), '!')
                    && is_punct(Some(comma), ',')
                    && is_manifest_dir
                {
                    if let Some(rest) = string_value(rest) {
                        return IncludeTarget::ManifestDir(rest);
                    }
                }
            }
        }
    }
    IncludeTarget::Unreadable(written)
}
