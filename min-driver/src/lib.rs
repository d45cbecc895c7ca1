//! The oldest driver that runs a program (`cuda-sys-gen min-driver`, a thin caller of [`run`]),
//! from the compiled program (`binary.rs` collects its evidence, `model.rs` decides what it can
//! do at run time and what it needs: exact for the code linked into the files given) or from its
//! Rust sources (`scan.rs`, an estimate before a build). A library of its own, so that other
//! programs (a stand-in libcuda's run-time floor) use the same readers. What it reads and how it answers, for users, is
//! docs/min-driver.md; this is how the code keeps its one promise.
//!
//! # A floor that cannot be too low
//! A floor lower than the truth is the one wrong answer (users ship it), so it holds by
//! construction rather than by resolving names as rustc does (a resolver on syntax cannot see
//! through macros, other crates' re-exports, build settings or values known at run time):
//!
//! - In a binary, every lookup of the generated crate leaves a record of its entry
//!   (`EntryRecord`, read from the allocated sections), and only the code that looks the entry up
//!   points at it, so the linker keeps exactly the records of the code it keeps. A lookup by a
//!   name or version known only at run time leaves one that makes the floor "at least"; so do a
//!   program's own lookups by name beside records, and names read from a program's strings (one
//!   it builds at run time is in none of them). Imports of libcuda count exactly; the CUDA
//!   runtime a program links counts as what that runtime needs.
//! - In sources, every token of every file is read, macro bodies and invocations included, and
//!   every identifier or string that is a name of the registry counts at its highest meaning;
//!   a meaning is narrowed only on proof (`aliases::cuda_X_Y::`, `symbols::`, where the path
//!   provably starts at the crate). Whatever cannot be seen (a path dependency not found, a
//!   name or version passed as a value, `paste!`, a kernel file read at run time) is listed,
//!   and the floor is then "at least".
//! - Kernels: the CUDA release that first JIT-compiles a PTX ISA or supports an architecture
//!   ([`releases`], NVIDIA's tables); a fatbin entry that cannot be decompressed is "at least".
//! - Every reader is linear in its input and advances on every step (each folder walked once,
//!   every container loop bounded by its own extent), so hostile input ends, with an error
//!   naming the file.
//!
//! The price is a floor that can be higher than needed, never lower.

// A list of the ranges of a section that hold data is often one range, the whole section.
#![allow(clippy::single_range_in_vec_init)]

mod binary;
mod extents;
mod kernels;
pub mod load;
mod model;
mod registry;
pub mod releases;
pub mod runs;
mod scan;
pub mod trace;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use kernels::{Image, Need};
use registry::Registry;
use releases::{cuda_text, Platform, Releases};

/// One entry point the sources need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Use {
    /// The entry's marker (`cuCtxCreate_v12050`).
    pub marker: String,
    /// The oldest driver that has it (`major * 1000 + minor * 10`): its introducing version,
    /// or later where NVIDIA's drivers were measured to lack it (registry.json's `min_driver`).
    pub version: u32,
    /// How the source names it (`api::cuCtxCreate`, `cu!(cuCtxCreate)`), at its first use.
    pub spelled: String,
    pub file: PathBuf,
    pub line: usize,
    /// How the name was read: `exact` (a marker, typedef or exported name), `highest` (a name
    /// of several meanings, counted as the highest), `toolkit` (`aliases::cuda_X_Y::`) or
    /// `oldest ABI` (`symbols::`, for `Driver::newest`).
    pub read_as: &'static str,
    /// What gave it: `source` (the source scan), `record` (a record of the generated crate
    /// in a compiled program), `import` (a libcuda function it imports) or `string` (a
    /// registry name among its strings, in a program that looks functions up by name).
    pub reading: Reading,
}

/// What gave a need, or what could not be read: the kind of evidence. Serialized (`--json`) and
/// shown in the report by its lowercase name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reading {
    /// The source scan of Rust files.
    Source,
    /// A record of the generated crate in a compiled program.
    Record,
    /// A libcuda function the program imports.
    Import,
    /// A registry name among its strings, in a program that looks functions up by name.
    String,
    /// A kernel image the program embeds (a cubin, or PTX no cubin stands beside).
    Kernel,
    /// PTX of a fatbin that also holds cubins: JIT-compiled only for a GPU none of them runs on.
    Jit,
    /// The CUDA runtime it links or holds, or a lookup by a name or version known at run time.
    Runtime,
    /// Something the program can do at run time that is not read (the model's capabilities).
    Capability,
    /// A `cuGetProcAddress` request of a run, and the ABI it was answered with.
    Request,
    /// A driver function a run called by its exported name.
    Export,
}

impl Reading {
    /// The name the report and `--json` give it.
    pub fn as_str(self) -> &'static str {
        match self {
            Reading::Source => "source",
            Reading::Record => "record",
            Reading::Import => "import",
            Reading::String => "string",
            Reading::Kernel => "kernel",
            Reading::Jit => "jit",
            Reading::Runtime => "runtime",
            Reading::Capability => "capability",
            Reading::Request => "request",
            Reading::Export => "export",
        }
    }
}

impl std::fmt::Display for Reading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, not `write_str`: the report's columns are width-formatted.
        f.pad(self.as_str())
    }
}

/// A kernel image the sources embed, and the CUDA release it needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kernel {
    /// What it needs: `PTX ISA 8.5`, `sm_90a`.
    pub needs: String,
    /// The first CUDA release that has it (`major * 1000 + minor * 10`).
    pub version: u32,
    /// Where that was read: `kernels/add.ptx: .version 8.5`.
    pub what: String,
    pub file: PathBuf,
    pub line: usize,
    /// `source`, `kernel` (an image a compiled program embeds), `jit` (PTX of a fatbin that
    /// also holds cubins: the driver JIT-compiles it only for a GPU none of them runs on) or
    /// `runtime` (the CUDA runtime it links).
    pub reading: Reading,
}

/// Something that may raise the floor but could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unresolved {
    pub spelled: String,
    pub file: PathBuf,
    pub line: usize,
    /// Why it could not be read, and what to do.
    pub why: String,
    /// `source`, or what part of a compiled program (`runtime`: a lookup by a name or
    /// version known only at run time; `kernel`, `record`).
    pub reading: Reading,
}

impl Unresolved {
    /// What the source scan could not read, at `file:line`.
    fn in_source(spelled: String, file: &Path, line: usize, why: String) -> Unresolved {
        Unresolved { reading: Reading::Source, spelled, file: file.to_owned(), line, why }
    }
}

/// What a program needs, highest first.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Floor {
    pub uses: Vec<Use>,
    pub kernels: Vec<Kernel>,
    /// What could not be read: the floor may be higher than [`Floor::version`].
    pub unresolved: Vec<Unresolved>,
    /// Build scripts and the files only they include: not counted.
    pub build_only: Vec<PathBuf>,
    /// Where a compiled program was read: each program, its format and its records.
    pub programs: Vec<String>,
    /// With `--arch`: the fatbin entries the driver does not load on that GPU.
    pub unused: Vec<String>,
    /// Shared libraries the programs need that were not read (not given too): what they ask
    /// the driver for is not counted, so the floor is "at least".
    pub not_read: Vec<String>,
    /// What a file is where it is no program (a CUDA driver library).
    pub notes: Vec<String>,
    /// The majors of the CUDA runtimes the programs link or hold: each needs at least NVIDIA's
    /// minimum driver for its minor version compatibility.
    pub runtimes: Vec<u32>,
    /// The GPUs every fatbin with cubins holds a cubin for (`sm_90`): on those, the `jit`
    /// kernels are not loaded.
    pub cubin_gpus: Vec<String>,
}

