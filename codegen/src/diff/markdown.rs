//! A [`ToolkitDiff`] as markdown for a pull request: a summary a reviewer reads first, then
//! one table per kind of change (empty kinds are left out), then the per-toolkit counts.

use std::fmt::Write;

use super::{AliasForm, AliasMeaning, EntryView, ToolkitDiff, Verdict, HEADER_ALIASES};
use crate::platform::Platform;
use crate::version::ToolkitVersion;

/// The whole report. Deterministic: the same diff gives the same bytes.
pub fn render(d: &ToolkitDiff) -> String {
    let (f, t) = (d.from.version, d.to.version);
    let mut s = String::new();
    let _ = writeln!(s, "## CUDA {f} → CUDA {t}: driver entry points\n");
    let _ = writeln!(s, "From CUDA {f} ({}) to CUDA {t} ({}).\n", d.from.source, d.to.source);
    for line in summary_lines(d) {
        let _ = writeln!(s, "- {line}");
    }
    s.push('\n');
    for n in &d.notes {
        let _ = writeln!(s, "Note: {n}.\n");
    }

    if !d.symbols_added.is_empty() {
        let _ = writeln!(s, "### Symbols added\n");
        table_head(&mut s, &["symbol", "ABI", "exported as", &format!("signature (CUDA {t})")]);
        for c in &d.symbols_added {
            for e in &c.entries {
                row(&mut s, &[code(&c.symbol), abi(e), code(&e.exported), code(&e.signature())]);
            }
        }
        s.push('\n');
    }
    if !d.new_versions.is_empty() {
        let _ = writeln!(s, "### New ABI versions of existing symbols\n");
        let _ = writeln!(
            s,
            "A driver asked for one of these symbols with a CUDA version at or above the new ABI's hands out the new ABI: \
             code that casts to the previous typedef must ask with exactly that typedef's version.\n"
        );
        table_head(
            &mut s,
            &[
                "symbol",
                &format!("previous newest (CUDA {f})"),
                "its signature",
                &format!("new (CUDA {t})"),
                "its signature",
            ],
        );
        for n in &d.new_versions {
            let (prev, prev_sig) = match &n.previous {
                Some(p) => (abi_exported(p), code(&p.signature())),
                None => ("none of this kind".to_owned(), String::new()),
            };
            row(&mut s, &[code(&n.symbol), prev, prev_sig, abi_exported(&n.new), code(&n.new.signature())]);
        }
        s.push('\n');
    }
    if !d.symbols_removed.is_empty() {
        let _ = writeln!(s, "### Symbols removed\n");
        table_head(&mut s, &["symbol", "ABI", "exported as", &format!("signature (CUDA {f})")]);
        for c in &d.symbols_removed {
            for e in &c.entries {
                row(&mut s, &[code(&c.symbol), abi(e), code(&e.exported), code(&e.signature())]);
            }
        }
        s.push('\n');
    }
    if !d.entries_removed.is_empty() {
        let _ = writeln!(s, "### ABIs removed (the symbol remains)\n");
        table_head(
            &mut s,
            &["ABI", "exported as", &format!("signature (CUDA {f})"), &format!("newest ABI left in CUDA {t}")],
        );
        for r in &d.entries_removed {
            let left = r.newest_left.as_deref().map_or_else(|| "none of this kind".to_owned(), code);
            row(&mut s, &[abi(&r.removed), code(&r.removed.exported), code(&r.removed.signature()), left]);
        }
        s.push('\n');
    }
    if !d.alias_changes.is_empty() {
        let _ = writeln!(s, "### Unversioned aliases that changed meaning\n");
        let _ = writeln!(s, "Code that names `PFN_<symbol>` without a version gets another type.\n");
        table_head(&mut s, &["alias", "form", &format!("CUDA {f}"), "rule", &format!("CUDA {t}"), "rule"]);
        for a in &d.alias_changes {
            let form = match a.form {
                AliasForm::Default => "default",
                AliasForm::PerThread => "per-thread",
            };
            let m = |m: &AliasMeaning| m.target.as_deref().map_or_else(|| "none".to_owned(), code);
            row(
                &mut s,
                &[
                    code(&a.alias),
                    form.into(),
                    m(&a.from),
                    a.from.rule.as_str().into(),
                    m(&a.to),
                    a.to.rule.as_str().into(),
                ],
            );
        }
        s.push('\n');
    }
    if !d.drift.is_empty() {
        let _ = writeln!(s, "### ABI drift (same name, different ABI)\n");
        table_head(&mut s, &["PFN", "parameter", &format!("CUDA {f}"), &format!("CUDA {t}")]);
        for x in &d.drift {
            let param = x.param.as_deref().map_or_else(|| "the parameter list".to_owned(), code);
            row(&mut s, &[code(&x.pfn), param, esc(&x.before), esc(&x.after)]);
        }
        s.push('\n');
    }
    if !d.legacy_changes.is_empty() || !d.header_moves.is_empty() || !d.platform_changes.is_empty() {
        let _ = writeln!(s, "### Existing ABIs that moved\n");
        table_head(&mut s, &["PFN", "change", &format!("CUDA {f}"), &format!("CUDA {t}")]);
        let place =
            |legacy: bool| if legacy { "only under `__CUDA_API_VERSION_INTERNAL` (legacy)" } else { "always declared" };
        for c in &d.legacy_changes {
            let what = if c.to { "became legacy" } else { "no longer legacy" };
            row(&mut s, &[code(&c.pfn), what.into(), place(c.from).into(), place(c.to).into()]);
        }
        for m in &d.header_moves {
            row(&mut s, &[code(&m.pfn), "moved to another header".into(), code(&m.from), code(&m.to)]);
        }
        for c in &d.platform_changes {
            let what = if c.from.is_subset(&c.to) { "gained a platform" } else { "lost a platform" };
            row(&mut s, &[code(&c.pfn), what.into(), platforms(&c.from), platforms(&c.to)]);
        }
        s.push('\n');
    }
    if !d.headers_gained.is_empty() || !d.headers_lost.is_empty() {
        let _ = writeln!(s, "### Typedef headers gained or lost\n");
        table_head(&mut s, &["header", &format!("typedefs in CUDA {f}"), &format!("typedefs in CUDA {t}"), "change"]);
        for (h, what) in
            d.headers_gained.iter().map(|h| (h, "gained")).chain(d.headers_lost.iter().map(|h| (h, "lost")))
        {
            let name = h.file.as_ref().map_or_else(|| code(&h.header), |f| format!("{} (`{}`)", code(f), h.header));
            row(&mut s, &[name, h.from_typedefs.to_string(), h.to_typedefs.to_string(), what.into()]);
        }
        s.push('\n');
    }

    let _ = writeln!(s, "### Counts\n");
    table_head(&mut s, &["", &format!("CUDA {f}"), &format!("CUDA {t}"), "change"]);
    for c in &d.counts {
        let delta = c.to as i64 - c.from as i64;
        let delta = if delta == 0 { String::new() } else { format!("{delta:+}") };
        row(&mut s, &[esc(&c.what), c.from.to_string(), c.to.to_string(), delta]);
    }
    s
}

