//! cuda.h's Doxygen comments as rustdoc Markdown.
//!
//! The input is a comment as bindgen hands it over (the `/**`, `*/` and leading `*` gone, the
//! rest of each line kept). The output is Markdown that rustdoc renders as cuda.h's text
//! reads in NVIDIA's HTML documentation: `\brief` first, then the body, then `# Parameters`
//! (`\param`), `# Returns` (`\return`) and `# See also` (`\sa`). `::cuLinkDestroy` and
//! `::CU_JIT_WALL_TIME` become intra-doc links where `link` knows a path for the name (the
//! caller decides which paths the documented item may link to), else code spans, so a doc
//! never holds a broken link. Everything else Markdown would read as syntax (`*`, `_`, `[`,
//! `<`) is escaped, so cuda.h's prose never turns into emphasis, links or HTML by accident.
//!
//! Why not the `doxygen-rs` crate: over CUDA 13.5's 2227 cuda.h comments, 0.4.2 panicked on
//! 227, kept `::cuX` as text in 529, and the rest gave 257 unresolved links under rustdoc;
//! it knows nothing of the crate's items and drops NVIDIA's aliases (`\notefnerr`) with their
//! text. docs/cuda-h-docs.md has the measurement.
//!
//! Never fails: text it does not recognise is kept as escaped prose.

/// NVIDIA's Doxygen aliases that cuda.h uses (its Doxyfile defines them, the header does
/// not), with the text NVIDIA's HTML documentation prints for each (checked against NVIDIA's
/// pages: "Note that this function may also return ...", "This function uses standard default
/// stream semantics.", "Graph objects are not threadsafe. More here."). Other aliases point to
/// NVIDIA's documentation instead of a sentence of ours (see `section_command`).
const ALIASES: &[(&str, &str)] = &[
    ("notefnerr", "Note that this function may also return error codes from previous, asynchronous launches."),
    ("note_null_stream", "This function uses standard default stream semantics."),
    (
        "note_graph_thread_safety",
        "Graph objects are not threadsafe: see NVIDIA's \
         [graph object thread safety](https://docs.nvidia.com/cuda/cuda-driver-api/graphs-thread-safety.html).",
    ),
];

/// Where NVIDIA's HTML documentation explains the synchronisation notes.
const SYNC_BEHAVIOR: &str = "https://docs.nvidia.com/cuda/cuda-driver-api/api-sync-behavior.html";

/// The converted comment: the first paragraph alone (`\brief`, for items that carry a
/// summary) and the whole text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Converted {
    pub brief: String,
    pub full: String,
}

#[derive(Debug, Default)]
struct Sections {
    brief: Vec<String>,
    body: Vec<String>,
    params: Vec<String>,
    returns: Vec<String>,
    see_also: Vec<String>,
}

/// Which section a run of lines belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Brief,
    Body,
    /// A paragraph with a bold label first (`\note`, `\warning`, `\deprecated`, `\par`).
    Labelled(String),
    Param(String),
    Return,
    SeeAlso,
    /// Group and file commands: not about the item.
    Dropped,
}

