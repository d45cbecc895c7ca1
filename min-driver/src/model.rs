//! What a compiled program can do at run time, decided before any floor: the one pure function
//! ([`decide`]) from what the readers collected ([`Evidence`]) to what the program needs.
//!
//! An exact floor is honest only where every way the program can reach the driver or load code
//! was read. So the readers only collect evidence (records, imports, exports, a symbol table,
//! the registry names and marker strings of its data, kernels), and this file decides, from it
//! alone, which capabilities the program has ([`capabilities`]):
//!
//! - naming a driver function at run time: `dlsym`/`dlvsym`/`GetProcAddress` imported,
//!   `cuGetProcAddress*` or `cudaGetDriverEntryPoint*` imported, a static CUDA runtime
//!   held whose `cudaGetDriverEntryPoint` no symbol table proves absent, or a walk of the
//!   loaded libraries (`dl_iterate_phdr`, `dladdr`, `dlinfo`) with the driver in the process;
//! - loading code it does not embed: `cuModuleLoad`, `cuLibraryLoadFromFile`, `cuLinkAddFile`,
//!   NVRTC, nvJitLink, `dlopen`/`LoadLibrary`, a loader from memory beside a decoder;
//! - linking a library it names that was not read;
//! - importing a driver function the registry does not know (a newer toolkit's).
//!
//! Each capability present and not proven harmless makes the floor "at least" and says which.
//! Evidence only ever adds a floor or a capability: no string, alone, decides that a capability
//! is absent (that a program holds the CUDA runtime's code adds the runtime's floor; it never
//! hides a `dlsym`). Two proofs remove one: the generated crate's records (its loader is what
//! imports `dlopen`/`dlsym`, and its lookups leave records), and a file that is the runtime or
//! the driver itself (what it defines: its lookups are its callers').

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use codegen::answer_rule::entry_floor;
use codegen::record_format::RecordKind;

use super::binary::{self, Record};
use super::kernels::{self, Image};
use super::registry::Registry;
use super::releases::{cuda_text, Platform, Releases};
use super::{Kernel, Reading, Unresolved, Use};

/// What the readers found in one file, and nothing of what it means.
#[derive(Debug, Default)]
pub(super) struct Evidence {
    pub file: PathBuf,
    /// The kind of file (`Elf X86_64 executable`).
    pub format: String,
    pub platform: Platform,
    /// The generated crate's records.
    pub records: Vec<Record>,
    /// The functions it imports, by name.
    pub imports: Vec<String>,
    /// The DLLs a PE program imports from.
    pub import_libraries: Vec<String>,
    /// The shared libraries an ELF program needs (`DT_NEEDED`).
    pub needed: Vec<String>,
    /// The names starting `cu` it defines for others (the driver's or the runtime's entry points).
    pub exports: BTreeSet<String>,
    /// With a symbol table (not stripped): the names of interest it defines. `None`: no table,
    /// so nothing is proven absent by it.
    pub symtab: Option<BTreeSet<String>>,
    /// The registry names among the strings of its data, each where it was first seen.
    pub strings: BTreeMap<String, String>,
    /// Which of [`binary::MARKS`] its data holds.
    pub marks: BTreeSet<&'static str>,
    /// The kernels it embeds.
    pub image: Image,
    /// Parts that could not be read.
    pub unreadable: Vec<Unresolved>,
    /// A kernel file (`.ptx`, `.cubin`, `.fatbin`) read as one: no host code.
    pub kernel_file: bool,
    /// A PE program's imports by ordinal: functions whose names the file does not give.
    pub unnamed_imports: Vec<String>,
    /// The name the file gives itself: an ELF library's `DT_SONAME`, a DLL's export directory's.
    pub soname: Option<String>,
}

/// A way a program can reach the driver, or code, that the file itself does not show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Capability {
    /// Names a driver function at run time.
    NamesFunctions,
    /// Loads code it does not embed.
    LoadsCode,
    /// Links a library it names that was not read.
    LinksUnread,
    /// Imports a driver function the registry does not know.
    UnknownName,
    /// Imports a function by ordinal: its name is not in the file.
    Unnamed,
}

impl Capability {
    pub(super) fn text(self) -> &'static str {
        match self {
            Capability::NamesFunctions => "names driver functions at run time",
            Capability::LoadsCode => "loads code it does not embed",
            Capability::LinksUnread => "links a library that was not read",
            Capability::UnknownName => "imports a driver function the registry does not know",
            Capability::Unnamed => "imports a function whose name the file does not give",
        }
    }
}

/// One capability found: what shows it, and why it leaves the floor open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Found {
    pub capability: Capability,
    pub how: String,
    pub why: String,
}

/// What the file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// A program or library that uses the driver (or not).
    Program,
    /// The CUDA runtime itself (it defines `cudaMalloc` and `cudaGetDriverEntryPoint`).
    Runtime,
    /// A CUDA driver library (it defines `cuInit`, `cuDriverGetVersion` and the driver's entry points).
    Driver,
}

/// The runtime a program links or holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Runtime {
    pub major: u32,
    /// The minor version where it is known (a CUDA 10.x soname; a static runtime's lower bound).
    pub minor: Option<u32>,
    pub how: String,
    /// Its code is in the file (a static runtime, or the runtime library itself): its strings
    /// are its table of every driver function, not what the program asks for.
    pub held: bool,
}

/// How many registry names a static runtime's table holds at the least (12.x and 13.x hold
/// several hundred): fewer, and the strings are the program's own.
const RUNTIME_TABLE: usize = 200;

/// How many of the generated crate's markers (`cuMemAlloc_v3020`, its own names for the ABIs)
/// the strings hold. [`RUNTIME_TABLE`] or more: the file holds the crate's table of every
/// entry (cuda-sys-gen itself, whose registry is compiled in; a program embedding registry.json
/// or walking `ENTRIES`), not the CUDA runtime's, whose table names exported functions only.
pub(super) fn crate_table(ev: &Evidence, reg: &Registry) -> usize {
    ev.strings.keys().filter(|w| reg.is_marker_only(w)).count()
}

/// What the file is, by what it defines.
pub(super) fn role(ev: &Evidence, reg: &Registry) -> Role {
    let defines = |p: &str| ev.exports.iter().any(|e| e.starts_with(p));
    let driver_names = ev.exports.iter().filter(|e| reg.by_exported(e).is_some()).count();
    // Drivers before CUDA 11.3 have no `cuGetProcAddress`: `cuInit`, `cuDriverGetVersion` and
    // the driver's own names make one.
    if ev.exports.contains("cuInit") && ev.exports.contains("cuDriverGetVersion") && driver_names >= 20 {
        Role::Driver
    } else if ev.exports.contains("cudaMalloc")
        && defines("cudaGetDriverEntryPoint")
        && ev.soname.as_deref().is_some_and(|s| binary::runtime_soname(s).is_some())
    {
        // The runtime by what it defines and by the name it gives itself (`libcudart.so.12`,
        // `cudart64_12.dll`): a library that holds a static runtime and exports its functions
        // defines them too, and its own lookups are its own, not its callers'.
        Role::Runtime
    } else {
        Role::Program
    }
}