/// Where a floor comes from: an entry point or a kernel.
#[derive(Debug, Clone, Copy)]
pub enum Setter<'a> {
    Entry(&'a Use),
    Kernel(&'a Kernel),
}

impl Floor {
    /// The oldest CUDA driver version that has everything that was read (0 for nothing).
    pub fn version(&self) -> u32 {
        self.setter().map_or(0, |s| match s {
            Setter::Entry(u) => u.version,
            Setter::Kernel(k) => k.version,
        })
    }

    /// Whether something could not be read, so that the floor is only a lower bound.
    pub fn at_least(&self) -> bool {
        !self.unresolved.is_empty() || !self.not_read.is_empty()
    }

    /// Whether every need above CUDA `cuda` was read from strings only (a program that names
    /// functions at run time, counted at their highest meaning): an upper estimate, which
    /// proves nothing about a driver below it.
    pub fn upper_estimate_above(&self, cuda: u32) -> bool {
        let (entries, kernels) = self.missing_on(cuda);
        !entries.is_empty() && kernels.is_empty() && entries.iter().all(|u| u.reading == Reading::String)
    }

    /// The oldest driver of `platform` for everything read: NVIDIA's row for the floor, or a
    /// runtime's minor version compatibility minimum where that is higher (11.x: 450.80.02,
    /// above 11.0's own 450.51.05). The driver and the CUDA release of the row it comes from.
    pub fn driver(&self, releases: &Releases, platform: Platform) -> Option<(String, u32)> {
        let v = self.version();
        let row = releases.driver_for(v, platform).map(|(d, at)| (d.to_owned(), at));
        let compat = self
            .runtimes
            .iter()
            .filter_map(|&m| releases.compat_for(m, platform).map(|d| (d.to_owned(), m * 1000)))
            .max_by_key(|(d, _)| releases::driver_number(d));
        match (row, compat) {
            (Some(r), Some(c)) if releases::driver_number(&c.0) > releases::driver_number(&r.0) && c.1 >= v => Some(c),
            (Some(r), _) => Some(r),
            (None, c) => c,
        }
    }

    /// What sets the floor: the highest entry, or a kernel above it.
    pub fn setter(&self) -> Option<Setter<'_>> {
        match (self.uses.first(), self.kernels.first()) {
            (Some(u), Some(k)) if k.version > u.version => Some(Setter::Kernel(k)),
            (Some(u), _) => Some(Setter::Entry(u)),
            (None, Some(k)) => Some(Setter::Kernel(k)),
            (None, None) => None,
        }
    }

    /// The floor on every GPU the files hold a cubin for: everything but the PTX the driver
    /// JIT-compiles only for other GPUs (`jit`). `None` where no need is `jit`.
    pub fn version_with_cubins(&self) -> Option<u32> {
        if !self.kernels.iter().any(|k| k.reading == Reading::Jit) {
            return None;
        }
        let uses = self.uses.iter().map(|u| u.version);
        let kernels = self.kernels.iter().filter(|k| k.reading != Reading::Jit).map(|k| k.version);
        Some(uses.chain(kernels).max().unwrap_or(0))
    }

    /// What a driver of CUDA `cuda` lacks: entries and kernels above it.
    pub fn missing_on(&self, cuda: u32) -> (Vec<&Use>, Vec<&Kernel>) {
        (
            self.uses.iter().filter(|u| u.version > cuda).collect(),
            self.kernels.iter().filter(|k| k.version > cuda).collect(),
        )
    }

    /// The report `min-driver` prints; paths relative to `root`.
    pub fn render(&self, root: &Path, releases: Option<&Releases>) -> String {
        let rel = |f: &Path| f.strip_prefix(root).unwrap_or(f).display().to_string();
        let least = if self.at_least() { "at least " } else { "" };
        let mut s = String::new();
        for p in &self.programs {
            s.push_str(&format!("read from {p}\n"));
        }
        let these = match self.programs.len() {
            0 => "these sources",
            1 if self.programs[0].contains(", read as a kernel") => "this kernel file",
            1 if self.programs[0].contains("a member of an archive") => "this archive member",
            1 if self.programs[0].contains("object file (.o") => "this object file",
            1 => "this file",
            _ => "these files",
        };
        for n in &self.notes {
            s.push_str(&format!("{n}\n"));
        }
        // A driver library has no floor of its own: its note is the headline.
        let drivers = self.notes.iter().any(|n| n.starts_with(model::DRIVER_NOTE));
        s.push_str(&match self.setter() {
            None if drivers && !self.at_least() => String::new(),
            None if !self.at_least() => format!(
                "no entry point of the generated crate, no driver function and no kernel is named in {these}: any \
                 driver will do\n"
            ),
            None => format!("nothing that sets a floor could be read in {these}, and what could not may set one\n"),
            Some(setter) => {
                let (counted, version, name, spelled, file, line) = match setter {
                    Setter::Entry(u) => {
                        (format!("{} entry points used", self.uses.len()), u.version, &u.marker, &u.spelled, &u.file, u.line)
                    }
                    Setter::Kernel(k) => (
                        format!("{} entry points and {} kernel needs", self.uses.len(), self.kernels.len()),
                        k.version,
                        &k.needs,
                        &k.what,
                        &k.file,
                        k.line,
                    ),
                };
                format!(
                    "oldest driver for the {counted}: {least}CUDA {} ({version}), set by {name} ({spelled} at {}:{line})\n",
                    cuda_text(version),
                    rel(file)
                )
            }
        });
        if !self.programs.is_empty() {
            // No source lines in a compiled program: `at file:0` is the program itself.
            if let Some(cut) = s.rfind(" at ").filter(|_| s.ends_with(":0)\n")) {
                s.truncate(cut);
                s.push_str(")\n");
            }
            // What was read, said for what the files are: kernel files hold no lookups, and a
            // driver library has no floor of its own.
            let kernel_files = self.programs.iter().all(|p| p.contains(", read as a kernel"));
            let only_drivers = self.setter().is_none() && drivers && !self.at_least();
            if kernel_files {
                s.push_str(
                    "  (read from the kernel files given: every PTX module and cubin they hold; a cubin loads only on \
                     the GPUs of its architecture, the driver JIT-compiles PTX for the others)\n",
                );
            } else if !only_drivers {
                s.push_str(
                    "  (read from the files given: every lookup through the generated crate, every libcuda import, \
                     the runtime it links or holds and the kernels it embeds, also one taken only on some paths; \
                     what it can do at run time that is not read, it names below, and the floor is then \"at \
                     least\")\n",
                );
            }
            if self.uses.iter().any(|u| u.reading == Reading::String) {
                s.push_str(
                    "  (names read from strings count at their highest meaning: an upper estimate of the need, not \
                     the need; `cuda-sys-gen min-driver --run` observes the floor of a run, docs/min-driver.md)\n",
                );
            }
        }
        if let Some(cubins) = self.version_with_cubins().filter(|&c| c < self.version()) {
            let gpus = if self.cubin_gpus.is_empty() {
                "a GPU each fatbin holds a cubin for (no GPU is named by all of them)".to_owned()
            } else {
                format!("a GPU every fatbin holds a cubin for ({})", self.cubin_gpus.join(", "))
            };
            s.push_str(&format!(
                "  on {gpus}: {least}CUDA {} ({cubins}); JIT-compiling its PTX for any other GPU: {least}CUDA {} (pass \
                 --arch for one GPU)\n",
                cuda_text(cubins),
                cuda_text(self.version())
            ));
        }
        for u in &self.uses {
            let how = match u.read_as {
                "exact" => String::new(),
                other => format!(" ({other})"),
            };
            let at = format!("{}:{}", rel(&u.file), u.line);
            s.push_str(&row(u.version, &u.marker, &u.spelled, u.reading, &at, &how));
        }
        if !self.kernels.is_empty() {
            s.push_str(&format!("kernels ({}):\n", self.kernels.len()));
            for k in &self.kernels {
                let at = format!("{}:{}", rel(&k.file), k.line);
                s.push_str(&row(k.version, &k.needs, &k.what, k.reading, &at, ""));
            }
        }
        if !self.unresolved.is_empty() {
            s.push_str(&format!("could not read {} thing(s) that may raise the floor:\n", self.unresolved.len()));
            for u in &self.unresolved {
                if u.reading == Reading::Source {
                    s.push_str(&format!("  {}:{}: {} ({})\n", rel(&u.file), u.line, u.spelled, u.why));
                } else {
                    s.push_str(&format!("  {} [{}]: {}\n", u.spelled, u.reading, u.why));
                }
            }
        }
        for lib in &self.not_read {
            s.push_str(&format!("  not read: {lib} (pass it too)\n"));
        }
        if !self.unused.is_empty() {
            s.push_str(&format!("not loaded on this GPU ({}), not counted:\n", self.unused.len()));
            for u in &self.unused {
                s.push_str(&format!("  {u}\n"));
            }
        }
        for b in &self.build_only {
            s.push_str(&format!("  not counted: {} (a build script's: it runs where the program is built)\n", rel(b)));
        }
        if let (Some(r), v) = (releases, self.version()) {
            if v > 0 {
                s.push_str(&driver_lines(self, r, v, self.at_least()));
            }
        }
        s
    }
}

/// One line of the report's entries or kernels: the version, what is needed, how it is
/// spelled and where: at a source line (`at`), or for a compiled program the part it was
/// read from (`reading`: a program has no lines).
fn row(version: u32, needs: &str, spelled: &str, reading: Reading, at: &str, how: &str) -> String {
    if reading == Reading::Source {
        format!("  {version:>5}  {needs:<34} {spelled:<28} {at}{how}\n")
    } else {
        format!("  {version:>5}  {needs:<34} {reading:<7} {spelled}{how}\n")
    }
}

/// "Install at least ..." for each platform of NVIDIA's table.
fn driver_lines(floor: &Floor, r: &Releases, v: u32, at_least: bool) -> String {
    let least = if at_least { "at least " } else { "" };
    let mut s = String::new();
    for p in Platform::ALL {
        let found = floor.driver(r, p);
        if let Some((driver, at)) = found.as_ref().filter(|(d, at)| {
            *at % 1000 == 0 && floor.runtimes.contains(&(at / 1000)) && r.compat_for(at / 1000, p) == Some(d.as_str())
        }) {
            s.push_str(&format!(
                "{} driver: {least}{driver} (NVIDIA's minimum for minor version compatibility of a CUDA {}.x runtime)\n",
                p.driver_name(),
                at / 1000
            ));
            continue;
        }
        match found.as_ref().map(|(d, at)| (d.as_str(), *at)) {
            Some((driver, at)) if at == v => s.push_str(&format!(
                "{} driver: {least}{driver} (NVIDIA's minimum for CUDA {})\n",
                p.driver_name(),
                cuda_text(v)
            )),
            Some((driver, at)) => s.push_str(&format!(
                "{} driver: {least}{driver} (NVIDIA's minimum for CUDA {}; CUDA {}'s row is not known here)\n",
                p.driver_name(),
                cuda_text(at),
                cuda_text(v)
            )),
            None => s.push_str(&format!(
                "{} driver: not known (cuda-releases.toml has no row for CUDA {} or later)\n",
                p.driver_name(),
                cuda_text(v)
            )),
        }
    }
    s
}

/// Whether a name is worth reporting from a scan: the registry knows it, or it looks like one
/// of the crate's names (a C name or a marker), so that one the registry lacks is said.
fn looks_like_an_entry(s: &str) -> bool {
    let c_name = s.len() > 2 && s.starts_with("cu") && s[2..].starts_with(|c: char| c.is_ascii_uppercase());
    c_name || s.starts_with("PFN_cu")
}

/// The program's sources, read.
struct Program {
    files: Vec<PathBuf>,
    scanned: Vec<scan::Scanned>,
    /// Package roots: the folder of the nearest Cargo.toml of each file.
    manifest_dirs: Vec<Option<PathBuf>>,
    /// Files reached only from build scripts.
    build_only: BTreeSet<usize>,
    /// The names the program reaches the generated crate by.
    crate_idents: BTreeSet<String>,
    /// Entries named `.rs` that are no regular files (FIFOs, sockets, devices): not read.
    skipped: Vec<PathBuf>,
}

/// Where the registry comes from: a generated crate's `registry.json`, or its text built into
/// the program that asks (`cuda-sys-gen min-driver` without `--registry`).
#[derive(Debug, Clone, Copy)]
pub enum RegistrySource<'a> {
    File(&'a Path),
    /// The text of a registry.json; the string names it in errors.
    BuiltIn(&'a str, &'a str),
}

impl<'a> From<&'a Path> for RegistrySource<'a> {
    fn from(p: &'a Path) -> Self {
        RegistrySource::File(p)
    }
}

impl<'a> From<&'a PathBuf> for RegistrySource<'a> {
    fn from(p: &'a PathBuf) -> Self {
        RegistrySource::File(p)
    }
}

impl<'a> RegistrySource<'a> {
    pub(crate) fn load(self) -> Result<Registry> {
        match self {
            RegistrySource::File(path) => Registry::load(path),
            RegistrySource::BuiltIn(text, origin) => Registry::parse(text, origin),
        }
    }

    /// The generated crate's folder, where the registry is a file of it.
    fn folder(self) -> Option<&'a Path> {
        match self {
            RegistrySource::File(path) => path.parent(),
            RegistrySource::BuiltIn(..) => None,
        }
    }
}

/// The floor of the `.rs` files under `sources` (files or folders; hidden folders and the
/// cargo `target/` folder of a package root skipped; `mod x;` and `include!` files of a file
/// given alone are followed), by the registry at `registry`.
pub fn floor<'a>(registry: impl Into<RegistrySource<'a>>, sources: &[PathBuf]) -> Result<Floor> {
    floor_on(registry, sources, None)
}

