//! The repository's Markdown pages link only to what exists: every relative link names a file
//! or folder of the repository, and every `#anchor` a heading of the page it points at (as
//! GitHub makes anchors from headings). Pages move between the README and docs/, and a link
//! left behind is the first thing a newcomer clicks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cuda_sys_gen_tests::*;

/// Every `.md` file of the repository, outside build output and hidden folders.
fn pages(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            if !name.starts_with('.') && name != "target" {
                pages(&path, out);
            }
        } else if kind.is_file() && name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The page's text outside fenced code blocks, where `[a](b)` is code, not a link.
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, letters, digits, `-` and `_` kept, spaces made
/// `-`, everything else dropped; a repeated heading gets `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in prose(text).lines() {
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else { continue };
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// Every `](target)` of the page's prose.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut out = Vec::new();
    for (i, _) in prose.match_indices("](") {
        let rest = &prose[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].to_string());
        }
    }
    out
}

#[test]
fn no_link_of_the_repository_s_pages_is_dead() {
    let root = repo_root();
    let mut files = Vec::new();
    pages(&root, &mut files);
    files.sort();
    assert!(files.iter().any(|f| f.ends_with("README.md")), "no pages found under {}", root.display());
    let mut dead = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") || link.contains(' ') {
                continue;
            }
            checked += 1;
            let (path, anchor) = link.split_once('#').map_or((link.as_str(), None), |(p, a)| (p, Some(a)));
            let target = if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
            let shown = format!("{}: ({link})", file.strip_prefix(&root).unwrap().display());
            if !target.exists() {
                dead.push(format!("{shown}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor.filter(|_| target.extension().is_some_and(|e| e == "md")) {
                let headings = anchors(&std::fs::read_to_string(&target).unwrap());
                if !headings.contains(anchor) {
                    dead.push(format!("{shown}: no heading makes #{anchor}"));
                }
            }
        }
    }
    assert!(checked > 20, "only {checked} links found: is the link reader broken?");
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}

/// The anchor rule itself, on headings like this repository's.
#[test]
fn anchors_are_github_s() {
    let a = anchors("# A\n## Run 13: a NULL ctxCreateParams, cuda.h's docs\n## `--json`\n## A\n```\n# not\n```\n");
    let want: BTreeSet<String> =
        ["a", "run-13-a-null-ctxcreateparams-cudahs-docs", "--json", "a-1"].map(String::from).into();
    assert_eq!(a, want);
}