/// The minor version compatibility floors (a runtime of major 12 runs on any driver of CUDA
/// 12.0 and later; its driver is the table's `[[compat]]` row): the CUDA version a runtime of
/// `major` needs at the least. CUDA 11.0 and later; older runtimes need their own release.
pub(super) fn runtime_floor(major: u32, minor: Option<u32>) -> u32 {
    if major >= 11 {
        major * 1000
    } else {
        major * 1000 + minor.unwrap_or(0) * 10
    }
}

/// The CUDA runtime the file links (its soname) or holds (nvcc 13's tag `libcudart_static_`,
/// or the runtime's own signature: its error names, `cuGetProcAddress` and the driver's library
/// name, beside a table of hundreds of driver names). A held runtime's release is at least that
/// of the newest versioned export name among its strings.
pub(super) fn runtime(ev: &Evidence, reg: &Registry, role: Role) -> Option<Runtime> {
    let shared = ev.needed.iter().chain(&ev.import_libraries).find_map(|l| binary::runtime_soname(l));
    if let Some((major, minor, soname)) = shared {
        return Some(Runtime { major, minor, how: format!("links {soname}"), held: false });
    }
    let tagged = ev.marks.contains("libcudart_static_");
    let signature = ev.marks.contains("cudaErrorCudartUnloading")
        && ev.marks.contains("cuGetProcAddress")
        && (ev.marks.contains("libcuda.so") || ev.marks.contains("nvcuda.dll"));
    let table = ev.strings.len() >= RUNTIME_TABLE
        || role == Role::Runtime
        || ev.symtab.as_ref().is_some_and(|s| s.contains("cudaMalloc"));
    // The generated crate's table names the runtime's marks too (cuda-sys-gen holds them as
    // what it looks for): its strings are that table, not the runtime's code.
    let crates = role != Role::Runtime && crate_table(ev, reg) >= RUNTIME_TABLE;
    if !(tagged || signature) || !table || crates {
        return None;
    }
    let newest = ev
        .strings
        .keys()
        .filter_map(|w| reg.by_exported(w).filter(|&e| reg.entries[e].symbol != *w))
        .map(|e| reg.entries[e].version)
        .max()?;
    let (major, minor) = (newest / 1000, newest % 1000 / 10);
    let how = if role == Role::Runtime {
        format!("is the CUDA runtime, {major}.{minor} or later by the driver functions it names")
    } else {
        format!("holds the CUDA runtime's code, {major}.{minor} or later by the driver functions it names")
    };
    Some(Runtime { major, minor: Some(minor), how, held: true })
}

/// Whether a library name is NVRTC's or nvJitLink's (`libnvrtc.so.13`, `nvrtc64_120_0.dll`,
/// `libnvJitLink.so.12`, `nvJitLink_120_0.dll`).
fn run_time_compiler(lib: &str) -> bool {
    let l = lib.to_ascii_lowercase();
    ["libnvrtc", "nvrtc64_", "libnvjitlink", "nvjitlink_"].iter().any(|p| l.starts_with(p))
}

/// Whether a function is a run-time compiler's (NVRTC's `nvrtc*`, nvJitLink's `nvJitLink*`,
/// the PTX compiler library's `nvPTXCompiler*`): imported, or linked in from its static library.
pub(super) fn run_time_compiler_function(name: &str) -> bool {
    name.starts_with("nvrtc") || name.starts_with("nvJitLink") || name.starts_with("nvPTXCompiler")
}

/// Whether a name looks like one of the driver's (`cu` and a capital letter).
fn driver_like(name: &str) -> bool {
    name.len() > 2 && name.starts_with("cu") && name[2..].starts_with(|c: char| c.is_ascii_uppercase())
}

/// The driver functions that load a kernel image from a file named by a value (and the
/// runtime's own, `cudaLibraryLoadFromFile`).
const FROM_FILE: &[&str] =
    &["cuModuleLoad", "cuLibraryLoadFromFile", "cuLinkAddFile", "cuLinkAddFile_v2", "cudaLibraryLoadFromFile"];

/// The driver functions that load a kernel image from bytes in memory: where the program
/// embeds no image, the bytes come from elsewhere (a file it reads, a download).
const FROM_MEMORY: &[&str] = &[
    "cuModuleLoadData",
    "cuModuleLoadDataEx",
    "cuModuleLoadFatBinary",
    "cuLibraryLoadData",
    "cuLinkAddData",
    "cuLinkAddData_v2",
    "cudaLibraryLoadData",
];

/// Whether a function hands out another's address by its name: a loader's lookup (`dlsym`,
/// `dlvsym`, glibc's internal `__libc_dlsym` and `_dl_sym`, Windows' `GetProcAddress` and
/// ntdll's `LdrGetProcedureAddress*`). Families, not a list of spellings: a new variant of one
/// is still one.
pub(super) fn looks_up_by_name(name: &str) -> bool {
    let n = name.trim_start_matches('_');
    ["dlsym", "dlvsym", "libc_dlsym", "libc_dlvsym", "dl_sym", "dl_vsym"].contains(&n)
        || n.ends_with("_dlsym")
        || n.ends_with("_dlvsym")
        || n.starts_with("GetProcAddress")
        || n.starts_with("LdrGetProcedureAddress")
}

/// Whether a function loads a library named at run time (`dlopen`, `dlmopen`, glibc's internal
/// `__libc_dlopen_mode`, Android's `android_dlopen_ext`, Windows' `LoadLibrary*`,
/// `LoadPackagedLibrary` and ntdll's `LdrLoadDll`).
pub(super) fn loads_library(name: &str) -> bool {
    let n = name.trim_start_matches('_');
    ["dlopen", "dlmopen", "libc_dlopen_mode", "android_dlopen_ext", "LoadPackagedLibrary", "LdrLoadDll"].contains(&n)
        || n.ends_with("_dlopen")
        || n.ends_with("_dlopen_ext")
        || n.ends_with("_dlmopen")
        || n.starts_with("LoadLibrary")
}

/// Whether a function hands out the loaded libraries themselves, where a program can read a
/// library's table of symbols in memory and find any of its functions without a lookup by name:
/// `dl_iterate_phdr` (each library's program headers), `dladdr`/`dladdr1` (the library holding
/// an address, and its base), `dlinfo` (a handle's link map), `_dl_find_object`, the loader's
/// `_r_debug` (the list of every library loaded).
pub(super) fn walks_loaded_libraries(name: &str) -> bool {
    ["dl_iterate_phdr", "dladdr", "dladdr1", "dlinfo", "_dl_find_object", "_r_debug", "r_debug"].contains(&name)
}

/// Whether a function decodes bytes into others: a decompressor (zlib's `inflate*` and
/// `uncompress*`, zstd's `ZSTD_decompress*`, LZ4's `LZ4_decompress*`, bzip2's `BZ2_bzDecompress*`
/// and `BZ2_bzBuffToBuffDecompress`, xz's `lzma_code`, brotli's `BrotliDecoderDecompress*`), a
/// character set converter (`iconv`), a cipher's decryption (OpenSSL's `EVP_Decrypt*`). Beside
/// a loader from memory, what it loads may be what it decoded, not what it embeds.
pub(super) fn decodes(name: &str) -> bool {
    ["inflate", "uncompress", "ZSTD_decompress", "LZ4_decompress", "BZ2_bzDecompress", "BrotliDecoderDecompress"]
        .iter()
        .any(|p| name.starts_with(p))
        || ["BZ2_bzBuffToBuffDecompress", "lzma_code", "lzma_stream_buffer_decode", "iconv"].contains(&name)
        || name.starts_with("EVP_Decrypt")
        || name.starts_with("EVP_CipherUpdate")
}

