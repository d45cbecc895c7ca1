//! `min-driver PATH` where PATH is a compiled program: the records the generated crate leaves
//! in it, the libcuda functions it imports, the registry names its strings hold (where it has
//! no records but looks functions up by name), the runtime it links, and the kernels it embeds.
//! A program without section headers is read from its loaded segments and its dynamic segment.
//! Only this file is read: the shared libraries it needs are named, not read.
//!
//! A record is the generated crate's `EntryRecord`: 160 bytes found by their magic and checked
//! by their FNV-1a. The linker keeps exactly the records of the lookups in the code it keeps, so
//! for linked code the records are exact: what the program can ask the driver for.
//!
//! Every loop here advances by at least one byte or stops, and each byte of a section is
//! searched a bounded number of times: linear in the file's size.

use std::collections::BTreeMap;
use std::path::Path;

use memchr::memmem;
use object::read::elf::{Dyn, ElfFile, FileHeader, ProgramHeader};
use object::{Endianness, Object, ObjectSection, ObjectSegment, SectionKind};

use super::kernels::{self, Image};
use super::registry::Registry;
use super::{Kernel, Unresolved, Use};

/// The first bytes of every record (the generated crate's `EntryRecord::MAGIC`). Built at run
/// time, so that this program's own image does not hold a record's magic.
fn magic() -> [u8; 8] {
    let mut m = *b"\x00cuRec\x1a\n";
    m[0] = 0xc3;
    m
}

/// `EntryRecord`'s size and the offsets of its fields.
const RECORD_SIZE: usize = 160;

/// The kinds of record (`EntryRecord::how`).
const ENTRY: u8 = 1;
const NEWEST: u8 = 2;
const RUNTIME: u8 = 3;
const FIXED: u8 = 4;

/// One record, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Record {
    pub how: u8,
    pub flags: u8,
    pub abis: u8,
    pub version: u32,
    pub floor: u32,
    pub high: u32,
    pub symbol: String,
    pub exported: String,
    /// Where it was found: the section's name and the offset in it.
    pub at: String,
}

/// FNV-1a over the bytes the record's `check` covers.
fn fnv(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// A NUL-padded name of a record: ASCII identifier bytes, then only NULs.
fn name(field: &[u8]) -> Option<String> {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let (text, rest) = field.split_at(end);
    let ok = text.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'!'))
        && rest.iter().all(|&b| b == 0);
    ok.then(|| String::from_utf8_lossy(text).into_owned())
}

/// The records in `data` (one section's bytes); `little`: the file's byte order.
pub(super) fn records(data: &[u8], little: bool, section: &str, out: &mut Vec<Record>) {
    let magic = magic();
    let u32_at = |b: &[u8], o: usize| {
        let w = [b[o], b[o + 1], b[o + 2], b[o + 3]];
        if little {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        }
    };
    for at in memmem::find_iter(data, &magic) {
        let Some(r) = data.get(at..at + RECORD_SIZE) else { continue };
        if r[8] != 1 {
            continue;
        }
        // The check is over the integers little-endian, whatever the target's order.
        let mut canonical = r[..152].to_vec();
        for o in [12, 16, 20] {
            canonical[o..o + 4].copy_from_slice(&u32_at(r, o).to_le_bytes());
        }
        if fnv(&canonical) != u32_at(r, 152) {
            continue;
        }
        let (Some(symbol), Some(exported)) = (name(&r[24..88]), name(&r[88..152])) else { continue };
        out.push(Record {
            how: r[9],
            flags: r[10],
            abis: r[11],
            version: u32_at(r, 12),
            floor: u32_at(r, 16),
            high: u32_at(r, 20),
            symbol,
            exported,
            at: format!("{section}+{at:#x}"),
        });
    }
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
    /// The shared libraries it needs (`DT_NEEDED`) that may use the driver: not read here.
    pub not_read: Vec<String>,
}

/// Whether `bytes` start like a compiled program or library the `object` crate reads.
pub(super) fn is_binary(head: &[u8]) -> bool {
    head.starts_with(b"\x7fELF")
        || head.starts_with(b"MZ")
        || head.starts_with(&[0xcf, 0xfa, 0xed, 0xfe])
        || head.starts_with(&[0xfe, 0xed, 0xfa, 0xcf])
}

