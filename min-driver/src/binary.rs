//! `min-driver PATH` where PATH is a compiled program: the records the generated crate leaves
//! in it, the libcuda functions it imports, the registry names its strings hold (where it has
//! no records but looks functions up by name), the runtime it links, and the kernels it embeds.
//! A program without section headers is read from its loaded segments and its dynamic segment.
//! Only this file is read: the shared libraries it needs are named, not read. This reader only
//! collects evidence ([`Evidence`]); what it means is decided in `model.rs`.
//!
//! A record is the generated crate's `EntryRecord`: 160 bytes found by their magic and checked
//! by their FNV-1a. The linker keeps exactly the records of the lookups in the code it keeps, so
//! for linked code the records are exact: what the program can ask the driver for.
//!
//! Every loop here advances by at least one byte or stops, and each byte of a section is
//! searched a bounded number of times: linear in the file's size.

use std::collections::BTreeSet;
use std::path::Path;

use codegen::record_format::{EntryRecord, RecordKind};
use memchr::memmem;
use object::read::elf::{Dyn, ElfFile, FileHeader, ProgramHeader};
use object::{Endianness, Object, ObjectSection, ObjectSegment, ObjectSymbol, ReadRef, SectionKind};

use super::extents;
use super::kernels;
use super::model::Evidence;
use super::registry::Registry;
use super::releases::Platform;
use super::{Reading, Unresolved};

/// One record, read and checked by [`EntryRecord::decode`], the generated crate's own
/// definition of the format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Record {
    /// Its kind, or the `how` byte of a kind this reader does not know (a newer crate's).
    pub kind: Result<RecordKind, u8>,
    /// It asks for a per-thread variant (its `flags`).
    pub per_thread: bool,
    pub abis: u8,
    pub version: u32,
    pub floor: u32,
    pub high: u32,
    pub symbol: String,
    pub exported: String,
    /// Where it was found: the section's name and the offset in it.
    pub at: String,
}

impl Record {
    /// The record `r`, found at `at`.
    pub(super) fn of(r: &EntryRecord, at: String) -> Record {
        Record {
            kind: r.kind().ok_or(r.how),
            per_thread: r.per_thread(),
            abis: r.abis,
            version: r.version,
            floor: r.floor,
            high: r.high,
            symbol: r.symbol_name().unwrap_or_default().to_owned(),
            exported: r.exported_name().unwrap_or_default().to_owned(),
            at,
        }
    }
}

/// The records in `data` (one section's bytes); `little`: the file's byte order.
pub(super) fn records(data: &[u8], little: bool, section: &str, out: &mut Vec<Record>) {
    for at in memmem::find_iter(data, &EntryRecord::MAGIC) {
        if let Some(r) = EntryRecord::decode(&data[at..], little) {
            out.push(Record::of(&r, format!("{section}+{at:#x}")));
        }
    }
}

/// A file read through an [`object::ReadCache`], with its ELF string tables read whole once:
/// the cache reads each symbol's name on its own (a seek and a read of 256 bytes per name, with
/// a buffer of its own), which for a library of 100,000 dynamic symbols was most of the time
/// spent outside its sections. A name in a table read whole is a slice of it; anything else
/// goes to the cache as before.
#[derive(Clone, Copy)]
pub(super) struct Tables<'a> {
    pub cache: &'a object::ReadCache<&'a std::fs::File>,
    /// Each string table read whole: where it lies in the file, and its bytes.
    pub tables: &'a [(u64, &'a [u8])],
}

impl<'a> ReadRef<'a> for Tables<'a> {
    fn len(self) -> Result<u64, ()> {
        self.cache.len()
    }

    fn read_bytes_at(self, offset: u64, size: u64) -> Result<&'a [u8], ()> {
        self.cache.read_bytes_at(offset, size)
    }

    fn read_bytes_at_until(self, range: std::ops::Range<u64>, delimiter: u8) -> Result<&'a [u8], ()> {
        for &(at, table) in self.tables {
            let Some(from) = range.start.checked_sub(at).and_then(|d| usize::try_from(d).ok()) else { continue };
            if from >= table.len() {
                continue;
            }
            let to = usize::try_from(range.end.saturating_sub(at)).unwrap_or(usize::MAX).min(table.len());
            if let Some(len) = table.get(from..to).and_then(|t| memchr::memchr(delimiter, t)) {
                return Ok(&table[from..from + len]);
            }
        }
        self.cache.read_bytes_at_until(range, delimiter)
    }
}

/// The largest string table [`string_tables`] reads whole (a larger one is read name by name).
const MOST_TABLE: u64 = 256 << 20;

/// The string tables (`SHT_STRTAB`: `.dynstr`, `.strtab`) of the ELF file behind `cache`, each
/// read whole through it; none for other formats, or where the headers cannot be read.
pub(super) fn string_tables<'a>(cache: &'a object::ReadCache<&'a std::fs::File>) -> Vec<(u64, &'a [u8])> {
    fn of<'a, Elf: FileHeader<Endian = Endianness>>(
        elf: &ElfFile<'a, Elf, &'a object::ReadCache<&'a std::fs::File>>,
    ) -> Vec<(u64, &'a [u8])> {
        use object::read::elf::SectionHeader;
        let endian = elf.endian();
        elf.elf_section_table()
            .iter()
            .filter(|s| s.sh_type(endian) == object::elf::SHT_STRTAB && s.sh_size(endian).into() <= MOST_TABLE)
            .filter_map(|s| Some((s.sh_offset(endian).into(), s.data(endian, elf.data()).ok()?)))
            .collect()
    }
    match object::File::parse(cache) {
        Ok(object::File::Elf32(elf)) => of(&elf),
        Ok(object::File::Elf64(elf)) => of(&elf),
        _ => Vec::new(),
    }
}

