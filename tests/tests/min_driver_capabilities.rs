//! `min-driver` on programs that reach the driver or load code in ways their files do not show,
//! and on kernels in the places and forms a reader can miss. Each program is built here by `cc`
//! against stand-in libraries that only define the names (nothing runs); each case is one where
//! an exact floor was too low: with the capability the floor is "at least" and names it,
//! without it exact.

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

fn cli(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(cuda_sys_gen_binary()).args(args).current_dir(repo_root()).output().unwrap();
    (o.status.code(), format!("{}{}", text(&o.stdout), text(&o.stderr)))
}

fn cc(d: &Path, args: &[&str]) {
    let o = Command::new("cc").args(args).current_dir(d).output().expect("cc");
    assert!(o.status.success(), "cc {args:?}: {}", text(&o.stderr));
}

/// `name.c` of `src`, built with `args` after it.
fn build(d: &Path, name: &str, src: &str, args: &[&str]) -> PathBuf {
    std::fs::write(d.join(format!("{name}.c")), src).unwrap();
    let mut all = vec!["-o", name, &*Box::leak(format!("{name}.c").into_boxed_str())];
    all.extend_from_slice(args);
    cc(d, &all);
    d.join(name)
}

/// A stand-in libcuda.so defining `names` (each `int name() { return 0; }`).
fn libcuda(d: &Path, names: &[&str]) {
    let src: String = names.iter().map(|n| format!("int {n}(void) {{ return 0; }}\n")).collect();
    std::fs::write(d.join("stub.c"), src).unwrap();
    cc(d, &["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", "libcuda.so", "stub.c"]);
}

/// The floor of CUDA 12.5's `cuCtxCreate_v4`, from the registry.
fn ctx_create_v4() -> u32 {
    let f = {
        let d = tempfile::tempdir().unwrap();
        libcuda(d.path(), &["cuCtxCreate_v4"]);
        let p = build(
            d.path(),
            "imp",
            "int cuCtxCreate_v4(void);\nint main(void) { return cuCtxCreate_v4(); }\n",
            &["-L.", "-lcuda"],
        );
        floor_of(&p)
    };
    f.version()
}

/// A program that `dlopen`s libcuda and `dlsym`s `cuGetProcAddress` and `cuCtxCreate_v4`, and
/// also holds the CUDA runtime's error name and a `libcudart_static_` substring: it reads as
/// what its strings name, "at least", never as "holds the CUDA runtime's code, exact".
#[test]
fn a_runtime_s_strings_do_not_hide_dlsym() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = build(
        d,
        "dl",
        "#include <dlfcn.h>\n#include <stdio.h>\n\
         int main(int argc, char **argv) { void *h = dlopen(\"libcuda.so.1\", RTLD_NOW);\n\
         if (argc > 3) puts(\"cudaErrorCudartUnloading libcudart_static_0123\");\n\
         void *a = dlsym(h, \"cuGetProcAddress\"); void *b = dlsym(h, \"cuCtxCreate_v4\");\n\
         return a == b; }\n",
        &["-ldl"],
    );
    let f = floor_of(&p);
    let report = f.render(d, None);
    assert!(f.at_least(), "{report}");
    assert!(!report.contains("holds the CUDA runtime"), "{report}");
    assert!(f.version() >= ctx_create_v4(), "{report}");
    assert!(f.unresolved.iter().any(|u| u.spelled == "imports dlsym"), "{report}");
}