/// Converts one comment. `link` answers a name (`cuLinkDestroy`, `CU_JIT_WALL_TIME`) with
/// the path of the crate item to link to, or `None`.
pub fn convert(raw: &str, link: &dyn Fn(&str) -> Option<String>) -> Converted {
    let raw = raw.strip_prefix('<').unwrap_or(raw);
    let lines: Vec<&str> = raw.lines().collect();
    let mut sections = Sections::default();
    // The lines of the section being read, with its kind.
    let mut kind = Kind::Body;
    let mut run: Vec<String> = Vec::new();
    let mut i = 0;
    let flush = |kind: &Kind, run: &mut Vec<String>, sections: &mut Sections| {
        if run.iter().all(|l| l.trim().is_empty()) && !matches!(kind, Kind::Param(_)) {
            run.clear();
            return;
        }
        let text = render_block(run, link);
        run.clear();
        match kind {
            Kind::Brief => sections.brief.push(text),
            Kind::Body => sections.body.push(text),
            // A code block first keeps its fence at the start of a line.
            Kind::Labelled(label) if text.starts_with('`') => sections.body.push(format!("**{label}**\n\n{text}")),
            Kind::Labelled(label) => sections.body.push(format!("**{label}** {}", text.trim_start())),
            Kind::Param(name) => {
                let mut item = format!("- `{name}`:");
                for (n, l) in text.lines().enumerate() {
                    if n == 0 {
                        item.push(' ');
                        item.push_str(l.trim_start_matches(['-', ' ']));
                    } else if l.is_empty() {
                        item.push('\n');
                    } else {
                        item.push_str("\n  ");
                        item.push_str(l);
                    }
                }
                sections.params.push(item);
            }
            Kind::Return => sections.returns.push(text),
            Kind::SeeAlso => sections.see_also.push(text),
            Kind::Dropped => {}
        }
    };
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        i += 1;
        // A code block, verbatim.
        if let Some(rest) = command(trimmed, "code") {
            flush(&kind, &mut run, &mut sections);
            let mut code: Vec<&str> = Vec::new();
            let first =
                rest.trim_start_matches(|c: char| c == '{' || c == '.' || c.is_ascii_alphanumeric() || c == '}');
            if !first.trim().is_empty() {
                code.push(first);
            }
            while i < lines.len() {
                let l = lines[i];
                i += 1;
                if let Some(at) = l.find("\\endcode") {
                    if !l[..at].trim().is_empty() {
                        code.push(&l[..at]);
                    }
                    break;
                }
                code.push(l);
            }
            let indent = code.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min();
            let body: Vec<&str> = code.iter().map(|l| l.get(indent.unwrap_or(0)..).unwrap_or("").trim_end()).collect();
            // Never close the fence early: a longer fence than any run of backticks inside.
            let fence = "`".repeat(3.max(longest_run(&body.join("\n"), '`') + 1));
            let block = format!("{fence}c\n{}\n{fence}", body.join("\n"));
            match &kind {
                Kind::Param(_) | Kind::Return | Kind::Labelled(_) => run.push(format!("\u{0}{block}")),
                _ => sections.body.push(block),
            }
            continue;
        }
        if trimmed.is_empty() {
            // A blank line ends a paragraph; a parameter's or note's text ends with it.
            match kind {
                Kind::Body => run.push(String::new()),
                _ => {
                    flush(&kind, &mut run, &mut sections);
                    kind = Kind::Body;
                }
            }
            continue;
        }
        if let Some((new_kind, rest)) = section_command(trimmed) {
            flush(&kind, &mut run, &mut sections);
            kind = new_kind;
            if let Kind::Labelled(label) = &kind {
                if let Some(text) = label.strip_prefix('\u{1}') {
                    // An alias: a sentence of its own.
                    sections.body.push(text.to_owned());
                    kind = Kind::Body;
                    continue;
                }
            }
            if !rest.trim().is_empty() {
                run.push(rest.to_owned());
            }
            continue;
        }
        run.push(line.to_owned());
    }
    flush(&kind, &mut run, &mut sections);
    let Sections { mut brief, mut body, params, returns, see_also } = sections;
    // Without `\brief`, the first paragraph is the summary, as rustdoc takes it.
    if brief.is_empty() && !body.is_empty() {
        let first = body.remove(0);
        let mut paragraphs = first.splitn(2, "\n\n");
        brief.push(paragraphs.next().unwrap_or("").to_owned());
        if let Some(rest) = paragraphs.next() {
            body.insert(0, rest.to_owned());
        }
    }
    let brief = brief.join(" ").trim().to_owned();
    let mut out: Vec<String> = Vec::new();
    if !brief.is_empty() {
        out.push(brief.clone());
    }
    out.extend(body.into_iter().map(|b| b.trim().to_owned()).filter(|b| !b.is_empty()));
    if !params.is_empty() {
        out.push(format!("# Parameters\n\n{}", params.join("\n")));
    }
    let returns: Vec<String> = returns.into_iter().map(|r| r.trim().to_owned()).filter(|r| !r.is_empty()).collect();
    if !returns.is_empty() {
        out.push(format!("# Returns\n\n{}", returns.join("\n\n")));
    }
    let see_also: Vec<String> = see_also.into_iter().map(|r| r.trim().to_owned()).filter(|r| !r.is_empty()).collect();
    if !see_also.is_empty() {
        out.push(format!("# See also\n\n{}", see_also.join(", ")));
    }
    Converted { brief, full: out.join("\n\n") }
}

