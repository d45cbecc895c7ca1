//! What only the header text tells: the `#define PFN_x ...` "latest" aliases, and which lines
//! sit under `#if defined(__CUDA_API_VERSION_INTERNAL)` (the legacy typedefs).
//!
//! This is a reader of preprocessor *lines*, not a preprocessor: comments are dropped,
//! continuations joined, and conditionals tracked only as far as the INTERNAL guard goes.
//! Everything that needs real expansion (renamed typedefs, for instance) comes from clang.

use std::collections::BTreeMap;

use crate::model::AliasTarget;

/// One `#define PFN_<name> ...` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasMacro {
    /// The alias, `PFN_cuMemcpy`.
    pub name: String,
    /// 1-based line of the `#define`.
    pub line: usize,
    pub body: AliasBody,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AliasBody {
    /// `#define PFN_x PFN_x_v3020`: one identifier.
    Direct(String),
    /// `#define PFN_x __API_TYPEDEF_PTDS(PFN_x, 4000, 7000)` (or `_PTSZ`): the default
    /// typedef `PFN_x_v4000`, or under `CUDA_API_PER_THREAD_DEFAULT_STREAM` `PFN_x_v7000_ptds`.
    PerThread { api: String, default_version: u32, per_thread_version: u32, suffix: &'static str },
    /// Anything else: the text, for the warning.
    Other(String),
}

/// A logical source line: comments removed, continuations joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogicalLine {
    /// 1-based line where it starts.
    pub line: usize,
    pub text: String,
}