/// The minor version compatibility floors of NVIDIA's table (a runtime of major 12 runs on
/// any driver of CUDA 12.0 and later, 525.60.13 on Linux; 13.x on 580): the CUDA version a
/// runtime of `major` needs at the least. CUDA 11.1 and later; older runtimes need their own
/// release.
fn runtime_floor(major: u32, minor: Option<u32>) -> u32 {
    if major >= 11 {
        major * 1000
    } else {
        major * 1000 + minor.unwrap_or(0) * 10
    }
}

/// Reads the compiled program `path` (its bytes `data`).
pub(super) fn read(
    path: &Path,
    data: &[u8],
    reg: &Registry,
    releases: &super::Releases,
    gpu: Option<u32>,
) -> anyhow::Result<Read> {
    let file = object::File::parse(data).map_err(|e| {
        anyhow::anyhow!(
            "{}: a compiled program the object crate cannot read ({e}); min-driver reads ELF (x86-64, aarch64) and PE \
             programs and libraries, or Rust sources",
            path.display()
        )
    })?;
    let little = file.is_little_endian();
    let mut read = Read {
        format: format!(
            "{:?} {:?} {}",
            file.format(),
            file.architecture(),
            if file.kind() == object::ObjectKind::Dynamic { "shared object or PIE" } else { "executable" }
        ),
        ..Read::default()
    };
    let mut records_found = Vec::new();
    let mut image = Image::default();
    let mut sections_read = 0;
    // Allocated sections only: what the program holds when it runs.
    for section in file.sections() {
        let name = section.name().unwrap_or("").to_owned();
        let allocated = match section.flags() {
            object::SectionFlags::Elf { sh_flags } => sh_flags & u64::from(object::elf::SHF_ALLOC) != 0,
            _ => !matches!(section.kind(), SectionKind::Debug | SectionKind::Metadata | SectionKind::Linker),
        };
        if !allocated || matches!(section.kind(), SectionKind::UninitializedData | SectionKind::UninitializedTls) {
            continue;
        }
        let Ok(bytes) = section.data() else {
            read.unresolved.push(unread(path, &name, "its bytes cannot be read"));
            continue;
        };
        sections_read += 1;
        if fatbin_section(&name) {
            kernels::binary(bytes, &name, &mut image);
            continue;
        }
        records(bytes, little, &name, &mut records_found);
        if section.kind() != SectionKind::Text {
            kernels::embedded(bytes, &name, &mut image);
        }
    }
    // No section headers (`llvm-objcopy --strip-sections`, sstrip): what the program holds
    // when it runs is in its loaded segments; read those bytes instead.
    let sectionless = sections_read == 0;
    if sectionless {
        let mut segments = 0;
        for (i, segment) in file.segments().enumerate() {
            let name = format!("segment {i} (address {:#x})", segment.address());
            let Ok(bytes) = segment.data() else {
                read.unresolved.push(unread(path, &name, "its bytes cannot be read"));
                continue;
            };
            segments += 1;
            records(bytes, little, &name, &mut records_found);
            kernels::embedded(bytes, &name, &mut image);
        }
        if segments == 0 {
            read.unresolved.push(Unresolved {
                spelled: "the whole program".into(),
                file: path.to_owned(),
                line: 0,
                why: "neither a section nor a loaded segment could be read: its records, imports and kernels are \
                      unknown"
                    .into(),
                reading: "record",
            });
        }
        read.format.push_str(", no section headers: read from its loaded segments");
    }
    read.records = records_found.len();
    let file_name = path.to_owned();
    let mut uses: BTreeMap<String, Use> = BTreeMap::new();
    let mut add = |u: Use| match uses.get(&u.marker) {
        Some(old) if old.version >= u.version => {}
        _ => {
            uses.insert(u.marker.clone(), u);
        }
    };
    for r in &records_found {
        let mk = |marker: String, version: u32, spelled: String, read_as: &'static str| Use {
            marker,
            version,
            spelled,
            file: file_name.clone(),
            line: 0,
            read_as,
            reading: "record",
        };
        match r.how {
            ENTRY => {
                let marker = reg
                    .entry_of(&r.symbol, r.version, r.flags)
                    .map_or_else(|| format!("{}_v{}", r.symbol, r.version), |e| reg.entries[e].marker.clone());
                let floor = reg.entry_of(&r.symbol, r.version, r.flags).map_or(r.floor, |e| reg.entries[e].floor);
                add(mk(
                    marker,
                    floor.max(r.floor),
                    format!("{} at {} ({}), {}", r.symbol, r.version, r.exported, r.at),
                    "exact",
                ));
            }
            NEWEST => add(mk(
                format!("{}_v{}", r.symbol, r.version),
                r.floor,
                format!(
                    "newest::<symbols::{}>, any of {} ABIs from {} to {}, {}",
                    r.symbol, r.abis, r.version, r.high, r.at
                ),
                "oldest ABI",
            )),
            FIXED => {
                // A version that introduced no ABI (12010) gets the ABI the driver answers with
                // at it: the newest at or below it, whose measured floor may be above its own.
                let entry = reg.entry_of(&r.symbol, r.version, r.flags).or_else(|| reg.newest_at(&r.symbol, r.version));
                let known = entry.map(|e| reg.entries[e].floor);
                let marker =
                    entry.map_or_else(|| format!("{}_v{}", r.symbol, r.version), |e| reg.entries[e].marker.clone());
                add(mk(
                    marker,
                    known.unwrap_or(r.floor).max(r.floor),
                    format!("get_raw!(\"{}\", {}), {}", r.symbol, r.version, r.at),
                    "exact",
                ))
            }
            RUNTIME => read.unresolved.push(Unresolved {
                spelled: format!("Driver::{}", r.exported),
                file: file_name.clone(),
                line: 0,
                why: format!(
                    "looks entries up by a name or version known only at run time ({}): the program may need more \
                     than its records say; fix name and version at compile time (entries::X, get_raw!) where the \
                     floor matters",
                    r.at
                ),
                reading: "runtime",
            }),
            other => read.unresolved.push(Unresolved {
                spelled: format!("a record of kind {other}"),
                file: file_name.clone(),
                line: 0,
                why: format!("{}: a newer generated crate's record: a newer cuda-sys-gen reads it", r.at),
                reading: "record",
            }),
        }
    }
    // Imports of libcuda's functions, by exported name: exactly those ABIs. Without section
    // headers the dynamic symbol table cannot be found: every name of the dynamic string table
    // (from the dynamic segment) counts, imported or not.
    let dynamic = dynamic_of(&file);
    let mut imports: Vec<String> = file
        .imports()
        .map(|v| v.iter().map(|i| String::from_utf8_lossy(i.name()).into_owned()).collect())
        .unwrap_or_default();
    if sectionless {
        if let Some(strtab) = dynamic.strtab.clone().and_then(|r| data.get(r)) {
            imports.extend(
                strtab.split(|&b| b == 0).filter(|n| !n.is_empty()).map(|n| String::from_utf8_lossy(n).into_owned()),
            );
        }
    }
    let mut libs: Vec<String> = needed_libraries(&file);
    for lib in &dynamic.needed {
        if !libs.contains(lib) {
            libs.push(lib.clone());
        }
    }
    for name in &imports {
        if let Some(e) = reg.by_exported(name) {
            let entry = &reg.entries[e];
            add(Use {
                marker: entry.marker.clone(),
                version: entry.floor,
                spelled: format!("imports {name}"),
                file: file_name.clone(),
                line: 0,
                read_as: "exact",
                reading: "import",
            });
        }
    }
    // A program without records that looks libcuda's functions up by name (cuGetProcAddress,
    // the runtime's cudaGetDriverEntryPoint, or dlopen of libcuda): the registry names its
    // strings hold, at their highest meaning.
    let by_name: Vec<&String> = imports
        .iter()
        .filter(|n| n.starts_with("cuGetProcAddress") || n.starts_with("cudaGetDriverEntryPoint"))
        .collect();
    let dlsym = imports.iter().any(|n| matches!(n.as_str(), "dlsym" | "dlvsym" | "GetProcAddress"));
    let opens_libcuda = memmem::find(data, b"libcuda.so").is_some() || memmem::find(data, b"nvcuda.dll").is_some();
    // A program that imports no libcuda function and can look symbols up (cudarc, or any
    // loader that builds the library's name at run time, "lib" + "cuda" + ".so") reaches the
    // driver only by name: its strings are what it can ask for.
    let imports_libcuda = imports.iter().any(|n| reg.by_exported(n).is_some());
    read.not_read = dynamic.needed.iter().filter(|l| !system_library(l)).cloned().collect();
    if file.format() == object::BinaryFormat::Pe {
        read.not_read.extend(needed_libraries(&file).into_iter().filter(|l| !windows_system_library(l)));
    }
    let shared_cudart = libs.iter().find_map(|l| runtime_soname(l));
    // A program that links the shared runtime holds its error names too where it prints them
    // (PyTorch): only nvcc's tag says the runtime's code is in it as well.
    let static_cudart = static_runtime(data, reg, shared_cudart.is_none());
    let scan = records_found.is_empty()
        && static_cudart.is_none()
        && (!by_name.is_empty() || (dlsym && (opens_libcuda || !imports_libcuda)));
    if !scan && !by_name.is_empty() {
        // Its own lookups by name are not read: the generated crate's records (or a static
        // runtime's strings, which name every function) would be taken for them.
        let why = if records_found.is_empty() {
            "it links a static CUDA runtime, whose strings name every driver function"
        } else {
            "it also holds records of the generated crate, whose strings name every driver function"
        };
        read.unresolved.push(Unresolved {
            spelled: format!("imports {}", by_name.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", ")),
            file: file_name.clone(),
            line: 0,
            why: format!(
                "looks driver functions up by name, and the names it asks for are not read ({why}): the program may \
                 need more than the rest of this report says"
            ),
            reading: "import",
        });
    }
    if scan {
        // What it asks for is what its strings name, as far as they can be read: a name it
        // builds at run time (pasted together, read from a file) is not among them, so the
        // floor of what is read is a lower bound, said as such.
        read.unresolved.push(Unresolved {
            spelled: "driver functions looked up by name".into(),
            file: file_name.clone(),
            line: 0,
            why: "the names are read from the program's strings; one it builds at run time is not seen".into(),
            reading: "string",
        });
        // The strings of its allocated sections, or of its loaded segments less the dynamic
        // string table (the names it imports, counted above) where it has no section headers.
        let mut areas: Vec<(String, &[u8])> = Vec::new();
        for section in file.sections() {
            let allocated = match section.flags() {
                object::SectionFlags::Elf { sh_flags } => sh_flags & u64::from(object::elf::SHF_ALLOC) != 0,
                _ => true,
            };
            if !allocated || matches!(section.kind(), SectionKind::Text | SectionKind::UninitializedData) {
                continue;
            }
            let Ok(bytes) = section.data() else { continue };
            let sname = section.name().unwrap_or("");
            if matches!(sname, ".dynstr" | ".strtab") || fatbin_section(sname) {
                continue;
            }
            areas.push((sname.to_owned(), bytes));
        }
        if sectionless {
            for (i, segment) in file.segments().enumerate() {
                let (Ok(bytes), (offset, _)) = (segment.data(), segment.file_range()) else { continue };
                let name = format!("segment {i}");
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                match dynamic.strtab.clone() {
                    Some(r) if r.start >= start && r.start < start.saturating_add(bytes.len()) => {
                        let (before, rest) = bytes.split_at(r.start - start);
                        let after = rest.get(r.len()..).unwrap_or(&[]);
                        areas.push((name.clone(), before));
                        areas.push((format!("{name} past its dynamic string table"), after));
                    }
                    _ => areas.push((name, bytes)),
                }
            }
        }
        for (sname, bytes) in areas {
            for (word, at) in registry_names(bytes, reg) {
                let Some(e) = reg.highest_meaning(word) else { continue };
                let entry = &reg.entries[e];
                add(Use {
                    marker: entry.marker.clone(),
                    version: entry.floor,
                    spelled: format!("the string \"{word}\" ({sname}+{at:#x})"),
                    file: file_name.clone(),
                    line: 0,
                    read_as: "highest",
                    reading: "string",
                });
            }
        }
    }
    // The CUDA runtime it links: what that runtime needs.
    let runtime = shared_cudart.map(|(major, minor, soname)| (major, minor, format!("links {soname}"))).or_else(|| {
        static_cudart.map(|(major, minor)| {
            (
                major,
                Some(minor),
                format!("holds the CUDA runtime's code, {major}.{minor} or later by the driver functions it names"),
            )
        })
    });
    if let Some((major, minor, how)) = runtime {
        let v = runtime_floor(major, minor);
        let own = minor.map(|m| major * 1000 + m * 10);
        let platform =
            if file.format() == object::BinaryFormat::Pe { super::Platform::Windows } else { super::Platform::Linux };
        let release_driver = own
            .and_then(|o| releases.driver_for(o, platform).filter(|(_, at)| *at == o))
            .map(|(d, _)| format!("; its toolkit's own release driver ({d}) for the features that need it"))
            .unwrap_or_default();
        let what = if major >= 11 {
            format!(
                "{how}: NVIDIA's minor version compatibility runs it on drivers of CUDA {}{release_driver}",
                super::cuda_text(v)
            )
        } else {
            format!(
                "{how}: CUDA {major}.x had no minor version compatibility: it needs a driver of its own release, CUDA \
                 {}",
                super::cuda_text(v)
            )
        };
        if major < 11 && minor.is_none() {
            read.unresolved.push(Unresolved {
                spelled: how.clone(),
                file: file_name.clone(),
                line: 0,
                why: format!(
                    "a CUDA {major}.x runtime whose minor version its name does not give: it needs a driver of its own \
                     release, which may be above {major}.0"
                ),
                reading: "runtime",
            });
        }
        read.kernels.push(Kernel {
            needs: format!("the CUDA {major}.x runtime"),
            version: v,
            what,
            file: file_name.clone(),
            line: 0,
            reading: "runtime",
        });
    }
    if let Some(g) = gpu {
        let (kept, unused) = kernels::for_gpu(image, g);
        image = kept;
        read.unused = unused;
    }
    let mut kernels_seen: BTreeMap<String, usize> = BTreeMap::new();
    for (need, what) in image.needs {
        let Ok((needs, version)) = super::kernel_floor(&need, releases) else {
            let why = super::kernel_floor(&need, releases).err().unwrap_or_default();
            read.unresolved.push(Unresolved {
                spelled: what,
                file: file_name.clone(),
                line: 0,
                why,
                reading: "kernel",
            });
            continue;
        };
        // A library of thousands of kernels: one line per need, with a count.
        if let Some(&i) = kernels_seen.get(&needs) {
            let k: &mut Kernel = &mut read.kernels[i];
            k.what = bump(&k.what);
            continue;
        }
        kernels_seen.insert(needs.clone(), read.kernels.len());
        read.kernels.push(Kernel { needs, version, what, file: file_name.clone(), line: 0, reading: "kernel" });
    }
    let mut unreadable: BTreeMap<String, usize> = BTreeMap::new();
    for why in image.unreadable {
        let key = why.split_once(": ").map_or(why.as_str(), |(_, w)| w).to_owned();
        *unreadable.entry(key).or_default() += 1;
    }
    for (why, n) in unreadable {
        read.unresolved.push(Unresolved {
            spelled: if n == 1 { "a kernel image".into() } else { format!("{n} kernel images") },
            file: file_name.clone(),
            line: 0,
            why,
            reading: "kernel",
        });
    }
    read.uses = uses.into_values().collect();
    Ok(read)
}