/// [`floor`] on a GPU of compute capability `gpu` (90 for sm_90): of each fatbin, only the
/// entry the driver loads there counts.
pub fn floor_on<'a>(registry: impl Into<RegistrySource<'a>>, sources: &[PathBuf], gpu: Option<u32>) -> Result<Floor> {
    let registry = registry.into();
    let compiled: Vec<bool> = sources.iter().map(|p| is_compiled(p)).collect();
    if compiled.iter().any(|&c| c) {
        if let Some(i) = compiled.iter().position(|&c| !c) {
            if let Some(what) = not_rust_source(&sources[i]).filter(|_| sources[i].is_file()) {
                bail!("{}: {what}", sources[i].display());
            }
            bail!(
                "{} is not a compiled program, but {} is: pass either compiled programs or Rust sources",
                sources[i].display(),
                sources[compiled.iter().position(|&c| c).unwrap_or(0)].display()
            );
        }
        return floor_of_programs_on(registry, sources, gpu);
    }
    let reg = registry.load()?;
    let releases = Releases::load()?;
    let package = registry
        .folder()
        .map(|d| d.join("Cargo.toml"))
        .and_then(|m| codegen::input::read_text(&m, "Cargo.toml").ok())
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("package")?.get("name")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| "cuda-driver-pfn".to_owned());
    let program = read_program(sources, &reg, &package)?;
    Ok(evaluate(&program, &reg, &releases, gpu))
}

/// Whether `path` is a regular file that starts like a compiled program (ELF, PE, Mach-O) or is
/// a kernel file ([`kernel_file`]).
fn is_compiled(path: &Path) -> bool {
    let head = head_of(path);
    head.as_deref().is_some_and(|h| binary::is_binary(h) || kernel_file(path, h).is_some())
}

/// How much of a file [`head_of`] reads: enough for nvcc's header of comments before a PTX
/// module's `.version`, many times over.
const HEAD: usize = 64 << 10;

/// The first bytes of a regular file, up to [`HEAD`] (`None`: no regular file, or unreadable).
fn head_of(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let mut head = Vec::new();
    std::fs::File::open(path).and_then(|f| f.take(HEAD as u64).read_to_end(&mut head)).ok()?;
    Some(head)
}

/// Why a file given by name, neither a compiled program nor a kernel file, is not read as Rust
/// source: a Rust file is one named `.rs` (as Cargo and rustc find them), and any other text
/// read as Rust tokens would read "any driver will do" for what it does (a wrapper script that
/// `exec`s a program, a Python script that loads libcuda with ctypes). `None`: a `.rs` file.
fn not_rust_source(path: &Path) -> Option<String> {
    if path.extension().is_some_and(|e| e == "rs") {
        return None;
    }
    let head = head_of(path).unwrap_or_default();
    let shown = path.display();
    let observe = "what a script does at run time is not in any file min-driver can read: observe a run";
    if let Some(line) = head.strip_prefix(b"#!").filter(|l| !l.starts_with(b"[")) {
        // The interpreter as the kernel reads it: the line's first word, and `env`'s argument.
        let line = String::from_utf8_lossy(line.split(|&b| b == b'\n').next().unwrap_or_default()).into_owned();
        let mut words = line.split_ascii_whitespace();
        let mut interpreter = words.next().unwrap_or("sh").to_owned();
        if interpreter.ends_with("/env") {
            interpreter = words.find(|w| !w.starts_with('-')).unwrap_or("sh").to_owned();
        }
        return Some(format!(
            "a script run by {interpreter}, not a compiled program or a Rust source; {observe}: \
             `cuda-sys-gen min-driver --run -- {interpreter} {shown}`, or pass the programs and libraries it runs"
        ));
    }
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if ext == "py" {
        return Some(format!(
            "a Python script, not a compiled program or a Rust source; {observe}: \
             `cuda-sys-gen min-driver --run -- python3 {shown}`, or pass the libraries it loads"
        ));
    }
    let text = String::from_utf8_lossy(&head);
    let start = text.trim_start();
    if text.contains("GNU ld script") || ["GROUP", "INPUT", "OUTPUT_FORMAT"].iter().any(|k| start.starts_with(k)) {
        return Some(
            "a linker script (it names the libraries a link takes), not a compiled program: pass those libraries"
                .to_owned(),
        );
    }
    Some(
        "not a compiled program (ELF, PE or Mach-O, an object or archive of them), a kernel file \
         (.ptx, .cubin, .fatbin) or a Rust source file (read only by its .rs name): pass the program and the libraries it \
         loads, its kernel files, or its sources or package folder"
            .to_owned(),
    )
}

/// What kind of kernel file `path` is, by its first bytes or its name: a fatbin (its magic), a
/// cubin (an ELF file for `EM_CUDA`), or PTX (`.ptx`, or any file but Rust's whose text starts
/// with `.version` past comments: no Rust file does). `None`: no kernel file.
fn kernel_file(path: &Path, head: &[u8]) -> Option<&'static str> {
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if head.starts_with(&[0x50, 0xed, 0x55, 0xba]) {
        Some("fatbin")
    } else if head.starts_with(b"\x7fELF") && head.len() >= 20 && u16::from_le_bytes([head[18], head[19]]) == 190 {
        Some("cubin")
    } else if ext == "ptx" || (ext != "rs" && kernels::starts_ptx(head, head.len() < HEAD)) {
        Some("PTX")
    } else if ext == "cubin" || ext == "fatbin" {
        Some("unreadable kernel file")
    } else {
        None
    }
}

/// The floor of compiled programs: the records of the generated crate they hold, the libcuda
/// functions they import, the names their strings hold where they look functions up by name
/// without records, the CUDA runtime they link, and the kernels they embed. For linked code
/// the records are exact: the linker kept those of the lookups in the code it kept.
pub fn floor_of_programs<'a>(registry: impl Into<RegistrySource<'a>>, programs: &[PathBuf]) -> Result<Floor> {
    floor_of_programs_on(registry, programs, None)
}

/// [`floor_of_programs`] on a GPU of compute capability `gpu` (see [`floor_on`]).
pub fn floor_of_programs_on<'a>(
    registry: impl Into<RegistrySource<'a>>,
    programs: &[PathBuf],
    gpu: Option<u32>,
) -> Result<Floor> {
    let reg = registry.into().load()?;
    let releases = Releases::load()?;
    let mut floor = Floor::default();
    let mut cubin_sets: Vec<Vec<String>> = Vec::new();
    for p in programs {
        let meta = std::fs::metadata(p).with_context(|| format!("reading {}", p.display()))?;
        if !meta.is_file() {
            bail!("{}: not a regular file (a FIFO, socket or device): pass a program or kernel file", p.display());
        }
        let size = meta.len();
        let head = head_of(p).unwrap_or_default();
        let mut found: Vec<(String, u64, model::Evidence)> = Vec::new();
        match kernel_file(p, &head) {
            Some(kind) => {
                let data = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
                found.push((p.display().to_string(), size, kernel_evidence(p, kind, &data)));
            }
            None => {
                // Only the headers and the sections read are held (a sparse file's holes, and
                // what lies between sections, are never read).
                let file = std::fs::File::open(p).with_context(|| format!("reading {}", p.display()))?;
                let cache = object::ReadCache::new(&file);
                if head.starts_with(b"!<arch>\n") || head.starts_with(b"!<thin>\n") {
                    read_archive(&cache, &p.display().to_string(), 0, &reg, &mut found)?;
                    if found.is_empty() {
                        // Named for what it is, though nothing in it is read.
                        let format = "an archive with no object file or kernel file among its members".to_owned();
                        found.push((
                            p.display().to_string(),
                            size,
                            model::Evidence { file: p.clone(), format, ..Default::default() },
                        ));
                    }
                } else {
                    let tables = binary::string_tables(&cache);
                    let data = binary::Tables { cache: &cache, tables: &tables };
                    found.push((p.display().to_string(), size, binary::collect(p, data, Some(&file), &reg)?));
                }
            }
        }
        for (shown, size, evidence) in found {
            let read = model::decide(evidence, &reg, &releases, gpu);
            floor.notes.extend(read.notes);
            floor.runtimes.extend(read.runtimes);
            if !read.cubin_gpus.is_empty() {
                cubin_sets.push(read.cubin_gpus);
            }
            floor.programs.push(format!(
                "{shown} ({}, {size} bytes): {} record(s) of the generated crate",
                read.format, read.records
            ));
            floor.uses.extend(read.uses);
            floor.kernels.extend(read.kernels);
            floor.unresolved.extend(read.unresolved);
            floor.unused.extend(read.unused);
            floor.not_read.extend(read.not_read);
        }
    }
    // A library given too was read.
    let given: BTreeSet<&std::ffi::OsStr> = programs.iter().filter_map(|p| p.file_name()).collect();
    floor.not_read.retain(|lib| !given.contains(std::ffi::OsStr::new(lib)));
    floor.not_read.sort();
    floor.not_read.dedup();
    floor.uses.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| a.marker.cmp(&b.marker)));
    floor.uses.dedup_by(|a, b| a.marker == b.marker);
    // At one version, what every GPU needs sets the floor before what only JIT-compiling does.
    floor.kernels.sort_by(|a, b| {
        b.version
            .cmp(&a.version)
            .then_with(|| (a.reading == Reading::Jit).cmp(&(b.reading == Reading::Jit)))
            .then_with(|| a.needs.cmp(&b.needs))
    });
    floor.runtimes.sort();
    floor.runtimes.dedup();
    // The GPUs every file's fatbins hold cubins for (by name; none may be common to all).
    floor.cubin_gpus = cubin_sets.first().cloned().unwrap_or_default();
    for set in &cubin_sets[1.min(cubin_sets.len())..] {
        floor.cubin_gpus.retain(|g| set.contains(g));
    }
    floor
        .cubin_gpus
        .sort_by_key(|a| a.trim_start_matches("sm_").trim_end_matches(char::is_alphabetic).parse::<u32>().unwrap_or(0));
    Ok(floor)
}

