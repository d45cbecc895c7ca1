//! `cuda-sys-gen min-driver`: the oldest driver that has every entry point a program names.
//!
//! It reads the program's Rust sources with syn for the generated crate's names of entries:
//! `entries::cuMemAlloc_v3020` (markers, `entry_table!` fields included), `api::cuCtxCreate`
//! and `cu!(cuCtxCreate(..))` (cuda.h's C names, as the newest toolkit means them), and
//! `aliases::cuda_12_9::cuCtxCreate` (as that toolkit meant them), and looks each up in the
//! crate's `registry.json`. The floor is the highest introducing version among them.
//!
//! Names are resolved the way rustc resolves these cases: through `use` (lists, renames,
//! `self`, globs, in any order, in inline modules, blocks and the files `mod x;` declares),
//! `extern crate`, the crate's name (and its renames in the program's Cargo.toml), `crate::`,
//! `self::` and `super::`, and macros (`cu!` renamed, `cu!` inside other macros' tokens). The
//! rule is that the floor is never lower than what was read: a name that resolves to something
//! not from the crate (a local `mod entries`, a variable `cuDevice` beside `use api::*`) is
//! left out, and one that may be the crate's but cannot be followed (a path through a file
//! not given) is reported as unresolved, with the floor said to be "at least". Code under
//! every `#[cfg]` counts: min-driver cannot know which features the program is built with.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
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

/// A name that may be one of the crate's but could not be followed to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    pub spelled: String,
    pub file: PathBuf,
    pub line: usize,
    /// Why it could not be followed.
    pub why: String,
}

/// The entries a program uses, highest version first; the first sets the floor.
#[derive(Debug, Clone)]
pub struct Floor {
    pub uses: Vec<Use>,
    /// Names that could not be resolved: the floor may be higher than [`Floor::version`].
    pub unresolved: Vec<Unresolved>,
}

impl Floor {
    /// The oldest driver that has every entry that was resolved (0 for none).
    pub fn version(&self) -> u32 {
        self.uses.first().map_or(0, |u| u.version)
    }