/// `cuModuleLoad` of a file named at run time, NVRTC linked, a library it loads with dlopen, a
/// driver function the registry does not know: each "at least" and named; the same program
/// without it, exact.
#[test]
fn loading_code_and_unknown_names_make_it_at_least() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    libcuda(d, &["cuInit", "cuModuleLoad", "cuFutureFunction_v9"]);
    std::fs::write(d.join("nvrtc.c"), "int nvrtcVersion(int *a, int *b) { return 0; }\n").unwrap();
    cc(d, &["-shared", "-fPIC", "-Wl,-soname,libnvrtc.so.13", "-o", "libnvrtc.so.13", "nvrtc.c"]);
    let exact = build(d, "exact", "int cuInit(unsigned);\nint main(void) { return cuInit(0); }\n", &["-L.", "-lcuda"]);
    let f = floor_of(&exact);
    assert!(!f.at_least(), "{}", f.render(d, None));
    for (name, src, extra, shows) in [
        (
            "load",
            "int cuInit(unsigned); int cuModuleLoad(void *, const char *);\n\
             int main(int c, char **v) { cuInit(0); return cuModuleLoad(0, v[0]); }\n",
            &[][..],
            "imports cuModuleLoad",
        ),
        (
            "nvrtc",
            "int cuInit(unsigned); int nvrtcVersion(int *, int *);\n\
             int main(void) { int a, b; cuInit(0); return nvrtcVersion(&a, &b); }\n",
            &["./libnvrtc.so.13"][..],
            "links libnvrtc.so.13",
        ),
        (
            "unknown",
            "int cuInit(unsigned); int cuFutureFunction_v9(void);\n\
             int main(void) { cuInit(0); return cuFutureFunction_v9(); }\n",
            &[][..],
            "imports cuFutureFunction_v9",
        ),
        (
            "plugin",
            "#include <dlfcn.h>\nint cuInit(unsigned);\n\
             int main(int c, char **v) { cuInit(0); return dlopen(v[0], RTLD_NOW) == 0; }\n",
            &["-ldl"][..],
            "imports dlopen",
        ),
    ] {
        let mut args = vec!["-L.", "-lcuda"];
        args.extend_from_slice(extra);
        let p = build(d, name, src, &args);
        let f = floor_of(&p);
        let report = f.render(d, None);
        assert!(f.at_least(), "{name}: {report}");
        assert!(
            f.unresolved.iter().any(|u| u.spelled == shows && u.reading == Reading::Capability),
            "{name}: {report}"
        );
    }
}

/// A C program asking `cuGetProcAddress` for `cuCtxCreate` reads its strings at their highest
/// meaning (12.5): an upper estimate, so `--driver 535.104.05` is "not proven" (exit 2), never
/// "does not run" (exit 3).
#[test]
fn an_upper_estimate_is_never_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    libcuda(d, &["cuGetProcAddress_v2"]);
    let p = build(
        d,
        "gpa",
        "int cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);\n\
         int main(void) { void *p; return cuGetProcAddress_v2(\"cuCtxCreate\", &p, 11040, 0, 0); }\n",
        &["-L.", "-lcuda"],
    );
    let (code, out) = cli(&["min-driver", p.to_str().unwrap(), "--driver", "535.104.05"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("not proven") && out.contains("upper estimate"), "{out}");
    assert!(!out.contains("these sources"), "{out}");
}

/// CUDA 11.x runtimes (`libcudart.so.11.0`, every 11.x's soname) need NVIDIA's minimum for minor
/// version compatibility, 450.80.02, above 11.0's own 450.51.05; the soname says nothing of the
/// toolkit's own release.
#[test]
fn an_11_x_runtime_needs_the_minor_version_compatibility_driver() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rt.c"), "int cudaFree(void *p) { return 0; }\n").unwrap();
    cc(d, &["-shared", "-fPIC", "-Wl,-soname,libcudart.so.11.0", "-o", "libcudart.so.11.0", "rt.c"]);
    let p =
        build(d, "rt11", "int cudaFree(void *);\nint main(void) { return cudaFree(0); }\n", &["./libcudart.so.11.0"]);
    let p = p.to_str().unwrap();
    let (code, out) = cli(&["min-driver", p]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("Linux x86-64 driver: 450.80.02"), "{out}");
    assert!(out.contains("Windows x86-64 driver: 452.39"), "{out}");
    assert!(!out.contains("510.39.01") && !out.contains("451.48"), "{out}");
    let (code, out) = cli(&["min-driver", p, "--driver", "450.51.05"]);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("450.80.02"), "{out}");
    let (code, out) = cli(&["min-driver", p, "--driver", "450.80.02"]);
    assert_eq!(code, Some(0), "{out}");
}

/// The bytes of `tests/kernels/NAME` as a C array initialiser.
fn c_bytes(name: &str) -> (usize, String) {
    let k = std::fs::read(repo_root().join("tests/kernels").join(name)).unwrap();
    (k.len(), k.iter().map(u8::to_string).collect::<Vec<_>>().join(","))
}

