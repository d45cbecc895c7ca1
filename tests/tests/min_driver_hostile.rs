//! `min-driver` tried as a hostile user would: kernels where a reader that trusts a file's
//! section headers, the first `.version` of a string, a file's extension or an archive's first
//! level does not look, and programs that reach the driver by means other than an import. Each
//! case was an exact floor lower than the truth ("any driver will do" for a file with kernels);
//! each now reads the kernel, or says "at least" and why.

use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_sys_gen::min_driver::{floor, Floor, Reading};
use cuda_sys_gen_tests::*;

fn registry() -> PathBuf {
    repo_root().join("generated/registry.json")
}

fn floor_of(path: &Path) -> Floor {
    floor(&registry(), &[path.to_owned()]).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

fn run(d: &Path, program: &str, args: &[&str]) {
    let o = Command::new(program).args(args).current_dir(d).output().unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(o.status.success(), "{program} {args:?}: {}", text(&o.stderr));
}

/// `name.c` of `src`, built with `args` after it.
fn build(d: &Path, name: &str, src: &str, args: &[&str]) -> PathBuf {
    std::fs::write(d.join(format!("{name}.c")), src).unwrap();
    let c = format!("{name}.c");
    let mut all = vec!["-o", name, c.as_str()];
    all.extend_from_slice(args);
    run(d, "cc", &all);
    d.join(name)
}

/// `src` built as `name` with `args` reads "at least", with a capability whose spelling holds
/// `shows`.
fn assert_capability(d: &Path, name: &str, src: &str, args: &[&str], shows: &str) {
    let f = floor_of(&build(d, name, src, args));
    let report = f.render(d, None);
    assert!(f.at_least(), "{name}: {report}");
    assert!(
        f.unresolved.iter().any(|u| u.reading == Reading::Capability && u.spelled.contains(shows)),
        "{name}: {report}"
    );
}

fn kernel(name: &str) -> Vec<u8> {
    std::fs::read(repo_root().join("tests/kernels").join(name)).unwrap()
}

/// A C array `name` of `bytes` in section `section`, aligned to `align`, kept by the linker.
fn c_bytes(name: &str, section: &str, align: usize, bytes: &[u8]) -> String {
    let list: Vec<String> = bytes.iter().map(u8::to_string).collect();
    format!(
        "__attribute__((used, aligned({align}), section(\"{section}\"))) const unsigned char {name}[{}] = {{{}}};\n",
        bytes.len(),
        list.join(",")
    )
}

/// A program holding `bytes` in section `section`, aligned to 8.
fn c_array(section: &str, bytes: &[u8]) -> String {
    format!("{}int main(void) {{ return 0; }}\n", c_bytes("k", section, 8, bytes))
}

/// The floor of sm90_ptx95.fatbin: PTX ISA 9.5, CUDA 13.5.
const PTX95: u32 = 13050;

/// The section header of an ELF64 file `b` named `name`, as its offset in `b`.
fn section_header(b: &[u8], name: &str) -> usize {
    let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap()) as usize;
    let (shoff, size, n, names) = (u64_at(40), u16_at(58), u16_at(60), u16_at(62));
    let strings = u64_at(shoff + names * size + 24);
    (0..n)
        .map(|i| shoff + i * size)
        .find(|&h| {
            let at = strings + u32_at(h);
            b[at..].split(|&c| c == 0).next() == Some(name.as_bytes())
        })
        .unwrap_or_else(|| panic!("no section {name}"))
}

/// A fatbin in a section whose header lies (not allocated, NOBITS, pointing elsewhere, of size
/// 0) still lies in a loaded segment: the program holds it when it runs. Every byte the loader
/// maps is read, whatever the section headers say.
#[test]
fn what_the_loader_maps_is_read_whatever_the_section_headers_say() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = build(d, "fat", &c_array(".kfat", &kernel("sm90_ptx95.fatbin")), &[]);
    let original = std::fs::read(&p).unwrap();
    assert_eq!(floor_of(&p).version(), PTX95);
    type Lie = fn(&mut [u8], usize);
    let lies: &[(&str, Lie)] = &[
        ("nobits", |b, h| b[h + 4..h + 8].copy_from_slice(&8u32.to_le_bytes())),
        ("not-allocated", |b, h| b[h + 8..h + 16].copy_from_slice(&0u64.to_le_bytes())),
        ("moved", |b, h| b[h + 24..h + 32].copy_from_slice(&0x40u64.to_le_bytes())),
        ("empty", |b, h| b[h + 32..h + 40].copy_from_slice(&0u64.to_le_bytes())),
    ];
    for (name, lie) in lies {
        let mut b = original.clone();
        let h = section_header(&b, ".kfat");
        lie(&mut b, h);
        let path = d.join(name);
        std::fs::write(&path, &b).unwrap();
        let f = floor_of(&path);
        let report = f.render(d, None);
        assert_eq!(f.version(), PTX95, "{name}: {report}");
        assert!(!report.contains("any driver will do"), "{name}: {report}");
    }
}

