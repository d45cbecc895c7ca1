//! The oldest driver that runs a program (`cuda-sys-gen min-driver`, a thin caller of [`run`]),
//! from the compiled program or from its Rust sources. A library of its own, so that other
//! programs (a stand-in libcuda's run-time floor) use the same readers. What it reads and how it
//! answers, for users, is docs/min-driver.md; this is how the code keeps its one promise.
//!
//! Its rooms, in the order a file goes through them:
//! - readers that only collect evidence: `programs.rs` hands each compiled file, archive member
//!   and kernel file to `binary.rs` (ELF, PE, Mach-O, COFF: imports, strings, records, the
//!   runtime, loaders), `kernels.rs` (fatbins, cubins, PTX) and `extents.rs` (which bytes a file
//!   holds); `sources.rs` walks Rust sources for `scan.rs`;
//! - one decision from evidence to needs: `model.rs` for compiled programs (the capabilities a
//!   program has at run time, each one "at least"), `sources.rs`'s `evaluate` for sources;
//! - one renderer: `report.rs` (the report, `--driver`'s verdict, the JSON), and `cli.rs`, the
//!   command's options;
//! - data: `registry.rs` (the generated crate's registry.json), `releases.rs`
//!   (cuda-releases.toml); and the floor of a run (`runs.rs`, `trace.rs`, `load.rs`).
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
mod cli;
mod extents;
mod kernels;
pub mod load;
mod model;
mod programs;
mod registry;
pub mod releases;
mod report;
pub mod runs;
mod scan;
mod sources;
pub mod trace;

pub use cli::{run, MinDriverArgs, HELP_CLOSING};
pub use programs::{floor_of_programs, floor_of_programs_on, object_bare_parse};
pub use report::Check;
use sources::{evaluate, kernel_floor, not_rust_source, read_program};

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

/// `min-driver`'s exit statuses, for `--help` and the docs (tested against each other).
pub const EXIT_STATUSES: &[(u8, &str)] = &[
    (0, "the report was made; with `--driver` or `--max`, the program is within it"),
    (
        1,
        "error: bad arguments, an unreadable file or registry, a file that is neither a program, a kernel file nor a Rust source (a script, a linker script: the error says which)",
    ),
    (
        2,
        "with `--driver` or `--max`: within it as far as could be read, but something could not be read (the floor is \"at least\"), or not proven (a driver newer than NVIDIA's table, an architecture its release removed)",
    ),
    (3, "with `--driver` or `--max`: above it; the offending entries and kernels are listed"),
];