/// The summary block, one line per kind of change: what a reviewer reads first.
pub fn summary_lines(d: &ToolkitDiff) -> Vec<String> {
    let (f, t) = (d.from.version, d.to.version);
    let verdict = match d.verdict {
        Verdict::Unchanged => "nothing in the entry point surface changed",
        Verdict::Additive => "additions only; code built against the older toolkit is unaffected",
        Verdict::Breaking => "something code built against the older toolkit may rely on changed",
    };
    let abis = |v: &[super::SymbolChange]| v.iter().map(|c| c.entries.len()).sum::<usize>();
    let entries = d.counts.first().map_or((0, 0), |c| (c.from, c.to));
    let headers = match (d.headers_gained.len(), d.headers_lost.len()) {
        (0, 0) => "none gained or lost".to_owned(),
        (g, l) => {
            let names = |v: &[super::HeaderChange]| {
                v.iter().map(|h| format!("`{}`", h.file.as_deref().unwrap_or(&h.header))).collect::<Vec<_>>().join(", ")
            };
            let mut parts = Vec::new();
            if g > 0 {
                parts.push(format!("{g} gained ({})", names(&d.headers_gained)));
            }
            if l > 0 {
                parts.push(format!("{l} lost ({})", names(&d.headers_lost)));
            }
            parts.join(", ")
        }
    };
    let aliases: std::collections::BTreeSet<&str> = d.alias_changes.iter().map(|a| a.alias.as_str()).collect();
    let alias_line = if aliases.len() == d.alias_changes.len() {
        format!("Unversioned aliases that changed meaning: {}", aliases.len())
    } else {
        format!(
            "Unversioned aliases that changed meaning: {} ({} with their per-thread forms)",
            aliases.len(),
            d.alias_changes.len()
        )
    };
    let macros = |v: ToolkitVersion| {
        d.counts
            .iter()
            .find(|c| c.what == HEADER_ALIASES)
            .map_or(0, |c| if v == d.from.version { c.from } else { c.to })
    };
    let rules = if d.from.alias_rule == d.to.alias_rule {
        format!("Alias rule: {} in both", d.from.alias_rule.as_str())
    } else {
        format!(
            "Alias rule: {} in CUDA {f} ({}), {} in CUDA {t} ({})",
            d.from.alias_rule.as_str(),
            plural(macros(f), "header alias", "header aliases"),
            d.to.alias_rule.as_str(),
            plural(macros(t), "header alias", "header aliases")
        )
    };
    let mut lines = vec![
        format!("**Verdict: {}**: {verdict}", d.verdict.as_str()),
        format!(
            "Symbols: {} added ({}), {} removed ({})",
            d.symbols_added.len(),
            plural(abis(&d.symbols_added), "ABI", "ABIs"),
            d.symbols_removed.len(),
            plural(abis(&d.symbols_removed), "ABI", "ABIs")
        ),
        format!("New ABI versions of existing symbols: {}", d.new_versions.len()),
        format!("ABIs removed from symbols that remain: {}", d.entries_removed.len()),
        alias_line,
        rules,
        format!(
            "ABI drift: {} in {}",
            plural(d.drift.len(), "parameter", "parameters"),
            plural(d.drift.iter().map(|x| &x.pfn).collect::<std::collections::BTreeSet<_>>().len(), "PFN", "PFNs")
        ),
    ];
    if !d.legacy_changes.is_empty() || !d.header_moves.is_empty() || !d.platform_changes.is_empty() {
        lines.push(format!(
            "Existing ABIs that moved: {} in or out of the legacy guard, {} to another header, {} to other platforms",
            d.legacy_changes.len(),
            d.header_moves.len(),
            d.platform_changes.len()
        ));
    }
    lines.push(format!("Typedef headers: {headers}"));
    let delta = entries.1 as i64 - entries.0 as i64;
    lines.push(if delta == 0 {
        format!("Entries: {}, as before", entries.0)
    } else {
        format!("Entries: {} → {} ({delta:+})", entries.0, entries.1)
    });
    lines
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn table_head(s: &mut String, cols: &[&str]) {
    let _ = writeln!(s, "| {} |", cols.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(s, "|{}", " --- |".repeat(cols.len()));
}

fn row(s: &mut String, cells: &[String]) {
    let _ = writeln!(s, "| {} |", cells.join(" | "));
}

/// An ABI's name, marked when it is legacy (declared only under `__CUDA_API_VERSION_INTERNAL`)
/// or exists on one platform only.
fn abi(e: &EntryView) -> String {
    let mut s = code(&e.pfn);
    if e.legacy {
        s.push_str(" (legacy)");
    }
    if e.platforms.len() == 1 {
        s.push_str(&format!(" ({} only)", platforms(&e.platforms)));
    }
    s
}

fn platforms(p: &std::collections::BTreeSet<Platform>) -> String {
    let names: Vec<&str> = p
        .iter()
        .map(|x| match x {
            Platform::Linux => "Linux",
            Platform::Windows => "Windows",
        })
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

fn abi_exported(e: &EntryView) -> String {
    format!("{}, exported as {}", abi(e), code(&e.exported))
}

/// Inline code; a `|` would end the table cell, so it is escaped.
fn code(s: &str) -> String {
    format!("`{}`", s.replace('|', "\\|"))
}

fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}