/// Whether a driver or runtime function hands out driver functions the program does not name:
/// a lookup by name (`cuGetProcAddress*`, `cudaGetDriverEntryPoint*`) or the table of the
/// driver's private functions by UUID (`cuGetExportTable`, `cudaGetExportTable`).
fn driver_lookup(name: &str) -> bool {
    name.starts_with("cuGetProcAddress")
        || name.starts_with("cudaGetDriverEntryPoint")
        || name.starts_with("cuGetExportTable")
        || name.starts_with("cudaGetExportTable")
}

/// The capabilities the evidence shows, each with what shows it. Pure: the same evidence, the
/// same list.
pub(super) fn capabilities(ev: &Evidence, reg: &Registry) -> Vec<Found> {
    let role = role(ev, reg);
    if role == Role::Driver || ev.kernel_file {
        return Vec::new();
    }
    let runtime = runtime(ev, reg, role);
    let held = runtime.as_ref().is_some_and(|r| r.held);
    // Proofs: the generated crate's loader is what imports dlopen and dlsym where its records
    // are; the runtime's own lookups are its callers'.
    let crate_loader = !ev.records.is_empty();
    let own_loader = crate_loader || role == Role::Runtime;
    let mut out: Vec<Found> = Vec::new();
    fn push(out: &mut Vec<Found>, capability: Capability, how: String, why: &str) {
        let f = Found { capability, how, why: why.to_owned() };
        if !out.contains(&f) {
            out.push(f);
        }
    }
    macro_rules! add {
        ($c:expr, $how:expr, $why:expr $(,)?) => {
            push(&mut out, $c, $how, $why)
        };
    }
    let names_why = if crate_loader {
        "the names it asks for are not read: its strings hold the generated crate's records, which name every \
         entry they look up"
    } else if held {
        "the names it asks for are not read: its strings are the CUDA runtime's table of every driver function"
    } else {
        "the names are read from its strings, at their highest meaning (an upper estimate of the need); a name it \
         builds at run time is not seen"
    };
    // What the program calls: its imports, and the functions its records look up (a lookup
    // through the generated crate is a call as surely as an import is).
    let record_names: Vec<String> =
        ev.records.iter().flat_map(|r| [r.symbol.clone(), r.exported.clone()]).filter(|n| !n.is_empty()).collect();
    for name in &record_names {
        if driver_lookup(name) {
            add!(Capability::NamesFunctions, format!("looks up {name} (a record)"), names_why);
        }
        if FROM_FILE.contains(&name.as_str()) {
            add!(
                Capability::LoadsCode,
                format!("looks up {name} (a record)"),
                "it loads a kernel file named at run time, whose PTX ISA and architectures are not read",
            );
        }
    }
    // A run-time compiler linked in from its static library (`libnvrtc_static.a`,
    // `libnvJitLink_static.a`, `libnvptxcompiler_static.a`), shown by its symbol table.
    if let Some(d) = ev.symtab.iter().flatten().find(|d| run_time_compiler_function(d)) {
        add!(
            Capability::LoadsCode,
            format!("defines {d} (a run-time compiler linked in)"),
            "it compiles kernels at run time: the code it makes needs a driver of that compiler's release",
        );
    }
    // A loader linked into the program (a static one: the C library's own `dlopen` and
    // `dlsym`), shown by its symbol table.
    if !own_loader {
        for d in ev.symtab.iter().flatten() {
            if looks_up_by_name(d) {
                add!(Capability::NamesFunctions, format!("defines {d} (a loader linked in)"), names_why);
            }
            if loads_library(d) {
                add!(
                    Capability::LoadsCode,
                    format!("defines {d} (a loader linked in)"),
                    "it can load a library named at run time, whose kernels and lookups are not read",
                );
            }
        }
    }
    // A static program (no library linked, nothing imported) that names the driver's library or
    // any of its functions can reach the driver only by loading it itself (its name may be
    // built at run time), and then only by name.
    let linked_nothing = ev.imports.is_empty() && ev.needed.is_empty() && ev.import_libraries.is_empty();
    if linked_nothing && !own_loader && !held && role == Role::Program {
        let named = ["libcuda.so", "nvcuda.dll"]
            .into_iter()
            .find(|m| ev.marks.contains(m))
            .map(|m| format!("the driver's library \"{m}\""))
            .or_else(|| ev.strings.keys().next().map(|w| format!("the driver function \"{w}\"")));
        if let Some(named) = named {
            add!(Capability::NamesFunctions, format!("links nothing, and names {named}"), names_why);
        }
    }
    // A program that loads images from memory but embeds none loads what it does not embed.
    let embeds = !ev.image.needs.is_empty() || !ev.image.unreadable.is_empty();
    if !embeds {
        if let Some(name) = ev.imports.iter().chain(&record_names).find(|n| FROM_MEMORY.contains(&n.as_str())) {
            add!(
                Capability::LoadsCode,
                format!("calls {name} and embeds no kernel"),
                "the images it loads come from elsewhere (a file it reads, data it makes), and their needs are not read",
            );
        }
    }
    // A program that loads images from memory and decodes bytes (a decompressor, a converter, a
    // cipher) may load what it decoded: a kernel it does not embed as such.
    if let Some(name) = ev.imports.iter().chain(&record_names).find(|n| FROM_MEMORY.contains(&n.as_str())) {
        let decoder = ev
            .imports
            .iter()
            .find(|i| decodes(i))
            .map(|d| format!("imports {d}"))
            .or_else(|| ev.symtab.iter().flatten().find(|d| decodes(d)).map(|d| format!("defines {d}")));
        if let Some(decoder) = decoder {
            add!(
                Capability::LoadsCode,
                format!("calls {name} and {decoder}"),
                "the images it loads may be ones it decodes at run time (decompresses, converts, decrypts), whose \
                 needs are not read",
            );
        }
    }
    for u in &ev.unnamed_imports {
        add!(
            Capability::Unnamed,
            format!("imports {u}"),
            "its number in the library's table is all the file says of it: it may be a loader or a driver function",
        );
    }
    // The driver is in the process by the program's own linking: libcuda (nvcuda.dll) or the
    // runtime (which opens it) linked, or a driver function imported.
    let driver_linked = ev.needed.iter().chain(&ev.import_libraries).any(|l| {
        let base = l.rsplit(['/', '\\']).next().unwrap_or(l).to_ascii_lowercase();
        base.starts_with("libcuda.so")
            || base.starts_with("libcudart")
            || base == "nvcuda.dll"
            || base.starts_with("cudart")
    }) || ev.imports.iter().any(|i| driver_like(i));
    for imp in &ev.imports {
        let name = imp.as_str();
        if walks_loaded_libraries(name) && driver_linked && !own_loader {
            add!(
                Capability::NamesFunctions,
                format!("imports {name} (walks the loaded libraries)"),
                "with the driver loaded into its process, it can find any driver function in the driver's own table \
                 of symbols, without a lookup by name (Rust's std imports dl_iterate_phdr for its backtraces: a Rust \
                 program that calls libcuda directly reads \"at least\" for it); the names are read from its strings, \
                 at their highest meaning",
            );
        }
        if looks_up_by_name(name) && !own_loader {
            add!(Capability::NamesFunctions, format!("imports {name}"), names_why);
        }
        if driver_lookup(name) {
            add!(Capability::NamesFunctions, format!("imports {name}"), names_why);
        }
        if loads_library(name) && !own_loader {
            add!(
                Capability::LoadsCode,
                format!("imports {name}"),
                "it can load a library named at run time, whose kernels and lookups are not read",
            );
        }
        if FROM_FILE.contains(&name) {
            add!(
                Capability::LoadsCode,
                format!("imports {name}"),
                "it loads a kernel file named at run time, whose PTX ISA and architectures are not read",
            );
        }
        if run_time_compiler_function(name) {
            add!(
                Capability::LoadsCode,
                format!("imports {name}"),
                "it compiles kernels at run time (NVRTC, nvJitLink): the PTX it makes needs a driver of that \
                 compiler's release",
            );
        }
    }
    if held && role == Role::Program {
        match &ev.symtab {
            None => add!(
                Capability::NamesFunctions,
                "holds a static CUDA runtime".into(),
                "no symbol table proves its cudaGetDriverEntryPoint (a lookup by a name and version known at run \
                 time) is not linked in; the names asked for are not read",
            ),
            Some(defined) => {
                if let Some(d) = defined.iter().find(|d| d.starts_with("cudaGetDriverEntryPoint")) {
                    add!(
                        Capability::NamesFunctions,
                        format!("defines {d} (a static CUDA runtime)"),
                        "it looks driver functions up by a name and version known at run time; the names asked \
                         for are not read",
                    );
                }
            }
        }
    }
    for lib in ev.needed.iter().chain(&ev.import_libraries) {
        if run_time_compiler(lib) {
            add!(
                Capability::LoadsCode,
                format!("links {lib}"),
                "it compiles kernels at run time (NVRTC, nvJitLink): the PTX it makes needs a driver of that \
                 compiler's release",
            );
        }
    }
    // What a program that reaches functions by name can name: loaders and compilers among
    // its strings (not the runtime's or the crate's tables, which name every function).
    let by_name = out.iter().any(|f| matches!(f.capability, Capability::NamesFunctions | Capability::LoadsCode))
        || ev.imports.iter().any(|i| loads_library(i));
    if by_name && !own_loader && !held {
        for name in FROM_FILE {
            if let Some(at) = ev.strings.get(*name) {
                add!(
                    Capability::LoadsCode,
                    format!("the string \"{name}\" ({at})"),
                    "it can look up a loader of kernel files named at run time, whose needs are not read",
                );
            }
        }
    }
    // A run-time compiler named by a program that can open a library (the generated crate's
    // loader too: it opens libcuda, never NVRTC, so the name is the program's own).
    if by_name || (crate_loader && ev.imports.iter().any(|i| loads_library(i))) {
        // One line for all of them: each shows the same capability.
        let named: Vec<String> = binary::RUN_TIME_COMPILER_MARKS
            .iter()
            .filter(|m| ev.marks.contains(*m))
            .map(|m| format!("\"{m}\""))
            .collect();
        if !named.is_empty() {
            let s = if named.len() == 1 { "" } else { "s" };
            add!(
                Capability::LoadsCode,
                format!("the string{s} {}", named.join(", ")),
                "it can open a run-time compiler (NVRTC, nvJitLink): the PTX it makes needs a driver of that compiler's \
                 release",
            );
        }
    }
    for lib in not_read(ev) {
        add!(
            Capability::LinksUnread,
            format!("links {lib}"),
            "what it asks the driver for is not counted: pass it too"
        );
    }
    // A `cu*` import whose library is the driver, or that no library it links but the system's
    // can give (only a driver loaded into the process can).
    let links_driver = ev.needed.iter().any(|l| l.starts_with("libcuda.so"))
        || ev.import_libraries.iter().any(|l| l.eq_ignore_ascii_case("nvcuda.dll"));
    if links_driver || ev.platform == Platform::Windows || not_read(ev).is_empty() {
        for imp in ev.imports.iter().filter(|i| driver_like(i) && reg.by_exported(i).is_none()) {
            if reg.meanings(imp).is_none() {
                add!(
                    Capability::UnknownName,
                    format!("imports {imp}"),
                    "a driver function this registry does not know (a newer toolkit's?): regenerate the registry \
                     with a newer toolkit, or the floor may be higher",
                );
            }
        }
    }
    out
}

