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
/// folders skipped), by the registry at `registry`; `per_thread`: C names as the crate's
/// `per-thread-default-stream` feature means them.
pub fn floor(registry: &Path, sources: &[PathBuf], per_thread: bool) -> Result<Floor> {
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
    let mode = if per_thread { "per_thread" } else { "default" };
    let c_name = |toolkit: &str, name: &str| -> Option<String> {
        let pfn = json["c_names"][toolkit][name][mode].as_str()?;
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
        let ast = syn::parse_file(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}: not Rust that syn reads ({e}): min-driver reads the sources' names through syn",
                file.display()
            )
        })?;
        // `use` items first, wherever they are, so that names used before them resolve.
        let mut finder = Finder::default();
        for item in &ast.items {
            if let syn::Item::Use(u) = item {
                finder.use_tree(&mut Vec::new(), &u.tree);
            }
        }
        syn::visit::Visit::visit_file(&mut finder, &ast);
        let entries_glob = finder.entries_glob;
        for (spelled, named) in finder.found {
            let line = first_line(&text, &spelled);
            let marker = match &named {
                Named::Marker(m) => Some(m.clone()),
                Named::CName { toolkit, name } => c_name(toolkit.as_deref().unwrap_or(&newest), name),
            };
            let Some(marker) = marker else {
                unknown.push(format!("{}:{line}: {spelled}", file.display()));
                continue;
            };
            let Some(&version) = versions.get(&marker) else {
                // A bare identifier after `use entries::*` that is no marker: not ours.
                if !entries_glob || spelled.contains("::") {
                    unknown.push(format!("{}:{line}: {spelled}", file.display()));
                }
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

/// How a source names an entry: a marker, or a C name of a toolkit (`None`: the newest).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Named {
    Marker(String),
    CName { toolkit: Option<String>, name: String },
}

/// Every entry a Rust file names, as spelled, in order: paths through `entries`, `api` and
/// `aliases::cuda_X_Y` (after `use` too, globs included), `cu!(cuX(..))`, and paths inside
/// other macros' tokens (`entry_table!`).
#[derive(Default)]
struct Finder {
    found: Vec<(String, Named)>,
    /// Local names `use` brought in: `cuInit` -> what it names.
    imported: BTreeMap<String, Named>,
    api_glob: bool,
    entries_glob: bool,
    aliases_glob: Option<String>,
}

fn is_c_name(s: &str) -> bool {
    s.len() > 2 && s.starts_with("cu") && s[2..].starts_with(|c: char| c.is_ascii_uppercase())
}

impl Finder {
    /// What a path's segments name, if anything.
    fn classify(segments: &[String]) -> Option<Named> {
        for (i, s) in segments.iter().enumerate() {
            let next = segments.get(i + 1)?;
            match s.as_str() {
                "entries" => return Some(Named::Marker(next.clone())),
                "api" if is_c_name(next) => return Some(Named::CName { toolkit: None, name: next.clone() }),
                "aliases" => {
                    let version = next.strip_prefix("cuda_")?.replacen('_', ".", 1);
                    let name = segments.get(i + 2).filter(|n| is_c_name(n))?;
                    return Some(Named::CName { toolkit: Some(version), name: name.clone() });
                }
                _ => {}
            }
        }
        None
    }

    fn path(&mut self, segments: Vec<String>) {
        let spelled = segments.join("::");
        if let Some(named) = Self::classify(&segments) {
            self.found.push((spelled, named));
        } else if let [one] = segments.as_slice() {
            if let Some(named) = self.imported.get(one).cloned() {
                self.found.push((spelled, named));
            } else if self.api_glob && is_c_name(one) {
                self.found.push((spelled, Named::CName { toolkit: None, name: one.clone() }));
            } else if let Some(t) = self.aliases_glob.clone().filter(|_| is_c_name(one)) {
                self.found.push((spelled, Named::CName { toolkit: Some(t), name: one.clone() }));
            } else if self.entries_glob && is_c_name(one) && one.contains("_v") {
                // A bare marker after `use entries::*`; the registry says whether it is one.
                self.found.push((spelled, Named::Marker(one.clone())));
            }
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident.to_string(), &n.ident.to_string()),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, &r.ident.to_string(), &r.rename.to_string()),
            syn::UseTree::Glob(_) => match prefix.last().map(String::as_str) {
                Some("api") => self.api_glob = true,
                Some("entries") => self.entries_glob = true,
                Some(m) if m.starts_with("cuda_") && prefix.iter().any(|s| s == "aliases") => {
                    self.aliases_glob = Some(m["cuda_".len()..].replacen('_', ".", 1));
                }
                _ => {}
            },
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], name: &str, local: &str) {
        let mut full = prefix.to_vec();
        full.push(name.to_owned());
        if let Some(named) = Self::classify(&full) {
            self.imported.insert(local.to_owned(), named);
        }
    }

    /// A macro's tokens as text: `cu!(cuX(..))` names `api::cuX`; any `a :: b :: c` in any
    /// macro is read as a path.
    fn macro_tokens(&mut self, mac: &syn::Macro) {
        let tokens: Vec<String> = mac.tokens.clone().into_iter().flat_map(flatten).collect();
        if mac.path.segments.last().is_some_and(|s| s.ident == "cu") {
            if let Some(first) = tokens.iter().find(|t| is_c_name(t)) {
                self.found.push((format!("cu!({first})"), Named::CName { toolkit: None, name: first.clone() }));
            }
            return;
        }
        let mut i = 0;
        while i < tokens.len() {
            let mut segments = vec![tokens[i].clone()];
            while tokens.get(i + 1).is_some_and(|t| t == "::") && tokens.get(i + 2).is_some() {
                segments.push(tokens[i + 2].clone());
                i += 2;
            }
            self.path(segments);
            i += 1;
        }
    }
}

/// A token tree as its words and `::` separators, groups opened.
fn flatten(tt: proc_macro2::TokenTree) -> Vec<String> {
    match tt {
        proc_macro2::TokenTree::Group(g) => g.stream().into_iter().flat_map(flatten).collect(),
        proc_macro2::TokenTree::Ident(i) => vec![i.to_string()],
        proc_macro2::TokenTree::Punct(p) if p.as_char() == ':' => vec![":".into()],
        other => vec![other.to_string()],
    }
    .into_iter()
    .fold(Vec::new(), |mut acc: Vec<String>, t| {
        if t == ":" && acc.last().is_some_and(|l| l == ":") {
            acc.pop();
            acc.push("::".into());
        } else {
            acc.push(t);
        }
        acc
    })
}

impl<'ast> syn::visit::Visit<'ast> for Finder {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.path(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.macro_tokens(m);
    }
}

/// The first line (1-based) of `text`, comments aside, that spells a use as `spelled` does:
/// its last name, and `cu!(` for a macro call.
fn first_line(text: &str, spelled: &str) -> usize {
    let word =
        spelled.rsplit(|c: char| !(c == '_' || c.is_ascii_alphanumeric())).find(|w| !w.is_empty()).unwrap_or(spelled);
    let is_macro = spelled.starts_with("cu!(");
    text.lines()
        .position(|l| {
            let code = l.trim_start();
            !code.starts_with("//") && code.contains(word) && (!is_macro || code.contains("cu!("))
        })
        .map_or(1, |i| i + 1)
}
