//! `cuda-sys-gen min-driver`: the oldest driver that has every entry point a program names.
//!
//! It reads the program's Rust sources for the generated crate's names of entries:
//! `entries::cuMemAlloc_v3020` (markers, `entry_table!` fields included), `api::cuCtxCreate`
//! and `cu!(cuCtxCreate(..))` (cuda.h's C names, as the newest toolkit means them), and
//! `aliases::cuda_12_9::cuCtxCreate` (as that toolkit meant them), and looks each up in the
//! crate's `registry.json`. The floor is the highest introducing version among them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// One use of an entry in the sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Use {
    /// The entry's marker (`cuCtxCreate_v12050`).
    pub marker: String,
    /// Its introducing version: the oldest driver that has it.
    pub version: u32,
    /// How the source names it (`api::cuCtxCreate`), and where (first use).
    pub spelled: String,
    pub file: PathBuf,
    pub line: usize,
}

/// The entries a program uses, highest version first; the first sets the floor.
#[derive(Debug, Clone)]
pub struct Floor {
    pub uses: Vec<Use>,
}

impl Floor {
    /// The oldest driver that has every entry (0 for none).
    pub fn version(&self) -> u32 {
        self.uses.first().map_or(0, |u| u.version)
    }

    /// The report `min-driver` prints.
    pub fn render(&self, root: &Path) -> String {
        let at = |u: &Use| format!("{}:{}", u.file.strip_prefix(root).unwrap_or(&u.file).display(), u.line);
        let Some(top) = self.uses.first() else {
            return "no entry point of the generated crate is named in these sources: any driver will do\n".into();
        };
        let mut s = format!(
            "oldest driver for the {} entry points used: CUDA {} ({}), set by {} ({} at {})\n",
            self.uses.len(),
            cuda(top.version),
            top.version,
            top.marker,
            top.spelled,
            at(top)
        );
        for u in &self.uses {
            s.push_str(&format!("  {:>5}  {:<34} {:<28} {}\n", u.version, u.marker, u.spelled, at(u)));
        }
        s
    }
}

fn cuda(v: u32) -> String {
    format!("{}.{}", v / 1000, v % 1000 / 10)
}

/// The floor of the `.rs` files under `sources` (files or folders; `target/` and hidden
/// folders skipped), by the registry at `registry`.
pub fn floor(registry: &Path, sources: &[PathBuf]) -> Result<Floor> {
    let text = std::fs::read_to_string(registry).with_context(|| {
        format!("reading {} (the generated crate's registry.json; pass --registry)", registry.display())
    })?;
    let json: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not the registry.json of a generated crate", registry.display()))?;
    let mut versions: BTreeMap<String, u32> = BTreeMap::new();
    for e in json["entries"].as_array().with_context(|| format!("{} has no `entries`", registry.display()))? {
        if let (Some(pfn), Some(v)) = (e["pfn"].as_str(), e["version"].as_u64()) {
            versions.insert(pfn.strip_prefix("PFN_").unwrap_or(pfn).to_owned(), v as u32);
        }
    }
    let newest = json["toolkits"].as_array().and_then(|t| t.last()).and_then(Value::as_str).unwrap_or("").to_owned();
    let c_name = |toolkit: &str, name: &str| -> Option<String> {
        let pfn = json["c_names"][toolkit][name]["default"].as_str()?;
        Some(pfn.strip_prefix("PFN_").unwrap_or(pfn).to_owned())
    };
    let mut files = Vec::new();
    for s in sources {
        collect(s, &mut files)?;
    }
    if files.is_empty() {
        bail!("no .rs files under {}", sources.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
    }
    let mut uses: BTreeMap<String, Use> = BTreeMap::new();
    let mut unknown = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        for (line, spelled, marker) in names_in(&text, &newest, &c_name) {
            let Some(marker) = marker else {
                unknown.push(format!("{}:{line}: {spelled}", file.display()));
                continue;
            };
            let Some(&version) = versions.get(&marker) else {
                unknown.push(format!("{}:{line}: {spelled}", file.display()));
                continue;
            };
            uses.entry(marker.clone()).or_insert(Use { marker, version, spelled, file: file.clone(), line });
        }
    }
    if !unknown.is_empty() {
        bail!(
            "{} name(s) are not in {} (misspelt, or from a newer crate: regenerate it):\n  {}",
            unknown.len(),
            registry.display(),
            unknown.join("\n  ")
        );
    }
    let mut uses: Vec<Use> = uses.into_values().collect();
    uses.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| a.marker.cmp(&b.marker)));
    Ok(Floor { uses })
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if meta.is_file() {
        out.push(path.to_owned());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("listing {}", path.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("listing {}", path.display()))?;
    entries.sort();
    for p in entries {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if p.is_dir() {
            collect(&p, out)?;
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// `(line, as spelled, marker)` of every entry name in `text`; `None` for a C name that the
/// registry lacks.
fn names_in(
    text: &str,
    newest: &str,
    c_name: &dyn Fn(&str, &str) -> Option<String>,
) -> Vec<(usize, String, Option<String>)> {
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect() };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for (prefix, kind) in [("entries::", 0), ("api::", 1), ("cu!(", 1), ("aliases::", 2)] {
            let mut rest = code;
            while let Some(at) = rest.find(prefix) {
                rest = &rest[at + prefix.len()..];
                let after = rest.trim_start();
                match kind {
                    0 => {
                        let name = ident(after);
                        if !name.is_empty() {
                            out.push((i + 1, format!("entries::{name}"), Some(name)));
                        }
                    }
                    1 => {
                        let name = ident(after);
                        // api's own items (`api::check`, `api::UNAVAILABLE`) are no entries.
                        if name.starts_with("cu") && name[2..].starts_with(|c: char| c.is_ascii_uppercase()) {
                            out.push((i + 1, format!("api::{name}"), c_name(newest, &name)));
                        }
                    }
                    _ => {
                        // aliases::cuda_12_9::cuCtxCreate
                        let module = ident(after);
                        let Some(version) = module.strip_prefix("cuda_").map(|v| v.replacen('_', ".", 1)) else {
                            continue;
                        };
                        let Some(name) = after[module.len()..].strip_prefix("::").map(ident) else { continue };
                        if name.starts_with("cu") {
                            out.push((i + 1, format!("aliases::{module}::{name}"), c_name(&version, &name)));
                        }
                    }
                }
            }
        }
    }
    out
}