/// The shared libraries the file needs that may use the driver, and so are not read here.
pub(super) fn not_read(ev: &Evidence) -> Vec<String> {
    let mut out: Vec<String> = ev.needed.iter().filter(|l| !binary::system_library(l)).cloned().collect();
    if ev.platform == Platform::Windows {
        out.extend(ev.import_libraries.iter().filter(|l| !binary::windows_system_library(l)).cloned());
    }
    out
}

/// What a compiled program needs.
#[derive(Debug, Default)]
pub(super) struct Read {
    pub uses: Vec<Use>,
    pub kernels: Vec<Kernel>,
    pub unresolved: Vec<Unresolved>,
    /// The kind of file (`ELF x86-64 executable`).
    pub format: String,
    pub records: usize,
    /// With a GPU given: the fatbin entries not loaded on it.
    pub unused: Vec<String>,
    /// The shared libraries it needs that may use the driver: not read here.
    pub not_read: Vec<String>,
    /// What the file is, where that is not a program (a driver library).
    pub notes: Vec<String>,
    /// The majors of the CUDA runtimes it links or holds (their minimum drivers are NVIDIA's
    /// minor version compatibility rows).
    pub runtimes: Vec<u32>,
    /// The GPUs every fatbin container with cubins holds a cubin for.
    pub cubin_gpus: Vec<String>,
}

/// How a driver library's note starts (the report's headline for it).
pub(super) const DRIVER_NOTE: &str = "a CUDA driver library";