/// `"x (and 2 more)"` for `"x (and 1 more)"`, `"x (and 1 more)"` for `"x"`.
fn bump(what: &str) -> String {
    if let Some((head, rest)) = what.rsplit_once(" (and ") {
        if let Some(n) = rest.strip_suffix(" more)").and_then(|n| n.parse::<u64>().ok()) {
            return format!("{head} (and {} more)", n + 1);
        }
    }
    format!("{what} (and 1 more)")
}

fn unread(path: &Path, section: &str, why: &str) -> Unresolved {
    Unresolved {
        spelled: format!("section {section}"),
        file: path.to_owned(),
        line: 0,
        why: why.to_owned(),
        reading: "record",
    }
}

/// The libraries a PE program imports (an ELF program's are in [`dynamic_of`]).
fn needed_libraries(file: &object::File<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Ok(imports) = file.imports() {
        for i in imports {
            let lib = String::from_utf8_lossy(i.library()).into_owned();
            if !lib.is_empty() && !out.contains(&lib) {
                out.push(lib);
            }
        }
    }
    out
}

/// Whether a library a program needs is the C or C++ runtime, the dynamic loader, or the CUDA
/// driver or runtime (read as the runtime it links): none of them looks up what the program
/// does.
fn system_library(lib: &str) -> bool {
    let stem = lib.split(".so").next().unwrap_or(lib);
    matches!(
        stem,
        "libc" | "libm" | "libpthread" | "libdl" | "librt" | "libgcc_s" | "libstdc++" | "libcuda" | "libcudart"
    ) || stem.starts_with("ld-linux")
}