    /// The report `min-driver` prints.
    pub fn render(&self, root: &Path) -> String {
        let rel = |f: &Path| f.strip_prefix(root).unwrap_or(f).display().to_string();
        let at = |u: &Use| format!("{}:{}", rel(&u.file), u.line);
        let mut s = match self.uses.first() {
            None if self.unresolved.is_empty() => {
                return "no entry point of the generated crate is named in these sources: any driver will do\n".into();
            }
            None => "no entry point of the generated crate was resolved in these sources\n".to_owned(),
            Some(top) => {
                let least = if self.unresolved.is_empty() { "" } else { "at least " };
                let mut s = format!(
                    "oldest driver for the {} entry points used: {least}CUDA {} ({}), set by {} ({} at {})\n",
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
        };
        if !self.unresolved.is_empty() {
            s.push_str(&format!(
                "could not resolve {} name(s) that may be the crate's (the floor may be higher; pass the files \
                 they come through too):\n",
                self.unresolved.len()
            ));
            for u in &self.unresolved {
                s.push_str(&format!("  {}:{}: {} ({})\n", rel(&u.file), u.line, u.spelled, u.why));
            }
        }
        s
    }
}

fn cuda(v: u32) -> String {
    format!("{}.{}", v / 1000, v % 1000 / 10)
}

/// The floor of the `.rs` files under `sources` (files or folders; hidden folders and the
/// cargo `target/` folder of a package root skipped), by the registry at `registry`;
/// `per_thread`: C names as the crate's `per-thread-default-stream` feature means them.
pub fn floor(registry: &Path, sources: &[PathBuf], per_thread: bool) -> Result<Floor> {
    let mut reg = Registry::load(registry, per_thread)?;
    let mut files = Vec::new();
    let mut manifests = BTreeSet::new();
    for s in sources {
        collect(s, &mut files, &mut manifests)?;
        for dir in s.ancestors().skip(1) {
            if dir.join("Cargo.toml").is_file() {
                manifests.insert(dir.join("Cargo.toml"));
                break;
            }
        }
    }
    if files.is_empty() {
        bail!("no .rs files under {}", sources.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
    }
    files.sort();
    files.dedup();
    for m in &manifests {
        reg.crate_idents.extend(dependency_names(m, &reg.package));
    }
    let mut program = Program::default();
    for (index, file) in files.iter().enumerate() {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let ast = syn::parse_file(&text).map_err(|e| {
            let at = e.span().start();
            anyhow::anyhow!(
                "{}:{}:{}: not Rust that syn reads ({e}): min-driver reads the sources' names through syn",
                file.display(),
                at.line,
                at.column + 1
            )
        })?;
        program.read_file(index, file, &ast);
        drop(ast);
        // Spans are only read while a file's tree is alive: free each file's text.
        proc_macro2::extra::invalidate_current_thread_spans();
    }
    program.link_file_modules(&files);
    program.evaluate(&reg, &files)
}

/// What min-driver needs of a generated crate: its registry.json and its package name.
struct Registry {
    path: PathBuf,
    /// Marker (`cuInit_v2000`) to introducing version.
    versions: BTreeMap<String, u32>,
    /// The newest toolkit: the one `api::` follows.
    newest: String,
    /// Toolkit to C name to its marker in (default, per-thread) mode; `None`: no function.
    c_names: BTreeMap<String, BTreeMap<String, [Option<String>; 2]>>,
    per_thread: bool,
    /// The crate's package name (`cuda-driver-pfn`), from the Cargo.toml beside registry.json.
    package: String,
    /// The names the program reaches the crate by: its library name and renames of it.
    crate_idents: BTreeSet<String>,
}

impl Registry {
    fn load(path: &Path, per_thread: bool) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!("reading {} (the generated crate's registry.json; pass --registry)", path.display())
        })?;
        let json: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not the registry.json of a generated crate", path.display()))?;
        let mut versions = BTreeMap::new();
        for e in json["entries"].as_array().with_context(|| format!("{} has no `entries`", path.display()))? {
            if let (Some(pfn), Some(v)) = (e["pfn"].as_str(), e["version"].as_u64()) {
                versions.insert(unprefixed(pfn), u32::try_from(v).unwrap_or(u32::MAX));
            }
        }
        let newest =
            json["toolkits"].as_array().and_then(|t| t.last()).and_then(Value::as_str).unwrap_or("").to_owned();
        let mut c_names: BTreeMap<String, BTreeMap<String, [Option<String>; 2]>> = BTreeMap::new();
        if let Some(toolkits) = json["c_names"].as_object() {
            for (toolkit, names) in toolkits {
                let slot = c_names.entry(toolkit.clone()).or_default();
                for (name, modes) in names.as_object().into_iter().flatten() {
                    let mode = |m: &str| modes[m].as_str().map(unprefixed);
                    slot.insert(name.clone(), [mode("default"), mode("per_thread")]);
                }
            }
        }
        let package = path
            .parent()
            .map(|d| d.join("Cargo.toml"))
            .and_then(|m| std::fs::read_to_string(m).ok())
            .and_then(|t| t.parse::<toml::Table>().ok())
            .and_then(|t| t.get("package")?.get("name")?.as_str().map(str::to_owned))
            .unwrap_or_else(|| "cuda-driver-pfn".to_owned());
        let crate_idents = BTreeSet::from([package.replace('-', "_")]);
        Ok(Registry { path: path.to_owned(), versions, newest, c_names, per_thread, package, crate_idents })
    }

    /// Whether the crate's `api` (or `aliases::cuda_X_Y`) module has a function `name`.
    fn has_c_name(&self, toolkit: Option<&str>, name: &str) -> bool {
        let toolkit = toolkit.unwrap_or(&self.newest);
        self.c_names.get(toolkit).and_then(|n| n.get(name)).is_some_and(|m| m[usize::from(self.per_thread)].is_some())
    }

    /// The marker a name means, or why it has none.
    fn marker(&self, named: &Named) -> std::result::Result<String, String> {
        let newer = || format!("not in {} (misspelt, or from a newer crate: regenerate it)", self.path.display());
        match named {
            Named::Marker(m) if self.versions.contains_key(m) => Ok(m.clone()),
            Named::Marker(_) => Err(newer()),
            Named::CName { toolkit, name } => {
                let t = toolkit.as_deref().unwrap_or(&self.newest);
                let Some(names) = self.c_names.get(t) else {
                    return Err(format!(
                        "the crate pins no CUDA {t}: it has no `aliases::cuda_{}`",
                        t.replace('.', "_")
                    ));
                };
                let Some(modes) = names.get(name) else { return Err(newer()) };
                match (&modes[usize::from(self.per_thread)], self.per_thread) {
                    (Some(m), _) => Ok(m.clone()),
                    (None, true) => Err(format!(
                        "cuda.h {t} has no per-thread-default-stream function of this name (with \
                         CUDA_API_PER_THREAD_DEFAULT_STREAM it is an inline function of the header), so the crate's \
                         `per-thread-default-stream` feature has none either; call the entry through `driver.get` instead"
                    )),
                    (None, false) => Err(format!(
                        "cuda.h {t} has no function of this name without CUDA_API_PER_THREAD_DEFAULT_STREAM \
                         (only with the crate's `per-thread-default-stream` feature)"
                    )),
                }
            }
        }
    }
}

fn unprefixed(pfn: &str) -> String {
    pfn.strip_prefix("PFN_").unwrap_or(pfn).to_owned()
}