/// The floor of one file, from its evidence alone (no file is read here).
pub(super) fn decide(ev: Evidence, reg: &Registry, releases: &Releases, gpu: Option<u32>) -> Read {
    let role = role(&ev, reg);
    let file = ev.file.clone();
    let mut read = Read { format: ev.format.clone(), records: ev.records.len(), ..Read::default() };
    if role == Role::Driver {
        read.notes.push(format!(
            "{DRIVER_NOTE}: it defines {} of the driver's entry points (cuInit, cuDriverGetVersion, ...); a \
             driver has no floor of its own, the programs that load it do",
            ev.exports.iter().filter(|e| reg.by_exported(e).is_some()).count()
        ));
        // NVIDIA's drivers embed cubins of their own (libcuda 535: sm_90a), never PTX (none of
        // 418 to 555 holds a `.version`). PTX is what a driver JIT-compiles: a library that
        // defines the driver's functions and embeds PTX may forward them to another driver (an
        // interposer, `dlsym(RTLD_NEXT, ...)`), which must run it. Its PTX is listed, and the
        // floor is "at least": where it loads it is not read.
        let ptx = ev.image.needs.iter().any(|(n, _)| matches!(n, kernels::Need::PtxIsa(_)));
        if ptx {
            let mut image = ev.image;
            // Its machine code's constants that look like a fatbin's magic are no kernel.
            image.unreadable.clear();
            read.unresolved.push(Unresolved {
                spelled: "the PTX it embeds".into(),
                file: file.clone(),
                line: 0,
                why: "a driver library that embeds PTX (NVIDIA's embed none): a library that defines the driver's \
                      functions and forwards them to another driver (an interposer) loads it on that one, which \
                      must JIT-compile it; whether it does is not read"
                    .into(),
                reading: Reading::Kernel,
            });
            kernel_needs(image, &file, releases, gpu, &mut read);
        }
        return read;
    }
    let found = capabilities(&ev, reg);
    let runtime = runtime(&ev, reg, role);
    let table = crate_table(&ev, reg);
    if table >= RUNTIME_TABLE {
        let counted = if ev.records.is_empty() && found.iter().any(|f| f.capability == Capability::NamesFunctions) {
            "read at their highest meaning below: an upper estimate of what it asks for, not a runtime's need"
        } else {
            "not counted: they are a table, not lookups"
        };
        read.notes.push(format!(
            "a table of names, not the CUDA runtime: its strings hold {table} of the generated crate's {} markers \
             (cuMemAlloc_v3020, ...), which only the crate's own tables hold (cuda-sys-gen itself, a program \
             embedding registry.json or walking ENTRIES); its driver names are {counted}",
            reg.entries.len()
        ));
    }
    let mut uses: BTreeMap<String, Use> = BTreeMap::new();
    let mut add = |u: Use| match uses.get(&u.marker) {
        Some(old) if old.version >= u.version => {}
        _ => {
            uses.insert(u.marker.clone(), u);
        }
    };
    let mk = |marker: String, version: u32, spelled: String, read_as: &'static str, reading: Reading| Use {
        marker,
        version,
        spelled,
        file: file.clone(),
        line: 0,
        read_as,
        reading,
    };
    for r in &ev.records {
        match r.kind {
            Ok(RecordKind::Entry) => {
                let e = reg.entry_of(&r.symbol, r.version, r.per_thread);
                let marker =
                    e.map_or_else(|| format!("{}_v{}", r.symbol, r.version), |e| reg.entries[e].marker.clone());
                let floor = e.map_or(r.floor, |e| reg.entries[e].floor);
                let spelled = format!("{} at {} ({}), {}", r.symbol, r.version, r.exported, r.at);
                add(mk(marker, floor.max(r.floor), spelled, "exact", Reading::Record));
            }
            Ok(RecordKind::Newest) => add(mk(
                format!("{}_v{}", r.symbol, r.version),
                r.floor,
                format!(
                    "newest::<symbols::{}>, any of {} ABIs from {} to {}, {}",
                    r.symbol, r.abis, r.version, r.high, r.at
                ),
                "oldest ABI",
                Reading::Record,
            )),
            Ok(RecordKind::Fixed) => {
                // A version that introduced no ABI (12010) gets the ABI the driver answers with
                // at it: the newest at or below it, whose measured floor may be above its own.
                let entry = reg
                    .entry_of(&r.symbol, r.version, r.per_thread)
                    .or_else(|| reg.newest_at(&r.symbol, r.version, r.per_thread));
                let known = entry.map(|e| reg.entries[e].floor);
                let marker =
                    entry.map_or_else(|| format!("{}_v{}", r.symbol, r.version), |e| reg.entries[e].marker.clone());
                let spelled = format!("get_raw!(\"{}\", {}), {}", r.symbol, r.version, r.at);
                add(mk(marker, entry_floor(r.floor, known), spelled, "exact", Reading::Record))
            }
            Ok(RecordKind::Runtime) => read.unresolved.push(Unresolved {
                spelled: format!("Driver::{}", r.exported),
                file: file.clone(),
                line: 0,
                why: format!(
                    "looks entries up by a name or version known only at run time ({}): the program may need more \
                     than its records say; fix name and version at compile time (entries::X, get_raw!) where the \
                     floor matters",
                    r.at
                ),
                reading: Reading::Runtime,
            }),
            Err(other) => read.unresolved.push(Unresolved {
                spelled: format!("a record of kind {other}"),
                file: file.clone(),
                line: 0,
                why: format!("{}: a newer generated crate's record: a newer cuda-sys-gen reads it", r.at),
                reading: Reading::Record,
            }),
        }
    }
    // Imports of libcuda's functions, by exported name: exactly those ABIs.
    for name in &ev.imports {
        if let Some(e) = reg.by_exported(name) {
            let entry = &reg.entries[e];
            add(mk(entry.marker.clone(), entry.floor, format!("imports {name}"), "exact", Reading::Import));
        }
    }
    // A program that names functions at run time, read from its strings: each registry name at
    // its highest meaning (not where the strings are a runtime's or the crate's tables).
    let counts_strings = role == Role::Program
        && ev.records.is_empty()
        && !runtime.as_ref().is_some_and(|r| r.held)
        && found.iter().any(|f| f.capability == Capability::NamesFunctions);
    if counts_strings {
        for (word, at) in &ev.strings {
            let Some(e) = reg.highest_meaning(word) else { continue };
            let entry = &reg.entries[e];
            add(mk(
                entry.marker.clone(),
                entry.floor,
                format!("the string \"{word}\" ({at})"),
                "highest",
                Reading::String,
            ));
        }
    }
    for f in &found {
        if f.capability == Capability::LinksUnread {
            continue;
        }
        read.unresolved.push(Unresolved {
            spelled: f.how.clone(),
            file: file.clone(),
            line: 0,
            why: format!("{}: {}", f.capability.text(), f.why),
            reading: Reading::Capability,
        });
    }
    read.not_read = not_read(&ev);
    if let Some(rt) = &runtime {
        runtime_need(rt, &ev, releases, &mut read);
    }
    read.unresolved.extend(ev.unreadable);
    kernel_needs(ev.image, &file, releases, gpu, &mut read);
    read.uses = uses.into_values().collect();
    read
}

/// What the runtime a program links or holds needs.
fn runtime_need(rt: &Runtime, ev: &Evidence, releases: &Releases, read: &mut Read) {
    let (major, minor) = (rt.major, rt.minor);
    let v = runtime_floor(major, minor);
    read.runtimes.push(major);
    let what = if major >= 11 {
        // From CUDA 11 the soname carries the major only (`libcudart.so.11.0` and
        // `cudart64_110.dll` are every 11.x's): its toolkit's own release is not known.
        let compat = releases
            .compat_for(major, ev.platform)
            .map(|d| format!(" ({} driver {d} or later)", ev.platform.driver_name()))
            .unwrap_or_default();
        format!(
            "{}: NVIDIA's minor version compatibility runs it on drivers of CUDA {}{compat}; features of its own \
             release need that release's driver",
            rt.how,
            cuda_text(v)
        )
    } else {
        format!(
            "{}: CUDA {major}.x had no minor version compatibility: it needs a driver of its own release, CUDA {}",
            rt.how,
            cuda_text(v)
        )
    };
    if major < 11 && minor.is_none() {
        read.unresolved.push(Unresolved {
            spelled: rt.how.clone(),
            file: ev.file.clone(),
            line: 0,
            why: format!(
                "a CUDA {major}.x runtime whose minor version its name does not give: it needs a driver of its own \
                 release, which may be above {major}.0"
            ),
            reading: Reading::Runtime,
        });
    }
    read.kernels.push(Kernel {
        needs: format!("the CUDA {major}.x runtime"),
        version: v,
        what,
        file: ev.file.clone(),
        line: 0,
        reading: Reading::Runtime,
    });
}