/// Whether `bytes` start like a compiled program, object or library the `object` crate reads:
/// ELF, PE, an archive, Mach-O, and a COFF object (`.obj`, what MSVC and nvcc on Windows put
/// in a `.lib`), known by its machine number and the zero bytes of its header (no text file
/// starts so). An import library's member (a name a DLL exports, no code) is none.
pub(super) fn is_binary(head: &[u8]) -> bool {
    head.starts_with(b"\x7fELF")
        || head.starts_with(b"!<arch>\n")
        || head.starts_with(b"!<thin>\n")
        || head.starts_with(b"MZ")
        || head.starts_with(&[0xcf, 0xfa, 0xed, 0xfe])
        || head.starts_with(&[0xfe, 0xed, 0xfa, 0xcf])
        || (matches!(object::FileKind::parse(head), Ok(object::FileKind::Coff | object::FileKind::CoffBig))
            && head.len() >= 20
            && head[..20].contains(&0))
}

/// An import's name as the function's own: a COFF object calls a DLL's function through
/// `__imp_GetProcAddress`, and 32-bit x86's C names carry `_` and stdcall's `@8`
/// (`__imp__GetProcAddress@8`).
fn plain_import(name: &str, x86: bool) -> &str {
    let n = name.strip_prefix("__imp_").unwrap_or(name);
    if !x86 {
        return n;
    }
    let n = n.strip_prefix('_').unwrap_or(n);
    match n.rsplit_once('@') {
        Some((f, bytes)) if !f.is_empty() && !bytes.is_empty() && bytes.bytes().all(|b| b.is_ascii_digit()) => f,
        _ => n,
    }
}

/// Strings whose presence anywhere in a program's data is evidence ([`Evidence::marks`]):
/// the driver's and the runtime's library names, the static runtime's signatures, the
/// run-time compilers' names.
pub(super) const MARKS: &[&str] = &[
    "libcuda.so",
    "nvcuda.dll",
    "libcudart_static_",
    "cudaErrorCudartUnloading",
    "cuGetProcAddress",
    "cudaGetDriverEntryPoint",
    "libnvrtc",
    "nvrtc64_",
    "libnvJitLink",
    "nvJitLink_",
    // What a program that opens a run-time compiler by a name it builds at run time (cudarc:
    // "lib" + "nvrtc" + ".so") still names: the functions it looks up in it.
    "nvrtcCompileProgram",
    "nvJitLinkCreate",
];

/// The [`MARKS`] that name a run-time compiler (NVRTC, nvJitLink, the PTX compiler library):
/// its library, or a function a program looks up in it.
pub(super) const RUN_TIME_COMPILER_MARKS: &[&str] =
    &["libnvrtc", "nvrtc64_", "libnvJitLink", "nvJitLink_", "nvrtcCompileProgram", "nvJitLinkCreate"];

/// Where the one pass over a program's strings finds `mark`: the word it searches for and its
/// offset in the mark. `cu` where the mark holds one (every `cu` is visited for the registry's
/// names), else the run-time compilers' words; `None`: the mark is searched for whole, on its
/// own. Derived from the mark, so that no mark can be left unsearched.
fn mark_anchor(mark: &str) -> Option<(&'static str, usize)> {
    ["cu", "nvrtc", "nvJitLink"].into_iter().find_map(|a| mark.find(a).map(|at| (a, at)))
}

/// The names of a symbol table that are evidence: whether the static runtime's lookup by name
/// and the loaders are linked in (a static program holds the C library's own `dlopen`).
fn symbol_of_interest(name: &str) -> bool {
    name.starts_with("cudaGetDriverEntryPoint")
        || name.starts_with("cuGetProcAddress")
        || name == "cudaMalloc"
        || super::model::looks_up_by_name(name)
        || super::model::loads_library(name)
        || super::model::run_time_compiler_function(name)
        || super::model::decodes(name)
}

/// What of a symbol table's string table [`symbol_of_interest`] may find: the table is walked
/// only where one of these is in it.
const SYMBOLS_OF_INTEREST: &[&str] = &[
    "cudaGetDriverEntryPoint",
    "cuGetProcAddress",
    "cudaMalloc",
    "dlsym",
    "dlvsym",
    "dl_sym",
    "dlopen",
    "GetProcAddress",
    "LoadLibrary",
    "Ldr",
    "nvrtc",
    "nvJitLink",
    "nvPTXCompiler",
    "inflate",
    "uncompress",
    "decompress",
    "Decompress",
    "lzma_",
    "iconv",
    "EVP_",
];