/// The loader maps whole pages: the bytes after a loaded segment's end on its last page are in
/// the process too. A fatbin there, wholly past the segment's end (its section's header marked
/// unallocated), read "any driver will do"; it is read as the loader maps it.
#[test]
fn the_rest_of_a_segment_s_last_page_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The fatbin 600 bytes into a page of its own, wholly within it.
    let mut bytes = vec![0u8; 600];
    bytes.extend(kernel("sm90_ptx95.fatbin"));
    assert!(bytes.len() <= 4096);
    let src = format!("{}int main(void) {{ return 0; }}\n", c_bytes("k", ".kfat", 4096, &bytes));
    let p = build(d, "paged", &src, &[]);
    let mut b = std::fs::read(&p).unwrap();
    let h = section_header(&b, ".kfat");
    let at = u64::from_le_bytes(b[h + 24..h + 32].try_into().unwrap());
    b[h + 8..h + 16].copy_from_slice(&0u64.to_le_bytes());
    // The loaded segment holding it ends 1 byte into the section, in memory as in the file.
    let phoff = u64::from_le_bytes(b[32..40].try_into().unwrap()) as usize;
    let count = u16::from_le_bytes([b[56], b[57]]) as usize;
    let segment = (0..count)
        .map(|i| phoff + i * 56)
        .find(|&ph| {
            let kind = u32::from_le_bytes(b[ph..ph + 4].try_into().unwrap());
            let offset = u64::from_le_bytes(b[ph + 8..ph + 16].try_into().unwrap());
            let size = u64::from_le_bytes(b[ph + 32..ph + 40].try_into().unwrap());
            kind == 1 && (offset..offset + size).contains(&at)
        })
        .expect("a loaded segment holding .kfat");
    let offset = u64::from_le_bytes(b[segment + 8..segment + 16].try_into().unwrap());
    let size = (at + 1 - offset).to_le_bytes();
    b[segment + 32..segment + 40].copy_from_slice(&size);
    b[segment + 40..segment + 48].copy_from_slice(&size);
    let path = d.join("past-the-end");
    std::fs::write(&path, &b).unwrap();
    let f = floor_of(&path);
    let report = f.render(d, None);
    assert_eq!(f.version(), PTX95, "{report}");
    assert!(!report.contains("any driver will do"), "{report}");
    // Read once: the pages two segments share are not read twice.
    assert!(!report.contains("(and 1 more)"), "{report}");
}

/// A `.nv_fatbin` section whose fatbin does not start at its first byte (padding before it) is
/// searched as any other section is.
#[test]
fn a_fatbin_section_is_searched_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut bytes = vec![0u8; 16];
    bytes.extend(kernel("sm90_ptx95.fatbin"));
    let p = build(d, "padded", &c_array(".nv_fatbin", &bytes), &[]);
    let f = floor_of(&p);
    assert_eq!(f.version(), PTX95, "{}", f.render(d, None));
}

/// PTX after a string or comment that mentions `.version` first (`// see .version docs`): the
/// first `.version` is no module's, the second is, and it is read.
#[test]
fn ptx_after_a_false_start_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, ptx) in [
        ("comment", "// see .version docs\\n.version 9.5\\n.target sm_90\\n.address_size 64\\n"),
        ("joined", "use .version 1 or later.version 9.5\\n.target sm_90\\n.address_size 64\\n"),
        ("glued", ".version.version 9.5 .target sm_90 .address_size 64"),
    ] {
        let p = build(
            d,
            name,
            &format!("__attribute__((used)) static const char k[] = \"{ptx}\";\nint main(void) {{ return k[0]; }}\n"),
            &[],
        );
        let f = floor_of(&p);
        assert_eq!(f.version(), PTX95, "{name}: {}", f.render(d, None));
    }
}

/// A PTX file is read as one by what it holds, whatever its name (`kernel`, `kernel.txt`), and
/// with a byte-order mark or nvcc's header of comments before its `.version`.
#[test]
fn a_ptx_file_is_known_by_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ptx = kernel("sm90_ptx95.ptx");
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend(&ptx);
    let mut header = b"//\n// Generated by NVIDIA NVVM Compiler\n//\n// Compiler Build ID: CL-0\n\
                       // Cuda compilation tools, release 13.5, V13.5.1\n// Based on NVVM 7.0.1\n//\n\n"
        .to_vec();
    header.extend(&ptx);
    for (name, bytes) in [("kernel", &ptx), ("kernel.txt", &ptx), ("bom.ptx", &bom), ("nvcc_header", &header)] {
        let path = d.join(name);
        std::fs::write(&path, bytes).unwrap();
        let f = floor_of(&path);
        let report = f.render(d, None);
        assert_eq!(f.version(), PTX95, "{name}: {report}");
        assert!(!f.at_least(), "{name}: {report}");
        assert!(report.contains("read as a kernel"), "{name}: {report}");
    }
}