/// The same for a DLL a PE program imports from: Windows' own (`KERNEL32.dll`, the
/// `api-ms-win-*` sets), the C and C++ runtimes, Python's, the driver (`nvcuda.dll`) and the
/// CUDA runtime (read as the runtime it links).
fn windows_system_library(lib: &str) -> bool {
    let lower = lib.to_ascii_lowercase();
    let stem = lower.strip_suffix(".dll").unwrap_or(&lower);
    matches!(
        stem,
        "kernel32"
            | "kernelbase"
            | "ntdll"
            | "user32"
            | "gdi32"
            | "advapi32"
            | "shell32"
            | "shlwapi"
            | "ole32"
            | "oleaut32"
            | "ws2_32"
            | "bcrypt"
            | "crypt32"
            | "dbghelp"
            | "version"
            | "setupapi"
            | "msvcrt"
            | "ucrtbase"
            | "nvcuda"
    ) || ["api-ms-win-", "ext-ms-", "vcruntime", "msvcp", "concrt", "vcomp", "python", "cudart64_"]
        .iter()
        .any(|p| stem.starts_with(p))
}

/// What an ELF program's dynamic segment says: the libraries it needs (`DT_NEEDED`) and where
/// in the file its dynamic string table lies. Read through the program headers, so that a
/// program without section headers is read as well.
#[derive(Debug, Default)]
struct Dynamic {
    needed: Vec<String>,
    strtab: Option<std::ops::Range<usize>>,
}