/// A fatbin in an executable section (MSVC's `/MERGE:.rdata=.text` makes this layout) is read:
/// sm_90 cubin and PTX ISA 9.5, CUDA 13.5.
#[test]
fn a_fatbin_in_an_executable_section_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (n, bytes) = c_bytes("sm90_ptx95.fatbin");
    let p = build(
        d,
        "textfat",
        &format!(
            "__attribute__((used, aligned(8), section(\".text.kernels\"))) const unsigned char k[{n}] = {{{bytes}}};\n\
             int main(void) {{ return 0; }}\n"
        ),
        &[],
    );
    let f = floor_of(&p);
    let report = f.render(d, None);
    assert_eq!(f.version(), 13050, "{report}");
}

/// PTX as ptxas accepts it: on one line, with lone CR line ends, and run together with the
/// string before it (no NUL between, as rustc places `&str`s). Each needs CUDA 13.5 (ISA 9.5).
#[test]
fn every_ptx_form_ptxas_accepts_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, ptx) in [
        ("oneline", ".version 9.5 .target sm_90 .address_size 64 .visible .entry k() { ret; }"),
        ("cr", "//\\r// Generated\\r.version 9.5\\r.target sm_90\\r.address_size 64\\r.visible .entry k() { ret; }\\r"),
        ("joined", "NulError.version 9.5\\n.target sm_90\\n.address_size 64\\n.visible .entry k() { ret; }\\n"),
    ] {
        let p = build(
            d,
            name,
            &format!("__attribute__((used)) static const char k[] = \"{ptx}\";\nint main(void) {{ return k[0]; }}\n"),
            &[],
        );
        let f = floor_of(&p);
        let report = f.render(d, None);
        assert_eq!(f.version(), 13050, "{name}: {report}");
    }
}

/// A kernel file passed alone is read as one: PTX, a cubin, a fatbin.
#[test]
fn a_kernel_file_alone_is_read_as_one() {
    let k = repo_root().join("tests/kernels");
    for (name, at_least_version) in
        [("sm90_ptx95.ptx", 13050), ("sm90_ptx95.fatbin", 13050), ("add_sm90_cuda13.5.cubin", 13000)]
    {
        let f = floor_of(&k.join(name));
        let report = f.render(&k, None);
        assert!(f.version() >= at_least_version, "{name}: {report}");
        assert!(!report.contains("any driver will do"), "{name}: {report}");
        assert!(
            f.kernels.iter().all(|k| k.reading == Reading::Kernel || k.reading == Reading::Jit),
            "{name}: {report}"
        );
    }
}

