//! One typedef becomes one model declaration ([`declaration`]), here and only here: the
//! pipeline gathers a toolkit's units through it (`Gathered`), and the tests, the fuzz
//! targets and the bench call it for their own parses.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::bindgen_output::{self, ParsedOutput, Typedef};
use super::clang::{BindgenOutput, SourceLine};
use super::header_text;
use crate::error::{Error, Warning};
use crate::manifest::HeaderSpec;
use crate::model::{Declaration, HeaderCount};
use crate::version::ToolkitVersion;

/// One typedef as the model takes it: declared by `row`'s headers at `line`, legacy when that
/// line lies under `__CUDA_API_VERSION_INTERNAL`.
pub fn declaration(t: &Typedef, row: &HeaderSpec, line: usize, legacy: bool) -> Declaration {
    Declaration {
        pfn: t.pfn.clone(),
        symbol: t.symbol.clone(),
        version: t.version,
        variant: t.variant,
        header: row.typedefs.clone(),
        module: row.name.clone(),
        platforms: row.platforms().into_iter().collect(),
        legacy,
        line,
        params: t.params.clone(),
        returns: t.returns.clone(),
        layouts: t.layouts.clone(),
    }
}

/// Adds `d` to one toolkit's declarations. The same typedef seen by both translation units
/// (cudaGLTypedefs.h) is one declaration on both platforms, kept as first seen.
pub fn add(declarations: &mut Vec<Declaration>, d: Declaration) {
    match declarations.iter_mut().find(|x| x.pfn == d.pfn) {
        Some(x) => x.platforms.extend(d.platforms),
        None => declarations.push(d),
    }
}

/// Every typedef of one parse as declared by `row` at its own line (0 where bindgen gave none),
/// none legacy (that needs the header text): what the tests, fuzz targets and bench build
/// models from.
pub fn declarations(parsed: &ParsedOutput, row: &HeaderSpec) -> Vec<Declaration> {
    let mut out = Vec::new();
    for t in &parsed.typedefs {
        add(&mut out, declaration(t, row, t.location.as_ref().map_or(0, |l| l.line), false));
    }
    out
}

/// One toolkit's declarations, gathered over its translation units.
#[derive(Default)]
pub(super) struct Gathered {
    pub declarations: Vec<Declaration>,
    pub aliases: BTreeMap<String, crate::model::AliasTarget>,
    pub counts: BTreeMap<String, HeaderCount>,
    pub warnings: Vec<Warning>,
    /// The units' comments (the Linux unit's first).
    pub docs: crate::model::CDocs,
}

impl Gathered {
    /// Adds one unit's declarations; returns its types (everything but the `PFN_` typedefs).
    pub fn add_unit(
        &mut self,
        version: ToolkitVersion,
        rows: &[&HeaderSpec],
        dirs: &[PathBuf],
        out: &BindgenOutput,
    ) -> Result<syn::File, Error> {
        let parsed = bindgen_output::parse_bindgen(&out.rust, &out.locations)
            .map_err(|message| Error::BindgenOutput { toolkit: version, message })?;
        if let Some((name, loc, why)) = parsed.malformed.first() {
            let more = match parsed.malformed.len() - 1 {
                0 => String::new(),
                n => format!(
                    " (and {n} more: {})",
                    parsed.malformed[1..].iter().map(|m| m.0.as_str()).collect::<Vec<_>>().join(", ")
                ),
            };
            let message = format!("CUDA {version}: typedef {name} is malformed: {why}{more}");
            return Err(match loc {
                Some(l) => Error::HeaderContents { path: l.file.clone(), line: l.line, message },
                None => Error::BindgenOutput { toolkit: version, message },
            });
        }
        let find = |file: &str| dirs.iter().map(|d| d.join(file)).find(|p| p.is_file()).unwrap_or_default();
        let mut names: BTreeSet<&str> = parsed.typedefs.iter().map(|t| t.pfn.as_str()).collect();
        names.extend(parsed.unversioned.iter().chain(&parsed.unnameable).map(|(n, _)| n.as_str()));
        let symbols: BTreeSet<&str> = parsed.typedefs.iter().map(|t| t.symbol.as_str()).collect();
        // Per typedef header: the lines under the INTERNAL guard, and its alias macros.
        let mut guards: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
        for h in rows {
            let path = find(&h.typedefs);
            let bytes = crate::input::read_bytes(&path, "a typedef header")?;
            let text = String::from_utf8_lossy(&bytes);
            guards.insert(h.typedefs.as_str(), header_text::internal_guard_lines(&text));
            let found = header_text::alias_macros(&text);
            let (ok, broken) = header_text::resolve_aliases(&found, |n| names.contains(n), |s| symbols.contains(s));
            let count = self.counts.entry(h.name.clone()).or_default();
            count.aliases = found.len();
            count.broken_aliases = broken.len();
            for b in broken {
                self.warnings.push(Warning::of(
                    version,
                    format!(
                        "alias {} expands to `{}`: {}\n  --> {}:{}",
                        b.name,
                        b.expansion,
                        b.reason,
                        path.display(),
                        b.line
                    ),
                ));
            }
            self.aliases.extend(ok);
        }
        let file_of = |loc: &Option<SourceLine>| -> Option<(String, usize)> {
            let loc = loc.as_ref()?;
            Some((loc.file.file_name()?.to_string_lossy().into_owned(), loc.line))
        };
        for t in parsed.typedefs {
            let Some((file, line)) = file_of(&t.location) else {
                return Err(Error::BindgenOutput {
                    toolkit: version,
                    message: format!("no source location for {}", t.pfn),
                });
            };
            let Some(row) = rows.iter().find(|h| h.typedefs == file || h.api == file) else {
                self.warnings.push(Warning::of(
                    version,
                    format!("{} is declared in {file}, which is no manifest header; skipped", t.pfn),
                ));
                continue;
            };
            self.counts.entry(row.name.clone()).or_default().typedefs += 1;
            let legacy = guards.get(file.as_str()).is_some_and(|g| header_text::in_ranges(g, line));
            add(&mut self.declarations, declaration(&t, row, line, legacy));
        }
        let skipped = parsed.unversioned.iter().map(|u| (u, "has no `_v<version>` in its name")).chain(
            parsed
                .unnameable
                .iter()
                .map(|u| (u, "has a symbol that is a Rust keyword, which no generated type can be named after")),
        );
        for ((name, loc), why) in skipped {
            let at = file_of(loc).map(|(f, l)| format!("{f}:{l}")).unwrap_or_default();
            self.warnings.push(Warning::of(version, format!("typedef {name} {why}; skipped ({at})")));
            if let Some(row) = file_of(loc).and_then(|(f, _)| rows.iter().find(|h| h.typedefs == f || h.api == f)) {
                self.counts.entry(row.name.clone()).or_default().unversioned += 1;
            }
        }
        let empty: Vec<String> = rows
            .iter()
            .filter(|h| self.counts.get(&h.name).is_none_or(|c| c.typedefs == 0))
            .map(|h| {
                format!(
                    "  CUDA {version}: {} has no PFN_<symbol>_v<version> typedef (empty or truncated?)\n  --> {}",
                    h.typedefs,
                    find(&h.typedefs).display()
                )
            })
            .collect();
        if !empty.is_empty() {
            return Err(Error::NoTypedefs { count: empty.len(), details: empty.join("\n") });
        }
        self.docs.fill_from(parsed.docs);
        Ok(parsed.types)
    }
}