/// A kernel file `path` of `kind` ([`kernel_file`]), its bytes `data`, read as one.
fn kernel_evidence(path: &Path, kind: &str, data: &[u8]) -> model::Evidence {
    let mut ev = model::Evidence {
        file: path.to_owned(),
        format: format!("a {kind} file, read as a kernel"),
        kernel_file: true,
        ..model::Evidence::default()
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match kind {
        "PTX" => kernels::ptx(&String::from_utf8_lossy(data), &name, &mut ev.image),
        "fatbin" | "cubin" => kernels::binary(data, &name, &mut ev.image),
        _ => ev.image.unreadable.push(format!(
            "{name}: named as a kernel file, but neither a fatbin nor a cubin for EM_CUDA: its needs are not read"
        )),
    }
    ev
}

/// How deep archives inside archives are read.
const ARCHIVE_DEPTH: usize = 8;

/// The members of the archive `data` (`shown` in the report; `depth` archives deep): each
/// object read as a program, each kernel file as a kernel, each archive as an archive. A member
/// that cannot be read is said, so the floor is "at least"; one that is neither an object nor
/// a kernel file (a linker takes neither) holds nothing the driver loads.
fn read_archive<'d, R: object::ReadRef<'d>>(
    data: R,
    shown: &str,
    depth: usize,
    reg: &Registry,
    found: &mut Vec<(String, u64, model::Evidence)>,
) -> Result<()> {
    let archive = object::read::archive::ArchiveFile::parse(data)
        .map_err(|e| anyhow::anyhow!("{shown}: an archive the object crate cannot read ({e})"))?;
    for member in archive.members() {
        let member = member.map_err(|e| anyhow::anyhow!("{shown}: an archive member ({e})"))?;
        let name = String::from_utf8_lossy(member.name()).into_owned();
        let shown = format!("{shown}({name})");
        let unread = |why: String| model::Evidence {
            file: PathBuf::from(&shown),
            format: "a member of an archive".into(),
            unreadable: vec![Unresolved {
                spelled: format!("archive member {name}"),
                file: PathBuf::from(&shown),
                line: 0,
                why,
                reading: Reading::Record,
            }],
            ..model::Evidence::default()
        };
        let bytes = match member.data(data) {
            Ok(b) => b,
            Err(e) => {
                let why = if member.is_thin() {
                    format!("a thin archive's member, kept outside it ({e}): pass {name} itself")
                } else {
                    format!("its bytes cannot be read ({e})")
                };
                found.push((shown.clone(), 0, unread(why)));
                continue;
            }
        };
        let head = &bytes[..bytes.len().min(HEAD)];
        if bytes.starts_with(b"!<arch>\n") || bytes.starts_with(b"!<thin>\n") {
            if depth + 1 >= ARCHIVE_DEPTH {
                let why = format!("an archive {ARCHIVE_DEPTH} archives deep: not read");
                found.push((shown.clone(), bytes.len() as u64, unread(why)));
            } else {
                read_archive(bytes, &shown, depth + 1, reg, found)?;
            }
        } else if let Some(kind) = kernel_file(Path::new(&name), head) {
            let mut ev = kernel_evidence(Path::new(&shown), kind, bytes);
            ev.format = format!("{}, a member of an archive", ev.format);
            found.push((shown, bytes.len() as u64, ev));
        } else if binary::is_binary(bytes) {
            // The object crate reads an ELF file only from bytes aligned as its headers are; a
            // member of an archive inside another may lie at any offset.
            let copy;
            let aligned = if bytes.as_ptr().align_offset(8) == 0 {
                bytes
            } else {
                copy = bytes.to_vec();
                &copy[..]
            };
            match binary::collect(Path::new(&shown), aligned, None, reg) {
                Ok(mut ev) => {
                    ev.format = format!("{}, a member of an archive", ev.format);
                    found.push((shown, bytes.len() as u64, ev));
                }
                Err(e) => found.push((shown.clone(), bytes.len() as u64, unread(format!("{e:#}")))),
            }
        }
    }
    Ok(())
}

/// The benchmarks' baseline for [`floor_of_programs`]: the least any reader of a compiled
/// program does, the `object` crate's parse of it, every section's bytes taken and its symbols
/// walked. Returns the bytes and symbols seen.
pub fn object_bare_parse(data: &[u8]) -> Result<(usize, usize)> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(data)?;
    let bytes = file.sections().map(|s| s.data().map_or(0, <[u8]>::len)).sum();
    Ok((bytes, file.symbols().count() + file.dynamic_symbols().count()))
}

fn read_program(sources: &[PathBuf], reg: &Registry, package: &str) -> Result<Program> {
    let mut files = Vec::new();
    let mut walk = Walk::default();
    let mut manifests = BTreeSet::new();
    for s in sources {
        collect(s, &mut walk, &mut files, &mut manifests)?;
        for dir in s.ancestors().skip(1) {
            if dir.join("Cargo.toml").is_file() {
                manifests.insert(dir.join("Cargo.toml"));
                break;
            }
        }
    }
    // Path dependencies and workspace members of the packages read: their code is linked
    // into the program too. Followed to a fixed point, each folder once; the generated crate
    // itself is not (its names are every name).
    let mut seen_dirs: BTreeSet<PathBuf> = sources.iter().map(|s| same_file(s)).collect();
    let mut done: BTreeSet<PathBuf> = BTreeSet::new();
    let generated = |manifest: &Path| {
        let name = std::fs::read_to_string(manifest)
            .ok()
            .and_then(|t| t.parse::<toml::Table>().ok())
            .and_then(|t| t.get("package")?.get("name")?.as_str().map(str::to_owned));
        name.is_some_and(|n| n == package || n == format!("{package}-types"))
    };
    while let Some(m) = manifests.iter().find(|m| !done.contains(*m)).cloned() {
        done.insert(m.clone());
        if generated(&m) {
            continue;
        }
        for dir in local_packages(&m, package) {
            let key = same_file(&dir);
            let skip = seen_dirs.iter().any(|s| key.starts_with(s)) || generated(&dir.join("Cargo.toml"));
            if skip || !dir.join("Cargo.toml").is_file() {
                continue;
            }
            seen_dirs.insert(key);
            collect(&dir, &mut walk, &mut files, &mut manifests)?;
        }
    }
    if files.is_empty() {
        bail!(
            "no .rs files under {}: pass the program's source files or its package folder",
            sources.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    files.sort();
    files.dedup();
    let mut crate_idents = BTreeSet::from([package.replace('-', "_")]);
    for m in &manifests {
        crate_idents.extend(dependency_names(m, package));
    }
    let wanted = |s: &str| wanted(reg, s);
    let mut program = Program {
        files: Vec::new(),
        scanned: Vec::new(),
        manifest_dirs: Vec::new(),
        build_only: BTreeSet::new(),
        crate_idents,
        skipped: std::mem::take(&mut walk.skipped),
    };
    let mut index: std::collections::HashMap<PathBuf, usize> = std::collections::HashMap::new();
    let mut queue: std::collections::VecDeque<PathBuf> = files.into_iter().collect();
    while let Some(file) = queue.pop_front() {
        if index.contains_key(&same_file(&file)) {
            continue;
        }
        let text = codegen::input::read_bytes(&file, "a Rust source file")?;
        let text = String::from_utf8(text)
            .map_err(|_| anyhow::anyhow!("{}: not UTF-8, so not a Rust source file", file.display()))?;
        let scanned = scan::scan(&text, &wanted).map_err(|(line, column, why)| {
            anyhow::anyhow!(
                "{}:{line}:{column}: not Rust tokens ({why}): fix the file, or leave it out",
                file.display()
            )
        })?;
        // Spans are only read during the scan: free each file's text.
        proc_macro2::extra::invalidate_current_thread_spans();
        index.insert(same_file(&file), program.files.len());
        // `mod x;` and `include!` of files that exist are read too (a file given alone).
        for m in &scanned.mods {
            if let Some(found) = mod_candidates(&file, m).into_iter().find(|c| c.is_file()) {
                queue.push_back(found);
            }
            // `#[cfg_attr(.., path = "x.rs")]`: whichever the build picks, so each of them.
            let parent = file.parent().map(Path::to_owned).unwrap_or_default();
            queue.extend(m.cfg_paths.iter().map(|p| parent.join(p)).filter(|p| p.is_file()));
        }
        for inc in scanned.includes.iter().filter(|i| i.kind == "include") {
            if let Some(p) = include_path(&file, manifest_dir(&file).as_deref(), &inc.target) {
                if p.is_file() {
                    queue.push_back(p);
                }
            }
        }
        program.manifest_dirs.push(manifest_dir(&file));
        program.files.push(file);
        program.scanned.push(scanned);
    }
    program.build_only = build_only(&program, &index);
    Ok(program)
}

/// Whether the scan keeps an identifier or string: a name of the registry, or one that looks
/// like an entry (so that a name the registry lacks is said, not dropped).
fn wanted(reg: &Registry, s: &str) -> bool {
    reg.meanings(s).is_some() || looks_like_an_entry(s)
}

/// A file's path as one key however it is spelled (`src/../probe.rs`, a symlink).
fn same_file(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned())
}

/// The folder of the nearest Cargo.toml above `file`.
fn manifest_dir(file: &Path) -> Option<PathBuf> {
    file.ancestors().skip(1).find(|d| d.join("Cargo.toml").is_file()).map(Path::to_owned)
}

/// Where rustc looks for the file of `mod x;` in `file`.
fn mod_candidates(file: &Path, m: &scan::ModDecl) -> Vec<PathBuf> {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let parent = file.parent().map(Path::to_owned).unwrap_or_default();
    if let Some(p) = &m.path_attr {
        return vec![parent.join(p)];
    }
    // In mod.rs, lib.rs, main.rs (and a crate root such as build.rs): beside it; in foo.rs: foo/.
    let dir = if matches!(name.as_str(), "mod.rs" | "lib.rs" | "main.rs" | "build.rs") {
        parent.clone()
    } else {
        parent.join(name.trim_end_matches(".rs"))
    };
    // Inside `mod gpu { .. }`: under `gpu/`.
    let dir = m.inline.iter().fold(dir, |d, seg| d.join(seg));
    let mut c = vec![dir.join(format!("{}.rs", m.name)), dir.join(&m.name).join("mod.rs")];
    // A file in examples/, tests/, benches/ or src/bin/ is its crate's root: beside it too.
    if m.inline.is_empty() {
        c.push(parent.join(format!("{}.rs", m.name)));
    }
    c
}

fn include_path(file: &Path, manifest: Option<&Path>, target: &scan::IncludeTarget) -> Option<PathBuf> {
    match target {
        scan::IncludeTarget::Relative(p) => Some(file.parent()?.join(p)),
        scan::IncludeTarget::ManifestDir(p) => Some(manifest?.join(p.trim_start_matches(['/', '\\']))),
        scan::IncludeTarget::Unreadable(_) => None,
    }
}

/// The files only build scripts reach through `mod` and `include!`: a package's `build.rs`
/// (or the `package.build` its Cargo.toml names), and what it declares, unless another file
/// reaches them too.
fn build_only(program: &Program, index: &std::collections::HashMap<PathBuf, usize>) -> BTreeSet<usize> {
    let edges: Vec<Vec<usize>> = (0..program.files.len())
        .map(|i| {
            let file = &program.files[i];
            let s = &program.scanned[i];
            let mods = s.mods.iter().flat_map(|m| mod_candidates(file, m));
            let incs = s
                .includes
                .iter()
                .filter_map(|inc| include_path(file, program.manifest_dirs[i].as_deref(), &inc.target));
            mods.chain(incs).filter_map(|p| index.get(&same_file(&p)).copied()).collect()
        })
        .collect();
    let is_build_script = |i: usize| {
        let file = &program.files[i];
        let Some(dir) = &program.manifest_dirs[i] else { return false };
        let named = codegen::input::read_text(&dir.join("Cargo.toml"), "Cargo.toml")
            .ok()
            .and_then(|t| t.parse::<toml::Table>().ok())
            .and_then(|t| t.get("package")?.get("build")?.as_str().map(|b| dir.join(b)));
        match named {
            Some(b) => *file == b,
            None => *file == dir.join("build.rs"),
        }
    };
    let reach = |starts: Vec<usize>| {
        let mut seen = vec![false; program.files.len()];
        let mut stack = starts;
        while let Some(i) = stack.pop() {
            if !std::mem::replace(&mut seen[i], true) {
                stack.extend(edges[i].iter().copied());
            }
        }
        seen
    };
    let scripts: Vec<usize> = (0..program.files.len()).filter(|&i| is_build_script(i)).collect();
    let from_scripts = reach(scripts);
    let others = reach((0..program.files.len()).filter(|&i| !from_scripts[i]).collect());
    (0..program.files.len()).filter(|&i| from_scripts[i] && !others[i]).collect()
}

/// The two narrowings (see the module docs): where a path provably starts at the crate.
struct Narrowing<'a> {
    /// Names the program binds itself (`mod x`, `let x`, ...) or imports from elsewhere.
    foreign: HashSet<&'a str>,
    /// Names imported from the crate, and the paths they name (`aliases` ->
    /// `cuda_driver_pfn::aliases`, `cuda` -> `cuda_driver_pfn`).
    imports: std::collections::HashMap<&'a str, BTreeSet<&'a [String]>>,
    crate_idents: &'a BTreeSet<String>,
}

