//! Loading the driver's (or the runtime's) library, the check of a named file before the
//! system loader maps it, and what a loaded library exports (`exported`).
//!
//! A file handed to the loader that cannot load in this process must end in an error, never in
//! a signal inside `dlopen`. Before a file named by its path is loaded (`Driver::from_path`,
//! `Runtime::from_path`, and the runtime's toolkit folders), it is read as the loader will
//! read it, and refused with the reason when it is:
//! - not a regular file (a FIFO would block the loader forever, a device such as `/dev/zero`
//!   would be read without end);
//! - not an ELF shared library of this process (magic, class, byte order, machine);
//! - truncated: its program headers, or a segment, past the end of the file (the loader maps
//!   it and faults on first touch with SIGBUS);
//! - pointing the loader outside what it maps: the dynamic section (`PT_DYNAMIC`), the TLS
//!   image and the GNU property note must lie inside a loadable segment, and so must everything
//!   the loader reads or writes through the dynamic section while it maps and relocates the
//!   library: the string table (`DT_STRTAB`, `DT_STRSZ`) and every name in it the loader reads
//!   (`DT_NEEDED`, `DT_SONAME`, `DT_RPATH`, `DT_RUNPATH`, `DT_FILTER`, `DT_AUXILIARY`, the
//!   symbols', the versions'), the
//!   symbol table (`DT_SYMTAB`, as many symbols as the hash tables say), the hash tables
//!   (`DT_HASH`, `DT_GNU_HASH`: every bucket and chain), the version tables (`DT_VERSYM`,
//!   `DT_VERDEF`, `DT_VERNEED`, and every symbol's version index among those defined), the
//!   relocation tables (`DT_RELA`, `DT_REL`, `DT_JMPREL`, `DT_RELR`, with their sizes and entry
//!   sizes: every relocation's place inside a writable segment, unless the library asks for
//!   text relocations, and its symbol inside the symbol table), the initialiser and finaliser
//!   functions and arrays (`DT_INIT`, `DT_FINI`, `DT_INIT_ARRAY`, `DT_FINI_ARRAY` with their
//!   sizes), and what it writes for lazy binding (`DT_PLTGOT`, `DT_TLSDESC_GOT`, in a writable
//!   segment). The dynamic section must end with `DT_NULL` within its size, the entry sizes
//!   (`DT_SYMENT`, `DT_RELAENT`, `DT_RELENT`, `DT_RELRENT`) be this class's, and the GNU hash
//!   table's Bloom filter a power of two words (the loader asserts it). Each refusal names the
//!   tag.
//!
//! What no check can judge: the code a library runs when it is loaded (its initialisers, and
//! the values its relocations write, such as the addresses in its initialiser arrays, which
//! the loader then calls), a relocation of a type the processor does not have (the loader
//! refuses it itself), and the libraries it names (`DT_NEEDED`), which the loader finds and
//! maps itself. A bare name (`libcuda.so.1`) is not checked: the loader searches for
//! it, so it is not a file of the caller's choosing. Nor a file replaced between the check and
//! the load: the check reads the file at the path, and the loader opens the path again.

use core::ffi::{c_void, CStr};
use core::ptr::NonNull;
use std::path::Path;

use crate::error::{Error, LibraryKind, LoadAttempt};
use crate::lookup::cast;

#[cfg(not(windows))]
pub(crate) fn open_by_name(name: &str) -> Result<libloading::Library, String> {
    // SAFETY: loading runs the library's initialisers; libcuda's (and libcudart's) are
    // safe to run in any process.
    unsafe { libloading::Library::new(std::ffi::OsStr::new(name)) }.map_err(loader_message)
}

/// libloading's error as the text `Error` shows. (Both of the crate's loads pass an
/// `&OsStr` and this function, so that libloading's generic code is compiled once.)
fn loader_message(e: libloading::Error) -> String {
    e.to_string()
}

#[cfg(windows)]
pub(crate) fn open_by_name(name: &str) -> Result<libloading::Library, String> {
    use libloading::os::windows::{Library, LOAD_LIBRARY_SEARCH_SYSTEM32};
    // SAFETY: as above. System32 only: a DLL of that name in the application's folder or
    // the working directory is never loaded instead.
    unsafe { Library::load_with_flags(name, LOAD_LIBRARY_SEARCH_SYSTEM32) }.map(Into::into).map_err(loader_message)
}

/// `from_path`'s load: the library at `path`, or the error that says what is wrong with it.
pub(crate) fn load_path(path: &Path, library: LibraryKind) -> Result<libloading::Library, Error> {
    let shown = path.display().to_string();
    // The loader would take an empty name for the program itself.
    let opened = if shown.is_empty() { Err("no file was named".to_owned()) } else { open_path(path) };
    opened.map_err(|message| {
        // A name without a folder is looked for on the loader's search path only (on Windows
        // the working directory is searched too): a file of that name here is not it.
        // (Bytes, not `contains('/')`: a `char` pattern brings std's substring search along.)
        if cfg!(not(windows)) && !shown.is_empty() && !shown.as_bytes().contains(&b'/') && path.is_file() {
            Error::BareName { library, name: shown.clone(), message }
        } else {
            Error::LibraryNotFound { library, tried: vec![LoadAttempt { name: shown.clone(), message }] }
        }
    })
}