/// A fatbin of an sm_90 cubin (ptxas 13.5) and PTX ISA 9.5: on an sm_90 GPU the cubin loads
/// (CUDA 13.0, a 13.x cubin), on any other the driver JIT-compiles the PTX (CUDA 13.5). Without
/// `--arch` the headline says both, and a driver between them is "not proven", not "does not
/// run".
#[test]
fn the_headline_says_the_floor_with_cubins_and_for_jit() {
    let fatbin = repo_root().join("tests/kernels/sm90_ptx95.fatbin");
    let f = floor_of(&fatbin);
    let report = f.render(Path::new("."), None);
    assert_eq!(f.version(), 13050, "{report}");
    assert_eq!(f.version_with_cubins(), Some(13000), "{report}");
    assert_eq!(f.cubin_gpus, ["sm_90"], "{report}");
    assert!(report.contains("on a GPU every fatbin holds a cubin for (sm_90): CUDA 13.0"), "{report}");
    let fatbin = fatbin.to_str().unwrap();
    let (code, out) = cli(&["min-driver", fatbin, "--driver", "580.65.06"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("runs on a GPU the files hold cubins for"), "{out}");
    let (code, out) = cli(&["min-driver", fatbin, "--driver", "580.65.06", "--arch", "sm_90"]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = cli(&["min-driver", fatbin, "--driver", "575.51.03"]);
    assert_eq!(code, Some(3), "{out}");
}

/// A 4 GiB sparse file (nvcc's program, its section header table moved 4 GiB on): only the
/// headers and the sections read are held, so the same floor comes in a fraction of a second and
/// in a few MB, never the file's size.
#[test]
fn a_sparse_file_is_not_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let original = repo_root().join("tests/kernels/nvcc/k_shared");
    let mut b = std::fs::read(&original).unwrap();
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let shoff = u64::from_le_bytes(b[40..48].try_into().unwrap()) as usize;
    let table = b[shoff..shoff + u16_at(&b, 58) * u16_at(&b, 60)].to_vec();
    let far: u64 = 4 << 30;
    b[40..48].copy_from_slice(&far.to_le_bytes());
    let sparse = dir.path().join("sparse.so");
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::File::create(&sparse).unwrap();
        f.write_all(&b).unwrap();
        f.seek(SeekFrom::Start(far)).unwrap();
        f.write_all(&table).unwrap();
    }
    let (want, got) = (floor_of(&original), floor_of(&sparse));
    assert_eq!(got.version(), want.version(), "{}", got.render(dir.path(), None));
    assert_eq!(got.kernels.len(), want.kernels.len(), "{}", got.render(dir.path(), None));
    // Its peak memory, where GNU time is there to say it.
    let o = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(cuda_sys_gen_binary())
        .arg("min-driver")
        .arg(&sparse)
        .current_dir(repo_root())
        .output();
    if let Some(o) = o.ok().filter(|o| o.status.success()) {
        let err = text(&o.stderr);
        let kib: u64 = err.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or(u64::MAX);
        assert!(kib < 200 << 10, "peak {kib} KiB over a 4 GiB sparse file: {err}");
    }
}

/// An object file (`.o`) and an archive (`.a`) are named for what they are and read: the
/// driver functions an object calls (its undefined symbols) count as imports, and its
/// `cuModuleLoad` makes the floor "at least", in the archive too.
#[test]
fn objects_and_archives_are_read_as_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("part.c"),
        "int cuCtxCreate_v4(void *, void *, unsigned, int); int cuModuleLoad(void *, const char *);\n\
         int part(const char *f) { cuCtxCreate_v4(0, 0, 0, 0); return cuModuleLoad(0, f); }\n",
    )
    .unwrap();
    cc(d, &["-c", "-o", "part.o", "part.c"]);
    let o = Command::new("ar").args(["rcs", "libpart.a", "part.o"]).current_dir(d).output().unwrap();
    assert!(o.status.success(), "ar: {}", text(&o.stderr));
    let want = ctx_create_v4();
    for (file, kind) in [("part.o", "object file (.o)"), ("libpart.a", "a member of an archive")] {
        let f = floor_of(&d.join(file));
        let report = f.render(d, None);
        assert!(f.programs.iter().any(|p| p.contains(kind)), "{file}: {report}");
        assert_eq!(f.version(), want, "{file}: {report}");
        assert!(f.unresolved.iter().any(|u| u.spelled == "imports cuModuleLoad"), "{file}: {report}");
    }
}

/// An sm_100a cubin (ptxas 13.0) beside PTX for compute_100 of ISA 9.1, as fatbinary 13.0 wrote
/// them (`tests/kernels/README.md`). A 13.x cubin's `e_flags` do not carry the `a`: the fatbin
/// entry's header does (flag 0x100000). On sm_103 the `a` cubin does not load, so the driver
/// JIT-compiles the PTX: CUDA 13.1. On sm_100 the cubin loads: CUDA 13.0.
#[test]
fn the_fatbin_entry_header_decides_the_architecture() {
    use cuda_sys_gen::min_driver::floor_on;
    let fatbin = repo_root().join("tests/kernels/sm100a_ptx91.fatbin");
    let on = |gpu| floor_on(&registry(), std::slice::from_ref(&fatbin), Some(gpu)).unwrap();
    let f = on(103);
    let report = f.render(Path::new("."), None);
    assert_eq!(f.version(), 13010, "{report}");
    assert!(f.unused.iter().any(|u| u.contains("cubin for sm_100a")), "{report}");
    let f = on(100);
    let report = f.render(Path::new("."), None);
    assert_eq!(f.version(), 13000, "{report}");
    assert!(f.kernels.iter().any(|k| k.needs == "sm_100a"), "{report}");
}