impl<'a> Narrowing<'a> {
    fn new(program: &'a Program) -> Self {
        let mut foreign = HashSet::new();
        let mut imports: std::collections::HashMap<&str, BTreeSet<&[String]>> = std::collections::HashMap::new();
        for (i, s) in program.scanned.iter().enumerate() {
            if program.build_only.contains(&i) {
                continue;
            }
            foreign.extend(s.bound.iter().map(String::as_str));
            for u in &s.uses {
                let Some(name) = u.name.as_deref() else { continue };
                let root = u.path.iter().find(|s| !matches!(s.as_str(), "crate" | "self" | "super"));
                if root.is_some_and(|r| program.crate_idents.contains(r)) {
                    imports.entry(name).or_default().insert(&u.path);
                } else {
                    foreign.insert(name);
                }
            }
        }
        // A macro that imports from the crate under a name its caller picks (`use
        // cuda_driver_pfn::api as $name;`) may bind any imported name to anything of the crate:
        // no import proves a path then, only the crate's own names do.
        let macro_made = program.scanned.iter().flat_map(|s| &s.uses).any(|u| {
            u.name.as_deref().is_some_and(|n| n.starts_with('$'))
                && u.path
                    .iter()
                    .find(|s| !matches!(s.as_str(), "crate" | "self" | "super"))
                    .is_some_and(|r| program.crate_idents.contains(r))
        });
        if macro_made {
            imports.clear();
        }
        Narrowing { foreign, imports, crate_idents: &program.crate_idents }
    }

    /// The module of the crate that `path` (root first) names, as segments after the crate's
    /// name (`["aliases", "cuda_12_9"]`); `None` unless it provably starts at the crate: at its
    /// name or a rename, or at a name the program imports from it and binds nothing else to.
    fn crate_module(&self, path: &'a [String], leading: bool) -> Option<Vec<&'a str>> {
        let skip = path.iter().take_while(|s| matches!(s.as_str(), "crate" | "self" | "super")).count();
        let rest = &path[skip..];
        let root = rest.first()?;
        if self.foreign.contains(root.as_str()) {
            return None;
        }
        if self.crate_idents.contains(root) {
            return Some(rest[1..].iter().map(String::as_str).collect());
        }
        let meant = self.imports.get(root.as_str()).filter(|m| m.len() == 1 && !leading)?;
        let target = meant.iter().next()?;
        let inner = target.iter().skip_while(|s| !self.crate_idents.contains(*s)).skip(1);
        Some(inner.chain(&rest[1..]).map(String::as_str).collect())
    }
}

fn evaluate(program: &Program, reg: &Registry, releases: &Releases, gpu: Option<u32>) -> Floor {
    let mut unused = Vec::new();
    let narrowing = Narrowing::new(program);
    let mut uses: BTreeMap<String, Use> = BTreeMap::new();
    let mut kernels: Vec<Kernel> = Vec::new();
    let mut unresolved = Vec::new();
    for (fi, (file, s)) in program.files.iter().zip(&program.scanned).enumerate() {
        if program.build_only.contains(&fi) {
            continue;
        }
        let mut hits: Vec<&scan::Hit> = s.hits.iter().collect();
        hits.sort_by_key(|h| h.line);
        for h in hits {
            let Some(m) = reg.meanings(&h.name) else {
                // A name shaped like the crate's that its registry lacks: misspelt, or from a
                // newer crate. Only where the path says it is the crate's.
                let in_crate_path = h.opens_macro.as_deref().is_some_and(|m| m.starts_with("cu"))
                    || h.prefix.last().is_some_and(|p| matches!(p.as_str(), "entries" | "api" | "pfn" | "symbols"));
                if in_crate_path && !h.string {
                    unresolved.push(Unresolved::in_source(
                        h.spelled(),
                        file,
                        h.line,
                        format!(
                            "not in the registry (misspelt, or a name of a newer crate: regenerate it, or pass its \
                             registry.json with --registry); {} entries and {} toolkits known",
                            reg.entries.len(),
                            reg.toolkits.len()
                        ),
                    ));
                }
                continue;
            };
            let Some((entry, read_as)) = meaning_of(h, m, reg, &narrowing) else { continue };
            // `newest`'s pointer turned into a type of the program's own: the ABI that type
            // describes may be any of the symbol's, so the oldest is only a lower bound.
            if read_as == "oldest ABI" && !h.string {
                if let Some(&t) = s.transmutes.iter().min() {
                    unresolved.push(Unresolved::in_source(
                        format!("{} and transmute (line {t})", h.spelled()),
                        file,
                        h.line,
                        "Driver::newest's pointer may be used as a function type of the program's own, whose ABI \
                              is not read: match the symbol's enum instead, or name the entry (entries::X)"
                            .to_owned(),
                    ));
                }
            }
            let e = &reg.entries[entry];
            uses.entry(e.marker.clone()).or_insert(Use {
                reading: Reading::Source,
                marker: e.marker.clone(),
                version: e.floor,
                spelled: h.spelled(),
                file: file.clone(),
                line: h.line,
                read_as,
            });
        }
        for (line, name) in &s.pasted {
            unresolved.push(Unresolved::in_source(
                format!("{name}!"),
                file,
                *line,
                "builds identifiers out of pieces, which cannot be read: name the entries whole (entries::X, \
                      cu!(cuX(..))) where the floor matters"
                    .to_owned(),
            ));
        }
        for m in &s.mods {
            let parent = file.parent().map(Path::to_owned).unwrap_or_default();
            for p in m.cfg_paths.iter().map(|p| parent.join(p)).filter(|p| !p.is_file()) {
                unresolved.push(Unresolved::in_source(
                    format!("#[cfg_attr(.., path = ..)] mod {};", m.name),
                    file,
                    m.line,
                    format!("{} is not there: pass the folder that holds it", p.display()),
                ));
            }
            if !mod_candidates(file, m).iter().any(|c| c.is_file()) {
                unresolved.push(Unresolved::in_source(
                    format!("mod {};", m.name),
                    file,
                    m.line,
                    format!(
                        "its file is not there ({}): pass the folder that holds it",
                        mod_candidates(file, m)
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                ));
            }
        }
        for l in &s.lookups {
            let spelled = format!(
                "{}({}, {})",
                l.function,
                l.symbol.as_deref().map_or("a name".to_owned(), |s| format!("{s:?}")),
                l.version.map_or("a version".to_owned(), |v| v.to_string())
            );
            match (l.symbol.as_deref(), l.version) {
                // The driver answers with the newest ABI at or below the version asked for.
                (Some(symbol), Some(v)) => {
                    // Its flags are not read from the source: the default variant's.
                    if let Some(e) = reg.newest_at(symbol, v, false) {
                        let e = &reg.entries[e];
                        uses.entry(e.marker.clone()).or_insert(Use {
                            marker: e.marker.clone(),
                            version: e.floor,
                            spelled,
                            file: file.clone(),
                            line: l.line,
                            read_as: "exact",
                            reading: Reading::Source,
                        });
                    }
                }
                _ => unresolved.push(Unresolved {
                    reading: Reading::Source,
                    spelled,
                    file: file.clone(),
                    line: l.line,
                    why:
                        "a lookup whose name or version is a value known only at run time: the program may need more; \
                          write both as literals, or use the entries' markers"
                            .to_owned(),
                }),
            }
        }
        if let Some((line, name)) = s.tables.iter().min_by_key(|(l, _)| *l) {
            unresolved.push(Unresolved::in_source(
                name.clone(),
                file,
                *line,
                "walks the registry's table at run time: which entries it looks up is not in the sources (the \
                      compiled program's records say more)"
                    .to_owned(),
            ));
        }
        for (line, name) in &s.runtime_files {
            unresolved.push(Unresolved::in_source(
                format!("{name:?}"),
                file,
                *line,
                "a kernel file read at run time: pass it to min-driver too (or embed it with include_bytes!)"
                    .to_owned(),
            ));
        }
        let from_file = |n: &str| MODULE_FROM_FILE.contains(&n.split("_v").next().unwrap_or(n));
        for h in s.hits.iter().filter(|h| !h.string && from_file(&h.name)) {
            unresolved.push(Unresolved::in_source(
                h.spelled(),
                file,
                h.line,
                "loads a kernel module from a file at run time: pass the file to min-driver too".to_owned(),
            ));
        }
        let mut image = Image::default();
        let mut images: Vec<(usize, Image)> = Vec::new();
        for (line, text) in &s.ptx {
            kernels::ptx(text, "a PTX string", &mut image);
            images.push((*line, std::mem::take(&mut image)));
        }
        for inc in &s.includes {
            let spelled = format!("{}!({})", inc.kind, describe(&inc.target));
            let Some(path) = include_path(file, program.manifest_dirs[fi].as_deref(), &inc.target) else {
                unresolved.push(Unresolved {
                    reading: Reading::Source,
                    spelled,
                    file: file.clone(),
                    line: inc.line,
                    why: "names a file only the build knows (OUT_DIR, a macro): pass the kernel files to \
                          min-driver too, or embed them by a path relative to the source"
                        .to_owned(),
                });
                continue;
            };
            if inc.kind == "include" {
                if !path.is_file() {
                    unresolved.push(Unresolved {
                        reading: Reading::Source,
                        spelled,
                        file: file.clone(),
                        line: inc.line,
                        why: format!("{} is not there", path.display()),
                    });
                }
                continue;
            }
            let regular = std::fs::metadata(&path).is_ok_and(|m| m.is_file());
            match if regular {
                std::fs::read(&path)
            } else {
                Err(std::io::Error::other("not a regular file: not opened"))
            } {
                Ok(bytes) => {
                    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    kernels::binary(&bytes, &name, &mut image);
                    images.push((inc.line, std::mem::take(&mut image)));
                }
                Err(e) => unresolved.push(Unresolved {
                    reading: Reading::Source,
                    spelled,
                    file: file.clone(),
                    line: inc.line,
                    why: format!("{} cannot be read ({e})", path.display()),
                }),
            }
        }
        for (line, image) in images {
            let image = match gpu {
                Some(g) => {
                    let (kept, not_loaded) = kernels::for_gpu(image, g);
                    unused.extend(not_loaded.into_iter().map(|u| format!("{}:{line}: {u}", file.display())));
                    kept
                }
                None => image,
            };
            for (need, what) in image.needs {
                match kernel_floor(&need, releases) {
                    Ok((needs, version)) => kernels.push(Kernel {
                        needs,
                        version,
                        what,
                        file: file.clone(),
                        line,
                        reading: Reading::Source,
                    }),
                    Err(why) => unresolved.push(Unresolved::in_source(what, file, line, why)),
                }
            }
            for why in image.unreadable {
                unresolved.push(Unresolved::in_source("a kernel image".into(), file, line, why));
            }
        }
    }
    for p in &program.skipped {
        let why = "not a regular file (a FIFO, socket or device): skipped, not opened".to_owned();
        unresolved.push(Unresolved::in_source(p.display().to_string(), p, 0, why));
    }
    let mut uses: Vec<Use> = uses.into_values().collect();
    uses.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| a.marker.cmp(&b.marker)));
    kernels.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| (&a.file, a.line).cmp(&(&b.file, b.line))));
    kernels.dedup_by(|a, b| a.needs == b.needs && a.file == b.file && a.line == b.line);
    let build_only = program.build_only.iter().map(|&i| program.files[i].clone()).collect();
    Floor { uses, kernels, unresolved, build_only, unused, ..Floor::default() }
}