/// A text file that is neither a kernel nor a program is not read as Rust (a Rust file is one
/// named `.rs`): a wrapper script that `exec`s a program read "any driver will do", and a Python
/// script using ctypes an exact floor of the names in it, though what either does is decided by
/// what it runs. Each is refused with what it is and how to observe it; beside a program too.
/// The same text named `.rs` is still read as Rust.
#[test]
fn a_script_is_no_rust_source() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: [(&str, &str, &str); 6] = [
        ("run.sh", "#!/bin/sh\nexec ./app \"$@\"\n", "a script run by /bin/sh"),
        (
            "app",
            "#!/usr/bin/env -S python3 -u\nimport ctypes\nctypes.CDLL('libcuda.so.1').cuGetProcAddress_v2\n",
            "a script run by python3",
        ),
        ("app.py", "import ctypes\nctypes.CDLL(\"libcuda.so.1\").cuCtxCreate_v4\n", "a Python script"),
        ("libcuda.so", "/* GNU ld script */\nGROUP ( libcuda.so.1 )\n", "a linker script"),
        ("main.txt", "fn main() { cuda_driver_pfn::cu!(cuCtxCreate(x)); }\n", "read only by its .rs name"),
        ("kernel.cu", "__global__ void k() {}\nint main() { cuCtxCreate_v4(0, 0, 0, 0); }\n", "nvcc -o app"),
    ];
    let program = build(d, "prog", "int main(void) { return 0; }\n", &[]);
    for (name, text, what) in cases {
        let path = d.join(name);
        std::fs::write(&path, text).unwrap();
        for given in [vec![path.clone()], vec![program.clone(), path.clone()]] {
            let e = match floor(&registry(), &given) {
                Ok(f) => panic!("{name} read as {}", f.render(d, None)),
                Err(e) => format!("{e:#}"),
            };
            assert!(e.starts_with(&path.display().to_string()) && e.contains(what), "{name}: {e}");
            if what.starts_with("a script") || what.starts_with("a Python") {
                assert!(e.contains("min-driver --run -- "), "{name}: {e}");
            }
        }
    }
    let rust = d.join("main.rs");
    std::fs::write(&rust, "#!/usr/bin/env run-cargo-script\nfn main() { let _ = cuda_driver_pfn::entries::cuCtxCreate_v12050::VERSION; }\n")
        .unwrap();
    assert_eq!(floor_of(&rust).version(), 12050);
}

/// An archive inside an archive, and kernel files as an archive's members (`ar rcs lib.a
/// k.fatbin k.ptx`), are read; neither reads "any driver will do".
#[test]
fn archives_are_read_to_every_member() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("fat.c"), c_array(".kfat", &kernel("sm90_ptx95.fatbin"))).unwrap();
    run(d, "cc", &["-c", "-o", "fat.o", "fat.c"]);
    run(d, "ar", &["rcs", "inner.a", "fat.o"]);
    run(d, "ar", &["rcs", "outer.a", "inner.a"]);
    std::fs::write(d.join("x.c"), "int x;\n").unwrap();
    run(d, "cc", &["-c", "-o", "x.o", "x.c"]);
    std::fs::write(d.join("k.fatbin"), kernel("sm90_ptx95.fatbin")).unwrap();
    std::fs::write(d.join("k.ptx"), kernel("sm90_ptx95.ptx")).unwrap();
    run(d, "ar", &["rcs", "kernels.a", "x.o", "k.fatbin", "k.ptx"]);
    for name in ["outer.a", "kernels.a"] {
        let f = floor_of(&d.join(name));
        let report = f.render(d, None);
        assert_eq!(f.version(), PTX95, "{name}: {report}");
        assert!(!report.contains("any driver will do") && !report.contains("these sources"), "{name}: {report}");
    }
}