/// Opens the library at `path` (a bare name: on the loader's search path).
pub(crate) fn open_path(path: &Path) -> Result<libloading::Library, String> {
    // The loader maps what the file's headers say, and would fault on what they point at
    // outside the file or its segments: refuse what can be seen to be wrong first. A bare
    // name is not this file: the loader searches for it.
    #[cfg(all(unix, not(target_vendor = "apple")))]
    if path.as_os_str().as_encoded_bytes().contains(&b'/') {
        elf::check(path)?;
    }
    // SAFETY: as above; the caller chose the file.
    unsafe { libloading::Library::new(path.as_os_str()) }.map_err(loader_message)
}

/// An exported function of `lib`, or `None` if it is missing (or, oddly, NULL).
///
/// # Safety
/// `F` must be the function's type.
pub(crate) unsafe fn exported<F: Copy>(lib: &libloading::Library, name: &CStr) -> Option<F> {
    cast::<F>(exported_pointer(lib, name)?)
}

/// [`exported`]'s lookup, once for every `F`: looked up as a plain pointer, because
/// libloading would hand a NULL symbol out as a function value, which is undefined
/// behaviour for `fn` types.
unsafe fn exported_pointer(lib: &libloading::Library, name: &CStr) -> Option<NonNull<c_void>> {
    let symbol = lib.get::<*mut c_void>(name.to_bytes_with_nul()).ok()?;
    NonNull::new(*symbol)
}