fn describe(t: &scan::IncludeTarget) -> String {
    match t {
        scan::IncludeTarget::Relative(p) => format!("{p:?}"),
        scan::IncludeTarget::ManifestDir(p) => format!("concat!(env!(\"CARGO_MANIFEST_DIR\"), {p:?})"),
        scan::IncludeTarget::Unreadable(w) => w.clone(),
    }
}

/// The driver functions that load a kernel image from a file whose name is a value.
const MODULE_FROM_FILE: &[&str] = &["cuModuleLoad", "cuLibraryLoadFromFile", "cuLinkAddFile"];

/// The entry a hit counts as, and how it was read.
fn meaning_of(
    h: &scan::Hit,
    m: &registry::Meanings,
    reg: &Registry,
    narrowing: &Narrowing<'_>,
) -> Option<(usize, &'static str)> {
    // Narrowed on proof: `aliases::cuda_X_Y::name`, `symbols::name`.
    let module = if h.string { None } else { narrowing.crate_module(&h.prefix, h.leading) };
    if let Some(module) = module {
        if let ["aliases", toolkit] = module.as_slice() {
            let toolkit = toolkit.strip_prefix("cuda_").map(|t| t.replacen('_', ".", 1));
            if let Some(meant) = toolkit.and_then(|t| m.c_name.get(&t)) {
                let all = meant.iter().copied().chain(m.exact.iter().copied());
                return reg.highest(all).map(|e| (e, "toolkit"));
            }
        }
        if module == ["symbols"] {
            if let Some(e) = m.symbol.as_deref().and_then(|s| reg.oldest_of_symbol(s)) {
                return Some((e, "oldest ABI"));
            }
        }
    }
    if h.string {
        // A string reaches an entry only through a lookup by name (`get_raw`, a raw
        // cuGetProcAddress, dlsym): an exported name is that entry; a symbol is found from its
        // oldest ABI on, and the type the pointer is used as is counted where it is named.
        if let Some(e) = reg.highest(m.exact.iter().copied().filter(|&e| reg.entries[e].marker != h.name)) {
            if m.symbol.as_deref().is_none_or(|s| s != h.name) {
                return Some((e, "exact"));
            }
        }
        if let Some(e) = m.symbol.as_deref().and_then(|s| reg.oldest_of_symbol(s)) {
            return Some((e, "oldest ABI"));
        }
        return reg.highest(m.exact.iter().copied()).map(|e| (e, "exact"));
    }
    let candidates: Vec<usize> = m.exact.iter().copied().chain(m.c_name.values().flatten().copied()).collect();
    // Tagged when the name's meanings as a C name (toolkits, stream modes) differ; that the
    // bare name is also the exported name of the symbol's first ABI is no news.
    let shown: Vec<usize> =
        if m.c_name.is_empty() { m.exact.clone() } else { m.c_name.values().flatten().copied().collect() };
    let floors: BTreeSet<u32> = shown.iter().map(|&e| reg.entries[e].floor).collect();
    let read_as = if floors.len() > 1 { "highest" } else { "exact" };
    reg.highest(candidates).map(|e| (e, read_as))
}

fn kernel_floor(need: &Need, releases: &Releases) -> std::result::Result<(String, u32), String> {
    match need {
        Need::PtxIsa(isa) => match releases.ptx(isa) {
            Some(v) => Ok((format!("PTX ISA {isa}"), v)),
            None => Err(format!(
                "PTX ISA {isa} is not in cuda-releases.toml (newest known: {}): a newer cuda-sys-gen may know it",
                releases.newest_ptx().map_or("none".to_owned(), |p| format!("{} of CUDA {}", p.isa, p.cuda))
            )),
        },
        Need::Toolkit(release) => match release.split_once('.').and_then(|(major, _)| major.parse::<u32>().ok()) {
            Some(major) => Ok((format!("a CUDA {major}.x cubin"), major * 1000)),
            None => Err(format!("CUDA {release}: not a release number")),
        },
        Need::Arch(name) => match releases.arch(name) {
            Some(a) => Ok((name.clone(), releases::cuda_number(&a.cuda).unwrap_or(u32::MAX))),
            None => Err(format!("architecture {name} is not in cuda-releases.toml: a newer cuda-sys-gen may know it")),
        },
    }
}

/// The folders of the path dependencies and workspace members the Cargo.toml at `manifest`
/// names, but not `package` (the generated crate) itself.
fn local_packages(manifest: &Path, package: &str) -> Vec<PathBuf> {
    let Some(table) = cargo_toml(manifest) else { return Vec::new() };
    let base = manifest.parent().map(Path::to_owned).unwrap_or_default();
    let mut tables = dependency_tables(&table);
    let workspace = table.get("workspace").and_then(|w| w.as_table());
    tables.extend(workspace.and_then(|w| w.get("dependencies")?.as_table()));
    let mut out: Vec<PathBuf> = dependencies(tables, package)
        .filter(|(_, _, generated)| !generated)
        .filter_map(|(_, value, _)| Some(base.join(value.get("path")?.as_str()?)))
        .collect();
    // Workspace members: literal folders, and `dir/*` globs.
    let members = workspace.and_then(|w| w.get("members")?.as_array()).into_iter().flatten().filter_map(|m| m.as_str());
    for m in members {
        match m.strip_suffix("/*") {
            Some(dir) => out.extend(
                std::fs::read_dir(base.join(dir))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir()),
            ),
            None => out.push(base.join(m)),
        }
    }
    out
}

/// A Cargo.toml's dependency tables: `[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]`, and the same under each `[target.'..']`.
fn dependency_tables(table: &toml::Table) -> Vec<&toml::Table> {
    let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut tables: Vec<&toml::Table> = kinds.iter().filter_map(|k| table.get(*k)?.as_table()).collect();
    for target in table.get("target").and_then(|t| t.as_table()).into_iter().flat_map(|t| t.values()) {
        tables.extend(kinds.iter().filter_map(|k| target.get(*k)?.as_table()));
    }
    tables
}

/// The names under which the Cargo.toml at `manifest` depends on `package` (`cuda = { package
/// = "cuda-driver-pfn" }` gives `cuda`), as the library names they give in Rust.
fn dependency_names(manifest: &Path, package: &str) -> Vec<String> {
    let Some(table) = cargo_toml(manifest) else { return Vec::new() };
    let tables = dependency_tables(&table);
    dependencies(tables, package)
        .filter(|(_, _, generated)| *generated)
        .map(|(key, ..)| key.replace('-', "_"))
        .collect()
}

/// The Cargo.toml at `manifest`, through the generator's reader of outside text (a FIFO or a
/// huge file is refused, not waited on); `None` where it cannot be read or parsed.
fn cargo_toml(manifest: &Path) -> Option<toml::Table> {
    codegen::input::read_text(manifest, "Cargo.toml").ok()?.parse().ok()
}

/// Every dependency of `tables`: the key it is named by, its entry, and whether it is
/// `package` (under its own name or renamed with `package = ..`).
fn dependencies<'a>(
    tables: Vec<&'a toml::Table>,
    package: &str,
) -> impl Iterator<Item = (&'a String, &'a toml::Value, bool)> {
    let wanted = package.replace('-', "_");
    tables.into_iter().flat_map(|deps| deps.iter()).map(move |(key, value)| {
        let real = value.get("package").and_then(|p| p.as_str()).unwrap_or(key);
        (key, value, real.replace('-', "_") == wanted)
    })
}

/// What a walk of folders has seen: each real folder once, however many links lead to it.
#[derive(Default)]
struct Walk {
    folders: HashSet<PathBuf>,
    /// Entries named `.rs` that are no regular files.
    skipped: Vec<PathBuf>,
}

/// The `.rs` files under `path`, and the Cargo.toml of every package root passed on the way.
/// Hidden folders are skipped, and `target` only where it is a package root's (beside a
/// Cargo.toml): a module folder of that name is read. Each real folder is walked once (links
/// resolved, so two links to `.` end); FIFOs, sockets and devices named `.rs` are not opened
/// (reading one could wait forever) and are listed.
fn collect(path: &Path, walk: &mut Walk, out: &mut Vec<PathBuf>, manifests: &mut BTreeSet<PathBuf>) -> Result<()> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if meta.is_file() {
        if let Some(what) = not_rust_source(path) {
            bail!("{}: {what}", path.display());
        }
        out.push(path.to_owned());
        return Ok(());
    }
    if !meta.is_dir() {
        bail!("{}: neither a file nor a folder (a FIFO, socket or device): pass the program's sources", path.display());
    }
    if !walk.folders.insert(same_file(path)) {
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
        // Through links: what the entry is in the end (a dangling link is neither).
        let Ok(meta) = std::fs::metadata(&p) else { continue };
        if meta.is_dir() {
            collect(&p, walk, out, manifests)?;
        } else if name.ends_with(".rs") {
            if meta.is_file() {
                out.push(p);
            } else {
                walk.skipped.push(p);
            }
        }
    }
    Ok(())
}

/// What a check against a driver or a `--max` found.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// `driver 535.104.05 (Linux x86-64)` or `--max 12.2`.
    pub against: String,
    /// The CUDA version it stands for.
    pub cuda: u32,
    /// `within`, `not proven` (within as far as could be read) or `above`.
    pub verdict: &'static str,
    /// The entries (markers) and kernel needs above it.
    pub missing_entries: Vec<String>,
    pub missing_kernels: Vec<String>,
    /// What is above it was read from strings only, at their highest meaning: an upper
    /// estimate of the need, so "not proven" rather than "above".
    pub upper_estimate: bool,
    /// What is above it is PTX the driver JIT-compiles only for a GPU without a cubin of the
    /// files: it runs on the GPUs they hold cubins for, so "not proven" without `--arch`.
    pub jit_only: bool,
}

