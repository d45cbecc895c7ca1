//! What min-driver reads of a generated crate's `registry.json`, and every name by which a
//! program can reach one of its entries.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

/// The parts of `registry.json` min-driver reads.
#[derive(Deserialize)]
struct Json {
    schema: u32,
    toolkits: Vec<String>,
    entries: Vec<EntryJson>,
    #[serde(default)]
    header_aliases: BTreeMap<String, BTreeMap<String, Modes>>,
    #[serde(default)]
    c_names: BTreeMap<String, BTreeMap<String, Modes>>,
}

#[derive(Deserialize)]
struct EntryJson {
    symbol: String,
    version: u32,
    variant: Option<String>,
    pfn: String,
    exported: String,
    /// Where NVIDIA's drivers were measured to need more than `version` (none: `version`).
    #[serde(default)]
    min_driver: Option<u32>,
}

/// A name's meaning in the two stream modes (`None`: no such function in that mode).
#[derive(Deserialize)]
struct Modes {
    default: Option<String>,
    per_thread: Option<String>,
}

/// One entry: what a floor needs of it.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// The marker's name (`cuCtxCreate_v12050`).
    pub marker: String,
    /// The oldest driver that has it: `version`, or higher where the drivers were measured.
    pub floor: u32,
    pub default_variant: bool,
}

/// Everything a name can mean.
#[derive(Debug, Default)]
pub(super) struct Meanings {
    /// Exactly these entries, whatever the path: a marker, a `PFN_` typedef, an exported name.
    pub exact: Vec<usize>,
    /// As a C name (`api::`, `cu!`, `aliases::cuda_X_Y::`), per toolkit: both stream modes.
    pub c_name: BTreeMap<String, Vec<usize>>,
    /// The symbol, as `symbols::` names it for `Driver::newest`.
    pub symbol: Option<String>,
}

/// A generated crate's registry, indexed by name.
pub(super) struct Registry {
    pub entries: Vec<Entry>,
    pub toolkits: Vec<String>,
    names: HashMap<String, Meanings>,
    /// Per symbol, its entries.
    by_symbol: HashMap<String, Vec<usize>>,
}

impl Registry {
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!("reading {} (the generated crate's registry.json; pass --registry)", path.display())
        })?;
        let json: Json = serde_json::from_str(&text).with_context(|| {
            format!("{} is not the registry.json of a crate cuda-sys-gen generated (regenerate it)", path.display())
        })?;
        if json.schema != 1 {
            anyhow::bail!(
                "{} has registry schema {}; this min-driver reads schema 1: use the cuda-sys-gen that generated it",
                path.display(),
                json.schema
            );
        }
        let mut reg =
            Registry { entries: Vec::new(), toolkits: json.toolkits, names: HashMap::new(), by_symbol: HashMap::new() };
        let mut by_pfn = HashMap::new();
        for e in json.entries {
            let index = reg.entries.len();
            let marker = e.pfn.strip_prefix("PFN_").unwrap_or(&e.pfn).to_owned();
            by_pfn.insert(e.pfn.clone(), index);
            for name in [marker.clone(), e.pfn.clone(), e.exported.clone()] {
                reg.names.entry(name).or_default().exact.push(index);
            }
            reg.names.entry(e.symbol.clone()).or_default().symbol = Some(e.symbol.clone());
            reg.by_symbol.entry(e.symbol.clone()).or_default().push(index);
            reg.entries.push(Entry {
                marker,
                floor: e.min_driver.unwrap_or(e.version).max(e.version),
                default_variant: e.variant.is_none(),
            });
        }
        for tables in [&json.c_names, &json.header_aliases] {
            for (toolkit, names) in tables {
                for (name, modes) in names {
                    let meant: Vec<usize> = [&modes.default, &modes.per_thread]
                        .into_iter()
                        .flatten()
                        .filter_map(|pfn| by_pfn.get(pfn).copied())
                        .collect();
                    reg.names.entry(name.clone()).or_default().c_name.entry(toolkit.clone()).or_default().extend(meant);
                }
            }
        }
        Ok(reg)
    }

    pub fn meanings(&self, name: &str) -> Option<&Meanings> {
        self.names.get(name)
    }

    /// The highest floor among `entries` (the first of equals).
    pub fn highest(&self, entries: impl IntoIterator<Item = usize>) -> Option<usize> {
        entries.into_iter().fold(None, |best, i| match best {
            Some(b) if self.entries[b].floor >= self.entries[i].floor => Some(b),
            _ => Some(i),
        })
    }

    /// The entry `Driver::newest::<symbols::S>()` needs at the least: its oldest ABI of the
    /// default variant (both of its orders end with those), else its oldest of any.
    pub fn oldest_of_symbol(&self, symbol: &str) -> Option<usize> {
        let all = self.by_symbol.get(symbol)?;
        let default: Vec<usize> = all.iter().copied().filter(|&i| self.entries[i].default_variant).collect();
        let pool = if default.is_empty() { all.clone() } else { default };
        pool.into_iter().min_by_key(|&i| (self.entries[i].floor, i))
    }
}