/// Reads the compiled program `path` (its bytes `data`): what it holds, as evidence. Nothing is
/// decided here ([`super::model::decide`] does).
///
/// `data` is the file's bytes, or a [`object::ReadCache`] over `source` (the file itself): then
/// only the headers and tables are read through it, and each section (or segment) read is read
/// from `source` on its own, where it holds data ([`extents::read`]), searched, and let go
/// before the next: memory grows with the largest section read, never with the bytes between
/// sections or a sparse file's holes.
pub(super) fn collect<'data, R: ReadRef<'data>>(
    path: &Path,
    data: R,
    source: Option<&std::fs::File>,
    reg: &Registry,
) -> anyhow::Result<Evidence> {
    let file = object::File::parse(data).map_err(|e| {
        anyhow::anyhow!(
            "{}: a compiled program the object crate cannot read ({e}); min-driver reads ELF (x86-64, aarch64) and PE \
             programs and libraries, kernel files (.ptx, .cubin, .fatbin), or Rust sources",
            path.display()
        )
    })?;
    let little = file.is_little_endian();
    let kind = match file.kind() {
        object::ObjectKind::Dynamic => "shared object or PIE",
        object::ObjectKind::Relocatable if file.format() == object::BinaryFormat::Coff => "object file (.obj)",
        object::ObjectKind::Relocatable => "object file (.o)",
        _ => "executable",
    };
    let mut ev = Evidence {
        file: path.to_owned(),
        format: format!("{:?} {:?} {kind}", file.format(), file.architecture()),
        platform: if matches!(file.format(), object::BinaryFormat::Pe | object::BinaryFormat::Coff) {
            Platform::Windows
        } else {
            Platform::Linux
        },
        ..Evidence::default()
    };
    let mut sections_read = 0;
    // One buffer, section after section (the largest read sets its size).
    let mut scratch: Vec<u8> = Vec::new();
    // The registry names already found (by their node in the registry's trie): each is kept
    // where it was first seen.
    let mut seen = vec![false; reg.trie().nodes()];
    // The file bytes of the sections read: the loaded segments' other bytes are read after.
    let mut covered: Vec<(usize, usize)> = Vec::new();
    // Allocated sections only (what the program holds when it runs), of every kind: a fatbin
    // may lie in an executable section (MSVC's `/MERGE:.rdata=.text`).
    for section in file.sections() {
        let name = section.name().unwrap_or("").to_owned();
        let allocated = match section.flags() {
            object::SectionFlags::Elf { sh_flags } => sh_flags & u64::from(object::elf::SHF_ALLOC) != 0,
            _ => !matches!(section.kind(), SectionKind::Debug | SectionKind::Metadata | SectionKind::Linker),
        };
        if !allocated || matches!(section.kind(), SectionKind::UninitializedData | SectionKind::UninitializedTls) {
            continue;
        }
        let read = match (source, section.file_range()) {
            (Some(f), Some((offset, size))) => {
                extents::read(f, offset, size, std::mem::take(&mut scratch)).map(Area::Owned).ok()
            }
            _ => section.data().ok().map(Area::Borrowed),
        };
        let Some(area) = read else {
            ev.unreadable.push(unread(path, &name, "its bytes cannot be read"));
            continue;
        };
        sections_read += 1;
        if let Some((offset, size)) = section.file_range() {
            covered.push(span(offset, size));
        }
        // An ELF file's code sections hold code; a PE file's may hold its strings too (MSVC's
        // `/MERGE:.rdata=.text`), so there they are read as any section's.
        let windows = matches!(file.format(), object::BinaryFormat::Pe | object::BinaryFormat::Coff);
        let strings =
            (windows || section.kind() != SectionKind::Text) && !matches!(name.as_str(), ".dynstr" | ".strtab");
        let (bytes, ranges) = area.parts();
        read_area(
            bytes,
            &ranges,
            &name,
            little,
            fatbin_section(&name),
            strings.then_some(&[][..]),
            reg,
            &mut seen,
            &mut ev,
        );
        if let Area::Owned(b) = area {
            scratch = b.bytes;
        }
    }
    // What the program holds when it runs is what the loader maps: its loaded segments (a PE
    // file's sections). Their bytes that no section read covers are read too, so that section
    // headers that lie (a section marked unallocated or NOBITS, moved, or cut to nothing) hide
    // nothing; without section headers (`llvm-objcopy --strip-sections`, sstrip) that is every
    // loaded byte.
    let sectionless = sections_read == 0;
    let dynamic = dynamic_of(&file);
    covered.sort_unstable();
    let mut segments = 0;
    let mut gap_spans: Vec<(usize, usize)> = Vec::new();
    let file_len = data.len().ok().and_then(|l| usize::try_from(l).ok()).unwrap_or(0);
    for (i, segment) in file.segments().enumerate() {
        let (offset, size) = segment.file_range();
        let whole = span(offset, size);
        let mapped = mapped_pages(&file, whole, segment.size() > size, file_len);
        // Pages two segments share are read once: the bytes read for one are not read again.
        let mut read_so_far: Vec<(usize, usize)> = covered.iter().chain(&gap_spans).copied().collect();
        read_so_far.sort_unstable();
        for gap in extents::minus(&[mapped.0..mapped.1], &read_so_far) {
            let name = if sectionless {
                format!("segment {i} (address {:#x})", segment.address())
            } else {
                format!("segment {i} (in no section read: file offset {:#x})", gap.start)
            };
            let read = match source {
                Some(f) => extents::read(f, gap.start as u64, gap.len() as u64, std::mem::take(&mut scratch))
                    .map(Area::Owned)
                    .ok(),
                None => data.read_bytes_at(gap.start as u64, gap.len() as u64).ok().map(Area::Borrowed),
            };
            let Some(area) = read else {
                ev.unreadable.push(unread(path, &name, "its bytes cannot be read"));
                continue;
            };
            segments += 1;
            gap_spans.push((gap.start, gap.end));
            let (bytes, ranges) = area.parts();
            // Its strings, less the dynamic string table (the names it imports).
            let start = gap.start;
            let strtab: Vec<(usize, usize)> = match dynamic.strtab.clone() {
                Some(r) if r.end > start && r.start < start.saturating_add(bytes.len()) => {
                    vec![(r.start.saturating_sub(start), r.end - start)]
                }
                _ => Vec::new(),
            };
            read_area(bytes, &ranges, &name, little, false, Some(&strtab), reg, &mut seen, &mut ev);
            if let Area::Owned(b) = area {
                scratch = b.bytes;
            }
        }
    }
    // Kernels cut by the end of one area and finished by the bytes after it (the loader maps
    // them together): each end is read again with the bytes around it, once.
    for &(start, end) in covered.iter().chain(&gap_spans) {
        let from = end.saturating_sub(kernels::SEAM).max(start);
        let to = end.saturating_add(kernels::SEAM).min(file_len);
        if from >= end || to <= end {
            continue;
        }
        if let Ok(window) = data.read_bytes_at(from as u64, (to - from) as u64) {
            let (before, after) = window.split_at(end - from);
            kernels::across(before, after, &format!("a section's end at file offset {end:#x}"), &mut ev.image);
        }
    }
    if sectionless {
        if segments == 0 {
            ev.unreadable.push(Unresolved {
                spelled: "the whole program".into(),
                file: path.to_owned(),
                line: 0,
                why: "neither a section nor a loaded segment could be read: its records, imports and kernels are \
                      unknown"
                    .into(),
                reading: Reading::Record,
            });
        }
        ev.format.push_str(", no section headers: read from its loaded segments");
    }
    // Imports. Without section headers the dynamic symbol table cannot be found: every name
    // of the dynamic string table (from the dynamic segment) counts, imported or not.
    match file.imports() {
        Ok(v) => ev.imports = v.iter().map(|i| String::from_utf8_lossy(i.name()).into_owned()).collect(),
        Err(e) => ev.unreadable.push(Unresolved {
            spelled: "its imports".into(),
            file: path.to_owned(),
            line: 0,
            why: format!("its import table cannot be read ({e}): what it calls of other libraries is unknown"),
            reading: Reading::Record,
        }),
    }
    // A PE program's imports by ordinal (no name in the file) and its delay-loaded ones
    // (`/DELAYLOAD:nvcuda.dll`: bound on first call, in a table of their own).
    let pe = match &file {
        object::File::Pe32(pe) => pe_imports(pe),
        object::File::Pe64(pe) => pe_imports(pe),
        _ => PeImports::default(),
    };
    ev.imports.extend(pe.delayed.iter().map(|(_, n)| n.clone()));
    ev.unnamed_imports = pe.unnamed;
    if sectionless {
        if let Some(strtab) =
            dynamic.strtab.clone().and_then(|r| data.read_bytes_at(r.start as u64, r.len() as u64).ok())
        {
            ev.imports.extend(
                strtab.split(|&b| b == 0).filter(|n| !n.is_empty()).map(|n| String::from_utf8_lossy(n).into_owned()),
            );
        }
    }
    // An object file (`.o`, an archive's member) has no dynamic symbols: what it calls of other
    // files is its undefined symbols, imports once it is linked.
    if file.kind() == object::ObjectKind::Relocatable {
        let coff_x86 = file.format() == object::BinaryFormat::Coff && file.architecture() == object::Architecture::I386;
        for s in file.symbols() {
            if s.is_undefined() {
                if let Ok(n) = s.name() {
                    if !n.is_empty() {
                        let n = if file.format() == object::BinaryFormat::Coff { plain_import(n, coff_x86) } else { n };
                        ev.imports.push(n.to_owned());
                    }
                }
            }
        }
    }
    ev.imports.sort();
    ev.imports.dedup();
    ev.import_libraries = needed_libraries(&file);
    ev.soname = dynamic.soname.clone().or_else(|| match &file {
        object::File::Pe32(pe) => pe_name(pe),
        object::File::Pe64(pe) => pe_name(pe),
        _ => None,
    });
    for (lib, _) in &pe.delayed {
        if !ev.import_libraries.contains(lib) {
            ev.import_libraries.push(lib.clone());
        }
    }
    ev.needed = dynamic.needed;
    // What it defines: the driver's or the runtime's entry points make it that library.
    if let Ok(exports) = file.exports() {
        for e in exports {
            let name = String::from_utf8_lossy(e.name());
            if name.starts_with("cu") {
                ev.exports.insert(name.into_owned());
            }
        }
    }
    if !sectionless {
        for s in file.dynamic_symbols() {
            // An indirect function (STT_GNU_IFUNC: the stand-in tracer's `cuGetProcAddress`) is
            // defined in its section, though not a "definition" to the object crate.
            if s.is_definition() || matches!(s.section(), object::SymbolSection::Section(_)) {
                if let Ok(n) = s.name() {
                    if n.starts_with("cu") {
                        ev.exports.insert(n.to_owned());
                    }
                }
            }
        }
    }
    // A symbol table (an unstripped program) proves what is not linked in.
    if file.symbol_table().is_some() {
        let mut defined = BTreeSet::new();
        // Walked only where its string table holds a name of interest: a name not in the table
        // is no symbol's (rustc's driver library: 165,000 symbols, each name a read).
        let may_hold = symbol_strings(&file)
            .is_none_or(|t| SYMBOLS_OF_INTEREST.iter().any(|m| memmem::find(t, m.as_bytes()).is_some()));
        for s in file.symbols().filter(|_| may_hold) {
            if s.is_definition() {
                if let Ok(n) = s.name() {
                    if symbol_of_interest(n) {
                        defined.insert(n.to_owned());
                    }
                }
            }
        }
        ev.symtab = Some(defined);
    }
    Ok(ev)
}