impl Check {
    fn new(
        floor: &Floor,
        against: String,
        cuda: u32,
        open_ended: bool,
        driver: Option<(&[u32], Platform)>,
        releases: &Releases,
    ) -> Self {
        let (entries, kernels) = floor.missing_on(cuda);
        let mut kernels: Vec<String> = kernels.iter().map(|k| format!("{} ({})", k.needs, k.what)).collect();
        // A runtime below its minor version compatibility minimum (450.80.02 for 11.x, above
        // 11.0's own 450.51.05): a driver number says more than the CUDA version it stands for.
        if let Some((number, platform)) = driver {
            for &major in &floor.runtimes {
                let Some(min) = releases.compat_for(major, platform) else { continue };
                if releases::driver_number(min).is_some_and(|m| number < m.as_slice()) {
                    kernels.push(format!(
                        "the CUDA {major}.x runtime (NVIDIA's minimum driver for its minor version compatibility: \
                         {min})"
                    ));
                }
            }
        }
        let (_, above) = floor.missing_on(cuda);
        let jit_only = entries.is_empty()
            && !above.is_empty()
            && above.iter().all(|k| k.reading == Reading::Jit)
            && kernels.len() == above.len();
        let upper_estimate = floor.upper_estimate_above(cuda) && kernels.is_empty();
        // An architecture a release removed from ptxas. The 13.0 driver was measured to
        // JIT-compile and run PTX of removed family targets (`.target sm_52`, `sm_30`: the
        // removals are ptxas'), so only an architecture-specific one (`sm_101a`, which 13.0
        // renamed to `sm_110a`, and which only its own GPU runs) is not proven there.
        let removed = floor.kernels.iter().any(|k| {
            k.needs.starts_with("sm_")
                && k.needs.ends_with(['a', 'f'])
                && releases
                    .arch(&k.needs)
                    .and_then(|a| a.removed.as_deref())
                    .and_then(releases::cuda_number)
                    .is_some_and(|r| r <= cuda)
        });
        let verdict = if (!entries.is_empty() || !kernels.is_empty()) && !open_ended && !upper_estimate && !jit_only {
            "above"
        } else if floor.at_least()
            || removed
            || upper_estimate
            || jit_only
            || open_ended && (!entries.is_empty() || !kernels.is_empty())
        {
            "not proven"
        } else {
            "within"
        };
        Check {
            against,
            cuda,
            verdict,
            missing_entries: entries.iter().map(|u| u.marker.clone()).collect(),
            missing_kernels: kernels,
            upper_estimate,
            jit_only,
        }
    }

    /// The exit status it calls for ([`EXIT_STATUSES`]).
    pub fn status(&self) -> u8 {
        match self.verdict {
            "above" => 3,
            "not proven" => 2,
            _ => 0,
        }
    }

    fn render(&self, floor: &Floor, root: &Path) -> String {
        let rel = |f: &Path| f.strip_prefix(root).unwrap_or(f).display().to_string();
        let mut s = match self.verdict {
            "within" => format!("{}: runs (CUDA {} has everything listed)\n", self.against, cuda_text(self.cuda)),
            "not proven" if self.jit_only => format!(
                "{}: not proven: it runs on a GPU the files hold cubins for; on any other GPU the driver \
                 JIT-compiles PTX that needs more than CUDA {} (pass --arch for the GPU it runs on):\n",
                self.against,
                cuda_text(self.cuda)
            ),
            "not proven" if self.upper_estimate => format!(
                "{}: not proven: {} entry point(s) newer than CUDA {} were read only from the program's strings, at \
                 their highest meaning (an upper estimate of the need, not a proof it fails); a run's observed floor \
                 decides:\n",
                self.against,
                self.missing_entries.len(),
                cuda_text(self.cuda)
            ),
            "not proven" if !self.missing_entries.is_empty() || !self.missing_kernels.is_empty() => format!(
                "{}: not proven: {} entry point(s) and {} kernel need(s) are newer than CUDA {}, the newest row of \
                 NVIDIA's table this driver meets; a driver newer than the table may have them:\n",
                self.against,
                self.missing_entries.len(),
                self.missing_kernels.len(),
                cuda_text(self.cuda)
            ),
            "not proven" if floor.unresolved.is_empty() => format!(
                "{}: not proven: CUDA {} has everything listed, but a release up to it removed an architecture a \
                 kernel targets from ptxas, and whether its driver still JIT-compiles that PTX is not in NVIDIA's \
                 tables:\n{}",
                self.against,
                cuda_text(self.cuda),
                floor
                    .kernels
                    .iter()
                    .filter(|k| k.needs.starts_with("sm_"))
                    .map(|k| format!("  {} ({})\n", k.needs, k.what))
                    .collect::<String>()
            ),
            "not proven" => format!(
                "{}: runs as far as could be read (CUDA {} has everything listed), but {} thing(s) could not be read\n",
                self.against,
                cuda_text(self.cuda),
                floor.unresolved.len()
            ),
            _ => format!(
                "{}: does not run: {} entry point(s) and {} kernel need(s) are newer than CUDA {}:\n",
                self.against,
                self.missing_entries.len(),
                self.missing_kernels.len(),
                cuda_text(self.cuda)
            ),
        };
        let (entries, kernels) = floor.missing_on(self.cuda);
        let extra: Vec<&String> = self
            .missing_kernels
            .iter()
            .filter(|k| k.starts_with("the CUDA ") && k.contains("minimum driver"))
            .collect();
        for k in extra {
            s.push_str(&format!("  {k}\n"));
        }
        let lacks = entries.into_iter().map(|u| (&u.file, u.line, &u.spelled, u.version, &u.marker));
        let lacks = lacks.chain(kernels.into_iter().map(|k| (&k.file, k.line, &k.needs, k.version, &k.what)));
        for (file, line, what, version, which) in lacks {
            s.push_str(&format!("  {}:{line}: {what} needs CUDA {} ({which})\n", rel(file), cuda_text(version)));
        }
        s
    }
}

impl Floor {
    /// The `--json` report of this floor with its verdicts (the static reading's, and a run's
    /// beside its `run` object).
    fn json_report<'a>(&'a self, releases: &Releases, checks: &'a [Check]) -> JsonReport<'a> {
        let v = self.version();
        let drivers = Platform::ALL
            .into_iter()
            .map(|p| (p.as_str(), (v > 0).then(|| self.driver(releases, p).map(|(d, _)| d)).flatten()))
            .collect();
        JsonReport {
            schema: 2,
            version: v,
            cuda: (v > 0).then(|| cuda_text(v)),
            at_least: self.at_least(),
            drivers,
            entries: &self.uses,
            kernels: &self.kernels,
            unresolved: &self.unresolved,
            build_only: &self.build_only,
            programs: &self.programs,
            unused: &self.unused,
            not_read: &self.not_read,
            notes: &self.notes,
            runtimes: &self.runtimes,
            checks,
        }
    }
}

/// `min-driver --json`'s document (its schema is in docs/min-driver.md).
#[derive(Serialize)]
struct JsonReport<'a> {
    schema: u32,
    /// The floor: `major * 1000 + minor * 10`, 0 when nothing was found.
    version: u32,
    cuda: Option<String>,
    /// Something could not be read: the floor is a lower bound.
    at_least: bool,
    /// The driver to install per platform (`None`: not known).
    drivers: BTreeMap<&'static str, Option<String>>,
    entries: &'a [Use],
    kernels: &'a [Kernel],
    unresolved: &'a [Unresolved],
    build_only: &'a [PathBuf],
    /// The compiled programs read (empty for sources).
    programs: &'a [String],
    /// With `--arch`: fatbin entries not loaded on that GPU.
    unused: &'a [String],
    /// Shared libraries the programs need that were not read.
    not_read: &'a [String],
    /// What a file is where it is no program (a CUDA driver library).
    notes: &'a [String],
    /// The majors of the CUDA runtimes linked or held.
    runtimes: &'a [u32],
    checks: &'a [Check],
}

/// `min-driver`'s options.
#[derive(Debug, clap::Args)]
pub struct MinDriverArgs {
    /// Compiled programs or libraries (ELF, PE); or Rust files, or folders searched for them
    /// (hidden folders, and the target/ folder beside a Cargo.toml, skipped; path dependencies
    /// and workspace members of the packages found followed).
    #[arg(required_unless_present_any = ["trace", "run"], value_name = "PATH")]
    pub sources: Vec<PathBuf>,
    /// The floor of one run: runs the command after `--` with the observer (a stand-in
    /// libcuda.so.1, `cargo build --release -p cuda-sys-gen-tracer`; found beside this program
    /// or by $CUDA_SYS_GEN_OBSERVER) in front of this machine's driver, then reports on stderr
    /// the oldest driver that answers that run the same way. The program's output and exit
    /// status are its own.
    #[arg(long, requires = "command", conflicts_with_all = ["sources", "trace"])]
    pub run: bool,
    /// The floor of a run recorded by the libcuda tracer (its CUDA_SYS_GEN_TRACE file).
    #[arg(long, value_name = "FILE", conflicts_with = "sources")]
    pub trace: Option<PathBuf>,
    /// With --run: the observer answers as a driver of this version would (a CUDA version
    /// `12.4`, or a driver number; not above this machine's): its version, its answers to
    /// lookups, its errors for images it cannot load (222, 209); the report lists each point
    /// where the run went differently.
    #[arg(long, value_name = "VERSION", requires = "run")]
    pub as_driver: Option<String>,
    /// With --run: the command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD", requires = "run")]
    pub command: Vec<std::ffi::OsString>,
    /// A generated crate's registry.json. Default: the registry built into this cuda-sys-gen (of
    /// the toolkits it was built with).
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// The registry.json text the caller was built with, read where --registry is not given.
    #[arg(skip)]
    pub builtin_registry: Option<&'static str>,
    /// Does the program run on this driver? A driver version (`535.104.05`) or a CUDA version
    /// (`12.2`); what it lacks is listed with its line.
    #[arg(long, value_name = "VERSION")]
    pub driver: Option<String>,
    /// Fail (exit 3) when the floor is above this CUDA version (`12.2`): a CI gate.
    #[arg(long, value_name = "CUDA")]
    pub max: Option<String>,
    /// The GPU the program runs on (`sm_90`): of each fatbin, only the entry the driver loads
    /// there counts (a cubin for it, else the PTX it JIT-compiles); the others are listed as
    /// unused there, and a fatbin with no entry for it is said.
    #[arg(long, value_name = "SM")]
    pub arch: Option<String>,
    /// Whose driver numbers `--driver` reads (the report names both platforms' drivers).
    #[arg(long, default_value = "linux", value_parser = platform_parser())]
    pub platform: Platform,
    /// The report as JSON (its schema: docs/min-driver.md).
    #[arg(long)]
    pub json: bool,
}