fn dynamic_of(file: &object::File<'_>) -> Dynamic {
    match file {
        object::File::Elf32(elf) => elf_dynamic(elf),
        object::File::Elf64(elf) => elf_dynamic(elf),
        _ => Dynamic::default(),
    }
}

fn elf_dynamic<'data, Elf: FileHeader<Endian = Endianness>>(elf: &ElfFile<'data, Elf>) -> Dynamic {
    let endian = elf.endian();
    let data = elf.data();
    let headers = elf.elf_program_headers();
    let Some(entries) = headers.iter().find_map(|h| h.dynamic(endian, data).ok().flatten()) else {
        return Dynamic::default();
    };
    // An address of the running program as an offset in the file, by the segment loading it.
    let offset_of = |address: u64| {
        headers.iter().filter(|h| h.p_type(endian) == object::elf::PT_LOAD).find_map(|h| {
            let (start, size, offset): (u64, u64, u64) =
                (h.p_vaddr(endian).into(), h.p_filesz(endian).into(), h.p_offset(endian).into());
            address.checked_sub(start).filter(|&d| d < size).and_then(|d| offset.checked_add(d))
        })
    };
    let (mut strtab, mut strsz, mut needed) = (None, None, Vec::new());
    for entry in entries {
        let (tag, value): (u64, u64) = (entry.d_tag(endian).into(), entry.d_val(endian).into());
        match u32::try_from(tag) {
            Ok(object::elf::DT_NULL) => break,
            Ok(object::elf::DT_STRTAB) => strtab = offset_of(value),
            Ok(object::elf::DT_STRSZ) => strsz = Some(value),
            Ok(object::elf::DT_NEEDED) => needed.push(value),
            _ => {}
        }
    }
    let range = strtab.zip(strsz).and_then(|(start, size)| {
        let start = usize::try_from(start).ok()?;
        let end = start.checked_add(usize::try_from(size).ok()?)?.min(data.len());
        (start < end).then_some(start..end)
    });
    let table = range.clone().and_then(|r| data.get(r)).unwrap_or(&[]);
    let needed = needed
        .into_iter()
        .filter_map(|at| table.get(usize::try_from(at).ok()?..))
        .map(|s| String::from_utf8_lossy(&s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())]).into_owned())
        .collect();
    Dynamic { needed, strtab: range }
}