/// Splits C text into logical lines, dropping `/* */` and `//` comments (string and char
/// literals are respected) and joining `\`-continued lines (a `//` comment continues too).
/// A line ends at `\n`, `\r\n` or a lone `\r`, as in clang, whose line numbers the source
/// locations of typedefs carry. Never fails: odd input (an unterminated comment, say) just
/// ends the text.
pub fn logical_lines(text: &str) -> Vec<LogicalLine> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start = 1usize;
    let mut line = 1usize;
    let mut chars = text.chars().peekable();
    let mut in_block = false;
    let mut quote: Option<char> = None;
    // Whether `c` ends a line; a `\r\n` pair is consumed as one line end.
    fn line_end(c: char, chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> bool {
        if c == '\r' && chars.peek() == Some(&'\n') {
            chars.next();
        }
        c == '\n' || c == '\r'
    }
    fn continuation(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> bool {
        match chars.peek() {
            Some(&n) if n == '\n' || n == '\r' => {
                chars.next();
                line_end(n, chars)
            }
            _ => false,
        }
    }
    while let Some(c) = chars.next() {
        if in_block {
            if line_end(c, &mut chars) {
                line += 1;
            } else if c == '*' && chars.peek() == Some(&'/') {
                chars.next();
                in_block = false;
                cur.push(' ');
            }
            continue;
        }
        if let Some(q) = quote {
            if c == '\\' {
                if continuation(&mut chars) {
                    line += 1;
                } else if let Some(n) = chars.next() {
                    cur.push(c);
                    cur.push(n);
                } else {
                    cur.push(c);
                }
            } else if line_end(c, &mut chars) {
                // An unterminated literal ends with its line.
                line += 1;
                out.push(LogicalLine { line: start, text: std::mem::take(&mut cur) });
                start = line;
                quote = None;
            } else {
                cur.push(c);
                if c == q {
                    quote = None;
                }
            }
            continue;
        }
        match c {
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                in_block = true;
            }
            '/' if chars.peek() == Some(&'/') => {
                while let Some(n) = chars.next() {
                    if n == '\\' && continuation(&mut chars) {
                        line += 1;
                    } else if line_end(n, &mut chars) {
                        line += 1;
                        break;
                    }
                }
                out.push(LogicalLine { line: start, text: std::mem::take(&mut cur) });
                start = line;
            }
            '\\' if continuation(&mut chars) => {
                line += 1;
                cur.push(' ');
            }
            '"' | '\'' => {
                quote = Some(c);
                cur.push(c);
            }
            c if line_end(c, &mut chars) => {
                line += 1;
                out.push(LogicalLine { line: start, text: std::mem::take(&mut cur) });
                start = line;
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(LogicalLine { line: start, text: cur });
    }
    out
}

/// The number of the text's last line: 1 plus its line ends (`\n`, `\r\n`, a lone `\r`),
/// less one if the text ends with one.
pub fn last_line(text: &str) -> usize {
    let ends = text.replace("\r\n", "\n").chars().filter(|&c| c == '\n' || c == '\r').count();
    let trailing = text.ends_with('\n') || text.ends_with('\r');
    (ends + 1 - usize::from(trailing && ends > 0)).max(1)
}

/// The directive and its rest, for a line that starts with `#` (spaces allowed around it).
fn directive(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('#')?.trim_start();
    let end = rest.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(rest.len());
    Some((&rest[..end], rest[end..].trim()))
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch == '_' || ch.is_ascii_alphabetic())
        && c.all(|ch| ch == '_' || ch.is_ascii_alphanumeric())
}

/// Every `#define PFN_<name> <body>` whose name carries no `_vNNNN` suffix, in file order.
pub fn alias_macros(text: &str) -> Vec<AliasMacro> {
    let mut out = Vec::new();
    for l in logical_lines(text) {
        let Some(("define", rest)) = directive(&l.text) else { continue };
        let name_end = rest.find(|c: char| !(c == '_' || c.is_ascii_alphanumeric())).unwrap_or(rest.len());
        let (name, body) = (&rest[..name_end], rest[name_end..].trim());
        // A function-like macro (`#define PFN_x(a) ...`) is no alias.
        let unversioned = crate::names::split_pfn_name(name).is_err_and(|e| e.is_unversioned());
        if !unversioned || rest[name_end..].starts_with('(') {
            continue;
        }
        out.push(AliasMacro { name: name.to_owned(), line: l.line, body: alias_body(body) });
    }
    out
}

fn alias_body(body: &str) -> AliasBody {
    if is_ident(body) {
        return AliasBody::Direct(body.to_owned());
    }
    for (mac, suffix) in [("__API_TYPEDEF_PTDS", "_ptds"), ("__API_TYPEDEF_PTSZ", "_ptsz")] {
        let Some(args) = body.strip_prefix(mac).map(str::trim_start) else { continue };
        let Some(args) = args.strip_prefix('(').and_then(|a| a.strip_suffix(')')) else { continue };
        let parts: Vec<&str> = args.split(',').map(str::trim).collect();
        if let [api, d, p] = parts[..] {
            if let (true, Ok(d), Ok(p)) = (is_ident(api), d.parse::<u32>(), p.parse::<u32>()) {
                return AliasBody::PerThread { api: api.to_owned(), default_version: d, per_thread_version: p, suffix };
            }
        }
    }
    AliasBody::Other(body.to_owned())
}

/// Line numbers (1-based, inclusive ranges) that are compiled only when
/// `__CUDA_API_VERSION_INTERNAL` is defined.
///
/// A conditional counts as the guard when its condition names the macro without `!`
/// (`#if defined(__CUDA_API_VERSION_INTERNAL)`, `#ifdef __CUDA_API_VERSION_INTERNAL`); its
/// `#else` branch does not. Unbalanced conditionals are tolerated: the file just ends.
pub fn internal_guard_lines(text: &str) -> Vec<(usize, usize)> {
    const GUARD: &str = "__CUDA_API_VERSION_INTERNAL";
    let mut ranges = Vec::new();
    // Each frame: is this branch guarded, and since which line.
    let mut stack: Vec<Option<usize>> = Vec::new();
    let close = |frame: Option<usize>, end: usize, ranges: &mut Vec<(usize, usize)>| {
        if let Some(start) = frame {
            ranges.push((start, end));
        }
    };
    for l in logical_lines(text) {
        let Some((d, cond)) = directive(&l.text) else { continue };
        let guarded = |negating: bool| cond.contains(GUARD) && !negating;
        match d {
            "if" => stack.push(guarded(cond.contains('!')).then_some(l.line)),
            "ifdef" => stack.push(guarded(false).then_some(l.line)),
            "ifndef" => stack.push(None),
            "elif" | "else" => {
                if let Some(frame) = stack.pop() {
                    close(frame, l.line, &mut ranges);
                }
                stack.push((d == "elif" && guarded(cond.contains('!'))).then_some(l.line));
            }
            "endif" => {
                if let Some(frame) = stack.pop() {
                    close(frame, l.line, &mut ranges);
                }
            }
            _ => {}
        }
    }
    let last = last_line(text);
    while let Some(frame) = stack.pop() {
        close(frame, last, &mut ranges);
    }
    ranges.sort();
    ranges
}

/// Whether `line` falls in one of `ranges`.
pub fn in_ranges(ranges: &[(usize, usize)], line: usize) -> bool {
    ranges.iter().any(|&(a, b)| a <= line && line <= b)
}

/// An alias that names no typedef of its toolkit: NVIDIA's own header bug, reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenAlias {
    pub name: String,
    pub line: usize,
    pub expansion: String,
    pub reason: String,
}