/// A static program that `dlopen`s libcuda with the C library's own loader linked in (no
/// import shows it) names the driver's functions at run time: "at least", with its strings
/// read (`cuCtxCreate_v4`: CUDA 12.5), stripped or not.
#[test]
fn a_static_program_that_opens_the_driver_is_at_least() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = "#include <dlfcn.h>\n\
               int main(void) { void *h = dlopen(\"libcuda.so.1\", RTLD_NOW);\n\
               return dlsym(h, \"cuCtxCreate_v4\") == 0; }\n";
    std::fs::write(d.join("st.c"), src).unwrap();
    let o = Command::new("cc").args(["-static", "-o", "st", "st.c"]).current_dir(d).output().unwrap();
    if !o.status.success() {
        return skip(&format!("no static C library here: {}", text(&o.stderr)));
    }
    run(d, "strip", &["-o", "st_stripped", "st"]);
    // The floor of cuCtxCreate_v4, from a program that imports it from a stand-in libcuda.
    std::fs::write(d.join("stub.c"), "int cuCtxCreate_v4(void) { return 0; }\n").unwrap();
    run(d, "cc", &["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", "libcuda.so", "stub.c"]);
    let imp =
        build(d, "imp", "int cuCtxCreate_v4(void);\nint main(void) { return cuCtxCreate_v4(); }\n", &["-L.", "-lcuda"]);
    let v4 = floor_of(&imp).version();
    assert!(v4 > 12000, "{v4}");
    for name in ["st", "st_stripped"] {
        let f = floor_of(&d.join(name));
        let report = f.render(d, None);
        assert!(f.at_least(), "{name}: {report}");
        assert!(f.version() >= v4, "{name}: {report}");
        assert!(f.unresolved.iter().any(|u| u.reading == Reading::Capability), "{name}: {report}");
    }
}

/// cuda-sys-gen's own machine code holds the fatbin magic number as constants (what it looks
/// for): none of them begins a fatbin, and none is listed as a kernel image it could not read.
#[test]
fn the_fatbin_magic_in_machine_code_is_no_kernel_image() {
    let f = floor_of(cuda_sys_gen_binary());
    let report = f.render(Path::new("."), None);
    assert!(f.unresolved.iter().all(|u| !(u.reading == Reading::Kernel && u.why.contains("a header of"))), "{report}");
}

/// COFF objects (`.obj`, what MSVC and nvcc on Windows make) and a `.lib` of them are read as
/// objects: a fatbin in one, `GetProcAddress` called (through `__imp_GetProcAddress`) in
/// another. Built by zig's clang for x86_64-windows-gnu, where the ziglang wheel is unpacked
/// (tests/tests/c_header.rs fetches it).
#[test]
fn coff_objects_and_their_libraries_are_read() {
    let zig = repo_root().join("target/ziglang/ziglang/zig");
    if !zig.is_file() {
        return skip("no zig under target/ziglang (tests/tests/c_header.rs unpacks it)");
    }
    let zig = zig.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("fat.c"), c_array(".text$k", &kernel("sm90_ptx95.fatbin"))).unwrap();
    std::fs::write(
        d.join("gpa.c"),
        "#include <windows.h>\n\
         int lookup(void) { HMODULE h = LoadLibraryA(\"nvcuda.dll\"); return GetProcAddress(h, \"cuCtxCreate_v4\") == 0; }\n",
    )
    .unwrap();
    for name in ["fat", "gpa"] {
        let (c, obj) = (format!("{name}.c"), format!("{name}.obj"));
        run(d, zig, &["cc", "-target", "x86_64-windows-gnu", "-c", "-o", &obj, &c]);
    }
    run(d, zig, &["ar", "rcs", "kernels.lib", "gpa.obj", "fat.obj"]);
    let f = floor_of(&d.join("fat.obj"));
    let report = f.render(d, None);
    assert_eq!(f.version(), PTX95, "{report}");
    assert!(f.programs.iter().any(|p| p.contains("object file (.obj)")), "{report}");
    let f = floor_of(&d.join("kernels.lib"));
    let report = f.render(d, None);
    assert_eq!(f.version(), PTX95, "{report}");
    assert!(f.at_least(), "{report}");
    assert!(f.unresolved.iter().any(|u| u.spelled == "imports GetProcAddress"), "{report}");
}

/// A library loaded into the process other than by `DT_NEEDED` (a filter's auxiliary filtee,
/// an audit library) is a library the program links: named as not read, the floor "at least".
#[test]
fn filtees_and_audit_libraries_are_libraries_linked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("aux.c"), "int f(void) { return 0; }\n").unwrap();
    run(
        d,
        "cc",
        &["-shared", "-fPIC", "-o", "libaux.so", "aux.c", "-Wl,--auxiliary=libfoo.so", "-Wl,--audit=libaud.so"],
    );
    let f = floor_of(&d.join("libaux.so"));
    let report = f.render(d, None);
    assert!(f.at_least(), "{report}");
    for lib in ["libfoo.so", "libaud.so"] {
        assert!(f.not_read.iter().any(|l| l == lib), "{lib}: {report}");
    }
}