/// The names under which the Cargo.toml at `manifest` depends on `package` (`cuda = { package
/// = "cuda-driver-pfn" }` gives `cuda`), as the library names they give in Rust.
fn dependency_names(manifest: &Path, package: &str) -> Vec<String> {
    let Some(table) = std::fs::read_to_string(manifest).ok().and_then(|t| t.parse::<toml::Table>().ok()) else {
        return Vec::new();
    };
    let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut tables: Vec<&toml::Table> = kinds.iter().filter_map(|k| table.get(*k)?.as_table()).collect();
    for target in table.get("target").and_then(|t| t.as_table()).into_iter().flat_map(|t| t.values()) {
        tables.extend(kinds.iter().filter_map(|k| target.get(*k)?.as_table()));
    }
    let wanted = package.replace('-', "_");
    let mut out = Vec::new();
    for deps in tables {
        for (key, value) in deps {
            let real = value.get("package").and_then(|p| p.as_str()).unwrap_or(key);
            if real.replace('-', "_") == wanted {
                out.push(key.replace('-', "_"));
            }
        }
    }
    out
}

/// The `.rs` files under `path`, and the Cargo.toml of every package root passed on the way.
/// Hidden folders are skipped, and `target` only where it is a package root's (beside a
/// Cargo.toml): a module folder of that name is read.
fn collect(path: &Path, out: &mut Vec<PathBuf>, manifests: &mut BTreeSet<PathBuf>) -> Result<()> {
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
    let package_root = path.join("Cargo.toml").is_file();
    if package_root {
        manifests.insert(path.join("Cargo.toml"));
    }
    for p in entries {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') || (package_root && name == "target") {
            continue;
        }
        if p.is_dir() {
            collect(&p, out, manifests)?;
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

fn is_c_name(s: &str) -> bool {
    s.len() > 2 && s.starts_with("cu") && s[2..].starts_with(|c: char| c.is_ascii_uppercase())
}

type ScopeId = usize;

/// A path as written: `::a::b` (`leading`), its segments and where it starts.
#[derive(Debug, Clone)]
struct PathText {
    leading: bool,
    segments: Vec<String>,
}

impl PathText {
    fn spelled(&self) -> String {
        format!("{}{}", if self.leading { "::" } else { "" }, self.segments.join("::"))
    }
}

/// What a name is bound to in a scope.
#[derive(Debug, Clone)]
enum Binding {
    /// `use path` (or `use path as name`), resolved in the scope of the `use`.
    Use { path: PathText, scope: ScopeId },
    /// An item the program declares here (`macro_ns`: a `macro_rules!`).
    Own { macro_ns: bool },
    /// A module of the program: inline, or a file `mod x;` declares.
    Module(ScopeId),
    /// `mod x;` whose file is not linked yet ([`Program::link_file_modules`]).
    FileModule,
    /// `extern crate x as y`: the crate `x`.
    ExternCrate(String),
}

#[derive(Debug, Default)]
struct Scope {
    /// A block's scope sees its parent's names; a module's does not (its parent is `super`).
    block: bool,
    parent: Option<ScopeId>,
    names: BTreeMap<String, Vec<Binding>>,
    globs: Vec<(PathText, ScopeId)>,
    /// For a file's root: the file, and whether its name says it is a crate root.
    file_root: Option<(usize, bool)>,
    /// Where `mod x;` in this module looks for x.rs and x/mod.rs.
    dir: PathBuf,
}

/// What a path resolves to.
#[derive(Debug, Clone)]
enum Res {
    /// The generated crate's root.
    Crate,
    /// One of its modules (`["api"]`, `["aliases", "cuda_12_9"]`).
    Module(Vec<String>),
    /// An entry.
    Entry(Named),
    /// Its `cu!`.
    CuMacro,
    /// A module of the program.
    Local(ScopeId),
    /// Something that is not the crate's: the program's own, another crate's, a local variable.
    Other,
    /// Could not be followed, and why.
    Unknown(String),
}

/// Something in the sources that may name an entry.
#[derive(Debug, Clone)]
enum Occurrence {
    /// A path (`api::cuInit`, `cuInit`), in a scope.
    Path { path: PathText, scope: ScopeId, file: usize, line: usize },
    /// A macro call: its path, where, and the first word of its tokens (what `cu!` calls); the
    /// occurrences inside its tokens follow it.
    Macro { path: PathText, scope: ScopeId, file: usize, line: usize, first: Option<(String, usize)> },
    /// A `use` that names an entry: counted when nothing else names it.
    Import { name: String, spelled: String, scope: ScopeId, file: usize, line: usize },
}

/// Every file's scopes and occurrences.
#[derive(Default)]
struct Program {
    scopes: Vec<Scope>,
    occurrences: Vec<Occurrence>,
    /// `mod x;` declarations: (declaring scope, name, candidate files).
    file_mods: Vec<(ScopeId, String, Vec<PathBuf>)>,
    /// Each file's root scope, and its path.
    roots: Vec<ScopeId>,
    paths: Vec<PathBuf>,
}

/// How deep `use` chains are followed (a cycle of imports is an error rustc reports).
const MAX_DEPTH: usize = 32;

impl Program {
    fn new_scope(&mut self, scope: Scope) -> ScopeId {
        self.scopes.push(scope);
        self.scopes.len() - 1
    }

    fn read_file(&mut self, index: usize, file: &Path, ast: &syn::File) {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let parent_dir = file.parent().map(Path::to_owned).unwrap_or_default();
        let under = |d: &str| file.components().any(|c| c.as_os_str() == d);
        let crate_root = matches!(name.as_str(), "main.rs" | "lib.rs" | "build.rs")
            || under("examples")
            || under("tests")
            || under("benches")
            || parent_dir.ends_with("src/bin");
        // `mod x;` in a mod.rs, lib.rs or main.rs is beside it; in foo.rs it is in foo/.
        let dir = if matches!(name.as_str(), "mod.rs" | "lib.rs" | "main.rs") {
            parent_dir
        } else {
            parent_dir.join(name.trim_end_matches(".rs"))
        };
        let root = self.new_scope(Scope { file_root: Some((index, crate_root)), dir, ..Scope::default() });
        self.roots.push(root);
        self.paths.push(file.to_owned());
        let mut reader = Reader { program: self, scope: root, file: index };
        for item in &ast.items {
            reader.declare(item);
        }
        syn::visit::Visit::visit_file(&mut reader, ast);
    }

    /// Links each `mod x;` to the file it names, where that file was read; one that was not
    /// read is the program's own module (its names are not the crate's).
    fn link_file_modules(&mut self, files: &[PathBuf]) {
        let by_path: BTreeMap<&Path, usize> = files.iter().enumerate().map(|(i, f)| (f.as_path(), i)).collect();
        for (scope, name, candidates) in std::mem::take(&mut self.file_mods) {
            let found = candidates.iter().find_map(|c| by_path.get(c.as_path())).map(|&i| self.roots[i]);
            let binding = match found {
                Some(root) if self.scopes[root].parent.is_none() && root != scope => {
                    self.scopes[root].parent = Some(scope);
                    Binding::Module(root)
                }
                _ => Binding::Own { macro_ns: false },
            };
            if let Some(bindings) = self.scopes[scope].names.get_mut(&name) {
                for b in bindings.iter_mut().filter(|b| matches!(b, Binding::FileModule)) {
                    *b = binding.clone();
                }
            }
        }
    }

    /// The module a scope is in (itself, or the module around a block).
    fn module_of(&self, mut s: ScopeId) -> ScopeId {
        while self.scopes[s].block {
            match self.scopes[s].parent {
                Some(p) => s = p,
                None => break,
            }
        }
        s
    }

    /// The root module of the crate a scope is in, and whether that is known to be a crate root.
    fn crate_root_of(&self, s: ScopeId) -> (ScopeId, bool) {
        let mut m = self.module_of(s);
        while let Some(p) = self.scopes[m].parent {
            m = self.module_of(p);
        }
        (m, self.scopes[m].file_root.is_some_and(|(_, root)| root))
    }

    /// A name in a scope and those around it, as rustc looks it up: the scope's own names,
    /// its globs, then (blocks) the enclosing scope's; at a module, the extern prelude.
    fn resolve_name(&self, reg: &Registry, scope: ScopeId, name: &str, macro_ns: bool, depth: usize) -> Res {
        let mut s = scope;
        let mut unknown = None;
        loop {
            if let Some(r) = self.own_name(reg, s, name, macro_ns, depth) {
                return r;
            }
            match self.glob_name(reg, s, name, macro_ns, depth) {
                Some(Res::Unknown(why)) => unknown = unknown.or(Some(why)),
                Some(r) => return r,
                None => {}
            }
            let sc = &self.scopes[s];
            match (sc.block, sc.parent) {
                (true, Some(p)) => s = p,
                _ => break,
            }
        }
        if !macro_ns && reg.crate_idents.contains(name) {
            return Res::Crate;
        }
        if let Some(why) = unknown {
            return Res::Unknown(why);
        }
        if macro_ns && name == "cu" {
            // No `use` brings it in: `#[macro_use] extern crate`, or a file not given.
            return Res::CuMacro;
        }
        Res::Other
    }

    /// A name bound in the scope itself (a `use` or an item), in the namespace asked for.
    fn own_name(&self, reg: &Registry, s: ScopeId, name: &str, macro_ns: bool, depth: usize) -> Option<Res> {
        let bindings = self.scopes[s].names.get(name)?;
        let mut fallback = None;
        for b in bindings {
            let r = match b {
                Binding::Use { path, scope } => self.resolve_path(reg, *scope, path, macro_ns, depth + 1),
                Binding::Own { macro_ns: m } if *m != macro_ns => continue,
                Binding::Own { .. } => Res::Other,
                Binding::Module(_) | Binding::FileModule | Binding::ExternCrate(_) if macro_ns => continue,
                Binding::Module(id) => Res::Local(*id),
                Binding::FileModule => Res::Other,
                Binding::ExternCrate(c) if reg.crate_idents.contains(c) => Res::Crate,
                Binding::ExternCrate(_) => Res::Other,
            };
            // A `use` imports every namespace: `cu` may be the crate's macro and a module alias.
            match (&r, macro_ns) {
                (Res::CuMacro, false) => continue,
                (Res::Crate | Res::Module(_) | Res::Local(_), true) => continue,
                (Res::Entry(_), true) => continue,
                (Res::Other | Res::Unknown(_), _) => fallback = fallback.or(Some(r)),
                _ => return Some(r),
            }
        }
        fallback
    }

    /// A name brought in by a glob of the scope: `None` when no glob has it.
    fn glob_name(&self, reg: &Registry, s: ScopeId, name: &str, macro_ns: bool, depth: usize) -> Option<Res> {
        let mut unknown = None;
        for (path, from) in &self.scopes[s].globs {
            match self.resolve_path(reg, *from, path, false, depth + 1) {
                Res::Unknown(why) => unknown = unknown.or(Some(Res::Unknown(why))),
                source => {
                    if let Some(r) = self.member(reg, &source, name, macro_ns, false, depth + 1) {
                        return Some(r);
                    }
                }
            }
        }
        unknown
    }

    /// A path from a scope: its head looked up (or `crate`, `self`, `super`, `::`), then each
    /// segment in what the previous one resolved to. An entry ends it (`entries::X::VERSION`).
    fn resolve_path(&self, reg: &Registry, scope: ScopeId, path: &PathText, macro_ns: bool, depth: usize) -> Res {
        if depth > MAX_DEPTH {
            return Res::Unknown("a chain of `use` too long to follow".into());
        }
        let Some((head, rest)) = path.segments.split_first() else { return Res::Other };
        let last_ns = |rest: &[String]| macro_ns && rest.is_empty();
        let mut res = if path.leading {
            if reg.crate_idents.contains(head) {
                Res::Crate
            } else {
                Res::Other
            }
        } else {
            match head.as_str() {
                "crate" => match self.crate_root_of(scope) {
                    (root, true) => Res::Local(root),
                    (root, false) => Res::Unknown(format!(
                        "`crate::` of a file whose crate root is not among the sources (read from {})",
                        self.file_name_of(root)
                    )),
                },
                "self" => Res::Local(self.module_of(scope)),
                "super" => match self.scopes[self.module_of(scope)].parent {
                    Some(p) => Res::Local(self.module_of(p)),
                    None => Res::Unknown("`super::` of a file whose parent module is not among the sources".into()),
                },
                "Self" => Res::Other,
                _ => self.resolve_name(reg, scope, head, last_ns(rest), depth),
            }
        };
        for (i, seg) in rest.iter().enumerate() {
            if matches!(res, Res::Entry(_)) {
                break;
            }
            let ns = last_ns(&rest[i + 1..]);
            res = match seg.as_str() {
                "super" => match &res {
                    Res::Local(m) => match self.scopes[*m].parent {
                        Some(p) => Res::Local(self.module_of(p)),
                        None => Res::Unknown("`super::` past the sources' root".into()),
                    },
                    _ => Res::Other,
                },
                "self" => res,
                _ => self.member(reg, &res, seg, ns, true, depth).unwrap_or(Res::Other),
            };
        }
        res
    }

    /// `name` inside what `of` resolved to. `explicit`: written out as a path (a misspelt C
    /// name is then an error); otherwise through a glob, where a name the module does not
    /// have is `None` (a local variable beside `use api::*`).
    fn member(
        &self,
        reg: &Registry,
        of: &Res,
        name: &str,
        macro_ns: bool,
        explicit: bool,
        depth: usize,
    ) -> Option<Res> {
        let c_name = |toolkit: Option<String>| {
            let known = reg.has_c_name(toolkit.as_deref(), name)
                || reg.c_names.get(toolkit.as_deref().unwrap_or(&reg.newest)).is_some_and(|n| n.contains_key(name));
            if known || (explicit && is_c_name(name)) {
                Some(Res::Entry(Named::CName { toolkit, name: name.to_owned() }))
            } else if explicit {
                Some(Res::Other)
            } else {
                None
            }
        };
        match of {
            Res::Crate => match (name, macro_ns) {
                ("cu", true) => Some(Res::CuMacro),
                (_, true) => explicit.then_some(Res::Other),
                ("api" | "entries" | "aliases" | "registry", false) => Some(Res::Module(vec![name.to_owned()])),
                _ => explicit.then_some(Res::Other),
            },
            Res::Module(m) => match (m.iter().map(String::as_str).collect::<Vec<_>>().as_slice(), macro_ns) {
                (_, true) => explicit.then_some(Res::Other),
                (["api"], _) => c_name(None),
                (["entries"], _) if reg.versions.contains_key(name) || (explicit && is_c_name(name)) => {
                    Some(Res::Entry(Named::Marker(name.to_owned())))
                }
                (["registry"], _) if name == "entries" => Some(Res::Module(vec!["entries".into()])),
                (["aliases"], _) if name.starts_with("cuda_") => {
                    Some(Res::Module(vec!["aliases".into(), name.to_owned()]))
                }
                (["aliases", t], _) => c_name(Some(t["cuda_".len().min(t.len())..].replacen('_', ".", 1))),
                _ => explicit.then_some(Res::Other),
            },
            Res::Local(m) => {
                let found = self.own_name(reg, *m, name, macro_ns, depth);
                let found = found.or_else(|| self.glob_name(reg, *m, name, macro_ns, depth));
                let scope = &self.scopes[*m];
                // A file read on its own may be a module whose parent re-exports the name.
                let partial = scope.parent.is_none() && scope.file_root.is_some_and(|(_, root)| !root);
                match found {
                    Some(r) => Some(r),
                    None if !explicit => None,
                    None if partial => Some(Res::Unknown(format!(
                        "`{name}` is not declared in {}, and the crate root that declares it as a module is not \
                         among the sources",
                        self.file_name_of(*m)
                    ))),
                    None => Some(Res::Other),
                }
            }
            Res::Unknown(why) => Some(Res::Unknown(why.clone())),
            Res::Entry(_) | Res::CuMacro | Res::Other => explicit.then_some(Res::Other),
        }
    }

    /// The file a scope is in.
    fn file_name_of(&self, s: ScopeId) -> String {
        let (m, _) = self.crate_root_of(s);
        match self.scopes[m].file_root.and_then(|(i, _)| self.paths.get(i)) {
            Some(p) => p.display().to_string(),
            None => "its file".into(),
        }
    }

    /// Resolves every occurrence: the entries used (first use of each), the names that are
    /// not in the registry (an error), and those that could not be followed.
    fn evaluate(&self, reg: &Registry, files: &[PathBuf]) -> Result<Floor> {
        let mut uses: BTreeMap<String, Use> = BTreeMap::new();
        let mut imports = Vec::new();
        let mut errors = Vec::new();
        let mut unresolved = Vec::new();
        let mut found =
            |named: &Named, spelled: String, file: usize, line: usize, uses: &mut BTreeMap<String, Use>| match reg
                .marker(named)
            {
                Ok(marker) => {
                    let version = reg.versions.get(&marker).copied().unwrap_or(u32::MAX);
                    uses.entry(marker.clone()).or_insert(Use {
                        marker,
                        version,
                        spelled,
                        file: files[file].clone(),
                        line,
                    });
                }
                Err(why) => errors.push(format!("{}:{line}: {spelled}: {why}", files[file].display())),
            };
        for occ in &self.occurrences {
            match occ {
                Occurrence::Path { path, scope, file, line } => match self.resolve_path(reg, *scope, path, false, 0) {
                    Res::Entry(named) => found(&named, path.spelled(), *file, *line, &mut uses),
                    Res::Unknown(why) if looks_like_ours(reg, &path.segments) => unresolved.push(Unresolved {
                        spelled: path.spelled(),
                        file: files[*file].clone(),
                        line: *line,
                        why,
                    }),
                    _ => {}
                },
                Occurrence::Macro { path, scope, file, line, first } => {
                    match self.resolve_path(reg, *scope, path, true, 0) {
                        Res::CuMacro => {
                            if let Some((name, at)) = first {
                                let named = Named::CName { toolkit: None, name: name.clone() };
                                found(&named, format!("{}!({name})", path.spelled()), *file, *at, &mut uses);
                            }
                        }
                        Res::Unknown(why) if path.segments.last().is_some_and(|s| s == "cu") => {
                            unresolved.push(Unresolved {
                                spelled: format!("{}!", path.spelled()),
                                file: files[*file].clone(),
                                line: *line,
                                why,
                            })
                        }
                        _ => {}
                    }
                }
                Occurrence::Import { .. } => imports.push(occ),
            }
        }
        // An entry brought in by `use` and named nowhere the reader could see still counts.
        for occ in imports {
            let Occurrence::Import { name, spelled, scope, file, line } = occ else { continue };
            let path = PathText { leading: false, segments: vec![name.clone()] };
            if let Res::Entry(named) = self.resolve_path(reg, *scope, &path, false, 0) {
                if let Ok(marker) = reg.marker(&named) {
                    if !uses.contains_key(&marker) {
                        found(&named, format!("use {spelled}"), *file, *line, &mut uses);
                    }
                }
            }
        }
        if !errors.is_empty() {
            errors.sort();
            errors.dedup();
            bail!(
                "{} name(s) of the crate cannot be resolved to an entry point:\n  {}",
                errors.len(),
                errors.join("\n  ")
            );
        }
        let mut uses: Vec<Use> = uses.into_values().collect();
        uses.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| a.marker.cmp(&b.marker)));
        Ok(Floor { uses, unresolved })
    }
}