/// The kernels' needs, one line per need with a count.
fn kernel_needs(mut image: Image, file: &std::path::Path, releases: &Releases, gpu: Option<u32>, read: &mut Read) {
    if let Some(g) = gpu {
        let (kept, unused) = kernels::for_gpu(image, g);
        image = kept;
        read.unused = unused;
    }
    // Without a GPU named: PTX of a fatbin container that also holds a cubin is JIT-compiled
    // only for a GPU none of its cubins runs on ("jit"), counted apart from what every GPU with
    // a cubin needs.
    // The GPUs every container with cubins holds one for, by name (a conservative match: no
    // family or later GPU): on those, no PTX of theirs is loaded.
    let mut per_container: BTreeMap<usize, BTreeSet<&str>> = BTreeMap::new();
    for ((need, _), tag) in image.needs.iter().zip(&image.tags) {
        if let (kernels::Need::Arch(a), Some(t)) = (need, tag) {
            if !t.ptx {
                per_container.entry(t.container).or_default().insert(a.as_str());
            }
        }
    }
    let mut everywhere: Option<BTreeSet<&str>> = None;
    for archs in per_container.values() {
        everywhere = Some(match everywhere {
            None => archs.clone(),
            Some(e) => e.intersection(archs).copied().collect(),
        });
    }
    let everywhere = everywhere.unwrap_or_default();
    if gpu.is_none() {
        read.cubin_gpus = everywhere.iter().map(|a| a.to_string()).collect();
    }
    let jit: Vec<bool> = image
        .tags
        .iter()
        .map(|t| {
            // Even where no GPU is common to every container: each container's PTX is loaded
            // only on a GPU none of that container's cubins runs on.
            gpu.is_none() && t.is_some_and(|t| t.ptx && per_container.contains_key(&t.container))
        })
        .collect();
    let mut kernels_seen: BTreeMap<(String, bool), usize> = BTreeMap::new();
    for (i, (need, what)) in image.needs.into_iter().enumerate() {
        let jit = jit.get(i).copied().unwrap_or(false);
        let (needs, version) = match super::kernel_floor(&need, releases) {
            Ok(found) => found,
            Err(why) => {
                read.unresolved.push(Unresolved {
                    spelled: what,
                    file: file.to_owned(),
                    line: 0,
                    why,
                    reading: Reading::Kernel,
                });
                continue;
            }
        };
        // A library of thousands of kernels: one line per need, with a count.
        if let Some(&i) = kernels_seen.get(&(needs.clone(), jit)) {
            let k: &mut Kernel = &mut read.kernels[i];
            k.what = binary::bump(&k.what);
            continue;
        }
        kernels_seen.insert((needs.clone(), jit), read.kernels.len());
        let reading = if jit { Reading::Jit } else { Reading::Kernel };
        read.kernels.push(Kernel { needs, version, what, file: file.to_owned(), line: 0, reading });
    }
    let mut unreadable: BTreeMap<String, usize> = BTreeMap::new();
    for why in image.unreadable {
        let key = why.split_once(": ").map_or(why.as_str(), |(_, w)| w).to_owned();
        *unreadable.entry(key).or_default() += 1;
    }
    for (why, n) in unreadable {
        read.unresolved.push(Unresolved {
            spelled: if n == 1 { "a kernel image".into() } else { format!("{n} kernel images") },
            file: file.to_owned(),
            line: 0,
            why,
            reading: Reading::Kernel,
        });
    }
}