/// The longest run of `c` in `s`.
fn longest_run(s: &str, c: char) -> usize {
    s.split(|x| x != c).map(str::len).max().unwrap_or(0)
}

/// `\name rest` (or `@name rest`) at the start of `line`, `name` ending at a non-word character.
fn command<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.strip_prefix('\\').or_else(|| line.strip_prefix('@'))?.strip_prefix(name)?;
    match rest.chars().next() {
        Some(c) if c.is_ascii_alphanumeric() || c == '_' => None,
        _ => Some(rest),
    }
}

/// The section a line's leading command starts, with the rest of the line.
fn section_command(line: &str) -> Option<(Kind, &str)> {
    let stripped = line.strip_prefix('\\').or_else(|| line.strip_prefix('@'))?;
    let name: String = stripped.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    let rest = &stripped[name.len()..];
    let kind = match name.as_str() {
        "brief" | "short" => Kind::Brief,
        "details" => Kind::Body,
        "param" | "tparam" => {
            // `\param[in] name text`, `\param name - text`.
            let rest = rest.trim_start();
            let rest = if rest.starts_with('[') { rest.split_once(']').map_or("", |(_, r)| r) } else { rest };
            let rest = rest.trim_start();
            let name: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
            let text = rest[name.len()..].trim_start();
            let text = text.strip_prefix("- ").unwrap_or(text);
            return Some((Kind::Param(name), text));
        }
        "return" | "returns" | "result" | "retval" => Kind::Return,
        "sa" | "see" => Kind::SeeAlso,
        "note" | "notes" => Kind::Labelled("Note:".into()),
        "warning" => Kind::Labelled("Warning:".into()),
        "deprecated" => Kind::Labelled("Deprecated:".into()),
        "attention" => Kind::Labelled("Attention:".into()),
        "par" => {
            // `\par Title`: the title is the label.
            // `\par` alone: a new paragraph.
            let title = rest.trim();
            return Some((if title.is_empty() { Kind::Body } else { Kind::Labelled(format!("{title}:")) }, ""));
        }
        // `\struct CUdevResource`, `\typedef struct X* Y;`: the line names the item, which
        // rustdoc shows anyway; the text below it is the item's.
        "struct" | "typedef" | "union" | "enum" | "fn" | "var" | "def" | "file" => return Some((Kind::Body, "")),
        "defgroup" | "addtogroup" | "ingroup" | "section" | "subsection" | "{" | "}" | "ref_sect" => Kind::Dropped,
        other => {
            if let Some((_, text)) = ALIASES.iter().find(|(a, _)| *a == other) {
                return Some((Kind::Labelled(format!("\u{1}{text}")), ""));
            }
            if other.starts_with("note_") || other == "link_sync_behavior" {
                let text = match other {
                    "note_async" | "note_sync" | "note_memcpy" | "note_memset" | "link_sync_behavior" => format!(
                        "See NVIDIA's [API synchronization behavior]({SYNC_BEHAVIOR}) for how this function \
                         synchronizes."
                    ),
                    _ => format!(
                        "NVIDIA's documentation of this function has a further note here (cuda.h's \
                         `\\{other}`)."
                    ),
                };
                return Some((Kind::Labelled(format!("\u{1}{text}")), rest));
            }
            return None;
        }
    };
    Some((kind, rest))
}