/// A program that opens NVRTC by a name it builds at run time (cudarc: "lib" + "nvrtc" + ".so")
/// still names the functions it looks up in it: it compiles kernels at run time, and says so.
#[test]
fn a_run_time_compiler_opened_by_a_built_name_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = build(
        d,
        "rtc",
        "#include <dlfcn.h>\n#include <stdio.h>\n\
         int main(int c, char **v) { char name[64]; snprintf(name, sizeof name, \"%s%s%s\", \"lib\", v[0], \".so\");\n\
         void *h = dlopen(name, RTLD_NOW); return dlsym(h, \"nvrtcCompileProgram\") == 0; }\n",
        &["-ldl"],
    );
    let f = floor_of(&p);
    let report = f.render(d, None);
    assert!(
        f.unresolved.iter().any(|u| u.reading == Reading::Capability && u.spelled.contains("nvrtcCompileProgram")),
        "{report}"
    );
}

/// A PE program that imports a function by ordinal (`NONAME` in the DLL's .def: no name in the
/// program) may import a loader or a driver function: "at least", naming the ordinal. Built by
/// zig's clang against an import library zig's dlltool makes.
#[test]
fn an_import_by_ordinal_is_at_least() {
    let zig = repo_root().join("target/ziglang/ziglang/zig");
    if !zig.is_file() {
        return skip("no zig under target/ziglang (tests/tests/c_header.rs unpacks it)");
    }
    let zig = zig.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("nvcuda.def"), "LIBRARY nvcuda.dll\nEXPORTS\ncuInit\ncuHidden @7 NONAME\n").unwrap();
    run(d, zig, &["dlltool", "-d", "nvcuda.def", "-l", "libnvcuda.a", "-m", "i386:x86-64"]);
    std::fs::write(
        d.join("ord.c"),
        "int cuInit(unsigned); int cuHidden(void);\nint main(void) { cuInit(0); return cuHidden(); }\n",
    )
    .unwrap();
    run(d, zig, &["cc", "-target", "x86_64-windows-gnu", "-o", "ord.exe", "ord.c", "-L.", "-lnvcuda"]);
    let f = floor_of(&d.join("ord.exe"));
    let report = f.render(d, None);
    assert!(f.at_least(), "{report}");
    assert!(f.unresolved.iter().any(|u| u.spelled == "imports nvcuda.dll ordinal 7"), "{report}");
}

/// A library that defines the runtime's `cudaMalloc` and `cudaGetDriverEntryPointByVersion` (as
/// one holding a static runtime with its symbols exported does) but is not the runtime (its
/// soname is its own) and `dlsym`s the driver itself: its lookups are its own, "at least",
/// never "any driver will do".
#[test]
fn a_library_exporting_the_runtime_s_functions_is_not_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("mine.c"),
        "#include <dlfcn.h>\nint cudaMalloc(void **p, unsigned long n) { return 0; }\n\
         int cudaGetDriverEntryPointByVersion(const char *s, void **f, unsigned v, unsigned long long fl, int *st) {\n\
         void *h = dlopen(\"libcuda.so.1\", RTLD_NOW); *f = dlsym(h, \"cuCtxCreate_v4\"); return 0; }\n",
    )
    .unwrap();
    run(d, "cc", &["-shared", "-fPIC", "-Wl,-soname,libmine.so", "-o", "libmine.so", "mine.c", "-ldl"]);
    let f = floor_of(&d.join("libmine.so"));
    let report = f.render(d, None);
    assert!(f.at_least(), "{report}");
    assert!(f.unresolved.iter().any(|u| u.spelled == "imports dlsym"), "{report}");
    assert!(!report.contains("any driver will do"), "{report}");
}

/// A section header or a program header claiming a petabyte (far past the file's end) is
/// said ("at least": its bytes cannot be read), never an abort for memory: the file's other
/// bytes are still read, the fatbin among them.
#[test]
fn a_header_claiming_more_than_the_file_is_said_never_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = build(d, "fat", &c_array(".kfat", &kernel("sm90_ptx95.fatbin")), &[]);
    let original = std::fs::read(&p).unwrap();
    let mut section = original.clone();
    let h = section_header(&section, ".kfat");
    section[h + 32..h + 40].copy_from_slice(&(1u64 << 50).to_le_bytes());
    let mut segment = original.clone();
    let phoff = u64::from_le_bytes(segment[32..40].try_into().unwrap()) as usize;
    let (size, n) =
        (u16::from_le_bytes([segment[54], segment[55]]) as usize, u16::from_le_bytes([segment[56], segment[57]]));
    let load = (0..n as usize).map(|i| phoff + i * size).find(|&at| segment[at..at + 4] == 1u32.to_le_bytes()).unwrap();
    segment[load + 32..load + 40].copy_from_slice(&(1u64 << 50).to_le_bytes());
    for (name, bytes) in [("section", section), ("segment", segment)] {
        let path = d.join(name);
        std::fs::write(&path, bytes).unwrap();
        let f = floor_of(&path);
        let report = f.render(d, None);
        assert!(f.at_least(), "{name}: {report}");
        assert_eq!(f.version(), PTX95, "{name}: {report}");
    }
}