impl MinDriverArgs {
    /// `--registry`, else the registry built into the program.
    pub fn registry_source(&self) -> Result<RegistrySource<'_>> {
        match (&self.registry, self.builtin_registry) {
            (Some(path), _) => Ok(RegistrySource::File(path)),
            (None, Some(text)) => Ok(RegistrySource::BuiltIn(text, "the registry built into cuda-sys-gen")),
            (None, None) => anyhow::bail!(
                "no registry: this program was built without one; pass --registry FILE (the generated crate's \
                 registry.json)"
            ),
        }
    }
}

/// `--platform`: the generator's [`Platform`], by the names the manifest uses too.
fn platform_parser() -> impl clap::builder::TypedValueParser<Value = Platform> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = Platform::ALL.map(|p| {
        let example = match p {
            Platform::Linux => "555.42.02",
            Platform::Windows => "555.85",
        };
        PossibleValue::new(p.as_str()).help(format!("{} driver numbers ({example})", p.driver_name()))
    });
    PossibleValuesParser::new(values).try_map(|s| s.parse::<Platform>())
}

/// `min-driver`'s exit statuses, for `--help` and the docs (tested against each other).
pub const EXIT_STATUSES: &[(u8, &str)] = &[
    (0, "the report was made; with `--driver` or `--max`, the program is within it"),
    (
        1,
        "error: bad arguments, an unreadable file or registry, a file that is neither Rust tokens nor a program the object crate reads",
    ),
    (
        2,
        "with `--driver` or `--max`: within it as far as could be read, but something could not be read (the floor is \"at least\"), or not proven (a driver newer than NVIDIA's table, an architecture its release removed)",
    ),
    (3, "with `--driver` or `--max`: above it; the offending entries and kernels are listed"),
];

/// What `min-driver --help` says after its exit statuses.
pub const HELP_CLOSING: &str =
    "\nWhat counts (every token, code under every #[cfg(..)], kernels), what is \"at least\", the \
     JSON schema and CI: docs/min-driver.md in cuda-sys-gen's repository.";

/// `cuda-sys-gen min-driver`: prints the report (and the checks) and gives the exit status.
pub fn run(args: &MinDriverArgs) -> Result<u8> {
    let platform = args.platform;
    let releases = Releases::load()?;
    if args.run || args.trace.is_some() {
        return runs::run(args, &releases);
    }
    // Arguments first: a bad one is said before any file is read.
    let mut wanted = Vec::new();
    let driver_number = args.driver.as_deref().and_then(releases::driver_number).filter(|n| n[0] >= 100);
    if let Some(text) = &args.driver {
        wanted.push(driver_check(text, platform, &releases)?);
    }
    if let Some(text) = &args.max {
        let cuda = releases::parse_cuda(text).map_err(|why| anyhow::anyhow!("--max {text}: {why}"))?;
        released(cuda, &releases).map_err(|why| anyhow::anyhow!("--max {text}: {why}"))?;
        wanted.push((format!("--max {}", cuda_text(cuda)), cuda, false));
    }
    let gpu = match &args.arch {
        Some(a) => Some(gpu_arch(a, &releases)?),
        None => None,
    };
    let floor = floor_on(args.registry_source()?, &args.sources, gpu)?;
    let checks: Vec<Check> = wanted
        .into_iter()
        .map(|(against, cuda, open)| {
            let driver = driver_number.as_deref().filter(|_| against.starts_with("driver ")).map(|n| (n, platform));
            Check::new(&floor, against, cuda, open, driver, &releases)
        })
        .collect();
    let status = checks.iter().map(Check::status).max().unwrap_or(0);
    if args.json {
        let report = floor.json_report(&releases, &checks);
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", floor.render(Path::new("."), Some(&releases)));
        for c in &checks {
            print!("{}", c.render(&floor, Path::new(".")));
        }
    }
    Ok(status)
}

/// `--driver TEXT`: a driver version (`535.104.05`: its first number is 100 or more) or a CUDA
/// version (`12.2`), as the CUDA version it stands for.
/// `--arch sm_90` (or `90`) as 90: a GPU's compute capability, one of NVIDIA's table.
fn gpu_arch(text: &str, releases: &Releases) -> Result<u32> {
    let digits = text.trim_start_matches("sm_").trim_start_matches("compute_");
    let n: u32 = digits.parse().map_err(|_| {
        anyhow::anyhow!("--arch {text}: not a GPU architecture; give it as sm_90 (a GPU's own, without a or f)")
    })?;
    if releases.arch(&format!("sm_{n}")).is_none() {
        bail!("--arch {text}: sm_{n} is not in NVIDIA's table (cuda-releases.toml): a newer cuda-sys-gen may know it");
    }
    Ok(n)
}

/// Whether CUDA `cuda` is a release NVIDIA made, or may make: minors run 0 to 9, and within
/// NVIDIA's driver table only its rows were released (no 12.7); older and newer ones pass.
fn released(cuda: u32, releases: &Releases) -> std::result::Result<(), String> {
    if cuda % 1000 / 10 > 9 {
        return Err(format!(
            "CUDA {} is no release: NVIDIA's minor versions run from 0 to 9 (12.9 was the last 12.x)",
            cuda_text(cuda)
        ));
    }
    let rows: Vec<u32> = releases.driver.iter().filter_map(|d| releases::cuda_number(&d.cuda)).collect();
    let (Some(&low), Some(&high)) = (rows.iter().min(), rows.iter().max()) else { return Ok(()) };
    if (low..=high).contains(&cuda) && !rows.contains(&cuda) {
        return Err(format!(
            "NVIDIA never released CUDA {} (its driver table, cuda-releases.toml, has no such row); give a release \
             such as {}",
            cuda_text(cuda),
            cuda_text(rows.iter().copied().filter(|&r| r < cuda).max().unwrap_or(low))
        ));
    }
    Ok(())
}

fn driver_check(text: &str, platform: Platform, releases: &Releases) -> Result<(String, u32, bool)> {
    let number = releases::driver_number(text);
    match number {
        Some(n) if n[0] >= 100 => {
            // Windows drivers are numbered `555.85`; `555.42.02` is a Linux driver's number.
            if platform == Platform::Windows && n.len() == 3 {
                bail!(
                    "--driver {text}: a Linux driver's number (Windows drivers are numbered like 555.85): pass \
                     --platform linux, or the Windows driver's number"
                );
            }
            let newest = releases
                .driver
                .iter()
                .filter_map(|d| {
                    let v = d.minimum(platform)?;
                    Some((releases::driver_number(v)?, releases::cuda_number(&d.cuda)?))
                })
                .max_by_key(|(_, c)| *c);
            // Newer than every row: it has at least the newest row's CUDA, and may have more.
            let open_ended = newest.as_ref().is_some_and(|(d, _)| n.as_slice() > d.as_slice() && n[0] > d[0]);
            let Some(cuda) = releases.cuda_of_driver(&n, platform) else {
                let oldest = releases
                    .driver
                    .iter()
                    .filter_map(|d| Some((releases::cuda_number(&d.cuda)?, d)))
                    .min_by_key(|(v, _)| *v)
                    .map(|(_, d)| d.cuda.clone())
                    .unwrap_or_default();
                bail!(
                    "--driver {text}: older than every {} driver NVIDIA's table names (its oldest row is CUDA {oldest}): \
                     too old for anything here; check --platform",
                    platform.driver_name()
                );
            };
            let label = if open_ended {
                format!(
                    "driver {text} ({}: newer than NVIDIA's table, CUDA {} or later)",
                    platform.driver_name(),
                    cuda_text(cuda)
                )
            } else {
                format!("driver {text} ({}: CUDA {})", platform.driver_name(), cuda_text(cuda))
            };
            Ok((label, cuda, open_ended))
        }
        _ => match releases::parse_cuda(text) {
            Ok(cuda) => {
                released(cuda, releases).map_err(|why| anyhow::anyhow!("--driver {text}: {why}"))?;
                Ok((format!("CUDA {}", cuda_text(cuda)), cuda, false))
            }
            // Two numbers (`12.05`): a CUDA version written as CUDA writes none; the reader
            // says what to write.
            Err(why) if number.is_some() => bail!("--driver {text}: {why}"),
            Err(_) => bail!(
                "--driver {text}: neither a driver version (such as 535.104.05, or 555.85 on Windows) nor a CUDA \
                 version (such as 12.2)"
            ),
        },
    }
}

/// The floor is a pure function of what was read ([`evaluate`]): these build a program from
/// texts in memory, with the repository's registry, and no file of the program is read.
#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        Registry::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/registry.json")).unwrap()
    }

    /// One file `src/main.rs` of a package that depends on the generated crate.
    fn floor_of(text: &str) -> Floor {
        let reg = registry();
        let scanned = scan::scan(text, &|s| wanted(&reg, s)).unwrap();
        let program = Program {
            files: vec![PathBuf::from("src/main.rs")],
            scanned: vec![scanned],
            manifest_dirs: vec![None],
            build_only: BTreeSet::new(),
            crate_idents: BTreeSet::from(["cuda_driver_pfn".to_owned()]),
            skipped: Vec::new(),
        };
        evaluate(&program, &reg, &Releases::load().unwrap(), None)
    }

    #[test]
    fn a_c_name_counts_as_its_highest_meaning() {
        let f = floor_of("fn main() { unsafe { cu!(cuCtxCreate(&mut c, std::ptr::null_mut(), 0, d)) }; }");
        let reg = registry();
        let highest = reg.entries[reg.highest_meaning("cuCtxCreate").unwrap()].floor;
        assert_eq!(f.version(), highest);
        assert!(!f.at_least());
        assert_eq!(f.uses[0].read_as, "highest");
    }

    #[test]
    fn a_toolkit_s_alias_narrows_and_a_pasted_name_makes_it_at_least() {
        // The path proves the meaning; a bare `cuCtxCreate` after a `use` would count as the
        // highest (the scan does not resolve names).
        let narrowed = floor_of("fn f() { cuda_driver_pfn::aliases::cuda_12_4::cuCtxCreate }");
        assert!(narrowed.version() < 12050, "12.4's cuCtxCreate is older than 12.5's ABI: {:?}", narrowed.uses);
        assert_eq!(narrowed.uses[0].read_as, "toolkit");
        let pasted = floor_of("paste::paste! { fn f() { [<cuCtx Create>](); } }");
        assert!(pasted.at_least(), "{:?}", pasted.unresolved);
    }

    #[test]
    fn a_ptx_string_needs_the_release_that_jit_compiles_it() {
        let f = floor_of("const K: &str = \".version 8.5\\n.target sm_90\\n.address_size 64\\n\";");
        assert_eq!(f.kernels.iter().map(|k| k.version).max(), Some(12050), "{:?}", f.kernels);
    }
}
