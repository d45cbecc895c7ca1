//! A pin added to the manifest's text, not to its parsed form: every comment, blank line and
//! spelling of the file stays as its owner wrote it.

use crate::manifest::{Manifest, ToolkitPin};
use crate::platform::Platform;
use crate::version::ToolkitVersion;

/// Adds the pin's block after the last pinned toolkit below it (before the first, if it is
/// the oldest), so the manifest stays in version order and every comment stays where it was.
pub fn insert_pin(text: &str, manifest: &Manifest, pin: &ToolkitPin) -> String {
    let mut block = format!("[[toolkit]]\nversion = \"{}\"\n", pin.version);
    for p in &pin.packages {
        block.push_str(&format!(
            "[[toolkit.package]]\nname = \"{}\"\nversion = \"{}\"\nfile = \"{}\"\nsha256 = \"{}\"\ninclude = \"{}\"\n",
            p.name, p.version, p.file, p.sha256, p.include
        ));
        if let Some(platform) = &p.platform {
            block.push_str(&format!("platform = \"{platform}\"\n"));
        }
        if p.target != Platform::Linux {
            block.push_str(&format!("target = \"{}\"\n", p.target));
        }
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let header_at = |v: ToolkitVersion| -> Option<usize> {
        // The `[[toolkit]]` line whose next `version =` line is v's.
        let needle = format!("version = \"{v}\"");
        (0..lines.len()).find(|&i| {
            lines[i].trim() == "[[toolkit]]"
                && lines[i + 1..].iter().find(|l| !l.trim().is_empty()).is_some_and(|l| l.trim() == needle)
        })
    };
    let below = manifest.toolkits.iter().map(|t| t.version).filter(|v| *v < pin.version).max();
    let above = manifest.toolkits.iter().map(|t| t.version).filter(|v| *v > pin.version).min();
    let mut out = String::new();
    if let Some(start) = below.and_then(header_at) {
        // The block ends before the next table header, less the comments and blank lines
        // just above that header (they introduce what follows).
        let mut end = (start + 1..lines.len())
            .find(|&i| is_table_header(lines[i]) && lines[i].trim() != "[[toolkit.package]]")
            .unwrap_or(lines.len());
        while end > start + 1 && (lines[end - 1].trim().is_empty() || lines[end - 1].trim_start().starts_with('#')) {
            end -= 1;
        }
        out.push_str(&lines[..end].concat());
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&block);
        if !lines.get(end).is_some_and(|l| l.trim().is_empty()) && end < lines.len() {
            out.push('\n');
        }
        out.push_str(&lines[end..].concat());
    } else if let Some(first) = above.and_then(header_at) {
        out.push_str(&lines[..first].concat());
        out.push_str(&block);
        out.push('\n');
        out.push_str(&lines[first..].concat());
    } else {
        // No pins yet: at the end (a `[[toolkit]]` after `[libclang]` is still the same TOML).
        out.push_str(text);
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&block);
    }
    out
}

/// The text without `version`'s `[[toolkit]]` block (its `[[toolkit.package]]` tables with
/// it; the comments and blank lines just above the next table stay, as they introduce it): a
/// patch bump removes the old block, then [`insert_pin`] adds the new one.
pub fn remove_pin(text: &str, version: ToolkitVersion) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let needle = format!("version = \"{version}\"");
    let Some(start) = (0..lines.len()).find(|&i| {
        lines[i].trim() == "[[toolkit]]"
            && lines[i + 1..].iter().find(|l| !l.trim().is_empty()).is_some_and(|l| l.trim() == needle)
    }) else {
        return text.to_owned();
    };
    let mut end = (start + 1..lines.len())
        .find(|&i| is_table_header(lines[i]) && lines[i].trim() != "[[toolkit.package]]")
        .unwrap_or(lines.len());
    while end > start + 1 && (lines[end - 1].trim().is_empty() || lines[end - 1].trim_start().starts_with('#')) {
        end -= 1;
    }
    // The blank line that separated the block from what follows goes with it.
    while end < lines.len() && lines[end].trim().is_empty() {
        end += 1;
    }
    let mut out = lines[..start].concat();
    out.push_str(&lines[end..].concat());
    out
}

fn is_table_header(line: &str) -> bool {
    line.trim_start().starts_with('[')
}