/// Whether an unresolved path may be one of the crate's: it goes through `entries`, `api` or
/// `aliases`, or ends in a name the registry knows.
fn looks_like_ours(reg: &Registry, segments: &[String]) -> bool {
    segments.iter().any(|s| matches!(s.as_str(), "entries" | "api" | "aliases"))
        || segments.last().is_some_and(|s| reg.versions.contains_key(s) || reg.has_c_name(None, s))
}

/// The syn visitor of one file: declares each scope's names and records occurrences.
struct Reader<'p> {
    program: &'p mut Program,
    scope: ScopeId,
    file: usize,
}

fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

impl Reader<'_> {
    fn bind(&mut self, name: String, binding: Binding) {
        self.program.scopes[self.scope].names.entry(name).or_default().push(binding);
    }

    /// The names an item declares in the current scope (before anything is resolved).
    fn declare(&mut self, item: &syn::Item) {
        let own = |i: &syn::Ident| (i.to_string(), Binding::Own { macro_ns: false });
        let named = match item {
            syn::Item::Use(u) => {
                self.use_tree(&mut PathText { leading: u.leading_colon.is_some(), segments: Vec::new() }, &u.tree);
                return;
            }
            syn::Item::ExternCrate(e) => {
                let name = e.rename.as_ref().map_or(&e.ident, |(_, r)| r).to_string();
                self.bind(name, Binding::ExternCrate(e.ident.to_string()));
                return;
            }
            syn::Item::Mod(m) if m.content.is_none() => {
                let name = m.ident.to_string();
                let dir = self.program.scopes[self.scope].dir.clone();
                let path_attr = m.attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
                    syn::Meta::NameValue(nv) => match &nv.value {
                        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                        _ => None,
                    },
                    _ => None,
                });
                let candidates = match path_attr {
                    Some(p) => vec![dir.join(p)],
                    None => vec![dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")],
                };
                self.program.file_mods.push((self.scope, name.clone(), candidates.clone()));
                self.bind(name, Binding::FileModule);
                return;
            }
            syn::Item::Mod(_) => return, // bound when visited, with its scope
            syn::Item::Macro(m) => match &m.ident {
                Some(i) => (i.to_string(), Binding::Own { macro_ns: true }),
                None => return,
            },
            syn::Item::Fn(f) => own(&f.sig.ident),
            syn::Item::Struct(s) => own(&s.ident),
            syn::Item::Enum(e) => own(&e.ident),
            syn::Item::Union(u) => own(&u.ident),
            syn::Item::Trait(t) => own(&t.ident),
            syn::Item::TraitAlias(t) => own(&t.ident),
            syn::Item::Type(t) => own(&t.ident),
            syn::Item::Const(c) => own(&c.ident),
            syn::Item::Static(s) => own(&s.ident),
            _ => return,
        };
        self.bind(named.0, named.1);
    }

    fn use_tree(&mut self, prefix: &mut PathText, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.segments.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.segments.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident, &n.ident),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, &r.ident, &r.rename),
            syn::UseTree::Glob(_) => {
                let scope = self.scope;
                self.program.scopes[scope].globs.push((prefix.clone(), scope));
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &PathText, name: &syn::Ident, local: &syn::Ident) {
        let mut path = prefix.clone();
        // `use a::b::{self}` and `{self as x}` name the module `a::b`.
        if name != "self" {
            path.segments.push(name.to_string());
        }
        let local_name =
            if local == "self" { prefix.segments.last().cloned().unwrap_or_default() } else { local.to_string() };
        if local_name == "_" || local_name.is_empty() {
            return;
        }
        let line = line_of(local.span());
        let (scope, file) = (self.scope, self.file);
        let spelled = path.spelled();
        self.bind(local_name.clone(), Binding::Use { path, scope });
        self.program.occurrences.push(Occurrence::Import { name: local_name, spelled, scope, file, line });
    }

    fn path_occurrence(&mut self, leading: bool, segments: Vec<String>, line: usize) {
        let (scope, file) = (self.scope, self.file);
        self.program.occurrences.push(Occurrence::Path { path: PathText { leading, segments }, scope, file, line });
    }

    /// A macro call: its path, the first word of its tokens, and what its tokens hold (paths,
    /// and macro calls at any depth: `assert!(cu!(..).is_ok())`).
    fn macro_call(&mut self, path: PathText, line: usize, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let first = match trees.first() {
            Some(TokenTree::Ident(i)) => Some((i.to_string(), line_of(i.span()))),
            _ => None,
        };
        let (scope, file) = (self.scope, self.file);
        self.program.occurrences.push(Occurrence::Macro { path, scope, file, line, first });
        self.tokens(&trees);
    }

    /// Paths and macro calls in a macro's tokens.
    fn tokens(&mut self, trees: &[TokenTree]) {
        let mut i = 0;
        while i < trees.len() {
            let after_dot_or_dollar =
                i > 0 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.' || p.as_char() == '$');
            let colons = |j: usize| {
                matches!((trees.get(j), trees.get(j + 1)), (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                    if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
            };
            let leading = colons(i) && matches!(trees.get(i + 2), Some(TokenTree::Ident(_)));
            let path_start = !after_dot_or_dollar && (leading || matches!(trees[i], TokenTree::Ident(_)));
            match &trees[i] {
                TokenTree::Group(g) => {
                    let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                    self.tokens(&inner);
                    i += 1;
                }
                _ if path_start => {
                    let start = if leading { i + 2 } else { i };
                    let TokenTree::Ident(head) = &trees[start] else {
                        i += 1;
                        continue;
                    };
                    let line = line_of(head.span());
                    let mut segments = vec![head.to_string()];
                    let mut j = start + 1;
                    while colons(j) {
                        match trees.get(j + 2) {
                            Some(TokenTree::Ident(next)) => {
                                segments.push(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    // `name!(..)`, `name![..]`, `name!{..}`: a macro call inside the tokens.
                    let bang = matches!(trees.get(j), Some(TokenTree::Punct(p)) if p.as_char() == '!');
                    match (bang, trees.get(j + 1)) {
                        (true, Some(TokenTree::Group(g))) if g.delimiter() != Delimiter::None => {
                            self.macro_call(PathText { leading, segments }, line, g.stream());
                            i = j + 2;
                        }
                        _ => {
                            self.path_occurrence(leading, segments, line);
                            i = j;
                        }
                    }
                }
                _ => i += 1,
            }
        }
    }

    fn in_scope(&mut self, scope: Scope, f: impl FnOnce(&mut Self)) -> ScopeId {
        let id = self.program.new_scope(scope);
        let outer = std::mem::replace(&mut self.scope, id);
        f(self);
        self.scope = outer;
        id
    }
}

impl<'ast> syn::visit::Visit<'ast> for Reader<'_> {
    fn visit_item_use(&mut self, _: &'ast syn::ItemUse) {
        // Declared with the scope's other items (`declare`).
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let Some((_, items)) = &m.content else { return };
        let dir = self.program.scopes[self.scope].dir.join(m.ident.to_string());
        let parent = self.program.module_of(self.scope);
        let id = self.in_scope(Scope { parent: Some(parent), dir, ..Scope::default() }, |r| {
            for item in items {
                r.declare(item);
            }
            for item in items {
                syn::visit::Visit::visit_item(r, item);
            }
        });
        self.bind(m.ident.to_string(), Binding::Module(id));
    }

    fn visit_block(&mut self, b: &'ast syn::Block) {
        let dir = self.program.scopes[self.scope].dir.clone();
        let parent = self.scope;
        self.in_scope(Scope { block: true, parent: Some(parent), dir, ..Scope::default() }, |r| {
            for stmt in &b.stmts {
                if let syn::Stmt::Item(item) = stmt {
                    r.declare(item);
                }
            }
            syn::visit::visit_block(r, b);
        });
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = p.segments.first().map_or(0, |s| line_of(s.ident.span()));
        self.path_occurrence(p.leading_colon.is_some(), segments, line);
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let path = PathText {
            leading: m.path.leading_colon.is_some(),
            segments: m.path.segments.iter().map(|s| s.ident.to_string()).collect(),
        };
        if path.segments.len() == 1 && path.segments[0] == "macro_rules" {
            // A definition: calls in its body count (they are the program's calls, made
            // wherever it expands).
            let trees: Vec<TokenTree> = m.tokens.clone().into_iter().collect();
            self.tokens(&trees);
            return;
        }
        let line = m.path.segments.first().map_or(0, |s| line_of(s.ident.span()));
        self.macro_call(path, line, m.tokens.clone());
    }
}