/// The model as a table: for each capability, a program with it reads "at least" and names
/// it; the same program without it reads exact. Evidence in memory, the repository's registry.
#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        Registry::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/registry.json")).unwrap()
    }

    /// A C program that imports `cuInit` from libcuda, with a symbol table: exact.
    fn base() -> Evidence {
        Evidence {
            file: "prog".into(),
            format: "test".into(),
            imports: vec!["cuInit".into(), "printf".into()],
            needed: vec!["libcuda.so.1".into(), "libc.so.6".into()],
            symtab: Some(BTreeSet::new()),
            ..Evidence::default()
        }
    }

    /// Strings and marks of a program that holds a static CUDA runtime: its table of names.
    fn with_static_runtime(mut ev: Evidence, reg: &Registry) -> Evidence {
        for m in ["libcudart_static_", "cudaErrorCudartUnloading", "cuGetProcAddress", "libcuda.so"] {
            ev.marks.insert(m);
        }
        for e in &reg.entries {
            ev.strings.insert(e.symbol.clone(), ".rodata".into());
        }
        ev.strings.insert("cuCtxCreate_v4".into(), ".rodata".into());
        ev.imports.push("dlopen".into());
        ev
    }

    /// A record of the generated crate's lookup of `symbol` at 2.0.
    fn record(symbol: &str) -> Record {
        Record {
            kind: Ok(RecordKind::Entry),
            per_thread: false,
            abis: 1,
            version: 2000,
            floor: 2000,
            high: 2000,
            symbol: symbol.into(),
            exported: symbol.into(),
            at: ".rodata+0x0".into(),
        }
    }

    fn at_least(ev: Evidence, reg: &Registry) -> (bool, String) {
        let releases = Releases::load().unwrap();
        let read = decide(ev, reg, &releases, None);
        let why = format!("{:?} {:?}", read.unresolved, read.not_read);
        (!read.unresolved.is_empty() || !read.not_read.is_empty(), why)
    }

    #[test]
    fn each_capability_makes_the_floor_at_least_and_its_absence_exact() {
        let reg = registry();
        let (open, why) = at_least(base(), &reg);
        assert!(!open, "the base program is exact: {why}");
        type Change = fn(&mut Evidence);
        let table: &[(&str, Capability, Change)] = &[
            ("dlsym", Capability::NamesFunctions, |e| e.imports.push("dlsym".into())),
            ("dlvsym", Capability::NamesFunctions, |e| e.imports.push("dlvsym".into())),
            ("GetProcAddress", Capability::NamesFunctions, |e| {
                e.platform = Platform::Windows;
                e.needed.clear();
                e.import_libraries = vec!["nvcuda.dll".into(), "KERNEL32.dll".into()];
                e.imports.push("GetProcAddress".into());
            }),
            ("cuGetProcAddress_v2", Capability::NamesFunctions, |e| e.imports.push("cuGetProcAddress_v2".into())),
            ("cudaGetDriverEntryPointByVersion", Capability::NamesFunctions, |e| {
                e.imports.push("cudaGetDriverEntryPointByVersion".into());
                e.needed.push("libcudart.so.12".into());
            }),
            ("a static runtime, stripped", Capability::NamesFunctions, |e| e.symtab = None),
            ("a static runtime's cudaGetDriverEntryPoint linked", Capability::NamesFunctions, |e| {
                e.symtab = Some(BTreeSet::from(["cudaGetDriverEntryPointByVersion".to_owned()]))
            }),
            ("cuModuleLoad", Capability::LoadsCode, |e| e.imports.push("cuModuleLoad".into())),
            ("cuLibraryLoadFromFile", Capability::LoadsCode, |e| e.imports.push("cuLibraryLoadFromFile".into())),
            ("cuLinkAddFile_v2", Capability::LoadsCode, |e| e.imports.push("cuLinkAddFile_v2".into())),
            ("NVRTC linked", Capability::LoadsCode, |e| e.needed.push("libnvrtc.so.13".into())),
            ("nvJitLink imported", Capability::LoadsCode, |e| e.imports.push("nvJitLinkCreate".into())),
            ("dlopen", Capability::LoadsCode, |e| e.imports.push("dlopen".into())),
            ("an unread library", Capability::LinksUnread, |e| e.needed.push("libfoo.so".into())),
            ("an unknown driver function", Capability::UnknownName, |e| e.imports.push("cuFutureFunction_v2".into())),
            // Loaders by family, whatever the spelling.
            ("__libc_dlsym", Capability::NamesFunctions, |e| e.imports.push("__libc_dlsym".into())),
            ("LdrGetProcedureAddress", Capability::NamesFunctions, |e| {
                e.platform = Platform::Windows;
                e.needed.clear();
                e.import_libraries = vec!["nvcuda.dll".into(), "ntdll.dll".into()];
                e.imports.push("LdrGetProcedureAddress".into());
            }),
            ("LoadLibraryExW", Capability::LoadsCode, |e| e.imports.push("LoadLibraryExW".into())),
            ("cuGetExportTable", Capability::NamesFunctions, |e| e.imports.push("cuGetExportTable".into())),
            ("a static dlsym", Capability::NamesFunctions, |e| e.symtab = Some(BTreeSet::from(["dlsym".to_owned()]))),
            ("a static dlopen", Capability::LoadsCode, |e| e.symtab = Some(BTreeSet::from(["dlopen".to_owned()]))),
            ("a static program naming the driver", Capability::NamesFunctions, |e| {
                e.imports.clear();
                e.needed.clear();
                e.symtab = None;
                e.marks.insert("libcuda.so");
            }),
            ("NVRTC linked in statically", Capability::LoadsCode, |e| {
                e.symtab = Some(BTreeSet::from(["nvrtcCompileProgram".to_owned()]))
            }),
            ("the PTX compiler library imported", Capability::LoadsCode, |e| {
                e.imports.push("nvPTXCompilerCompile".into())
            }),
            ("an unknown driver function, no library named", Capability::UnknownName, |e| {
                e.needed.retain(|l| l != "libcuda.so.1");
                e.imports.push("cuFutureFunction_v2".into());
            }),
            ("cuModuleLoadData and no kernel", Capability::LoadsCode, |e| e.imports.push("cuModuleLoadData".into())),
            ("cuModuleLoadData_v2 recorded, no kernel", Capability::LoadsCode, |e| {
                e.records.push(record("cuModuleLoadData"))
            }),
            ("a static program naming a driver function", Capability::NamesFunctions, |e| {
                e.imports.clear();
                e.needed.clear();
                e.symtab = None;
                e.strings.insert("cuCtxCreate_v4".into(), ".rodata+0x0".into());
            }),
            ("an import by ordinal", Capability::Unnamed, |e| e.unnamed_imports.push("KERNEL32.dll ordinal 5".into())),
            // What the generated crate's records look up.
            ("a record of cuModuleLoad", Capability::LoadsCode, |e| e.records.push(record("cuModuleLoad"))),
            ("a record of cuGetProcAddress", Capability::NamesFunctions, |e| {
                e.records.push(record("cuGetProcAddress"))
            }),
            // A walk of the loaded libraries, with the driver in the process.
            ("dl_iterate_phdr", Capability::NamesFunctions, |e| e.imports.push("dl_iterate_phdr".into())),
            ("dladdr", Capability::NamesFunctions, |e| e.imports.push("dladdr".into())),
            ("dlinfo", Capability::NamesFunctions, |e| e.imports.push("dlinfo".into())),
            ("_r_debug", Capability::NamesFunctions, |e| e.imports.push("_r_debug".into())),
            // The runtime by a name that tells no version: a library not read.
            ("libcudart.so", Capability::LinksUnread, |e| e.needed.push("libcudart.so".into())),
            ("libcudart.so.x", Capability::LinksUnread, |e| e.needed.push("libcudart.so.x".into())),
            ("cudart64_.dll", Capability::LinksUnread, |e| {
                e.platform = Platform::Windows;
                e.needed.clear();
                e.import_libraries = vec!["nvcuda.dll".into(), "cudart64_.dll".into()];
            }),
            // Loaders by family: Android's linker exports its own (`__loader_dlsym`).
            ("__loader_dlsym", Capability::NamesFunctions, |e| e.imports.push("__loader_dlsym".into())),
            ("__loader_android_dlopen_ext", Capability::LoadsCode, |e| {
                e.imports.push("__loader_android_dlopen_ext".into())
            }),
            ("NVRTC named beside the crate's loader", Capability::LoadsCode, |e| {
                e.records.push(record("cuInit"));
                e.imports.extend(["dlopen".to_owned(), "dlsym".to_owned()]);
                e.marks.insert("libnvrtc");
            }),
        ];
        for (name, capability, change) in table {
            // The static runtime's rows start from a program that holds one, with a symbol table
            // proving its lookup by name absent: exact, but for its dlopen.
            let static_rows = name.starts_with("a static runtime");
            let start = || {
                let mut ev = base();
                if static_rows {
                    ev = with_static_runtime(ev, &reg);
                    // Its dlopen is another capability, tested on its own row.
                    ev.imports.retain(|i| i != "dlopen");
                }
                ev
            };
            let (open, why) = at_least(start(), &reg);
            assert!(!open, "{name}: without it, exact: {why}");
            let mut ev = start();
            change(&mut ev);
            let found = capabilities(&ev, &reg);
            assert!(found.iter().any(|f| f.capability == *capability), "{name}: {found:?}");
            let (open, why) = at_least(ev, &reg);
            assert!(open, "{name}: with it, at least: {why}");
        }
    }

    /// A program that loads images from memory and embeds one reads as the image it embeds
    /// (exact); without one, what it loads comes from elsewhere ("at least").
    #[test]
    fn loading_from_memory_is_open_only_without_an_embedded_image() {
        let reg = registry();
        let mut ev = base();
        ev.imports.push("cuModuleLoadData".into());
        ev.image.needs.push((kernels::Need::PtxIsa("8.0".into()), "PTX at .rodata+0x0: .version 8.0".into()));
        ev.image.tags.push(None);
        let (open, why) = at_least(ev, &reg);
        assert!(!open, "{why}");
        let mut ev = base();
        ev.imports.push("cuModuleLoadData".into());
        let (open, why) = at_least(ev, &reg);
        assert!(open, "{why}");
        // Beside a decoder (imported, or linked in with its symbols), what it loads may be
        // what it decoded.
        for decoder in ["inflate", "uncompress", "ZSTD_decompressDCtx", "LZ4_decompress_safe", "iconv"] {
            for linked_in in [false, true] {
                let mut ev = base();
                ev.imports.push("cuModuleLoadData".into());
                ev.image.needs.push((kernels::Need::PtxIsa("8.0".into()), "PTX at .rodata+0x0: .version 8.0".into()));
                ev.image.tags.push(None);
                if linked_in {
                    ev.symtab = Some(BTreeSet::from([decoder.to_owned()]));
                } else {
                    ev.imports.push(decoder.into());
                }
                let (open, why) = at_least(ev, &reg);
                assert!(open, "{decoder}: {why}");
            }
        }
    }

    /// No string alone hides a capability: the runtime's signature in a dlopen and dlsym program
    /// (`cudaErrorCudartUnloading`, a `libcudart_static_` substring) leaves it "at least" and
    /// its strings counted.
    #[test]
    fn a_runtime_s_strings_never_hide_a_lookup_by_name() {
        let reg = registry();
        let mut ev = base();
        ev.imports = vec!["dlopen".into(), "dlsym".into()];
        ev.needed = vec!["libc.so.6".into()];
        for m in ["libcudart_static_", "cudaErrorCudartUnloading", "cuGetProcAddress", "libcuda.so"] {
            ev.marks.insert(m);
        }
        ev.strings.insert("cuCtxCreate_v4".into(), ".rodata+0x10".into());
        ev.strings.insert("cuGetProcAddress".into(), ".rodata+0x20".into());
        let releases = Releases::load().unwrap();
        let read = decide(ev, &reg, &releases, None);
        assert!(read.unresolved.iter().any(|u| u.spelled == "imports dlsym"), "{:?}", read.unresolved);
        assert!(read.kernels.iter().all(|k| k.reading != Reading::Runtime), "{:?}", read.kernels);
        let ctx = reg.entries[reg.by_exported("cuCtxCreate_v4").unwrap()].floor;
        assert!(read.uses.iter().any(|u| u.reading == Reading::String && u.version >= ctx), "{:?}", read.uses);
    }

    /// The generated crate's records prove what its loader's dlopen and dlsym are for; a file
    /// that is the driver has no floor of its own.
    #[test]
    fn the_crate_s_loader_and_the_driver_itself_are_proven() {
        let reg = registry();
        let mut ev = base();
        ev.imports.extend(["dlopen".to_owned(), "dlsym".to_owned()]);
        ev.records.push(Record {
            kind: Ok(RecordKind::Entry),
            per_thread: false,
            abis: 1,
            version: 2000,
            floor: 2000,
            high: 2000,
            symbol: "cuInit".into(),
            exported: "cuInit".into(),
            at: ".rodata+0x0".into(),
        });
        assert!(capabilities(&ev, &reg).is_empty(), "{:?}", capabilities(&ev, &reg));
        let mut driver = Evidence::default();
        for e in reg.entries.iter().take(400) {
            driver.exports.insert(e.symbol.clone());
        }
        driver.exports.extend(["cuInit".to_owned(), "cuDriverGetVersion".to_owned(), "cuGetProcAddress_v2".to_owned()]);
        driver.imports.push("dlopen".into());
        assert_eq!(role(&driver, &reg), Role::Driver);
        let read = decide(driver, &reg, &Releases::load().unwrap(), None);
        assert!(read.unresolved.is_empty() && read.uses.is_empty() && !read.notes.is_empty(), "{read:?}");
    }

    /// The runtime is known by what it defines and the name it gives itself: a library that
    /// holds a static runtime and exports its functions is a program, whose own `dlsym` counts.
    #[test]
    fn the_runtime_is_known_by_its_own_name() {
        let reg = registry();
        let mut ev = base();
        ev.exports.extend(["cudaMalloc".to_owned(), "cudaGetDriverEntryPointByVersion".to_owned()]);
        ev.imports.push("dlsym".into());
        ev.soname = Some("libmine.so".into());
        assert_eq!(role(&ev, &reg), Role::Program);
        assert!(capabilities(&ev, &reg).iter().any(|f| f.capability == Capability::NamesFunctions));
        ev.soname = Some("libcudart.so.12".into());
        assert_eq!(role(&ev, &reg), Role::Runtime);
        ev.soname = Some("cudart64_12.dll".into());
        assert_eq!(role(&ev, &reg), Role::Runtime);
        assert!(capabilities(&ev, &reg).iter().all(|f| f.capability != Capability::NamesFunctions));
    }

    /// The generated crate's table of names (cuda-sys-gen itself holds it, with the runtime's
    /// marks among what it looks for) is said to be a table: not the CUDA runtime's code, and
    /// its names counted only as an upper estimate where the file names functions at run time.
    #[test]
    fn the_crate_s_table_of_names_is_not_a_runtime() {
        let reg = registry();
        let releases = Releases::load().unwrap();
        let mut ev = with_static_runtime(base(), &reg);
        ev.imports.push("dlsym".into());
        // Without the crate's markers: the runtime's table, read as the runtime it holds.
        assert!(runtime(&ev, &reg, role(&ev, &reg)).is_some_and(|r| r.held));
        let with_table = |mut ev: Evidence| {
            for e in &reg.entries {
                ev.strings.insert(e.marker.clone(), ".rodata".into());
            }
            ev
        };
        let mut ev = with_table(ev);
        assert!(crate_table(&ev, &reg) >= RUNTIME_TABLE, "{}", crate_table(&ev, &reg));
        assert!(runtime(&ev, &reg, role(&ev, &reg)).is_none());
        let read = decide(ev, &reg, &releases, None);
        assert!(read.runtimes.is_empty() && read.kernels.iter().all(|k| k.reading != Reading::Runtime), "{read:?}");
        assert!(read.notes.iter().any(|n| n.starts_with("a table of names, not the CUDA runtime")), "{:?}", read.notes);
        assert!(read.notes.iter().any(|n| n.contains("upper estimate")), "{:?}", read.notes);
        assert!(read.uses.iter().all(|u| u.reading == Reading::String || u.reading == Reading::Import));
        assert!(read.uses.iter().any(|u| u.reading == Reading::String));
        ev = with_table(with_static_runtime(base(), &reg));
        ev.imports.push("dlsym".into());
        // With a record of the crate's own (cuda-sys-gen's doctor walks ENTRIES): not counted.
        ev.records.push(Record {
            kind: Ok(RecordKind::Runtime),
            per_thread: false,
            abis: 0,
            version: 0,
            floor: 0,
            high: 0,
            symbol: String::new(),
            exported: "resolve".into(),
            at: ".rodata+0x0".into(),
        });
        let read = decide(ev, &reg, &releases, None);
        assert!(read.notes.iter().any(|n| n.contains("not counted")), "{:?}", read.notes);
        assert!(read.uses.iter().all(|u| u.reading != Reading::String), "{:?}", read.uses);
    }
}