/// A program linking the CUDA runtime by a name that tells no version (`libcudart.so`, a
/// runtime built without a soname; `libcudart.so.x`) needs that runtime's driver, whatever it
/// is: the library is one not read ("at least", `not_read`), never "any driver will do". By a
/// name that tells the major (`libcudart.so.12.4.127`), it is read as that runtime.
#[test]
fn a_runtime_whose_name_tells_no_version_is_a_library_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("cudart.c"), "int cudaFree(void *p) { return 0; }\n").unwrap();
    let main = "int cudaFree(void *);\nint main(void) { return cudaFree(0); }\n";
    for soname in [None, Some("libcudart.so.x"), Some("libcudart.so.0"), Some("libcudart.so.12.4.127")] {
        let mut args = vec!["-shared", "-fPIC", "-o", "libcudart.so", "cudart.c"];
        let flag = soname.map(|s| format!("-Wl,-soname,{s}"));
        args.extend(flag.as_deref());
        run(d, "cc", &args);
        let p = build(d, "rt", main, &["-L.", "-lcudart"]);
        let f = floor_of(&p);
        let report = f.render(d, None);
        match soname {
            Some("libcudart.so.12.4.127") => {
                assert!(!f.at_least() && f.version() == 12000, "{report}");
                assert_eq!(f.runtimes, [12], "{report}");
            }
            _ => {
                let name = soname.unwrap_or("libcudart.so");
                assert!(f.at_least(), "{name}: {report}");
                assert!(f.not_read.iter().any(|l| l == name), "{name}: {report}");
                // `--driver` is "not proven" (exit 2), and says why: the library not read.
                let o = Command::new(cuda_sys_gen_binary())
                    .args(["min-driver", p.to_str().unwrap(), "--driver", "450.51.05"])
                    .output()
                    .unwrap();
                let out = text(&o.stdout);
                assert_eq!(o.status.code(), Some(2), "{name}: {out}");
                assert!(out.contains(&format!("not read: {name}")), "{name}: {out}");
                assert!(!out.contains("removed an architecture"), "{name}: {out}");
            }
        }
    }
}

/// With the driver loaded into its process (libcuda linked, or a driver function imported), a
/// program that walks the loaded libraries (`dl_iterate_phdr`, `dladdr`, `dlinfo`) can find any
/// driver function in the driver's own table of symbols, with no lookup by name: "at least",
/// naming it. Without the walk, the same program is exact.
#[test]
fn walking_the_loaded_libraries_names_functions() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("stub.c"), "int cuInit(unsigned f) { return 0; }\n").unwrap();
    run(d, "cc", &["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", "libcuda.so", "stub.c"]);
    let head = "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <link.h>\nint cuInit(unsigned);\n";
    let exact = build(d, "exact", &format!("{head}int main(void) {{ return cuInit(0); }}\n"), &["-L.", "-lcuda"]);
    let f = floor_of(&exact);
    assert!(!f.at_least(), "{}", f.render(d, None));
    for (name, body, shows) in [
        (
            "phdr",
            "static int cb(struct dl_phdr_info *i, size_t s, void *p) { return i->dlpi_addr != 0; }\n\
             int main(void) { cuInit(0); return dl_iterate_phdr(cb, 0); }\n",
            "dl_iterate_phdr",
        ),
        ("addr", "int main(void) { Dl_info i; cuInit(0); return dladdr((void *)cuInit, &i); }\n", "dladdr"),
        (
            "info",
            "int main(void) { struct link_map *m; cuInit(0); return dlinfo(RTLD_DEFAULT, RTLD_DI_LINKMAP, &m); }\n",
            "dlinfo",
        ),
    ] {
        assert_capability(d, name, &format!("{head}{body}"), &["-L.", "-lcuda", "-ldl"], shows);
    }
}