/// The file bytes `offset..offset + size`, as a span of offsets (cut at the largest offset).
/// The file bytes an ELF loader maps for a segment at `whole`: whole pages, so also the bytes
/// before its start on its first page and after its end on its last, unless the loader zeroes
/// those (`zeroed_tail`: a segment larger in memory than in the file, whose `.bss` begins
/// there). The page is the largest the architecture runs with (64 KiB on aarch64, 4 KiB on
/// x86); bytes a smaller page leaves out are read too, never too few. A PE file's sections and
/// other formats: the segment itself (the Windows loader copies only a section's own bytes).
fn mapped_pages<'data, R: ReadRef<'data>>(
    file: &object::File<'data, R>,
    whole: (usize, usize),
    zeroed_tail: bool,
    file_len: usize,
) -> (usize, usize) {
    if file.format() != object::BinaryFormat::Elf || whole.0 >= whole.1 {
        return whole;
    }
    let page = match file.architecture() {
        object::Architecture::X86_64 | object::Architecture::X86_64_X32 | object::Architecture::I386 => 4096,
        _ => 65536,
    };
    let start = whole.0 - whole.0 % page;
    let end =
        if zeroed_tail { whole.1 } else { whole.1.div_ceil(page).saturating_mul(page).min(file_len.max(whole.1)) };
    (start, end)
}

fn span(offset: u64, size: u64) -> (usize, usize) {
    let at = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    (at(offset), at(offset.saturating_add(size)))
}

/// A section's bytes: read from the file on their own, or borrowed from bytes in memory.
enum Area<'a> {
    Owned(extents::Bytes),
    Borrowed(&'a [u8]),
}

impl Area<'_> {
    /// The bytes and the ranges of them that hold data.
    fn parts(&self) -> (&[u8], std::borrow::Cow<'_, [std::ops::Range<usize>]>) {
        match self {
            Area::Owned(b) => (&b.bytes, std::borrow::Cow::Borrowed(&b.data)),
            Area::Borrowed(b) => (b, std::borrow::Cow::Owned(vec![0..b.len()])),
        }
    }
}