/// `libcudart.so.12` as (12, None), `libcudart.so.10.2` as (10, Some(2)), `cudart64_12.dll`
/// as (12, None). Windows' names before CUDA 12 join major and minor: `cudart64_101.dll` is
/// 10.1, `cudart64_110.dll` 11.0, `cudart64_92.dll` 9.2.
fn runtime_soname(lib: &str) -> Option<(u32, Option<u32>, String)> {
    let lower = lib.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("libcudart.so.") {
        let mut parts = rest.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next().and_then(|m| m.parse().ok());
        return Some((major, minor, lib.to_owned()));
    }
    let rest = lower.strip_prefix("cudart64_")?.strip_suffix(".dll")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let (major, minor) = match digits.len() {
        3 => (digits[..2].parse().ok()?, Some(digits[2..].parse().ok()?)),
        // CUDA 6.5 to 9.2: `cudart64_65.dll` to `cudart64_92.dll`; 12 and on: the major alone.
        2 if digits.as_bytes()[0] >= b'6' => (digits[..1].parse().ok()?, Some(digits[1..].parse().ok()?)),
        1 | 2 => (digits.parse().ok()?, None),
        _ => return None,
    };
    Some((major, minor, lib.to_owned()))
}

/// The CUDA runtime's own code, linked statically or being the runtime library itself: nvcc
/// 13.0's static runtime names its objects `libcudart_static_<hash>` (3143 such strings);
/// every runtime read (12.9's `libcudart.so.12` for aarch64 and `cudart64_12.dll`, and the
/// static runtimes inside 12.x's `libnvjpeg.so.12`, `nvjpeg64_12.dll` and CuPy's `cub` module)
/// holds its error names (`cudaErrorCudartUnloading`), looks the driver's functions up with
/// `cuGetProcAddress` and opens the driver by name (`libcuda.so.1`, `nvcuda.dll`). Its version
/// is not a string; the newest versioned export name among its strings
/// (`cuMemcpyBatchAsync_v2`, of 13.0) is what it asks the driver for, so its release is at least
/// that one's: (major, minor). `untagged`: whether the second signature counts (not where the
/// program links the shared runtime).
fn static_runtime(data: &[u8], reg: &Registry, untagged: bool) -> Option<(u32, u32)> {
    let tagged = memmem::find(data, b"libcudart_static_").is_some();
    let runtime_code = || {
        untagged
            && memmem::find(data, b"cudaErrorCudartUnloading").is_some()
            && memmem::find(data, b"cuGetProcAddress").is_some()
            && (memmem::find(data, b"libcuda.so").is_some() || memmem::find(data, b"nvcuda.dll").is_some())
    };
    if !tagged && !runtime_code() {
        return None;
    }
    let newest = identifiers(data)
        .filter_map(|(w, _)| reg.by_exported(w).filter(|&e| reg.entries[e].symbol != w))
        .map(|e| reg.entries[e].version)
        .max()?;
    Some((newest / 1000, newest % 1000 / 10))
}