/// A section that is a fatbin then a 4 GiB hole: the hole is neither read nor searched, so the
/// floor is the fatbin's, and the peak memory is a few MB, not the section's size.
#[test]
fn a_hole_inside_a_section_is_neither_read_nor_searched() {
    use std::io::{Seek, SeekFrom, Write};
    let dir = tempfile::tempdir().unwrap();
    let fatbin = std::fs::read(repo_root().join("tests/kernels/sm90_ptx95_compressed.fatbin")).unwrap();
    let hole: u64 = 4 << 30;
    let (data_at, size) = (0x1000u64, fatbin.len() as u64 + hole);
    let names = b"\0.nv_fatbin\0.shstrtab\0";
    let names_at = data_at + size;
    let shoff = (names_at + names.len() as u64 + 7) & !7;
    let mut elf = vec![0u8; 64];
    elf[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
    elf[16..18].copy_from_slice(&3u16.to_le_bytes());
    elf[18..20].copy_from_slice(&62u16.to_le_bytes());
    elf[20..24].copy_from_slice(&1u32.to_le_bytes());
    elf[40..48].copy_from_slice(&shoff.to_le_bytes());
    elf[52..54].copy_from_slice(&64u16.to_le_bytes());
    elf[58..64].copy_from_slice(&[64, 0, 3, 0, 2, 0]);
    let section = |name: u32, kind: u32, flags: u64, offset: u64, size: u64| {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(&name.to_le_bytes());
        h[4..8].copy_from_slice(&kind.to_le_bytes());
        h[8..16].copy_from_slice(&flags.to_le_bytes());
        h[16..24].copy_from_slice(&offset.to_le_bytes());
        h[24..32].copy_from_slice(&offset.to_le_bytes());
        h[32..40].copy_from_slice(&size.to_le_bytes());
        h
    };
    let path = dir.path().join("holey.so");
    {
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&elf).unwrap();
        f.seek(SeekFrom::Start(data_at)).unwrap();
        f.write_all(&fatbin).unwrap();
        f.seek(SeekFrom::Start(names_at)).unwrap();
        f.write_all(names).unwrap();
        f.seek(SeekFrom::Start(shoff)).unwrap();
        f.write_all(&[0u8; 64]).unwrap();
        f.write_all(&section(1, 1, 2, data_at, size)).unwrap();
        f.write_all(&section(12, 3, 0, names_at, names.len() as u64)).unwrap();
    }
    let f = floor_of(&path);
    let report = f.render(dir.path(), None);
    assert_eq!(f.version(), 13050, "{report}");
    assert_eq!(f.version_with_cubins(), Some(13000), "{report}");
    let o = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(cuda_sys_gen_binary())
        .arg("min-driver")
        .arg(&path)
        .current_dir(repo_root())
        .output();
    if let Some(o) = o.ok().filter(|o| o.status.success()) {
        let err = text(&o.stderr);
        let kib: u64 = err.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or(u64::MAX);
        assert!(kib < 200 << 10, "peak {kib} KiB over a section of a 4 GiB hole: {err}");
    }
}

/// A driver library defines the driver's entry points: it is named for what it is, never given
/// a floor from its export tables. NVIDIA's libcuda (each Debian build the tests fetch) and the
/// project's tracer, whose `cuGetProcAddress` is an indirect function (STT_GNU_IFUNC), which
/// read "at least CUDA 13.5" from its tables.
#[test]
fn a_driver_library_is_named_for_what_it_is() {
    let out = Command::new(env!("CARGO"))
        .current_dir(repo_root())
        .args(["build", "--quiet", "--offline", "-p", "cuda-sys-gen-tracer"])
        .output()
        .expect("run cargo build");
    assert!(out.status.success(), "cargo build -p cuda-sys-gen-tracer failed:\n{}", text(&out.stderr));
    let exe = std::env::current_exe().expect("the test's own path");
    let debug = exe.parent().and_then(Path::parent).expect("target/debug");
    let mut libraries = vec![debug.join("libcuda_tracer.so")];
    let Some(drivers) = drivers::fetched() else { return };
    libraries.extend(drivers.into_iter().map(|d| d.libcuda));
    for lib in &libraries {
        let f = floor_of(lib);
        let report = f.render(Path::new("."), None);
        assert!(report.contains("a CUDA driver library"), "{}: {report}", lib.display());
        assert!(f.uses.is_empty() && f.unresolved.is_empty(), "{}: {report}", lib.display());
        let (code, out) = cli(&["min-driver", lib.to_str().unwrap(), "--driver", "470.256.02"]);
        assert_ne!(code, Some(3), "{}: {out}", lib.display());
    }
}