/// Resolves the aliases of one header against the typedef names of its toolkit.
///
/// An alias whose target is no typedef is broken and left out. An alias that resolves but
/// whose own name is no symbol of the toolkit (`PFN_GraphConditionalHandleCreate`, missing
/// its `cu`) is kept, since that is what the header defines, and reported too.
pub fn resolve_aliases(
    macros: &[AliasMacro],
    typedef_exists: impl Fn(&str) -> bool,
    symbol_exists: impl Fn(&str) -> bool,
) -> (BTreeMap<String, AliasTarget>, Vec<BrokenAlias>) {
    let mut ok = BTreeMap::new();
    let mut broken = Vec::new();
    let by_name: BTreeMap<&str, &AliasMacro> = macros.iter().map(|m| (m.name.as_str(), m)).collect();
    for m in macros {
        let mut body = &m.body;
        // An alias may name another alias (a typedef renamed by a #define): follow one step.
        if let AliasBody::Direct(t) = body {
            if let Some(next) = by_name.get(t.as_str()).filter(|n| n.name != m.name) {
                body = &next.body;
            }
        }
        let (default, per_thread, expansion) = match body {
            AliasBody::Direct(t) => (t.clone(), t.clone(), t.clone()),
            AliasBody::PerThread { api, default_version, per_thread_version, suffix } => {
                let d = format!("{api}_v{default_version}");
                let p = format!("{api}_v{per_thread_version}{suffix}");
                let e = format!("{d} / {p}");
                (d, p, e)
            }
            AliasBody::Other(text) => {
                broken.push(BrokenAlias {
                    name: m.name.clone(),
                    line: m.line,
                    expansion: text.clone(),
                    reason: "it does not expand to one typedef name".into(),
                });
                continue;
            }
        };
        let missing: Vec<&String> = [&default, &per_thread].into_iter().filter(|t| !typedef_exists(t)).collect();
        if let Some(first) = missing.first() {
            broken.push(BrokenAlias {
                name: m.name.clone(),
                line: m.line,
                expansion,
                reason: format!("`{first}` is not a typedef of this toolkit"),
            });
            continue;
        }
        if !symbol_exists(m.name.strip_prefix("PFN_").unwrap_or(&m.name)) {
            broken.push(BrokenAlias {
                name: m.name.clone(),
                line: m.line,
                expansion,
                reason: format!(
                    "`{}` is no symbol of this toolkit (a misspelt alias name?)",
                    m.name.strip_prefix("PFN_").unwrap_or(&m.name)
                ),
            });
        }
        ok.insert(m.name.clone(), AliasTarget { default, per_thread });
    }
    (ok, broken)
}