/// Where a paragraph of [`render_block`] goes.
#[derive(Debug, Clone, Copy)]
enum Block {
    Paragraph,
    /// A list item at this depth.
    Item(usize),
    /// A further paragraph of the item at this depth.
    Inside(usize),
}

/// A run of lines as Markdown: paragraphs, lists (`-`, `+`, `-#`, `<li>`), code blocks that
/// [`convert`] already rendered (a line starting with NUL).
fn render_block(lines: &[String], link: &dyn Fn(&str) -> Option<String>) -> String {
    // HTML lists first: `<li>` starts an item, the rest of the list markup goes.
    let mut text_lines: Vec<String> = Vec::new();
    for l in lines {
        let mut l =
            l.replace("<ul>", "").replace("</ul>", "").replace("</li>", "").replace("<ol>", "").replace("</ol>", "");
        if let Some(at) = l.find("<li>") {
            let indent = &l[..at];
            l = format!("{indent}- {}", &l[at + 4..]);
        }
        text_lines.push(l);
    }
    let mut out: Vec<String> = Vec::new();
    // The open paragraph or list item: its indent in the output (a list item: its depth, with
    // a marker) and its text.
    let mut current: Option<(Block, String)> = None;
    // Indents of the open lists in the input, outermost first.
    let mut indents: Vec<usize> = Vec::new();
    let mut after_blank = false;
    let finish = |current: &mut Option<(Block, String)>, out: &mut Vec<String>| {
        if let Some((block, text)) = current.take() {
            let text = inline(text.trim(), link);
            match block {
                Block::Item(level) => out.push(format!("{}- {text}", "  ".repeat(level))),
                Block::Inside(level) => {
                    out.push(String::new());
                    out.push(format!("{}{text}", "  ".repeat(level + 1)));
                }
                Block::Paragraph => {
                    if out.last().is_some_and(|l| !l.is_empty()) {
                        out.push(String::new());
                    }
                    out.push(text);
                }
            }
        }
    };
    for l in &text_lines {
        if let Some(code) = l.strip_prefix('\u{0}') {
            finish(&mut current, &mut out);
            if out.last().is_some_and(|l| !l.is_empty()) {
                out.push(String::new());
            }
            let pad = "  ".repeat(indents.len());
            for c in code.lines() {
                out.push(if c.is_empty() { String::new() } else { format!("{pad}{c}") });
            }
            out.push(String::new());
            after_blank = true;
            continue;
        }
        let trimmed = l.trim_start();
        let indent = l.len() - trimmed.len();
        if trimmed.is_empty() {
            finish(&mut current, &mut out);
            after_blank = true;
            continue;
        }
        let marker = ["- ", "+ ", "-# ", "* "].iter().find_map(|m| trimmed.strip_prefix(m));
        if let Some(item) = marker {
            finish(&mut current, &mut out);
            while indents.last().is_some_and(|&i| i > indent) {
                indents.pop();
            }
            if indents.last() != Some(&indent) {
                indents.push(indent);
            }
            if indents.len() == 1 && out.last().is_some_and(|l| !l.is_empty() && !l.trim_start().starts_with("- ")) {
                out.push(String::new());
            }
            current = Some((Block::Item(indents.len() - 1), item.to_owned()));
            after_blank = false;
            continue;
        }
        let in_list = !indents.is_empty();
        let deeper = indents.first().is_some_and(|&i| indent > i);
        match &mut current {
            // Continuation of the open item or paragraph (lazily, as Markdown has it).
            Some((_, text)) if !after_blank => {
                text.push(' ');
                text.push_str(trimmed);
            }
            _ => {
                finish(&mut current, &mut out);
                if in_list && deeper {
                    current = Some((Block::Inside(indents.len() - 1), trimmed.to_owned()));
                } else {
                    if in_list {
                        indents.clear();
                        out.push(String::new());
                    }
                    current = Some((Block::Paragraph, trimmed.to_owned()));
                }
            }
        }
        after_blank = false;
    }
    finish(&mut current, &mut out);
    let mut text = out.join("\n");
    while text.contains("\n\n\n") {
        text = text.replace("\n\n\n", "\n\n");
    }
    text.trim_matches('\n').to_owned()
}