/// What one section (or segment) holds: records, kernels, and, where `strings` is given (spans
/// of it that are not the program's strings, such as the dynamic string table), the marks and
/// registry names of its strings outside the kernels found.
#[allow(clippy::too_many_arguments)]
fn read_area(
    bytes: &[u8],
    data: &[std::ops::Range<usize>],
    name: &str,
    little: bool,
    fatbin: bool,
    strings: Option<&[(usize, usize)]>,
    reg: &Registry,
    seen: &mut [bool],
    ev: &mut Evidence,
) {
    // A section of fatbins is searched as any other (a fatbin need not start at its first
    // byte); no record lies within a container (the linker places each record, a static of its
    // own, beside it), so there only the bytes outside the containers are searched for them.
    // Strings are read outside every kernel found, in any section.
    let mut spans = kernels::embedded_in(bytes, data, name, &mut ev.image);
    let records_in = if fatbin { extents::minus(data, &spans) } else { data.to_vec() };
    for r in &records_in {
        records(&bytes[r.clone()], little, name, &mut ev.records);
    }
    let Some(not_strings) = strings else { return };
    spans.extend_from_slice(not_strings);
    spans.sort_unstable();
    for r in extents::minus(data, &spans) {
        let area = &bytes[r.clone()];
        let at_start = r.start;
        scan_strings_on_every_core(area, reg, &mut ev.marks, seen, |word, at| {
            ev.strings.insert(word.to_owned(), format!("{name}+{:#x}", at_start + at));
        });
    }
}

/// The string table of an ELF file's symbol table (its `sh_link`), read once; `None` for other
/// formats, or where it cannot be read.
fn symbol_strings<'data, R: ReadRef<'data>>(file: &object::File<'data, R>) -> Option<&'data [u8]> {
    fn of<'data, Elf: FileHeader<Endian = Endianness>, R: ReadRef<'data>>(
        elf: &ElfFile<'data, Elf, R>,
    ) -> Option<&'data [u8]> {
        use object::read::elf::SectionHeader;
        let endian = elf.endian();
        let table = elf.elf_section_table();
        let symtab = table.iter().find(|s| s.sh_type(endian) == object::elf::SHT_SYMTAB)?;
        let strings = table.section(object::SectionIndex(symtab.sh_link(endian) as usize)).ok()?;
        (strings.sh_type(endian) == object::elf::SHT_STRTAB).then_some(())?;
        strings.data(endian, elf.data()).ok()
    }
    match file {
        object::File::Elf32(elf) => of(elf),
        object::File::Elf64(elf) => of(elf),
        _ => None,
    }
}

/// `"x (and 2 more)"` for `"x (and 1 more)"`, `"x (and 1 more)"` for `"x"`.
pub(super) fn bump(what: &str) -> String {
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
        reading: Reading::Record,
    }
}

/// The name a DLL gives itself in its export directory (`cudart64_12.dll`).
fn pe_name<'data, Pe: object::read::pe::ImageNtHeaders, R: ReadRef<'data>>(
    pe: &object::read::pe::PeFile<'data, Pe, R>,
) -> Option<String> {
    let table = pe.export_table().ok()??;
    let name = table.name_from_pointer(table.directory().name.get(object::LittleEndian)).ok()?;
    Some(String::from_utf8_lossy(name).into_owned())
}

/// What a PE program imports beyond what the object crate lists.
#[derive(Debug, Default)]
struct PeImports {
    /// Delay-loaded imports by name: (library, function).
    delayed: Vec<(String, String)>,
    /// Imports by ordinal, delay-loaded or not: `KERNEL32.dll ordinal 412`.
    unnamed: Vec<String>,
}

fn pe_imports<'data, Pe: object::read::pe::ImageNtHeaders, R: ReadRef<'data>>(
    pe: &object::read::pe::PeFile<'data, Pe, R>,
) -> PeImports {
    use object::read::pe::{ImageThunkData, Import};
    use object::LittleEndian as LE;
    let mut out = PeImports::default();
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if let Ok(Some(table)) = pe.import_table() {
        if let Ok(mut descriptors) = table.descriptors() {
            while let Ok(Some(d)) = descriptors.next() {
                let lib = table.name(d.name.get(LE)).map(lossy).unwrap_or_default();
                let first = match d.original_first_thunk.get(LE) {
                    0 => d.first_thunk.get(LE),
                    t => t,
                };
                let Ok(mut thunks) = table.thunks(first) else { continue };
                while let Ok(Some(t)) = thunks.next::<Pe>() {
                    if t.is_ordinal() {
                        out.unnamed.push(format!("{lib} ordinal {}", t.ordinal()));
                    }
                }
            }
        }
    }
    let sections = pe.section_table();
    if let Ok(Some(table)) = pe.data_directories().delay_load_import_table(pe.data(), &sections) {
        if let Ok(mut descriptors) = table.descriptors() {
            while let Ok(Some(d)) = descriptors.next() {
                let lib = table.name(d.dll_name_rva.get(LE)).map(lossy).unwrap_or_default();
                let Ok(mut thunks) = table.thunks(d.import_name_table_rva.get(LE)) else { continue };
                while let Ok(Some(t)) = thunks.next::<Pe>() {
                    match table.import::<Pe>(t) {
                        Ok(Import::Name(_, name)) => out.delayed.push((lib.clone(), lossy(name))),
                        Ok(Import::Ordinal(n)) => out.unnamed.push(format!("{lib} ordinal {n}")),
                        Err(_) => out.unnamed.push(format!("{lib}: a delay-loaded import that cannot be read")),
                    }
                }
            }
        }
    }
    out
}

/// The libraries a PE program imports (an ELF program's are in [`dynamic_of`]).
fn needed_libraries<'data, R: ReadRef<'data>>(file: &object::File<'data, R>) -> Vec<String> {
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
///
/// The CUDA runtime counts only where its name tells its major version (`libcudart.so.12`):
/// one named `libcudart.so` or `libcudart.so.x` (a runtime linked without a soname, or renamed)
/// is read as no runtime at all, so it is a library not read.
pub(super) fn system_library(lib: &str) -> bool {
    let stem = lib.split(".so").next().unwrap_or(lib);
    matches!(stem, "libc" | "libm" | "libpthread" | "libdl" | "librt" | "libgcc_s" | "libstdc++" | "libcuda")
        || stem.starts_with("ld-linux")
        || (stem == "libcudart" && runtime_soname(lib).is_some())
}

/// The same for a DLL a PE program imports from: Windows' own (`KERNEL32.dll`, the
/// `api-ms-win-*` sets), the C and C++ runtimes, Python's, the driver (`nvcuda.dll`) and the
/// CUDA runtime (read as the runtime it links, where its name tells its version).
pub(super) fn windows_system_library(lib: &str) -> bool {
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
    ) || ["api-ms-win-", "ext-ms-", "vcruntime", "msvcp", "concrt", "vcomp", "python"]
        .iter()
        .any(|p| stem.starts_with(p))
        || (stem.starts_with("cudart64_") && runtime_soname(lib).is_some())
}