/// A fatbin cut in two by a section's end (its start in one section, the rest in the next: the
/// loader maps them together, and a program can load it from the first) is read in neither
/// section: said, "at least", wherever the cut falls (in its magic, in its header, in its
/// entries), never dropped. The fatbin here is sm100a_ptx91.fatbin's container less its PTX: a
/// zstd cubin by CUDA 13.0's ptxas alone (no PTX text to find in the rest), which read whole
/// needs 13.0; cut, it read "any driver will do".
#[test]
fn a_fatbin_cut_by_a_section_s_end_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let all = kernel("sm100a_ptx91.fatbin");
    let u32_at = |o: usize| u32::from_le_bytes(all[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(all[o..o + 8].try_into().unwrap()) as usize;
    let header = usize::from(u16::from_le_bytes([all[6], all[7]]));
    // The first entry (the cubin): its header's size at +4, its payload's at +8.
    let entry = &all[header..header + u32_at(header + 4) + u64_at(header + 8)];
    let mut fatbin = all[..header].to_vec();
    fatbin[8..16].copy_from_slice(&(entry.len() as u64).to_le_bytes());
    fatbin.extend_from_slice(entry);
    let whole = floor_of(&build(d, "whole", &c_array(".kfat", &fatbin), &[]));
    assert!(!whole.at_least() && whole.version() == 13000, "{}", whole.render(d, None));
    let array = |name: &str, section: &str, bytes: &[u8]| c_bytes(name, section, 1, bytes);
    for cut in [1, 2, 3, 4, 8, 15, 16, 64] {
        let src = format!(
            "{}{}int main(void) {{ return 0; }}\n",
            array("ka", ".ka", &fatbin[..cut]),
            array("kb", ".kb", &fatbin[cut..])
        );
        let p = build(d, "cut", &src, &[]);
        let f = floor_of(&p);
        let report = f.render(d, None);
        assert!(f.at_least(), "cut at {cut}: {report}");
        assert!(f.unresolved.iter().any(|u| u.reading == Reading::Kernel), "cut at {cut}: {report}");
    }
}

/// PTX that a program loads from one section's start, its text going on in the next (the loader
/// maps them together): its `.version` or `.target` cut by the section's end was read in
/// neither section, and a program that also embeds older PTX read as that PTX's floor, exact
/// (12.4 where the truth is 13.5). The bytes around each section's end are read again as one.
#[test]
fn ptx_cut_by_a_section_s_end_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("stub.c"), "int cuModuleLoadData(void **m, const void *p) { return 0; }\n").unwrap();
    run(d, "cc", &["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", "libcuda.so", "stub.c"]);
    let new = kernel("sm90_ptx95.ptx");
    let mut old = kernel("sm80_ptx84.ptx");
    old.push(0);
    let array = |name: &str, section: &str, bytes: &[u8]| c_bytes(name, section, 1, bytes);
    let version = new.windows(8).position(|w| w == b".version").unwrap();
    let target = new.windows(7).position(|w| w == b".target").unwrap();
    for cut in [version + 4, version + 10, target + 4] {
        let mut rest = new[cut..].to_vec();
        rest.push(0);
        let src = format!(
            "{}{}{}int cuModuleLoadData(void **, const void *);\n\
             int main(void) {{ void *m; cuModuleLoadData(&m, old); return cuModuleLoadData(&m, ka); }}\n",
            array("old", ".rodata.old", &old),
            array("ka", ".ka", &new[..cut]),
            array("kb", ".kb", &rest)
        );
        let p = build(d, "cut", &src, &["-L.", "-lcuda"]);
        let f = floor_of(&p);
        let report = f.render(d, None);
        assert!(f.version() >= PTX95, "cut at {cut}: {report}");
    }
}

/// A program that embeds one kernel (old PTX) and loads another that it decodes at run time
/// (zlib's `uncompress` linked in statically, or the C library's `iconv`, beside
/// `cuModuleLoadData`) read as the embedded kernel's floor, exact: what it loads may be what it
/// decoded. "At least", naming the decoder; without it, exact.
#[test]
fn a_loader_from_memory_beside_a_decoder_is_at_least() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("stub.c"), "int cuModuleLoadData(void **m, const void *p) { return 0; }\n").unwrap();
    run(d, "cc", &["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", "libcuda.so", "stub.c"]);
    let mut old = kernel("sm80_ptx84.ptx");
    old.push(0);
    let list: Vec<String> = old.iter().map(u8::to_string).collect();
    let head = format!(
        "#include <iconv.h>\nconst unsigned char old[{}] = {{{}}};\nint cuModuleLoadData(void **, const void *);\n\
         static char image[1 << 16];\n",
        old.len(),
        list.join(",")
    );
    let plain = build(
        d,
        "plain",
        &format!("{head}int main(void) {{ void *m; return cuModuleLoadData(&m, old); }}\n"),
        &["-L.", "-lcuda"],
    );
    let f = floor_of(&plain);
    assert!(!f.at_least(), "{}", f.render(d, None));
    for (name, body, shows) in [
        (
            // A static zlib: the program defines `uncompress` (its symbol table shows it).
            "zlib",
            "__attribute__((noinline)) int uncompress(char *d, unsigned long *n, const char *s, unsigned long l) \
             { for (unsigned long i = 0; i < l; i++) d[i] = s[i] ^ 0x5a; *n = l; return 0; }\n\
             int main(int c, char **v) { void *m; unsigned long n = sizeof image; cuModuleLoadData(&m, old);\n\
             uncompress(image, &n, v[0], 8); return cuModuleLoadData(&m, image); }\n",
            "uncompress",
        ),
        (
            "iconv",
            "int main(int c, char **v) { void *m; char *in = v[0], *out = image; size_t a = 8, b = sizeof image;\n\
             cuModuleLoadData(&m, old); iconv_t cd = iconv_open(\"UTF-8\", \"UTF-16\");\n\
             iconv(cd, &in, &a, &out, &b); return cuModuleLoadData(&m, image); }\n",
            "iconv",
        ),
    ] {
        assert_capability(d, name, &format!("{head}{body}"), &["-L.", "-lcuda"], shows);
    }
}