/// One paragraph's inline markup: `\p x`, `\c x` as code, `\e x` and `\b x` as emphasis,
/// `\n` as a line break, `::name` and `\ref name` as links, URLs as autolinks, and Markdown's
/// own syntax characters escaped.
fn inline(text: &str, link: &dyn Fn(&str) -> Option<String>) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let word_at = |i: usize| -> (String, usize) {
        let mut j = i;
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        let start = j;
        while j < chars.len() {
            let c = chars[j];
            let next_is_word = chars.get(j + 1).is_some_and(|n| n.is_ascii_alphanumeric() || *n == '_');
            if c.is_ascii_alphanumeric() || c == '_' || ((c == '.' || c == ':') && next_is_word) {
                j += 1;
            } else if c == '-'
                && chars.get(j + 1) == Some(&'>')
                && chars.get(j + 2).is_some_and(|n| n.is_ascii_alphabetic())
            {
                j += 2;
            } else if c == '[' {
                // `optionValues[i]`: the index belongs to the name.
                match chars[j..].iter().position(|&x| x == ']') {
                    Some(k) if k < 16 => j += k + 1,
                    _ => break,
                }
            } else {
                break;
            }
        }
        (chars[start..j].iter().collect(), j)
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' || c == '@' {
            let name: String = chars[i + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == '_').collect();
            let after = i + 1 + name.len();
            match name.as_str() {
                "p" | "c" | "a" | "e" | "em" | "b" if !name.is_empty() => {
                    let (word, end) = word_at(after);
                    if word.is_empty() {
                        i = after;
                        continue;
                    }
                    let word = word.trim_start_matches("::");
                    out.push_str(&match name.as_str() {
                        "p" | "c" => code_span(word),
                        "b" => format!("**{}**", escape(word)),
                        _ => format!("*{}*", escape(word)),
                    });
                    i = end;
                    continue;
                }
                "n" => {
                    out.push_str("\\\n");
                    i = after;
                    // The line break replaces the space that follows it.
                    while i < chars.len() && chars[i] == ' ' {
                        i += 1;
                    }
                    continue;
                }
                "ref" | "link" => {
                    let (word, end) = word_at(after);
                    out.push_str(&linked(word.trim_start_matches("::"), link));
                    i = end;
                    continue;
                }
                "endlink" => {
                    i = after;
                    continue;
                }
                _ if c == '\\' && i + 1 < chars.len() && "\\@&$#<>%\".:|".contains(chars[i + 1]) => {
                    out.push_str(&escape(&chars[i + 1].to_string()));
                    i += 2;
                    continue;
                }
                _ if !name.is_empty() && c == '\\' => {
                    // An unknown command: its name, as text.
                    out.push_str(&escape(&name));
                    i = after;
                    continue;
                }
                _ => {}
            }
        }
        if c == ':'
            && chars.get(i + 1) == Some(&':')
            && chars.get(i + 2).is_some_and(|n| n.is_ascii_alphabetic() || *n == '_')
        {
            let (word, end) = word_at(i + 2);
            let mut end = end;
            // `::cuFoo()`: the parentheses are the reference's.
            if chars.get(end) == Some(&'(') && chars.get(end + 1) == Some(&')') {
                end += 2;
            }
            out.push_str(&linked(&word, link));
            i = end;
            continue;
        }
        if (c == 'h' || c == 'f') && starts_url(&chars[i..]) {
            let end = chars[i..]
                .iter()
                .position(|c| c.is_whitespace() || *c == ')' || *c == '>')
                .map_or(chars.len(), |k| i + k);
            let mut url: String = chars[i..end].iter().collect();
            let mut tail = String::new();
            while url.ends_with(['.', ',', ';']) {
                tail.insert(0, url.pop().unwrap_or('.'));
            }
            out.push_str(&format!("<{url}>{tail}"));
            i = end;
            continue;
        }
        out.push_str(&escape(&c.to_string()));
        i += 1;
    }
    out
}