/// Whether a section holds the fatbins nvcc embeds: `.nv_fatbin` (ELF), `__nv_fatbin`
/// (Mach-O), `.nv_fatb` (PE, whose section names are cut to 8 bytes).
fn fatbin_section(name: &str) -> bool {
    matches!(name, ".nv_fatbin" | "__nv_fatbin" | ".nv_fatb")
}

/// The longest registry name (the longest is 52 bytes) that starts `bytes`.
const LONGEST_NAME: usize = 80;

/// The registry names in `bytes`, with offsets: at each `cu` followed by a capital letter,
/// the longest name that starts there, whatever comes before or after it. Rust's strings
/// have no NUL: cudarc's `"cuCtxCreate_v2"` lies between other strings' bytes
/// (`...cuCtxCreate_v2cuCtxDestroy_v2Missing symbol...`), where a search for whole words
/// would find nothing. Each candidate is tried at most [`LONGEST_NAME`] times: linear.
fn registry_names<'a>(bytes: &'a [u8], reg: &'a Registry) -> impl Iterator<Item = (&'a str, usize)> + 'a {
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(p) = memmem::find(&bytes[from.min(bytes.len())..], b"cu") {
            let at = from + p;
            from = at + 1;
            if !bytes.get(at + 2).is_some_and(u8::is_ascii_uppercase) {
                continue;
            }
            let run = bytes[at..].iter().take(LONGEST_NAME).take_while(|&&b| is_ident(b)).count();
            let word = std::str::from_utf8(&bytes[at..at + run]).unwrap_or("");
            let found = (3..=word.len()).rev().map(|n| &word[..n]).find(|w| reg.highest_meaning(w).is_some());
            if let Some(w) = found {
                from = at + w.len();
                return Some((w, at));
            }
        }
        None
    })
}