/// ptxas reads `.version`'s major and minor as decimal integers (`09.00` is 9.0, `8.05` is 8.5:
/// ptxas 13.0 assembles both, and calls `9.01` an unsupported 9.1). Such PTX in a program was
/// no PTX module at all, and a program that also embeds PTX 8.4 read 12.4, exact (truth: 13.0);
/// a PTX file of them read "at least 11.8".
#[test]
fn a_ptx_version_with_leading_zeros_is_read_as_ptxas_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("stub.c"), "int cuModuleLoadData(void **m, const void *p) { return 0; }\n").unwrap();
    run(d, "cc", &["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", "libcuda.so", "stub.c"]);
    let module = |v: &str| format!(".version {v}\n.target sm_90\n.address_size 64\n.visible .entry k() {{ ret; }}\n");
    let c = |s: &str| format!("{s:?}").replace("\\'", "'");
    let mut old = kernel("sm80_ptx84.ptx");
    old.push(0);
    let list: Vec<String> = old.iter().map(u8::to_string).collect();
    for (v, want) in [("09.00", 13000), ("009.000", 13000), ("8.05", 12050), ("9.01", 13010)] {
        std::fs::write(d.join("k.ptx"), module(v)).unwrap();
        let f = floor_of(&d.join("k.ptx"));
        assert!(!f.at_least() && f.version() == want, "{v}: {}", f.render(d, None));
        let src = format!(
            "const unsigned char old[{}] = {{{}}};\nconst char new_[] = {};\n\
             int cuModuleLoadData(void **, const void *);\n\
             int main(void) {{ void *m; cuModuleLoadData(&m, old); return cuModuleLoadData(&m, new_); }}\n",
            old.len(),
            list.join(","),
            c(&module(v))
        );
        let p = build(d, "lead", &src, &["-L.", "-lcuda"]);
        let f = floor_of(&p);
        assert!(f.version() >= want, "{v}: {}", f.render(d, None));
    }
}

/// A library that defines the driver's entry points (so it reads as a driver library, with no
/// floor of its own) and forwards them to the real driver (`dlsym(RTLD_NEXT, ...)`: an
/// interposer) while embedding PTX 9.5 read "a CUDA driver library", and `--driver 450.51.05`
/// said "runs" (exit 0). NVIDIA's drivers embed no PTX: a driver library's PTX is listed, "at
/// least", and no driver below it runs.
#[test]
fn an_interposer_s_ptx_is_not_hidden_by_its_driver_functions() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let registry: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(registry()).unwrap()).unwrap();
    let mut names: Vec<&str> = registry["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["exported"].as_str())
        .filter(|n| n.starts_with("cu") && !["cuInit", "cuDriverGetVersion"].contains(n))
        .collect();
    names.sort_unstable();
    names.dedup();
    names.truncate(30);
    names.extend(["cuInit", "cuDriverGetVersion"]);
    let mut ptx = kernel("sm90_ptx95.ptx");
    ptx.push(0);
    let list: Vec<String> = ptx.iter().map(u8::to_string).collect();
    let mut src = format!(
        "#define _GNU_SOURCE\n#include <dlfcn.h>\nconst unsigned char k[{}] = {{{}}};\n",
        ptx.len(),
        list.join(",")
    );
    for n in &names {
        src.push_str(&format!(
            "int {n}(void) {{ int (*f)(void) = (int (*)(void))dlsym(RTLD_NEXT, \"{n}\"); return f(); }}\n"
        ));
    }
    std::fs::write(d.join("shim.c"), src).unwrap();
    run(d, "cc", &["-shared", "-fPIC", "-o", "libshim.so", "shim.c", "-ldl"]);
    let p = d.join("libshim.so");
    let f = floor_of(&p);
    let report = f.render(d, None);
    assert!(report.contains("a CUDA driver library"), "{report}");
    assert!(f.at_least() && f.version() >= PTX95, "{report}");
    let o = Command::new(cuda_sys_gen_binary())
        .args(["min-driver", p.to_str().unwrap(), "--driver", "450.51.05"])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stdout));
}
