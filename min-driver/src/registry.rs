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
    /// The names a program's strings are searched for, as a trie.
    trie: NameTrie,
}

/// Every name with a meaning that starts `cu` and a capital letter (what a program's strings
/// are searched for), as a trie over the 63 bytes of identifiers, each node a row of 64 next
/// nodes: the longest name at one place of a program's strings is found with one table read
/// per byte, walking at most as far as some name goes on from there. A program's other `cu…`
/// words (`cuDNN`, `cuBLAS`, C++ names) leave the trie within a few bytes, where trying each
/// prefix of the word in a hash map hashed up to 80 prefixes of up to 80 bytes each. (About
/// 11,000 nodes for the 1,560 names of 17 toolkits: under 3 MB.)
#[derive(Debug, Default)]
pub(super) struct NameTrie {
    /// Row `node * 64 + class`: the next node (0: none; the root, node 0, is no one's next).
    next: Vec<u32>,
    /// Whether a name ends at each node.
    ends: Vec<bool>,
}

/// An identifier's byte as 1 to 63; 0 for any other byte (it ends every walk).
const fn class_of(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0' + 1,
        b'A'..=b'Z' => b - b'A' + 11,
        b'a'..=b'z' => b - b'a' + 37,
        b'_' => 63,
        _ => 0,
    }
}

/// [`class_of`] of every byte, read once per byte of a walk.
const CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = class_of(b as u8);
        b += 1;
    }
    t
};

fn class(b: u8) -> usize {
    usize::from(CLASSES[usize::from(b)])
}

impl NameTrie {
    /// Adds `name`; a name with a byte no identifier has is left out.
    fn insert(&mut self, name: &[u8]) {
        if name.iter().any(|&b| class(b) == 0) || u32::try_from(self.ends.len() + name.len()).is_err() {
            return;
        }
        if self.ends.is_empty() {
            self.next.resize(64, 0);
            self.ends.push(false);
        }
        let mut node = 0usize;
        for &b in name {
            let slot = node * 64 + class(b);
            node = match self.next[slot] {
                0 => {
                    let new = self.ends.len();
                    self.next[slot] = new as u32;
                    self.next.resize(self.next.len() + 64, 0);
                    self.ends.push(false);
                    new
                }
                n => n as usize,
            };
        }
        self.ends[node] = true;
    }

    /// How many nodes it has (each name ends at one of its own).
    pub fn nodes(&self) -> usize {
        self.ends.len()
    }

    /// The length of the longest name that starts `bytes`, and the node where it ends.
    pub fn longest(&self, bytes: &[u8]) -> Option<(usize, usize)> {
        let (mut node, mut best) = (0usize, None);
        for (i, &b) in bytes.iter().enumerate() {
            let c = class(b);
            match self.next.get(node * 64 + c) {
                Some(&n) if c != 0 && n != 0 => node = n as usize,
                _ => break,
            }
            if self.ends[node] {
                best = Some((i + 1, node));
            }
        }
        best
    }
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
            trie: NameTrie::default(),
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
        let mut trie = NameTrie::default();
        for name in reg.names.keys() {
            let b = name.as_bytes();
            if b.starts_with(b"cu")
                && b.get(2).is_some_and(u8::is_ascii_uppercase)
                && reg.highest_meaning(name).is_some()
            {
                trie.insert(b);
            }
        }
        reg.trie = trie;
        Ok(reg)
    }

    /// The trie of the names a program's strings are searched for.
    pub fn trie(&self) -> &NameTrie {
        &self.trie
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

    /// Whether `name` is an entry's marker and nothing else (`cuMemAlloc_v3020`): the
    /// generated crate's own name for an ABI, which no CUDA library, runtime or header-built
    /// program holds as a string; its tables (`ENTRIES`, registry.json) hold every one.
    pub fn is_marker_only(&self, name: &str) -> bool {
        self.by_exported(name).is_none()
            && self.names.get(name).is_some_and(|m| m.exact.iter().any(|&e| self.entries[e].marker == name))
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