/// The C identifiers in `bytes` that may be registry names (start with `cu`), with offsets.
fn identifiers(bytes: &[u8]) -> impl Iterator<Item = (&str, usize)> {
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let start = at;
            if !is_ident(bytes[at]) {
                at += 1;
                continue;
            }
            while at < bytes.len() && is_ident(bytes[at]) {
                at += 1;
            }
            let before_ok = start == 0 || !is_ident(bytes[start - 1]);
            let word = &bytes[start..at];
            if before_ok && word.len() > 2 && word.len() < 80 && word.starts_with(b"cu") {
                if let Ok(w) = std::str::from_utf8(word) {
                    return Some((w, start));
                }
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_runtime_names_carry_their_minor_before_cuda_12() {
        let v = |name: &str| runtime_soname(name).map(|(major, minor, _)| runtime_floor(major, minor));
        // CUDA 10.x had no minor version compatibility: 10.1's runtime needs a 10.1 driver.
        assert_eq!(v("cudart64_101.dll"), Some(10010));
        assert_eq!(v("cudart64_102.dll"), Some(10020));
        assert_eq!(v("cudart64_92.dll"), Some(9020));
        assert_eq!(v("cudart64_110.dll"), Some(11000));
        assert_eq!(v("cudart64_12.dll"), Some(12000));
        assert_eq!(v("CUDART64_13.DLL"), Some(13000));
        assert_eq!(v("libcudart.so.10.1"), Some(10010));
        assert_eq!(v("libcudart.so.12"), Some(12000));
        assert_eq!(v("cudart64_.dll"), None);
        assert_eq!(v("cudart64_1234.dll"), None);
    }

    #[test]
    fn identifiers_advance_and_split() {
        let words: Vec<&str> = identifiers(b"\0cuInit\0xcuCtxCreate_v4 cuMemAlloc").map(|(w, _)| w).collect();
        assert_eq!(words, ["cuInit", "cuMemAlloc"]);
        assert_eq!(identifiers(b"").count(), 0);
    }

    #[test]
    fn a_damaged_record_is_not_read() {
        let mut r = vec![0u8; RECORD_SIZE];
        r[..8].copy_from_slice(&magic());
        r[8] = 1;
        r[9] = ENTRY;
        r[24..30].copy_from_slice(b"cuInit");
        let check = fnv(&r[..152]);
        r[152..156].copy_from_slice(&check.to_le_bytes());
        let mut out = Vec::new();
        records(&r, true, "t", &mut out);
        assert_eq!(out.len(), 1);
        r[25] ^= 1;
        out.clear();
        records(&r, true, "t", &mut out);
        assert!(out.is_empty());
        // Cut short: no record, no panic.
        records(&r[..100], true, "t", &mut out);
        assert!(out.is_empty());
    }
}