/// The names a C program may call a driver function by, as far as the text tells: every
/// `#define cuX ...` (an object-like macro) and every `cuX(` outside a directive, comments
/// left out. A superset: which of them name a function, and which function, is the
/// preprocessor's to say ([`crate::read::clang::run_c_names`]).
pub fn c_name_candidates(text: &str) -> Vec<String> {
    let is_c_name =
        |s: &str| s.len() > 2 && s.starts_with("cu") && s[2..].starts_with(|c: char| c.is_ascii_uppercase());
    let mut out = std::collections::BTreeSet::new();
    // Names defined as something that cannot follow a `##` (`((CUstream)1)`, `(1 << 3)`):
    // pasted, they would be a clang error, and they are no function names anyway.
    let mut not_names = std::collections::BTreeSet::new();
    for l in logical_lines(text) {
        if let Some((d, rest)) = directive(&l.text) {
            if d == "define" {
                let end = rest.find(|c: char| !(c == '_' || c.is_ascii_alphanumeric())).unwrap_or(rest.len());
                if is_c_name(&rest[..end]) && !rest[end..].starts_with('(') {
                    let body = rest[end..].trim_start();
                    if body.is_empty() || body.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic()) {
                        out.insert(rest[..end].to_owned());
                    } else {
                        not_names.insert(rest[..end].to_owned());
                    }
                }
            }
            continue;
        }
        let bytes = l.text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'_' || bytes[i].is_ascii_alphabetic() {
                let start = i;
                while i < bytes.len() && (bytes[i] == b'_' || bytes[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                let word = &l.text[start..i];
                if is_c_name(word) && l.text[i..].trim_start().starts_with('(') {
                    out.insert(word.to_owned());
                }
            } else {
                i += 1;
            }
        }
    }
    out.into_iter().filter(|c| !not_names.contains(c)).collect()
}