/// The file the system loader opened for `lib`, found by its export `name`: `dladdr` names the
/// object that holds an address as the loader found it on its search path
/// (`/usr/lib/x86_64-linux-gnu/libcuda.so.1` for `libcuda.so.1`). `None` where it cannot tell
/// (no such export, or a name without a folder).
#[cfg(all(unix, not(target_vendor = "apple")))]
pub(crate) fn opened_file(lib: &libloading::Library, name: &CStr) -> Option<String> {
    use core::ffi::{c_char, c_int};
    // glibc's and musl's `Dl_info`.
    #[repr(C)]
    struct DlInfo {
        dli_fname: *const c_char,
        dli_fbase: *mut c_void,
        dli_sname: *const c_char,
        dli_saddr: *mut c_void,
    }
    extern "C" {
        fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
    }
    // SAFETY: a lookup of the library's own export, only its address read.
    let address = unsafe { exported_pointer(lib, name) }?;
    let mut info =
        DlInfo { dli_fname: core::ptr::null(), dli_fbase: core::ptr::null_mut(), dli_sname: core::ptr::null(), dli_saddr: core::ptr::null_mut() };
    // SAFETY: `info` is a `Dl_info` to fill; the address is inside a loaded object.
    if unsafe { dladdr(address.as_ptr(), &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr's file name is a NUL-terminated string the loader keeps while the object is loaded.
    let file = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
    // (Bytes: a `char` pattern brings std's substring search along.)
    file.as_bytes().contains(&b'/').then_some(file)
}

/// Elsewhere the name it was loaded by is all there is.
#[cfg(not(all(unix, not(target_vendor = "apple"))))]
pub(crate) fn opened_file(_lib: &libloading::Library, _name: &CStr) -> Option<String> {
    None
}

/// The headers of an ELF file and what its dynamic section points at, read as the loader
/// reads them, to refuse a file it could not load in this process before it tries (see the
/// module's documentation for the list). Every read is bounded by the file's size, and every
/// loop by a count the file gives and the file's size bounds; nothing here panics on any input.
#[cfg(all(unix, not(target_vendor = "apple")))]
pub(crate) mod elf {
    use std::io::{Read, Seek, SeekFrom};
    use std::path::Path;

    /// This process's `e_machine` and its name, where known (elsewhere the loader judges).
    const MACHINE: Option<(u16, &str)> = if cfg!(target_arch = "x86_64") {
        Some((62, "x86-64"))
    } else if cfg!(target_arch = "aarch64") {
        Some((183, "AArch64"))
    } else if cfg!(target_arch = "x86") {
        Some((3, "x86"))
    } else if cfg!(target_arch = "arm") {
        Some((40, "ARM"))
    } else if cfg!(target_arch = "powerpc64") {
        Some((21, "PowerPC 64"))
    } else if cfg!(target_arch = "riscv64") {
        Some((243, "RISC-V"))
    } else if cfg!(target_arch = "s390x") {
        Some((22, "s390x"))
    } else {
        None
    };

    /// The names of the machines a driver library is built for, for the message.
    fn machine_name(m: u16) -> String {
        match m {
            3 => "x86 (32-bit)".into(),
            40 => "ARM (32-bit)".into(),
            62 => "x86-64".into(),
            183 => "AArch64".into(),
            21 => "PowerPC 64".into(),
            243 => "RISC-V".into(),
            22 => "s390x".into(),
            _ => format!("machine {m}"),
        }
    }

    /// What a path that is not a regular file is, in words; `None` for a regular file.
    fn not_a_file(meta: &std::fs::Metadata) -> Option<&'static str> {
        use std::os::unix::fs::FileTypeExt;
        let ft = meta.file_type();
        Some(if ft.is_file() {
            return None;
        } else if ft.is_dir() {
            "a folder"
        } else if ft.is_fifo() {
            "a FIFO (named pipe), which the loader would wait on forever"
        } else if ft.is_char_device() {
            "a character device"
        } else if ft.is_block_device() {
            "a block device"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        })
    }

    /// Opens `path` for reading without waiting for a writer, where the platform's flag is
    /// known without libc (Linux's `O_NONBLOCK` on its common architectures): a FIFO put in
    /// place after the check of the name is then judged on the opened file, not waited on.
    fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
        #[cfg(all(
            any(target_os = "linux", target_os = "android"),
            any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "x86", target_arch = "arm", target_arch = "riscv64")
        ))]
        {
            use std::os::unix::fs::OpenOptionsExt;
            const O_NONBLOCK: i32 = 0o4000;
            std::fs::OpenOptions::new().read(true).custom_flags(O_NONBLOCK).open(path)
        }
        #[cfg(not(all(
            any(target_os = "linux", target_os = "android"),
            any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "x86", target_arch = "arm", target_arch = "riscv64")
        )))]
        {
            std::fs::File::open(path)
        }
    }

    /// `Err` with the reason when the file at `path` cannot be a shared library of this
    /// process; `Ok` when it may be, or when it cannot be opened (the loader then says why).
    /// The file is read once here and opened again by the loader: one replaced in between is
    /// not the one checked (see the module's documentation).
    pub(crate) fn check(path: &Path) -> Result<(), String> {
        // Judged before it is opened: opening a FIFO waits for a writer. Then again on the
        // opened file, which is what is read.
        if let Some(what) = std::fs::metadata(path).ok().as_ref().and_then(not_a_file) {
            return Err(format!("not loaded: it is {what}, not a shared library file"));
        }
        let Ok(mut file) = open_nonblocking(path) else { return Ok(()) };
        let len = match file.metadata() {
            Ok(m) => match not_a_file(&m) {
                Some(what) => return Err(format!("not loaded: it is {what}, not a shared library file")),
                None => m.len(),
            },
            Err(_) => return Ok(()),
        };
        let mut head = [0u8; 64];
        let got = read_up_to(&mut file, &mut head);
        let head = &head[..got];
        if !head.starts_with(b"\x7fELF") {
            return Err(format!("not loaded: it is not an ELF shared library (it does not begin with \\x7fELF; {len} bytes)"));
        }
        let wide = match head.get(4) {
            Some(1) => false,
            Some(2) => true,
            _ => return Err("not loaded: its ELF class is neither 32- nor 64-bit".into()),
        };
        if wide != cfg!(target_pointer_width = "64") {
            let (it, this) = if wide { (64, 32) } else { (32, 64) };
            return Err(format!("not loaded: it is a {it}-bit library, and this process is {this}-bit"));
        }
        let little = match head.get(5) {
            Some(1) => true,
            Some(2) => false,
            _ => return Err("not loaded: its ELF byte order is neither little- nor big-endian".into()),
        };
        if little != cfg!(target_endian = "little") {
            return Err("not loaded: its byte order is not this processor's".into());
        }
        let header_size = if wide { 64 } else { 52 };
        if head.len() < header_size {
            return Err(format!(
                "not loaded: it is truncated: {len} bytes, less than an ELF header ({header_size} bytes)"
            ));
        }
        let word = |at: usize, size: usize| uint(&head[at..at + size], little);
        let machine = word(18, 2) as u16;
        if let Some((ours, name)) = MACHINE {
            if machine != ours {
                return Err(format!(
                    "not loaded: it is built for {}, and this process runs on {name}",
                    machine_name(machine)
                ));
            }
        }
        let (phoff, phentsize, phnum) =
            if wide { (word(32, 8), word(54, 2), word(56, 2)) } else { (word(28, 4), word(42, 2), word(44, 2)) };
        // PN_XNUM: the count is elsewhere; the loader judges such a file itself.
        if phnum == 0xffff {
            return Ok(());
        }
        let entry = if wide { 56 } else { 32 };
        if phnum == 0 {
            return Err("not loaded: it has no program headers, so it is no shared library".into());
        }
        if phentsize < entry {
            return Err(format!("not loaded: its program headers are {phentsize} bytes each, less than {entry}"));
        }
        let table = phentsize.checked_mul(phnum).and_then(|n| n.checked_add(phoff));
        match table {
            Some(end) if end <= len => {}
            _ => {
                return Err(format!(
                    "not loaded: it is truncated: its program headers end past its {len} bytes (at {phoff} + {phnum} x {phentsize})"
                ))
            }
        }
        // No more than the file has (checked above), and no more than any table is allowed.
        if phentsize * phnum > MAX_TABLE {
            return Err(format!("not loaded: its program headers take {} bytes, more than a library has", phentsize * phnum));
        }
        let mut headers = vec![0u8; (phentsize * phnum) as usize];
        // Through `&File`, as `Image::read` does: one copy of std's `read_exact`, not two.
        let mut shared = &file;
        let read = shared.seek(SeekFrom::Start(phoff)).and_then(|_| shared.read_exact(&mut headers));
        if read.is_err() {
            return Err(format!("not loaded: its program headers at byte {phoff} cannot be read"));
        }
        let mut segments = Vec::new();
        for i in 0..phnum as usize {
            let h = &headers[i * phentsize as usize..][..entry as usize];
            let field = |at: usize, size: usize| uint(&h[at..at + size], little);
            let s = if wide {
                Segment {
                    kind: field(0, 4),
                    flags: field(4, 4),
                    offset: field(8, 8),
                    vaddr: field(16, 8),
                    filesz: field(32, 8),
                    memsz: field(40, 8),
                }
            } else {
                Segment {
                    kind: field(0, 4),
                    offset: field(4, 4),
                    vaddr: field(8, 4),
                    filesz: field(16, 4),
                    memsz: field(20, 4),
                    flags: field(24, 4),
                }
            };
            let end = s.offset.checked_add(s.filesz);
            if s.filesz > 0 && end.is_none_or(|e| e > len) {
                let what = if s.kind == PT_LOAD { "loadable segment" } else { "segment" };
                let end = end.map_or_else(|| "past 2^64".to_owned(), |e| e.to_string());
                return Err(format!(
                    "not loaded: it is truncated: its {what} {i} ends at byte {end}, and the file has {len} bytes"
                ));
            }
            segments.push(s);
        }
        let image = Image { file, wide, little, loads: segments.iter().filter(|s| s.kind == PT_LOAD).copied().collect() };
        image.check(&segments).map_err(|why| format!("not loaded: {why}"))
    }

    const PT_LOAD: u64 = 1;
    const PT_DYNAMIC: u64 = 2;
    const PT_TLS: u64 = 7;
    const PT_GNU_PROPERTY: u64 = 0x6474_e553;
    const PF_W: u64 = 2;

    /// The most bytes one table is read at a time, and the most entries a walk follows: far
    /// above a real driver's (its relocations are a few MB), far below what would exhaust memory.
    const MAX_TABLE: u64 = 256 << 20;

    #[derive(Clone, Copy)]
    struct Segment {
        kind: u64,
        flags: u64,
        offset: u64,
        vaddr: u64,
        filesz: u64,
        memsz: u64,
    }

    /// The file as the loader will map it: its loadable segments.
    struct Image {
        file: std::fs::File,
        wide: bool,
        little: bool,
        loads: Vec<Segment>,
    }

    /// The tags the check reads, with their names for the messages.
    const DT_NULL: u64 = 0;
    const DT_NEEDED: u64 = 1;
    const DT_PLTRELSZ: u64 = 2;
    const DT_PLTGOT: u64 = 3;
    const DT_HASH: u64 = 4;
    const DT_STRTAB: u64 = 5;
    const DT_SYMTAB: u64 = 6;
    const DT_RELA: u64 = 7;
    const DT_RELASZ: u64 = 8;
    const DT_RELAENT: u64 = 9;
    const DT_STRSZ: u64 = 10;
    const DT_SYMENT: u64 = 11;
    const DT_INIT: u64 = 12;
    const DT_FINI: u64 = 13;
    const DT_SONAME: u64 = 14;
    const DT_RPATH: u64 = 15;
    const DT_REL: u64 = 17;
    const DT_RELSZ: u64 = 18;
    const DT_RELENT: u64 = 19;
    const DT_PLTREL: u64 = 20;
    const DT_TEXTREL: u64 = 22;
    const DT_JMPREL: u64 = 23;
    const DT_INIT_ARRAY: u64 = 25;
    const DT_FINI_ARRAY: u64 = 26;
    const DT_INIT_ARRAYSZ: u64 = 27;
    const DT_FINI_ARRAYSZ: u64 = 28;
    const DT_RUNPATH: u64 = 29;
    const DT_FLAGS: u64 = 30;
    const DT_RELRSZ: u64 = 35;
    const DT_RELR: u64 = 36;
    const DT_RELRENT: u64 = 37;
    const DT_GNU_HASH: u64 = 0x6fff_fef5;
    const DT_TLSDESC_GOT: u64 = 0x6fff_fef7;
    const DT_AUXILIARY: u64 = 0x7fff_fffd;
    const DT_FILTER: u64 = 0x7fff_ffff;
    const DT_VERSYM: u64 = 0x6fff_fff0;
    const DT_VERDEF: u64 = 0x6fff_fffc;
    const DT_VERNEED: u64 = 0x6fff_fffe;
    const DF_TEXTREL: u64 = 4;

    /// The dynamic section's entries other than the string-naming ones, in order (`get` reads
    /// the last of a tag, as the loader keeps it), and every string offset of the tags that
    /// name strings. A list searched from its end, not a map: the check asks for a few dozen
    /// tags (time linear in the section's size, which `read` caps), and a `BTreeMap` was a
    /// sixth of the machine code every build of this crate compiles.
    #[derive(Default)]
    struct Dynamic {
        values: Vec<(u64, u64)>,
        names: Vec<(&'static str, u64)>,
    }

    impl Dynamic {
        fn get(&self, tag: u64) -> Option<u64> {
            self.values.iter().rev().find(|e| e.0 == tag).map(|e| e.1)
        }
    }

    impl Image {
        fn word(&self) -> u64 {
            if self.wide {
                8
            } else {
                4
            }
        }

        fn uint(&self, bytes: &[u8], at: u64, size: u64) -> u64 {
            let start = at as usize;
            bytes.get(start..start.saturating_add(size as usize)).map_or(0, |b| uint(b, self.little))
        }

        /// The loadable segment that holds `[addr, addr + size)` whole, if one does.
        fn segment_of(&self, addr: u64, size: u64) -> Option<&Segment> {
            let end = addr.checked_add(size)?;
            self.loads.iter().find(|s| s.vaddr <= addr && s.vaddr.checked_add(s.memsz).is_some_and(|e| end <= e))
        }

        /// `[addr, addr + size)` as the loader maps it (zeros past a segment's file bytes), or
        /// why not: outside every loadable segment, or too large to read.
        fn read(&self, what: &str, addr: u64, size: u64) -> Result<Vec<u8>, String> {
            let outside = || {
                format!(
                    "its {what} ({size} bytes at {addr:#x}) is not inside a loadable segment: the loader would read \
                     unmapped memory"
                )
            };
            let s = *self.segment_of(addr, size).ok_or_else(outside)?;
            if size > MAX_TABLE {
                return Err(format!("its {what} is {size} bytes, more than a library's table can be"));
            }
            let mut out = vec![0u8; size as usize];
            let from = addr - s.vaddr;
            let in_file = s.filesz.min(s.memsz);
            if from < in_file {
                let n = (in_file - from).min(size) as usize;
                let at = s.offset.checked_add(from).ok_or_else(outside)?;
                let mut file = &self.file;
                file.seek(SeekFrom::Start(at))
                    .and_then(|_| file.read_exact(&mut out[..n]))
                    .map_err(|e| format!("its {what} cannot be read ({e})"))?;
            }
            Ok(out)
        }

        /// `addr` of `size` bytes lies inside a loadable segment; else the error, which names `what`.
        fn inside(&self, what: &str, addr: u64, size: u64) -> Result<(), String> {
            match self.segment_of(addr, size) {
                Some(_) => Ok(()),
                None => Err(format!(
                    "its {what} ({size} bytes at {addr:#x}) is not inside a loadable segment: the loader would touch \
                     unmapped memory"
                )),
            }
        }

        fn check(&self, segments: &[Segment]) -> Result<(), String> {
            if self.loads.is_empty() {
                return Err("it has no loadable segment, so it is no shared library".into());
            }
            for s in segments {
                let what = match s.kind {
                    PT_TLS => "thread-local storage image (PT_TLS)",
                    PT_GNU_PROPERTY => "GNU property note (PT_GNU_PROPERTY)",
                    _ => continue,
                };
                self.inside(what, s.vaddr, s.filesz)?;
            }
            let Some(dynamic) = segments.iter().find(|s| s.kind == PT_DYNAMIC) else { return Ok(()) };
            let dynamic = self.dynamic(dynamic)?;
            self.check_dynamic(&dynamic)
        }

        /// The dynamic section, read where the loader reads it: at its address in memory.
        fn dynamic(&self, segment: &Segment) -> Result<Dynamic, String> {
            let bytes = self.read("dynamic section (PT_DYNAMIC)", segment.vaddr, segment.filesz)?;
            let w = self.word();
            let mut d = Dynamic::default();
            let mut ended = false;
            for i in 0..bytes.len() as u64 / (2 * w) {
                let tag = self.uint(&bytes, i * 2 * w, w);
                let value = self.uint(&bytes, i * 2 * w + w, w);
                match tag {
                    DT_NULL => {
                        ended = true;
                        break;
                    }
                    DT_NEEDED => d.names.push(("DT_NEEDED", value)),
                    DT_SONAME => d.names.push(("DT_SONAME", value)),
                    DT_RPATH => d.names.push(("DT_RPATH", value)),
                    DT_RUNPATH => d.names.push(("DT_RUNPATH", value)),
                    DT_AUXILIARY => d.names.push(("DT_AUXILIARY", value)),
                    DT_FILTER => d.names.push(("DT_FILTER", value)),
                    _ => d.values.push((tag, value)),
                }
            }
            // The loader reads entries until DT_NULL, whatever the segment's size says.
            if !ended {
                return Err("its dynamic section (PT_DYNAMIC) has no DT_NULL entry within its size: the loader would read                             on past it"
                    .into());
            }
            Ok(d)
        }

        fn check_dynamic(&self, d: &Dynamic) -> Result<(), String> {
            let w = self.word();
            let strsz = d.get(DT_STRSZ).unwrap_or(0);
            let strtab = match d.get(DT_STRTAB) {
                Some(at) => self.read("string table (DT_STRTAB, DT_STRSZ)", at, strsz)?,
                None if !d.names.is_empty() => return Err("its dynamic section names strings but has no DT_STRTAB".into()),
                None => Vec::new(),
            };
            let name_at = |tag: &str, offset: u64| -> Result<(), String> {
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                match strtab.get(start..) {
                    Some(rest) if rest.contains(&0) => Ok(()),
                    _ => Err(format!(
                        "its {tag} names the string at offset {offset}, which is not a string of its string table \
                         (DT_STRTAB, DT_STRSZ {strsz} bytes)"
                    )),
                }
            };
            for (tag, offset) in &d.names {
                name_at(tag, *offset)?;
            }
            let sym_size = if self.wide { 24 } else { 16 };
            let entry_size = |tag: u64, name: &str, expected: u64| match d.get(tag) {
                Some(v) if v != expected => Err(format!("its {name} is {v}, not the {expected} of this class")),
                _ => Ok(()),
            };
            entry_size(DT_SYMENT, "DT_SYMENT", sym_size)?;
            entry_size(DT_RELAENT, "DT_RELAENT", 3 * w)?;
            entry_size(DT_RELENT, "DT_RELENT", 2 * w)?;
            entry_size(DT_RELRENT, "DT_RELRENT", w)?;
            // How many symbols there are: what the hash tables reach (the loader reads no
            // symbol they do not), or none.
            let mut symbols = 0u64;
            if let Some(at) = d.get(DT_HASH) {
                symbols = symbols.max(self.sysv_hash(at)?);
            }
            if let Some(at) = d.get(DT_GNU_HASH) {
                symbols = symbols.max(self.gnu_hash(at)?);
            }
            let symtab = match d.get(DT_SYMTAB) {
                Some(at) => {
                    let size = symbols.checked_mul(sym_size).ok_or("its symbol table's size overflows")?;
                    self.read("symbol table (DT_SYMTAB, as many symbols as its hash tables reach)", at, size.max(1))?
                }
                None if symbols > 0 => return Err("it has hash tables but no DT_SYMTAB".into()),
                None => Vec::new(),
            };
            for i in 0..symbols {
                let name = self.uint(&symtab, i * sym_size, 4);
                if name != 0 {
                    name_at(&format!("symbol {i}"), name)?;
                }
            }
            let versions = self.versions(d, &name_at)?;
            if let Some(at) = d.get(DT_VERSYM) {
                let table = self.read("version table (DT_VERSYM)", at, symbols.saturating_mul(2).max(1))?;
                for i in 0..symbols {
                    let v = self.uint(&table, i * 2, 2) & 0x7fff;
                    if v > versions.max(1) {
                        return Err(format!(
                            "its DT_VERSYM gives symbol {i} version index {v}, and its DT_VERDEF and DT_VERNEED \
                             define versions up to {}",
                            versions.max(1)
                        ));
                    }
                }
            }
            let text_relocations = d.get(DT_TEXTREL).is_some() || d.get(DT_FLAGS).is_some_and(|f| f & DF_TEXTREL != 0);
            let relocations = |tag: u64, name: &str, size_tag: u64, size_name: &str, rela: bool| -> Result<(), String> {
                let Some(at) = d.get(tag) else { return Ok(()) };
                let size = d.get(size_tag).unwrap_or(0);
                let table = self.read(&format!("relocation table ({name}, {size_name})"), at, size)?;
                let entry = if rela { 3 * w } else { 2 * w };
                for i in 0..size / entry {
                    let offset = self.uint(&table, i * entry, w);
                    let info = self.uint(&table, i * entry + w, w);
                    let (symbol, kind) = if self.wide { (info >> 32, info & 0xffff_ffff) } else { (info >> 8, info & 0xff) };
                    if kind == 0 {
                        continue; // R_*_NONE: the loader skips it.
                    }
                    let place = self.segment_of(offset, w);
                    if !place.is_some_and(|s| text_relocations || s.flags & PF_W != 0) {
                        return Err(format!(
                            "its {name} relocation {i} writes at {offset:#x}, which is not inside a writable loadable \
                             segment"
                        ));
                    }
                    if symbol >= symbols.max(1) {
                        return Err(format!(
                            "its {name} relocation {i} names symbol {symbol}, past its symbol table ({symbols} symbols)"
                        ));
                    }
                }
                Ok(())
            };
            relocations(DT_RELA, "DT_RELA", DT_RELASZ, "DT_RELASZ", true)?;
            relocations(DT_REL, "DT_REL", DT_RELSZ, "DT_RELSZ", false)?;
            let plt_rela = d.get(DT_PLTREL).is_none_or(|k| k == DT_RELA);
            relocations(DT_JMPREL, "DT_JMPREL", DT_PLTRELSZ, "DT_PLTRELSZ", plt_rela)?;
            if let Some(at) = d.get(DT_RELR) {
                let size = d.get(DT_RELRSZ).unwrap_or(0);
                let table = self.read("relocation table (DT_RELR, DT_RELRSZ)", at, size)?;
                self.relr(&table, text_relocations)?;
            }
            // What the loader writes for lazy binding: the PLT's GOT (its first three words) and
            // the TLS descriptors' resolver slot.
            for (tag, name, size) in [(DT_PLTGOT, "DT_PLTGOT", 3 * w), (DT_TLSDESC_GOT, "DT_TLSDESC_GOT", w)] {
                if let Some(at) = d.get(tag) {
                    if !self.segment_of(at, size).is_some_and(|s| text_relocations || s.flags & PF_W != 0) {
                        return Err(format!(
                            "its {name} ({size} bytes at {at:#x}) is not inside a writable loadable segment: the \
                             loader writes there"
                        ));
                    }
                }
            }
            for (tag, name) in [(DT_INIT, "DT_INIT"), (DT_FINI, "DT_FINI")] {
                if let Some(at) = d.get(tag) {
                    self.inside(&format!("function {name}"), at, 1)?;
                }
            }
            for (tag, name, size_tag) in
                [(DT_INIT_ARRAY, "DT_INIT_ARRAY", DT_INIT_ARRAYSZ), (DT_FINI_ARRAY, "DT_FINI_ARRAY", DT_FINI_ARRAYSZ)]
            {
                if let Some(at) = d.get(tag) {
                    self.inside(&format!("array {name} (with its size)"), at, d.get(size_tag).unwrap_or(0))?;
                }
            }
            Ok(())
        }

        /// `DT_HASH`: its header, buckets and chains inside a segment, and every index in them
        /// a symbol of the table; the number of symbols (`nchain`).
        fn sysv_hash(&self, at: u64) -> Result<u64, String> {
            let head = self.read("hash table (DT_HASH)", at, 8)?;
            let (buckets, chains) = (self.uint(&head, 0, 4), self.uint(&head, 4, 4));
            let size = buckets.saturating_add(chains).saturating_add(2).saturating_mul(4);
            let table = self.read("hash table (DT_HASH, with its buckets and chains)", at, size)?;
            for i in 0..buckets + chains {
                let v = self.uint(&table, 8 + i * 4, 4);
                if v >= chains && v != 0 {
                    return Err(format!("its hash table (DT_HASH) points at symbol {v}, past its {chains} symbols"));
                }
            }
            Ok(chains)
        }

        /// `DT_GNU_HASH`: its header, Bloom filter, buckets and every chain they start inside a
        /// segment; the number of symbols it reaches.
        fn gnu_hash(&self, at: u64) -> Result<u64, String> {
            let what = "GNU hash table (DT_GNU_HASH)";
            let head = self.read(what, at, 16)?;
            let (buckets, first, bloom) = (self.uint(&head, 0, 4), self.uint(&head, 4, 4), self.uint(&head, 8, 4));
            if bloom == 0 || !bloom.is_power_of_two() {
                return Err(format!("its {what} has a Bloom filter of {bloom} words, not a power of two"));
            }
            let start = 16 + bloom * self.word();
            let table = self.read(&format!("{what}, with its buckets"), at, start + buckets * 4)?;
            let chains = at.checked_add(start + buckets * 4).ok_or_else(|| format!("its {what} overflows"))?;
            let chain_what = format!("{what}'s chains");
            // The chain array from symbol `first` on, read in blocks as the walk reaches them.
            // A lookup walks from its bucket's symbol to the first entry with its low bit set;
            // every chain entry is read once, in order, and the ends found so far answer every
            // later bucket (buckets sharing one long chain cost no more than the chain).
            let mut chain: Vec<u8> = Vec::new();
            let mut ends: Vec<u64> = Vec::new();
            let mut scanned = 0u64;
            let mut symbols = first;
            for i in 0..buckets {
                let b = self.uint(&table, start + i * 4, 4);
                if b == 0 {
                    continue;
                }
                if b < first {
                    return Err(format!("its {what}'s bucket {i} starts at symbol {b}, below its first hashed {first}"));
                }
                let from = b - first;
                let end = loop {
                    if let Some(&e) = ends.get(ends.partition_point(|&e| e < from)) {
                        break e;
                    }
                    if scanned > MAX_TABLE / 4 {
                        return Err(format!("its {what}'s chain from bucket {i} does not end"));
                    }
                    while scanned >= chain.len() as u64 / 4 {
                        let next = chain.len() as u64;
                        let addr = chains.checked_add(next).ok_or_else(|| format!("its {what} overflows"))?;
                        // A block where the segment has one, else the one entry needed.
                        let block = self.read(&chain_what, addr, 16384).or_else(|_| self.read(&chain_what, addr, 4))?;
                        chain.extend_from_slice(&block);
                    }
                    if self.uint(&chain, scanned * 4, 4) & 1 == 1 {
                        ends.push(scanned);
                    }
                    scanned += 1;
                };
                symbols = symbols.max(first + end + 1);
            }
            Ok(symbols)
        }

        /// `DT_VERDEF` and `DT_VERNEED` walked as the loader walks them: from entry to entry by
        /// their `next` offsets until one is 0 (the counts `DT_VERDEFNUM`, `DT_VERNEEDNUM` and
        /// `vn_cnt` are not what it follows), every entry and the names it reads inside a
        /// segment and the string table; the highest version index they define.
        fn versions(&self, d: &Dynamic, name_at: &dyn Fn(&str, u64) -> Result<(), String>) -> Result<u64, String> {
            // One budget of reads for both walks and every inner walk of DT_VERNEED: entries
            // that all lead into one long shared chain cost no more than the budget. A real
            // library has a few dozen entries.
            let mut budget: u32 = 1 << 20;
            let mut step = |what: &str| -> Result<(), String> {
                budget = budget.checked_sub(1).ok_or_else(|| format!("its {what} chain of entries does not end"))?;
                Ok(())
            };
            let mut highest = 0u64;
            if let Some(mut at) = d.get(DT_VERDEF) {
                for n in 0u64.. {
                    step("DT_VERDEF")?;
                    let def = self.read(&format!("version definition {n} (DT_VERDEF)"), at, 20)?;
                    highest = highest.max(self.uint(&def, 4, 2) & 0x7fff);
                    // The loader reads the first name of each definition.
                    let aux = at.checked_add(self.uint(&def, 12, 4)).ok_or("its DT_VERDEF overflows")?;
                    let a = self.read(&format!("version definition {n}'s name (DT_VERDEF)"), aux, 8)?;
                    name_at("DT_VERDEF", self.uint(&a, 0, 4))?;
                    let next = self.uint(&def, 16, 4);
                    if next == 0 {
                        break;
                    }
                    at = at.checked_add(next).ok_or("its DT_VERDEF overflows")?;
                }
            }
            if let Some(mut at) = d.get(DT_VERNEED) {
                for n in 0u64.. {
                    step("DT_VERNEED")?;
                    let need = self.read(&format!("version need {n} (DT_VERNEED)"), at, 16)?;
                    name_at("DT_VERNEED", self.uint(&need, 4, 4))?;
                    let mut aux = at.checked_add(self.uint(&need, 8, 4)).ok_or("its DT_VERNEED overflows")?;
                    loop {
                        step("DT_VERNEED")?;
                        let a = self.read(&format!("version need {n}'s versions (DT_VERNEED)"), aux, 16)?;
                        highest = highest.max(self.uint(&a, 6, 2) & 0x7fff);
                        name_at("DT_VERNEED", self.uint(&a, 8, 4))?;
                        let next = self.uint(&a, 12, 4);
                        if next == 0 {
                            break;
                        }
                        aux = aux.checked_add(next).ok_or("its DT_VERNEED overflows")?;
                    }
                    let next = self.uint(&need, 12, 4);
                    if next == 0 {
                        break;
                    }
                    at = at.checked_add(next).ok_or("its DT_VERNEED overflows")?;
                }
            }
            Ok(highest)
        }

        /// `DT_RELR`: every address its entries relocate inside a writable segment.
        fn relr(&self, table: &[u8], text_relocations: bool) -> Result<(), String> {
            let w = self.word();
            let bits = w * 8 - 1;
            let mut base = 0u64;
            let place = |addr: u64| -> Result<(), String> {
                match self.segment_of(addr, w) {
                    Some(s) if text_relocations || s.flags & PF_W != 0 => Ok(()),
                    _ => Err(format!(
                        "its DT_RELR relocates {addr:#x}, which is not inside a writable loadable segment"
                    )),
                }
            };
            for i in 0..table.len() as u64 / w {
                let entry = self.uint(table, i * w, w);
                if entry & 1 == 0 {
                    place(entry)?;
                    base = entry.wrapping_add(w);
                } else {
                    let mut bitmap = entry >> 1;
                    let mut at = base;
                    while bitmap != 0 {
                        if bitmap & 1 == 1 {
                            place(at)?;
                        }
                        bitmap >>= 1;
                        at = at.wrapping_add(w);
                    }
                    base = base.wrapping_add(bits * w);
                }
            }
            Ok(())
        }
    }

    /// An unsigned integer of the file's byte order.
    fn uint(bytes: &[u8], little: bool) -> u64 {
        let fold = |v: u64, b: &u8| (v << 8) | u64::from(*b);
        if little {
            bytes.iter().rev().fold(0, fold)
        } else {
            bytes.iter().fold(0, fold)
        }
    }

    /// Reads as much of `buf` as the file has.
    fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> usize {
        let mut got = 0;
        while got < buf.len() {
            match file.read(&mut buf[got..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        got
    }
}