/// What an ELF program's dynamic segment says: the libraries it needs (`DT_NEEDED`) and where
/// in the file its dynamic string table lies. Read through the program headers, so that a
/// program without section headers is read as well.
#[derive(Debug, Default)]
struct Dynamic {
    needed: Vec<String>,
    strtab: Option<std::ops::Range<usize>>,
    /// Its `DT_SONAME`.
    soname: Option<String>,
}

fn dynamic_of<'data, R: ReadRef<'data>>(file: &object::File<'data, R>) -> Dynamic {
    match file {
        object::File::Elf32(elf) => elf_dynamic(elf),
        object::File::Elf64(elf) => elf_dynamic(elf),
        _ => Dynamic::default(),
    }
}

fn elf_dynamic<'data, Elf: FileHeader<Endian = Endianness>, R: ReadRef<'data>>(
    elf: &ElfFile<'data, Elf, R>,
) -> Dynamic {
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
    let (mut strtab, mut strsz, mut needed, mut soname) = (None, None, Vec::new(), None);
    for entry in entries {
        let (tag, value): (u64, u64) = (entry.d_tag(endian).into(), entry.d_val(endian).into());
        match u32::try_from(tag) {
            Ok(object::elf::DT_NULL) => break,
            Ok(object::elf::DT_STRTAB) => strtab = offset_of(value),
            Ok(object::elf::DT_STRSZ) => strsz = Some(value),
            Ok(object::elf::DT_SONAME) => soname = Some(value),
            // A filter's filtee (`DT_FILTER`, `DT_AUXILIARY`) and an audit library (`DT_AUDIT`,
            // `DT_DEPAUDIT`) are loaded into the process as a needed library is.
            Ok(
                object::elf::DT_NEEDED
                | object::elf::DT_FILTER
                | object::elf::DT_AUXILIARY
                | object::elf::DT_AUDIT
                | object::elf::DT_DEPAUDIT,
            ) => needed.push(value),
            _ => {}
        }
    }
    let range = strtab.zip(strsz).and_then(|(start, size)| {
        let start = usize::try_from(start).ok()?;
        let len = usize::try_from(data.len().ok()?).ok()?;
        let end = start.checked_add(usize::try_from(size).ok()?)?.min(len);
        (start < end).then_some(start..end)
    });
    let table = range.clone().and_then(|r| data.read_bytes_at(r.start as u64, r.len() as u64).ok()).unwrap_or(&[]);
    let name_at = |at: u64| {
        let s = table.get(usize::try_from(at).ok()?..)?;
        Some(String::from_utf8_lossy(&s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())]).into_owned())
    };
    let needed = needed.into_iter().filter_map(name_at).collect();
    Dynamic { needed, strtab: range, soname: soname.and_then(name_at) }
}

/// `libcudart.so.12` as (12, None), `libcudart.so.10.2` as (10, Some(2)), `cudart64_12.dll`
/// as (12, None). Windows' names before CUDA 12 join major and minor: `cudart64_101.dll` is
/// 10.1, `cudart64_110.dll` 11.0, `cudart64_92.dll` 9.2.
pub(super) fn runtime_soname(lib: &str) -> Option<(u32, Option<u32>, String)> {
    let lower = lib.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("libcudart.so.") {
        let mut parts = rest.split('.');
        let major: u32 = parts.next()?.parse().ok()?;
        let minor = parts.next().and_then(|m| m.parse().ok());
        // No CUDA runtime is older than 2.0 by its soname (`libcudart.so.0` tells nothing).
        return (major >= 2).then(|| (major, minor, lib.to_owned()));
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
    (major >= 2).then(|| (major, minor, lib.to_owned()))
}

/// Whether a section holds the fatbins nvcc embeds: `.nv_fatbin` (ELF), `__nv_fatbin`
/// (Mach-O), `.nv_fatb` (PE, whose section names are cut to 8 bytes).
fn fatbin_section(name: &str) -> bool {
    matches!(name, ".nv_fatbin" | "__nv_fatbin" | ".nv_fatb")
}

/// What one stretch of strings holds: its marks, and its names (where, how long, their node in
/// the registry's trie) in order.
type Stretch = (BTreeSet<&'static str>, Vec<(usize, usize, usize)>);

/// Whether `b` may lie inside a registry name or a mark: where it may not, strings are cut
/// (`tests::no_mark_or_name_runs_across_a_cut` holds [`MARKS`] and the registry to it).
fn in_a_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.'
}

/// The least stretch of strings [`scan_strings_on_every_core`] gives a thread of its own.
const STRINGS_PER_THREAD: usize = 8 << 20;

/// [`scan_strings`] over `area` cut into stretches, one per core, read at once: the same marks,
/// and the same names each given once where first seen, as one pass (each stretch's names are
/// merged in order). A stretch ends at a byte that is in no registry name and no mark (neither
/// a letter, a digit, `_` nor `.`), so none runs across a cut.
fn scan_strings_on_every_core(
    area: &[u8],
    reg: &Registry,
    marks: &mut BTreeSet<&'static str>,
    seen: &mut [bool],
    mut found: impl FnMut(&str, usize),
) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(area.len() / STRINGS_PER_THREAD);
    let mut cuts = vec![0];
    for k in 1..threads.max(1) {
        let from = (area.len() / threads * k).max(*cuts.last().unwrap_or(&0));
        let cut = area[from..].iter().take(1 << 16).position(|&b| !in_a_word(b));
        if let Some(p) = cut {
            cuts.push(from + p);
        }
    }
    cuts.push(area.len());
    cuts.dedup();
    if cuts.len() <= 2 {
        return scan_strings(area, reg, marks, seen, |w, at, _| found(w, at));
    }
    let start_seen: &[bool] = seen;
    let stretch = |a: usize, b: usize| -> Stretch {
        let (mut m, mut local, mut names) = (BTreeSet::new(), start_seen.to_vec(), Vec::new());
        scan_strings(&area[a..b], reg, &mut m, &mut local, |word, at, node| names.push((a + at, word.len(), node)));
        (m, names)
    };
    let parts: Vec<Stretch> = std::thread::scope(|s| {
        let handles: Vec<_> = cuts.windows(2).map(|w| (w[0], w[1], s.spawn(move || stretch(w[0], w[1])))).collect();
        // A thread that failed (none can: the pass returns on any input) is read again here.
        handles.into_iter().map(|(a, b, h)| h.join().unwrap_or_else(|_| stretch(a, b))).collect()
    });
    for (m, names) in parts {
        marks.extend(m);
        for (at, len, node) in names {
            if let Some(s) = seen.get_mut(node).filter(|s| !**s) {
                *s = true;
                if let Ok(w) = std::str::from_utf8(&area[at..at + len]) {
                    found(w, at);
                }
            }
        }
    }
}

