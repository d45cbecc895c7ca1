//! What min-driver reads of a generated crate's `registry.json`, and every name by which a
//! program can reach one of its entries.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::{Context, Result};
use codegen::answer_rule::{entry_floor, pick, Pick};
use codegen::record_format::EntryRecord;
use codegen::registry_json;

/// One entry: what a floor needs of it.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// The marker's name (`cuCtxCreate_v12050`).
    pub marker: String,
    /// The oldest driver that has it: `version`, or higher where the drivers were measured.
    pub floor: u32,
    pub default_variant: bool,
    pub symbol: String,
    pub version: u32,
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
    /// Per exported name (`cuCtxCreate_v4`), its entry.
    exported: HashMap<String, usize>,
}

impl Registry {
    pub fn load(path: &Path) -> Result<Self> {
        let text = codegen::input::read_text(path, "the generated crate's registry.json").with_context(|| {
            format!("reading {} (the generated crate's registry.json; pass --registry)", path.display())
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// The registry of `text`, a registry.json; `origin` names it in an error.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        let json = registry_json::Registry::parse(text).map_err(|why| {
            anyhow::anyhow!("{origin} is not the registry.json of a crate cuda-sys-gen generated: {why}")
        })?;
        let mut reg = Registry {
            entries: Vec::new(),
            toolkits: json.toolkits.iter().map(|t| t.to_string()).collect(),
            names: HashMap::new(),
            by_symbol: HashMap::new(),
            exported: HashMap::new(),
        };
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
            reg.exported.insert(e.exported.clone(), index);
            reg.entries.push(Entry {
                marker,
                floor: entry_floor(e.version, e.min_driver),
                default_variant: e.variant.is_none(),
                symbol: e.symbol.clone(),
                version: e.version,
            });
        }
        // What each C name (a mode may have none) and each `PFN_x` alias means, per toolkit.
        let c_names = json
            .c_names
            .iter()
            .flat_map(|(t, names)| names.iter().map(move |(n, m)| (t, n, [m.default.as_ref(), m.per_thread.as_ref()])));
        let aliases = json
            .header_aliases
            .iter()
            .flat_map(|(t, names)| names.iter().map(move |(n, m)| (t, n, [Some(&m.default), Some(&m.per_thread)])));
        for (toolkit, name, modes) in c_names.chain(aliases) {
            let meant: Vec<usize> = modes.into_iter().flatten().filter_map(|pfn| by_pfn.get(pfn).copied()).collect();
            reg.names.entry(name.clone()).or_default().c_name.entry(toolkit.to_string()).or_default().extend(meant);
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

    /// The entry a lookup of `symbol` at exactly `version` asks for, of the per-thread
    /// variants or the default one; of two per-thread variants, the higher floor.
    pub fn entry_of(&self, symbol: &str, version: u32, per_thread: bool) -> Option<usize> {
        let all = self.by_symbol.get(symbol)?;
        let matching = all
            .iter()
            .copied()
            .filter(|&i| self.entries[i].version == version && self.entries[i].default_variant != per_thread);
        self.highest(matching)
    }

    /// The entry a driver that has every ABI answers a lookup of `symbol` at `version` with
    /// (of the per-thread variants or the default ones, as `per_thread` asks): by the answer
    /// rule itself ([`pick`]), the newest ABI at or below `version`.
    pub fn newest_at(&self, symbol: &str, version: u32, per_thread: bool) -> Option<usize> {
        let all = self.by_symbol.get(symbol)?;
        let abis = all.iter().map(|&i| (i, self.entries[i].version, !self.entries[i].default_variant));
        let flags = u64::from(EntryRecord::flags_for(per_thread));
        match pick(abis, i32::try_from(version).unwrap_or(i32::MAX), flags, 0) {
            Pick::Abi(i) => Some(i),
            _ => None,
        }
    }

    /// The entry a library exports under `name` (`cuCtxCreate_v4`).
    pub fn by_exported(&self, name: &str) -> Option<usize> {
        self.exported.get(name).copied()
    }

    /// The highest meaning of a name a program's strings hold: an exported name is its entry;
    /// a symbol, a C name or an alias its highest ABI (a lookup by that name may ask for it).
    pub fn highest_meaning(&self, name: &str) -> Option<usize> {
        if let Some(e) = self.by_exported(name).filter(|&e| self.entries[e].symbol != name) {
            return Some(e);
        }
        let m = self.names.get(name)?;
        let of_symbol = m.symbol.iter().flat_map(|s| self.by_symbol.get(s).into_iter().flatten().copied());
        let all = m.exact.iter().copied().chain(m.c_name.values().flatten().copied()).chain(of_symbol);
        self.highest(all)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `newest_at` is the answer rule's: each entry asked at its own version with its own kind
    /// of flag is an ABI of that version and kind; between ABIs, the older; below the first
    /// per-thread variant with the per-thread flag, nothing (measured on 470 to 555).
    #[test]
    fn newest_at_answers_by_the_rule() {
        let reg = Registry::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/registry.json")).unwrap();
        for e in &reg.entries {
            let got = reg.newest_at(&e.symbol, e.version, !e.default_variant).map(|i| &reg.entries[i]);
            assert!(
                got.is_some_and(|g| g.version == e.version && g.default_variant == e.default_variant),
                "{}: {:?}",
                e.marker,
                got.map(|g| &g.marker)
            );
        }
        let marker = |symbol: &str, version: u32, per_thread: bool| {
            reg.newest_at(symbol, version, per_thread).map(|i| reg.entries[i].marker.as_str())
        };
        assert_eq!(marker("cuCtxCreate", 12040, false), Some("cuCtxCreate_v11040"));
        assert_eq!(marker("cuMemcpy", 7000, true), Some("cuMemcpy_v7000_ptds"));
        assert_eq!(marker("cuMemcpy", 6999, true), None);
        assert_eq!(marker("cuMemcpy", 7000, false), Some("cuMemcpy_v4000"));
        assert_eq!(marker("cuNoSuchThing", 12000, false), None);
    }
}