fn starts_url(chars: &[char]) -> bool {
    let s: String = chars.iter().take(8).collect();
    s.starts_with("https://") || s.starts_with("http://") || s.starts_with("ftp://")
}

/// `name` linked where `link` knows it, else as code.
fn linked(name: &str, link: &dyn Fn(&str) -> Option<String>) -> String {
    let name = name.trim_end_matches(['.', ':']);
    match link(name) {
        Some(path) => format!("[`{name}`]({path})"),
        None => code_span(name),
    }
}

fn code_span(s: &str) -> String {
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

/// Markdown's syntax characters in prose, escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '*' | '_' | '[' | ']' | '`' | '#' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(name: &str) -> Option<String> {
        match name {
            "cuLinkDestroy" => Some("crate::api::cuLinkDestroy".into()),
            "CUDA_SUCCESS" => Some("crate::types::CUDA_SUCCESS".into()),
            _ => None,
        }
    }

    #[test]
    fn sections_params_returns_and_links() {
        let raw = " \\brief Creates a pending JIT linker invocation.\n\n Destroy it with ::cuLinkDestroy.  The\n \\p optionValues are *void.\n\n \\param numOptions   Size of options arrays\n \\param[out] stateOut - On success, a state to\n                     complete this action\n\n \\return\n ::CUDA_SUCCESS,\n ::CUDA_ERROR_INVALID_VALUE\n \\notefnerr\n\n \\sa ::cuLinkDestroy,\n ::cuLinkAddData";
        let c = convert(raw, &links);
        assert_eq!(c.brief, "Creates a pending JIT linker invocation.");
        assert_eq!(
            c.full,
            "Creates a pending JIT linker invocation.\n\nDestroy it with [`cuLinkDestroy`](crate::api::cuLinkDestroy).  The `optionValues` are \\*void.\n\nNote that this function may also return error codes from previous, asynchronous launches.\n\n# Parameters\n\n- `numOptions`: Size of options arrays\n- `stateOut`: On success, a state to complete this action\n\n# Returns\n\n[`CUDA_SUCCESS`](crate::types::CUDA_SUCCESS), `CUDA_ERROR_INVALID_VALUE`\n\n# See also\n\n[`cuLinkDestroy`](crate::api::cuLinkDestroy), `cuLinkAddData`"
        );
    }

    #[test]
    fn code_lists_and_escapes() {
        let raw = "< Option type: char *\\n\n Applies to: [i] <b>\n\n - one\n   + nested\n - two\n\n \\code\n   int x = 1;\n \\endcode\n See https://docs.nvidia.com/x.";
        let c = convert(raw, &links);
        assert_eq!(
            c.full,
            "Option type: char \\*\\\nApplies to: \\[i\\] &lt;b&gt;\n\n- one\n  - nested\n- two\n\n```c\nint x = 1;\n```\n\nSee <https://docs.nvidia.com/x>."
        );
    }

    #[test]
    fn odd_input_never_panics() {
        for raw in [
            "",
            "\\",
            "\\p",
            "::",
            "\\code",
            "\\param",
            "\\param[",
            "- ",
            "<li>",
            "\\n\\n",
            "::a::",
            "é\\pé",
            "\\endcode",
        ] {
            let _ = convert(raw, &links);
        }
    }
}