/// One pass over a stretch of a program's strings: the [`MARKS`] it holds, and its registry
/// names, each given to `found` with its offset the first time it is seen (`seen`, by its node
/// in the registry's trie). A name is found at each `cu` followed by a capital letter: the
/// longest name that starts there, whatever comes before or after it. Rust's strings have no
/// NUL: cudarc's `"cuCtxCreate_v2"` lies between other strings' bytes
/// (`...cuCtxCreate_v2cuCtxDestroy_v2Missing symbol...`), where a search for whole words would
/// find nothing. Each `cu` walks the trie only as far as a name goes on from it (at most the
/// longest name's length), and checks the marks that hold a `cu`; the marks of the run-time
/// compilers are searched for on their own while not yet found: linear.
fn scan_strings(
    area: &[u8],
    reg: &Registry,
    marks: &mut BTreeSet<&'static str>,
    seen: &mut [bool],
    mut found: impl FnMut(&str, usize, usize),
) {
    let trie = reg.trie();
    let anchors: Vec<Option<(&str, usize)>> = MARKS.iter().map(|m| mark_anchor(m)).collect();
    let check = |at: usize, anchor: &str, marks: &mut BTreeSet<&'static str>| {
        for (m, a) in MARKS.iter().zip(&anchors) {
            if let Some((a, offset)) = *a {
                if a == anchor && at >= offset && area[at - offset..].starts_with(m.as_bytes()) {
                    marks.insert(m);
                }
            }
        }
    };
    // The marks anchored at a `cu`, by the byte after it (most `cu` begin none of them): each
    // `cu` compares only those its next byte allows.
    let mut after_cu: [Vec<(&'static str, usize)>; 256] = std::array::from_fn(|_| Vec::new());
    let mut at_end: Vec<(&'static str, usize)> = Vec::new();
    for (m, a) in MARKS.iter().zip(&anchors) {
        if let Some(("cu", offset)) = *a {
            match m.as_bytes().get(offset + 2) {
                Some(&b) => after_cu[usize::from(b)].push((m, offset)),
                // A mark that ends with its `cu`: whatever byte follows, or none.
                None => {
                    after_cu.iter_mut().for_each(|l| l.push((m, offset)));
                    at_end.push((m, offset));
                }
            }
        }
    }
    // Names found do not overlap: the next is looked for past the last.
    let mut past = 0;
    for at in memmem::find_iter(area, b"cu") {
        let candidates = match area.get(at + 2) {
            Some(&next) => &after_cu[usize::from(next)],
            None => &at_end,
        };
        for &(m, offset) in candidates {
            if at >= offset && area[at - offset..].starts_with(m.as_bytes()) {
                marks.insert(m);
            }
        }
        if at < past || !area.get(at + 2).is_some_and(u8::is_ascii_uppercase) {
            continue;
        }
        if let Some((len, node)) = trie.longest(&area[at..]) {
            past = at + len;
            if let Some(s) = seen.get_mut(node).filter(|s| !**s) {
                *s = true;
                // A name of the trie is ASCII.
                if let Ok(w) = std::str::from_utf8(&area[at..at + len]) {
                    found(w, at, node);
                }
            }
        }
    }
    for anchor in ["nvrtc", "nvJitLink"] {
        let pending =
            MARKS.iter().zip(&anchors).any(|(m, a)| a.is_some_and(|(a, _)| a == anchor) && !marks.contains(m));
        if pending {
            for at in memmem::find_iter(area, anchor.as_bytes()) {
                check(at, anchor, marks);
            }
        }
    }
    for (m, a) in MARKS.iter().zip(&anchors) {
        if a.is_none() && !marks.contains(m) && memmem::find(area, m.as_bytes()).is_some() {
            marks.insert(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_runtime_names_carry_their_minor_before_cuda_12() {
        let v =
            |name: &str| runtime_soname(name).map(|(major, minor, _)| super::super::model::runtime_floor(major, minor));
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
        assert_eq!(v("libcudart.so"), None);
        assert_eq!(v("libcudart.so.0"), None);
    }

    /// The runtime is a library read (as the runtime it links) only where its name tells its
    /// version: any other spelling is a library not read, so the floor is "at least".
    #[test]
    fn a_runtime_named_without_its_version_is_not_a_system_library() {
        for lib in ["libcudart.so.12", "libcudart.so.11.0", "libcudart.so.12.4.127"] {
            assert!(system_library(lib), "{lib}");
        }
        for lib in ["libcudart.so", "libcudart.so.x", "libcudart.so.0"] {
            assert!(!system_library(lib), "{lib}");
        }
        for lib in ["cudart64_12.dll", "cudart64_110.dll"] {
            assert!(windows_system_library(lib), "{lib}");
        }
        for lib in ["cudart64_.dll", "cudart64_1234.dll", "cudart64_x.dll"] {
            assert!(!windows_system_library(lib), "{lib}");
        }
    }

    /// Every symbol name read from the string tables read whole is the one the cache reads name
    /// by name (this test's own executable: a symbol table and a dynamic one).
    #[test]
    fn names_from_whole_string_tables_are_the_cache_s() {
        fn names<'a, R: ReadRef<'a>>(f: &object::File<'a, R>) -> Vec<String> {
            f.symbols().chain(f.dynamic_symbols()).map(|s| s.name().unwrap_or("?").to_owned()).collect()
        }
        let file = std::fs::File::open(std::env::current_exe().unwrap()).unwrap();
        let cache = object::ReadCache::new(&file);
        let tables = string_tables(&cache);
        assert!(!tables.is_empty());
        let fast = names(&object::File::parse(Tables { cache: &cache, tables: &tables }).unwrap());
        let other = object::ReadCache::new(&file);
        let slow = names(&object::File::parse(&other).unwrap());
        assert!(fast.len() > 100 && fast.iter().any(|n| n.contains("names_from_whole_string_tables")));
        assert_eq!(fast, slow);
    }

    #[test]
    fn each_run_time_compiler_mark_is_searched_for() {
        for m in RUN_TIME_COMPILER_MARKS {
            assert!(MARKS.contains(m), "{m}");
        }
    }

    #[test]
    fn each_mark_is_found_at_its_anchor() {
        for m in MARKS {
            let (anchor, offset) = mark_anchor(m).expect("every mark is found in the one pass");
            assert!(m[offset..].starts_with(anchor), "{m}: {anchor} at {offset}");
        }
        let reg = Registry::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/registry.json")).unwrap();
        // Run together as Rust places strings, and each mark overlapping a registry name.
        let text = b"xlibcuda.so.1\0nvcuda.dllcudaErrorCudartUnloadingcuGetProcAddress_v2libcudart_static_ab\
                     cudaGetDriverEntryPointlibnvrtc.so.13nvrtc64_120_0.dll libnvJitLink.so nvJitLink_120_0.dll \
                     nvrtcCompileProgramnvJitLinkCreate\
                     cuCtxCreate_v4cuCtxCreate_v4cuMemAllocAsyncHandle";
        let (mut marks, mut seen, mut names) = (BTreeSet::new(), vec![false; reg.trie().nodes()], Vec::new());
        scan_strings(text, &reg, &mut marks, &mut seen, |w, at, _| names.push((w.to_owned(), at)));
        assert_eq!(marks.len(), MARKS.len(), "{marks:?}");
        let words: Vec<&str> = names.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(words, ["cuGetProcAddress_v2", "cuCtxCreate_v4", "cuMemAllocAsync"], "{names:?}");
        // Each name once, where first seen.
        let first = text.windows(14).position(|w| w == b"cuCtxCreate_v4").unwrap();
        assert_eq!(names[1].1, first);
    }

    #[test]
    fn no_mark_or_name_runs_across_a_cut() {
        assert!(MARKS.iter().all(|m| m.bytes().all(in_a_word)), "{MARKS:?}");
        let reg = Registry::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/registry.json")).unwrap();
        for e in &reg.entries {
            assert!(e.symbol.bytes().chain(e.marker.bytes()).all(in_a_word), "{} / {}", e.symbol, e.marker);
        }
    }

    /// The strings read on every core give what one pass gives: the same marks, the same names
    /// where first seen, whatever the cuts.
    #[test]
    fn strings_read_on_every_core_are_one_pass_s() {
        let reg = Registry::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/registry.json")).unwrap();
        let words: Vec<&str> = reg.entries.iter().map(|e| e.symbol.as_str()).take(300).collect();
        let mut text = Vec::new();
        let mut i = 0usize;
        while text.len() < 3 * STRINGS_PER_THREAD {
            // Words run together, a NUL now and then, the marks among them.
            text.extend_from_slice(words[i % words.len()].as_bytes());
            text.extend_from_slice(match i % 7 {
                0 => b"\0",
                1 => b"cuDNN",
                2 => b".",
                _ => b"",
            });
            if i == 1_000_000 {
                text.extend_from_slice(b"libcuda.so.1\0libnvrtc.so.13\0");
            }
            i += 1;
        }
        let run = |on_every_core: bool| {
            let (mut marks, mut seen, mut names) = (BTreeSet::new(), vec![false; reg.trie().nodes()], Vec::new());
            if on_every_core {
                scan_strings_on_every_core(&text, &reg, &mut marks, &mut seen, |w, at| names.push((w.to_owned(), at)));
            } else {
                scan_strings(&text, &reg, &mut marks, &mut seen, |w, at, _| names.push((w.to_owned(), at)));
            }
            (marks, names)
        };
        let (one, every) = (run(false), run(true));
        assert!(one.1.len() > 100 && one.0.contains("libnvrtc"), "{:?}", one.0);
        assert_eq!(one, every);
    }

    /// A COFF object's import is the function's own name: through `__imp_` on x86-64, and with
    /// 32-bit x86's `_` and stdcall's `@N` taken off.
    #[test]
    fn coff_imports_are_the_functions_own_names() {
        assert_eq!(plain_import("__imp_GetProcAddress", false), "GetProcAddress");
        assert_eq!(plain_import("cuCtxCreate_v4", false), "cuCtxCreate_v4");
        assert_eq!(plain_import("__imp__GetProcAddress@8", true), "GetProcAddress");
        assert_eq!(plain_import("_cuInit@4", true), "cuInit");
        assert_eq!(plain_import("_dlsym", true), "dlsym");
        // Not a decoration: kept.
        assert_eq!(plain_import("_name@x", true), "name@x");
        assert_eq!(plain_import("@8", true), "@8");
    }

    #[test]
    fn a_damaged_record_is_not_read() {
        let r = EntryRecord::new(EntryRecord::ENTRY, "cuInit", "", 2000, 2000, 2000, 1, 1).to_bytes();
        let mut r = r.to_vec();
        let mut out = Vec::new();
        records(&r, true, "t", &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].kind, out[0].symbol.as_str(), out[0].per_thread), (Ok(RecordKind::Entry), "cuInit", false));
        r[25] ^= 1;
        out.clear();
        records(&r, true, "t", &mut out);
        assert!(out.is_empty());
        // Cut short: no record, no panic.
        records(&r[..100], true, "t", &mut out);
        assert!(out.is_empty());
    }
}