/// A report says what it read for what the file is: a kernel file's (a fatbin, PTX, a cubin)
/// speaks of the kernels it holds, never of lookups or libcuda imports; a program whose only
/// reading is its strings (cuda-sys-gen itself, its tables of names) says that is an upper
/// estimate and names the run that observes the floor.
#[test]
fn a_report_says_what_it_read_for_what_the_file_is() {
    let k = repo_root().join("tests/kernels");
    for name in ["sm90_ptx95.fatbin", "sm90_ptx95.ptx", "add_sm90_cuda13.5.cubin"] {
        let report = floor_of(&k.join(name)).render(&k, None);
        assert!(report.contains("read from the kernel files given"), "{name}: {report}");
        assert!(!report.contains("libcuda import") && !report.contains("these sources"), "{name}: {report}");
    }
    let tool = cuda_sys_gen_binary();
    let f = floor_of(tool);
    let report = f.render(Path::new("."), None);
    if f.uses.iter().any(|u| u.reading == Reading::String) {
        assert!(f.at_least(), "{report}");
        assert!(report.contains("an upper estimate of the need") && report.contains("min-driver --run"), "{report}");
    }
    assert!(!report.contains("these sources"), "{report}");
}

/// cuda-sys-gen itself holds the generated crate's table of every name (its registry is
/// compiled in), and among what it looks for the CUDA runtime's marks (`libcudart_static_`,
/// `cudaErrorCudartUnloading`, `libcuda.so`): it read as "holds the CUDA runtime's code, 13.5 or
/// later". It is said to be a table of names, and no runtime's floor is drawn from it.
#[test]
fn cuda_sys_gen_itself_is_a_table_of_names_not_a_runtime() {
    let tool = cuda_sys_gen_binary();
    let f = floor_of(tool);
    let report = f.render(Path::new("."), None);
    assert!(report.contains("a table of names, not the CUDA runtime"), "{report}");
    assert!(!report.contains("holds the CUDA runtime's code"), "{report}");
    assert!(f.kernels.iter().all(|k| k.reading != Reading::Runtime), "{report}");
}

/// Two fatbins with no GPU in common (sm_100a + ISA 9.1 PTX, sm_90 + ISA 9.5 PTX), as cuDNN's
/// engines library holds: each one's PTX is still JIT-compiled only on a GPU none of its own
/// cubins runs on, so a driver between the cubins' floor and the PTX's is "not proven" (exit
/// 2), never "does not run" (cuDNN 9 runs under PyTorch on driver 580, GPU run 21).
#[test]
fn fatbins_with_no_gpu_in_common_keep_their_ptx_apart() {
    let dir = tempfile::tempdir().unwrap();
    let k = repo_root().join("tests/kernels");
    let mut both = std::fs::read(k.join("sm100a_ptx91.fatbin")).unwrap();
    both.extend(std::fs::read(k.join("sm90_ptx95.fatbin")).unwrap());
    let path = dir.path().join("two.fatbin");
    std::fs::write(&path, both).unwrap();
    let f = floor_of(&path);
    let report = f.render(dir.path(), None);
    assert_eq!(f.version(), 13050, "{report}");
    assert_eq!(f.version_with_cubins(), Some(13000), "{report}");
    assert!(f.cubin_gpus.is_empty(), "{report}");
    assert!(report.contains("no GPU is named by all of them"), "{report}");
    let (code, out) = cli(&["min-driver", path.to_str().unwrap(), "--driver", "580.65.06"]);
    assert_eq!(code, Some(2), "{out}");
    let (code, out) = cli(&["min-driver", path.to_str().unwrap(), "--driver", "575.51.03"]);
    assert_eq!(code, Some(3), "{out}");
}