/// The doc comment of each `CUresult` code in cuda.h's `enum cudaError_enum`, as one line of
/// prose (`::cuEventQuery()` as `cuEventQuery()`, `\p x` as `x`, `\deprecated` as
/// `Deprecated:`): what `CUresult`'s `Display`
/// and the constants' rustdoc say. Codes without a comment are left out.
pub fn result_code_docs(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(start) = text.find("enum cudaError_enum") else { return out };
    let body = &text[start..];
    let body = &body[..body.find('}').unwrap_or(body.len())];
    let mut comment: Option<String> = None;
    let mut rest = body;
    while !rest.is_empty() {
        let trimmed = rest.trim_start();
        if let Some(after) = trimmed.strip_prefix("/**") {
            let end = after.find("*/").unwrap_or(after.len());
            comment = Some(after[..end].to_owned());
            rest = after.get(end + 2..).unwrap_or("");
            continue;
        }
        let line_end = trimmed.find('\n').unwrap_or(trimmed.len());
        let line = &trimmed[..line_end];
        rest = &trimmed[line_end..];
        if rest.starts_with('\n') {
            rest = &rest[1..];
        }
        let name: String = line.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if name.starts_with("CUDA_") && line[name.len()..].trim_start().starts_with('=') {
            if let Some(c) = comment.take() {
                let words: Vec<&str> = c
                    .split_whitespace()
                    .filter(|w| *w != "*" && *w != "\\p")
                    .map(|w| if w == "\\deprecated" { "Deprecated:" } else { w.trim_start_matches("::") })
                    .collect();
                out.insert(name, words.join(" "));
            }
        } else if !line.trim().is_empty() {
            comment = None;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_name_candidates_skip_macros_that_are_no_names() {
        let text = "#define cuCtxCreate cuCtxCreate_v4\n#define cuMemcpy __CUDA_API_PTDS(cuMemcpy)\n\
                    #define cuOdd ((CUstream)1)\n#define cuFlag (1 << 3)\n#define cuFn(x) x\n\
                    CUresult cuInit(unsigned int Flags);\nint y = cuOdd(2);\n/* cuInComment( */\n";
        assert_eq!(c_name_candidates(text), ["cuCtxCreate", "cuInit", "cuMemcpy"]);
    }

    #[test]
    fn result_code_docs_are_the_comments_above_each_code() {
        let text = "typedef enum cudaError_enum {\n    /**\n     * No errors (see\n     * ::cuEventQuery()).\n     */\n    CUDA_SUCCESS = 0,\n\n    CUDA_ERROR_BARE = 7,\n    /**\n     * \\deprecated Old; \\p x is gone.\n     */\n    CUDA_ERROR_OLD = 5,\n} CUresult;\nenum other { /** not this */ CUDA_OTHER = 1 };\n";
        let docs = result_code_docs(text);
        assert_eq!(docs["CUDA_SUCCESS"], "No errors (see cuEventQuery()).");
        assert_eq!(docs["CUDA_ERROR_OLD"], "Deprecated: Old; x is gone.");
        assert_eq!(docs.len(), 2, "{docs:?}");
    }

    #[test]
    fn comments_and_continuations() {
        let text = "#define A 1 /* a\n comment */\n#define B \\\n  2 // tail\n\"/* not a comment */\"\n";
        let lines: Vec<(usize, String)> =
            logical_lines(text).into_iter().map(|l| (l.line, l.text.trim().to_owned())).collect();
        assert_eq!(
            lines,
            vec![(1, "#define A 1".into()), (3, "#define B    2".into()), (5, "\"/* not a comment */\"".into())]
        );
    }

    #[test]
    fn alias_forms() {
        let text = "#define PFN_cuA  PFN_cuA_v3020\n\
                    #  define PFN_cuB __API_TYPEDEF_PTDS(PFN_cuB, 3020, 7000)\n\
                    #define PFN_cuC __API_TYPEDEF_PTSZ( PFN_cuC , 10010 , 10010 )\n\
                    #define PFN_cuD PFN_cuD _v11070\n\
                    #define PFN_cuE_v12040 PFN_cuE\n\
                    #define PFN_F(x) x\n\
                    #define OTHER 1\n";
        let m = alias_macros(text);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["PFN_cuA", "PFN_cuB", "PFN_cuC", "PFN_cuD"]);
        assert_eq!(m[0].body, AliasBody::Direct("PFN_cuA_v3020".into()));
        assert_eq!(m[1].line, 2);
        assert_eq!(
            m[2].body,
            AliasBody::PerThread {
                api: "PFN_cuC".into(),
                default_version: 10010,
                per_thread_version: 10010,
                suffix: "_ptsz"
            }
        );
        assert_eq!(m[3].body, AliasBody::Other("PFN_cuD _v11070".into()));
        let exists = |n: &str| ["PFN_cuA_v3020", "PFN_cuB_v3020", "PFN_cuB_v7000_ptds"].contains(&n);
        let (ok, broken) = resolve_aliases(&m, exists, |_| true);
        assert_eq!(ok.keys().collect::<Vec<_>>(), ["PFN_cuA", "PFN_cuB"]);
        assert_eq!(ok["PFN_cuB"].per_thread, "PFN_cuB_v7000_ptds");
        assert_eq!(broken.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(), ["PFN_cuC", "PFN_cuD"]);
    }

    #[test]
    fn internal_guard() {
        let text = "a\n#if defined(__CUDA_API_VERSION_INTERNAL)\nlegacy\n#if X\nnested\n#endif\n#else\nnot\n#endif\n#ifdef __CUDA_API_VERSION_INTERNAL\nx\n#endif\n#if !defined(__CUDA_API_VERSION_INTERNAL)\ny\n#endif\n#ifndef __CUDA_API_VERSION_INTERNAL\nz\n";
        let r = internal_guard_lines(text);
        assert_eq!(r, vec![(2, 7), (10, 12)]);
        assert!(in_ranges(&r, 3) && in_ranges(&r, 5) && !in_ranges(&r, 8) && !in_ranges(&r, 14) && !in_ranges(&r, 17));
    }

    #[test]
    fn odd_input_does_not_panic() {
        for text in [
            "/* unterminated",
            "#",
            "#define",
            "#define PFN_",
            "\"open",
            "\\",
            "#if\n#else\n#elif\n#endif\n#endif",
            "\u{feff}#define PFN_x é",
        ] {
            let _ = alias_macros(text);
            let _ = internal_guard_lines(text);
        }
    }
}
