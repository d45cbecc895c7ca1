//! The C header (`generated/include/cuda_pfn.h`) as C and C++ programs use it: compiled by gcc
//! (and clang where there is one) as C99 and C++11/17/20 with `-Wall -Wextra -Werror` against
//! the cuda.h of every pinned toolkit, every type the same as cudaTypedefs.h's; every getter run
//! against every real driver of the matrix (the export the registry names, or the refusal with
//! its reason, as the Rust crate answers); and min-driver reading a C program's records exactly.
//!
//! Tests that need a C compiler say SKIPPED and pass where there is none, except under
//! `CI=true`, where they fail.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use codegen::registry_json::{Entry, Registry};
use codegen::ToolkitVersion;
use cuda_sys_gen_tests::{cache_dir, cached_include, cuda_sys_gen_binary, repo_root, text};

fn header_dir() -> PathBuf {
    repo_root().join("generated/include")
}

fn registry() -> Registry {
    Registry::parse(&std::fs::read_to_string(repo_root().join("generated/registry.json")).unwrap()).unwrap()
}

/// The entries the header holds: cuda.h's row, Linux, every architecture, not legacy.
fn header_entries(reg: &Registry) -> Vec<&Entry> {
    reg.entries
        .iter()
        .filter(|e| {
            e.module == "cuda"
                && !e.legacy
                && e.arch.is_none()
                && e.platforms.contains(&codegen::platform::Platform::Linux)
        })
        .collect()
}

fn marker(e: &Entry) -> &str {
    e.pfn.strip_prefix("PFN_").unwrap_or(&e.pfn)
}

/// A C and C++ compiler pair: the command words of each.
#[derive(Clone)]
struct Compiler {
    name: &'static str,
    c: Vec<String>,
    cxx: Vec<String>,
}

impl Compiler {
    fn command(&self, cxx: bool) -> Command {
        let words = if cxx { &self.cxx } else { &self.c };
        let mut cmd = Command::new(&words[0]);
        cmd.args(&words[1..]);
        cmd
    }
}

/// Whether a command runs (`--version`).
fn found(words: &[&str]) -> bool {
    Command::new(words[0]).args(&words[1..]).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// The compilers to try: gcc (or cc), and clang: on the PATH, or zig's (`zig cc`, from the
/// ziglang wheel unpacked under target/ziglang, or `CUDA_SYS_GEN_ZIG`), targeting glibc.
fn compilers() -> Option<Vec<Compiler>> {
    let owned = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut out = Vec::new();
    for (name, c, cxx) in [("gcc", ["gcc"], ["g++"]), ("cc", ["cc"], ["c++"])] {
        if found(&c) && found(&cxx) {
            out.push(Compiler { name, c: owned(&c), cxx: owned(&cxx) });
            break;
        }
    }
    if found(&["clang"]) && found(&["clang++"]) {
        out.push(Compiler { name: "clang", c: owned(&["clang"]), cxx: owned(&["clang++"]) });
    } else {
        let zig = match std::env::var("CUDA_SYS_GEN_ZIG") {
            Ok(path) => PathBuf::from(path),
            Err(_) => zig().unwrap_or_else(|why| {
                // clang is half of what this test promises: CI must have it.
                assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true and no clang: {why}");
                eprintln!("note: {why}");
                PathBuf::from("zig")
            }),
        };
        let zig = zig.to_string_lossy().into_owned();
        if found(&[&zig, "cc"]) {
            let target = ["-target", "x86_64-linux-gnu"];
            out.push(Compiler {
                name: "clang (zig cc)",
                c: owned(&[&zig, "cc", target[0], target[1]]),
                cxx: owned(&[&zig, "c++", target[0], target[1]]),
            });
        } else {
            eprintln!("note: no clang here (nor zig's at {zig}): gcc only");
        }
    }
    if out.is_empty() {
        cuda_sys_gen_tests::skip("no C compiler (gcc, cc)");
        return None;
    }
    Some(out)
}

/// The `ziglang` wheel of PyPI: zig, whose `zig cc` is clang 19 with its own C library
/// headers, so a machine with no clang installed still compiles the header with clang.
const ZIG_WHEEL: &str = "ziglang-0.14.1-py3-none-manylinux_2_12_x86_64.manylinux2010_x86_64.musllinux_1_1_x86_64.whl";
const ZIG_SHA256: &str = "6eb9d4d759b292c83810dbee2e9e8e3fbfbf01d864e6e9811bae711fd74e1c2f";

/// [`fetch_zig`] once per test process: the tests run on threads of one process.
fn zig() -> Result<PathBuf, String> {
    static ZIG: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    ZIG.get_or_init(fetch_zig).clone()
}

/// zig from the pinned wheel, unpacked under target/ziglang (fetched with pip once, its
/// SHA256 checked, unpacked into a scratch folder renamed into place); `Err` says why not.
fn fetch_zig() -> Result<PathBuf, String> {
    use sha2::{Digest, Sha256};
    let root = repo_root().join("target");
    let zig = root.join("ziglang/ziglang/zig");
    if zig.is_file() {
        return Ok(zig);
    }
    if std::env::consts::ARCH != "x86_64" || std::env::consts::OS != "linux" {
        return Err(format!(
            "no clang on the PATH, and the pinned zig wheel is for x86-64 Linux, not {}",
            std::env::consts::ARCH
        ));
    }
    let wheels = root.join("ziglang-wheel");
    std::fs::create_dir_all(&wheels).map_err(|e| format!("{}: {e}", wheels.display()))?;
    let wheel = wheels.join(ZIG_WHEEL);
    let digest = |p: &Path| std::fs::read(p).ok().map(|b| hex::encode(Sha256::digest(b)));
    if digest(&wheel).as_deref() != Some(ZIG_SHA256) {
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let o = Command::new(&python)
            .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check"])
            .args(["--platform", "manylinux_2_12_x86_64", "--python-version", "3.11", "--dest"])
            .arg(&wheels)
            .arg("ziglang==0.14.1")
            .output()
            .map_err(|e| format!("no clang on the PATH, and `{python} -m pip` could not run to fetch zig's: {e}"))?;
        if !o.status.success() {
            return Err(format!("no clang on the PATH, and pip could not fetch zig's: {}", text(&o.stderr)));
        }
        let got = digest(&wheel).ok_or_else(|| format!("pip did not write {ZIG_WHEEL}"))?;
        assert_eq!(got, ZIG_SHA256, "{ZIG_WHEEL}: not the wheel pinned here (its SHA256 differs)");
    }
    let scratch = tempfile::tempdir_in(&root).map_err(|e| e.to_string())?;
    let file = std::fs::File::open(&wheel).map_err(|e| format!("{}: {e}", wheel.display()))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| format!("{}: {e}", wheel.display()))?;
    zip.extract(scratch.path()).map_err(|e| format!("{}: {e}", wheel.display()))?;
    let unpacked = scratch.path().join("ziglang/zig");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&unpacked, std::fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    }
    // Another test process may have put it in place meanwhile: theirs is the same wheel.
    let _ = std::fs::rename(scratch.path(), root.join("ziglang"));
    if zig.is_file() {
        Ok(zig)
    } else {
        Err(format!("{} was not unpacked", zig.display()))
    }
}

fn headers_cached() -> bool {
    if cache_dir().join("include").is_dir() {
        return true;
    }
    cuda_sys_gen_tests::skip(&format!("no header cache under {}", cache_dir().display()));
    false
}

fn run(cmd: &mut Command) -> (bool, String) {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    (o.status.success(), format!("{}{}", text(&o.stdout), text(&o.stderr)))
}

/// A translation unit that includes cudaTypedefs.h and the header and redeclares one object
/// with each ABI's type from both: a C++ compiler refuses two declarations of different types
/// (C: of incompatible types). It names every ABI toolkit `t` declares, requires the header to
/// have it, and calls every getter kind of function once.
fn type_check_unit(reg: &Registry, toolkit: ToolkitVersion) -> String {
    let mut s = String::from(
        "#include <cuda.h>\n#include <cudaTypedefs.h>\n#include \"cuda_pfn.h\"\n\
         #include \"cuda_pfn.h\" /* twice: the include guard */\n",
    );
    for e in header_entries(reg).into_iter().filter(|e| e.toolkits.contains(&toolkit)) {
        let m = marker(e);
        let per_thread = e.variant.is_some();
        // cudaTypedefs.h's own names: `_ptds` typedefs are declared in both modes.
        s.push_str(&format!(
            "#ifndef CUDA_PFN_VERSION_{m}\n#error \"cuda_pfn.h lacks {m} for CUDA {toolkit}\"\n#endif\n\
             extern {pfn} cuda_pfn_same_{m};\nextern cuda_pfn_PFN_{m} cuda_pfn_same_{m};\n\
             typedef char cuda_pfn_version_{m}[CUDA_PFN_VERSION({m}) == {v} && CUDA_PFN_FLAGS({m}) == {f} ? 1 : -1];\n",
            pfn = e.pfn,
            v = e.version,
            f = if per_thread { 2 } else { 1 },
        ));
    }
    s.push_str(
        "int cuda_pfn_use(void);\nint cuda_pfn_use(void) {\n    cuda_pfn_driver d;\n    char buf[256];\n\
         \x20   cuda_pfn_PFN_cuMemAlloc f = 0;\n    PFN_cuMemAlloc_v3020 g = 0;\n    CUresult r = cuda_pfn_driver_open(&d);\n\
         \x20   if (r == CUDA_SUCCESS) r = cuda_pfn_get_cuMemAlloc(&d, &f);\n\
         \x20   if (r == CUDA_SUCCESS) r = cuda_pfn_get_cuMemAlloc_v3020(&d, &g);\n\
         \x20   (void)CUDA_PFN_ERROR_STRING(buf, sizeof buf, &d, cuMemAlloc, r);\n\
         \x20   (void)CUDA_PFN_ERROR_STRING(buf, sizeof buf, &d, cuMemAlloc_v3020, r);\n\
         \x20   return (int)r + (f != 0) + (g != 0) + CUDA_PFN_VERSION(cuMemAlloc);\n}\n",
    );
    s
}

/// Every pinned toolkit's cuda.h, C99 and C++11/17/20, both stream modes, gcc and clang:
/// no warning, and every ABI's type is cudaTypedefs.h's.
#[test]
fn compiles_against_every_pinned_cuda_h_with_cuda_typedefs_types() {
    let Some(compilers) = compilers() else { return };
    if !headers_cached() {
        return;
    }
    let reg = registry();
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut runs = 0;
    for &toolkit in &reg.toolkits {
        let include = cached_include(&toolkit.to_string(), false);
        let c = dir.path().join(format!("check-{toolkit}.c"));
        std::fs::write(&c, type_check_unit(&reg, toolkit)).unwrap();
        let cpp = dir.path().join(format!("check-{toolkit}.cpp"));
        std::fs::copy(&c, &cpp).unwrap();
        for compiler in &compilers {
            for (cxx, std, file) in [
                (false, "-std=c99", &c),
                (true, "-std=c++11", &cpp),
                (true, "-std=c++17", &cpp),
                (true, "-std=c++20", &cpp),
            ] {
                for mode in [None, Some("-DCUDA_API_PER_THREAD_DEFAULT_STREAM")] {
                    let mut cmd = compiler.command(cxx);
                    cmd.args(["-c", "-o"])
                        .arg(dir.path().join("out.o"))
                        .args(["-Wall", "-Wextra", "-Werror", std, "-I"])
                        .arg(&include)
                        .arg("-I")
                        .arg(header_dir())
                        .args(mode)
                        .arg(file);
                    runs += 1;
                    let (ok, out) = run(&mut cmd);
                    if !ok {
                        failures.push(format!("{} {std} {mode:?} CUDA {toolkit}:\n{}", compiler.name, head(&out)));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {runs} compilations failed:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{runs} compilations, every ABI's type the same as cudaTypedefs.h's");
}

fn head(s: &str) -> String {
    s.lines().take(30).collect::<Vec<_>>().join("\n")
}

/// cuda.h's own names mean what the registry's C names say for that toolkit and stream mode:
/// `cuda_pfn_PFN_cuX` is the type of the ABI `c_names[toolkit][cuX]` names.
#[test]
fn cuda_h_names_are_the_abi_each_cuda_h_means() {
    let Some(compilers) = compilers() else { return };
    if !headers_cached() {
        return;
    }
    let reg = registry();
    let in_header: BTreeSet<&str> = header_entries(&reg).into_iter().map(|e| e.pfn.as_str()).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for toolkit in &reg.toolkits {
        let include = cached_include(&toolkit.to_string(), false);
        for per_thread in [false, true] {
            let mut s = String::from("#include \"cuda_pfn.h\"\n");
            for (c, target) in &reg.c_names[toolkit] {
                let pfn = if per_thread { &target.per_thread } else { &target.default };
                let Some(pfn) = pfn.as_ref().filter(|p| in_header.contains(p.as_str())) else { continue };
                let m = pfn.strip_prefix("PFN_").unwrap_or(pfn);
                // The C name's getter is the ABI's getter, and its abi macro the ABI.
                s.push_str(&format!(
                    "extern cuda_pfn_PFN_{m} cuda_pfn_c_{c};\nextern cuda_pfn_PFN_{c} cuda_pfn_c_{c};\n\
                     typedef char cuda_pfn_v_{c}[CUDA_PFN_VERSION({c}) == CUDA_PFN_VERSION({m}) && CUDA_PFN_FLAGS({c}) == CUDA_PFN_FLAGS({m}) ? 1 : -1];\n\
                     static CUresult (*const cuda_pfn_g_{c})(const cuda_pfn_driver *, cuda_pfn_PFN_{m} *) = cuda_pfn_get_{c};\n"
                ));
                checked += 1;
            }
            s.push_str("int main(void) { return 0; }\n");
            let file = dir.path().join(format!("names-{toolkit}-{per_thread}.c"));
            std::fs::write(&file, s).unwrap();
            let mut cmd = compilers[0].command(false);
            cmd.args(["-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Wno-unused-const-variable", "-std=c99", "-I"])
                .arg(&include)
                .arg("-I")
                .arg(header_dir());
            if per_thread {
                cmd.arg("-DCUDA_API_PER_THREAD_DEFAULT_STREAM");
            }
            let (ok, out) = run(cmd.arg(&file));
            assert!(ok, "CUDA {toolkit}, per-thread {per_thread}:\n{}", head(&out));
        }
    }
    assert!(checked > 1000, "only {checked} C names checked");
}

/// A C program calling every getter the header has under the newest cuda.h, built once.
fn every_getter_program(reg: &Registry, dir: &Path) -> Option<PathBuf> {
    let compilers = compilers()?;
    if !headers_cached() {
        return None;
    }
    let newest = reg.toolkits.last().unwrap();
    let mut s = String::from(
        "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include \"cuda_pfn.h\"\n\n\
         static void report(const cuda_pfn_driver *d, const char *abi, const char *exported, unsigned version,\n\
         \x20                  unsigned flags, CUresult r, void *p) {\n\
         \x20   char why[512];\n    Dl_info info;\n    void *export_ = dlsym(d->library, exported);\n\
         \x20   const char *name = (p != NULL && dladdr(p, &info) && info.dli_sname) ? info.dli_sname : \"-\";\n\
         \x20   cuda_pfn_error_string(why, sizeof why, d, abi, version, flags, r);\n\
         \x20   printf(\"%s\\t%d\\t%s\\t%d\\t%s\\n\", abi, (int)r, name, p != NULL && p == export_, why);\n}\n\n\
         int main(int argc, char **argv) {\n    cuda_pfn_driver d;\n    CUresult r;\n    void *p;\n\
         \x20   (void)argv;\n    r = argc > 1 ? cuda_pfn_driver_from_library(&d, dlopen(argv[1], RTLD_LAZY)) : cuda_pfn_driver_open(&d);\n\
         \x20   if (r != CUDA_SUCCESS) { printf(\"open failed %d\\n\", (int)r); return 2; }\n\
         \x20   printf(\"driver\\t%d\\n\", d.version);\n",
    );
    for e in header_entries(reg).into_iter().filter(|e| e.toolkits.contains(newest)) {
        let m = marker(e);
        s.push_str(&format!(
            "    {{ cuda_pfn_PFN_{m} f; r = cuda_pfn_get_{m}(&d, &f); memcpy(&p, &f, sizeof p);\n\
             \x20     report(&d, \"{m}\", \"{exp}\", CUDA_PFN_VERSION({m}), CUDA_PFN_FLAGS({m}), r, p); }}\n",
            exp = e.exported
        ));
    }
    s.push_str("    return 0;\n}\n");
    let src = dir.join("every_getter.c");
    std::fs::write(&src, s).unwrap();
    let out = dir.join("every_getter");
    let (ok, log) = run(compilers[0]
        .command(false)
        .args(["-O1", "-Wall", "-Wextra", "-Werror", "-std=c99", "-I"])
        .arg(cached_include(&newest.to_string(), false))
        .arg("-I")
        .arg(header_dir())
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .arg("-ldl"));
    assert!(ok, "{}", head(&log));
    Some(out)
}

/// Every real driver of the matrix: each getter the driver has hands out the library's export
/// of the name the registry gives its entry; each it lacks refuses, with the reason, exactly
/// where the Rust crate's `Driver` refuses; no wrong ABI.
#[test]
fn every_getter_on_every_real_driver() {
    let Some(drivers) = cuda_sys_gen_tests::drivers::fetched() else { return };
    let reg = registry();
    let by_marker: BTreeMap<&str, &Entry> = header_entries(&reg).into_iter().map(|e| (marker(e), e)).collect();
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = every_getter_program(&reg, dir.path()) else { return };
    let mut summary = Vec::new();
    for driver in &drivers {
        // Once by name (cuda_pfn_driver_open's search), once by the path.
        for by_path in [false, true] {
            let mut cmd = Command::new(&program);
            cmd.env("LD_LIBRARY_PATH", driver.library_path());
            if by_path {
                cmd.arg(&driver.libcuda);
            }
            let (ok, out) = run(&mut cmd);
            assert!(ok, "driver {}: {out}", driver.pin.name);
            // The Rust crate's verdict on every entry, on the same driver (tests/src/conformance.rs).
            let tsv_dir = tempfile::tempdir().unwrap();
            let (ok, log) = run(Command::new(env!("CARGO_BIN_EXE_conformance"))
                .args(["check"])
                .arg(tsv_dir.path())
                .env("LD_LIBRARY_PATH", driver.library_path()));
            assert!(ok, "driver {}: conformance check: {log}", driver.pin.name);
            let tsv = std::fs::read_to_string(tsv_dir.path().join("conformance.tsv")).unwrap();
            let rust: BTreeMap<String, String> = tsv
                .lines()
                .skip(1)
                .map(|l| l.split('\t').collect::<Vec<_>>())
                .map(|c| (c[0].to_owned(), c[4].split(':').next().unwrap_or_default().to_owned()))
                .collect();
            let version: u32 = out
                .lines()
                .find_map(|l| l.strip_prefix("driver\t"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("{out}"));
            assert_eq!(Some(version), driver.pin.cuda_version(), "driver {}", driver.pin.name);
            let (mut found, mut refused) = (0, 0);
            for line in out.lines().filter(|l| !l.starts_with("driver\t")) {
                let f: Vec<&str> = line.split('\t').collect();
                let [abi, code, name, same, why] = f[..] else { panic!("{line}") };
                let e = by_marker[abi];
                let rust_has = rust.get(&e.pfn).unwrap_or_else(|| panic!("{abi} not in conformance.tsv")) == "matched";
                let code: i32 = code.parse().unwrap();
                if code == 0 {
                    found += 1;
                    assert_eq!(
                        same, "1",
                        "driver {}: {abi} is not the export {} ({name})",
                        driver.pin.name, e.exported
                    );
                    assert!(rust_has, "driver {}: {abi} found by C, refused by the Rust crate", driver.pin.name);
                } else {
                    refused += 1;
                    assert!(
                        !rust_has,
                        "driver {}: {abi} refused by C ({why}), found by the Rust crate",
                        driver.pin.name
                    );
                    let expected = if e.version > version { 36 } else { 500 };
                    assert_eq!(code, expected, "driver {}: {abi}: {why}", driver.pin.name);
                    assert!(why.contains(abi) && why.contains(&e.version.to_string()), "{why}");
                    assert!(why.contains(&format!("{}.{}", version / 1000, version % 1000 / 10)), "{why}");
                }
            }
            assert_eq!(
                found + refused,
                by_marker.values().filter(|e| e.toolkits.contains(reg.toolkits.last().unwrap())).count()
            );
            if !by_path {
                summary.push(format!("{} (CUDA {version}): {found} found, {refused} refused", driver.pin.name));
            }
        }
    }
    eprintln!("{}", summary.join("\n"));
}

/// min-driver reads a C program built with the header, at -O0 and -O2: exactly the getters it
/// calls (through an exact name and through a cuda.h name), none it does not, and the bytes of
/// each record are the Rust crate's.
#[test]
fn min_driver_reads_c_programs_exactly() {
    let Some(compilers) = compilers() else { return };
    if !headers_cached() {
        return;
    }
    let reg = registry();
    let newest = reg.toolkits.last().unwrap();
    let ctx_create = reg.c_names[newest]["cuCtxCreate"].default.clone().unwrap();
    let ctx_create = ctx_create.strip_prefix("PFN_").unwrap();
    let src = "#include \"cuda_pfn.h\"\n\
               int called(const cuda_pfn_driver *d);\n\
               int called(const cuda_pfn_driver *d) {\n\
               \x20   cuda_pfn_PFN_cuMemAlloc_v3020 a; cuda_pfn_PFN_cuCtxCreate c; cuda_pfn_PFN_cuMemcpy_v7000_ptds m;\n\
               \x20   return (int)cuda_pfn_get_cuMemAlloc_v3020(d, &a) + (int)cuda_pfn_get_cuCtxCreate(d, &c) + (int)cuda_pfn_get_cuMemcpy_v7000_ptds(d, &m);\n\
               }\n\
               /* Every other getter of the header is never called: not compiled, no record. */\n\
               int main(int argc, char **argv) {\n\
               \x20   cuda_pfn_driver d;\n\
               \x20   (void)argv;\n\
               \x20   if (argc > 5 && cuda_pfn_driver_open(&d) == CUDA_SUCCESS) return called(&d);\n\
               \x20   return 0;\n\
               }\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.c"), src).unwrap();
    std::fs::write(dir.path().join("app.cpp"), src).unwrap();
    let mut want = vec!["cuMemAlloc_v3020".to_owned(), ctx_create.to_owned(), "cuMemcpy_v7000_ptds".to_owned()];
    want.sort();
    for (n, compiler) in compilers.iter().enumerate() {
        for (cxx, file) in [(false, "app.c"), (true, "app.cpp")] {
            let compiler_name = format!("{}{}", compiler.name, if cxx { " (C++)" } else { "" });
            for opt in ["-O0", "-O2"] {
                let out = dir.path().join(format!("app-{n}-{cxx}{opt}"));
                let (ok, log) = run(compiler
                    .command(cxx)
                    .args([opt, "-Wall", "-Wextra", "-Werror", "-I"])
                    .arg(cached_include(&newest.to_string(), false))
                    .arg("-I")
                    .arg(header_dir())
                    .arg(dir.path().join(file))
                    .arg("-o")
                    .arg(&out)
                    .arg("-ldl"));
                assert!(ok, "{compiler_name} {opt}: {}", head(&log));
                let o = Command::new(cuda_sys_gen_binary())
                    .args(["min-driver", "--json", "--registry"])
                    .arg(repo_root().join("generated/registry.json"))
                    .arg(&out)
                    .output()
                    .unwrap();
                let json = text(&o.stdout);
                let v: serde_json::Value =
                    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}{}", text(&o.stderr)));
                let records: Vec<&serde_json::Value> =
                    v["entries"].as_array().unwrap().iter().filter(|e| e["reading"] == "record").collect();
                let mut got: Vec<String> = records.iter().map(|e| e["marker"].as_str().unwrap().to_owned()).collect();
                got.sort();
                got.dedup();
                assert_eq!(got, want, "{compiler_name} {opt}: {json}");
                assert_eq!(v["at_least"], false, "{compiler_name} {opt}: {json}");
                let floor = want.iter().map(|m| reg.entries.iter().find(|e| marker(e) == m).unwrap().version).max();
                assert_eq!(v["version"].as_u64(), floor.map(u64::from), "{compiler_name} {opt}: {json}");
                // The bytes: each record in the program is the Rust crate's record of its entry.
                let bytes = std::fs::read(&out).unwrap();
                let magic = b"\xc3cuRec\x1a\n";
                let mut found = 0;
                for at in (0..bytes.len().saturating_sub(160)).filter(|&i| &bytes[i..i + 8] == magic) {
                    let r = &bytes[at..at + 160];
                    let exported = String::from_utf8_lossy(&r[88..152]).trim_end_matches('\0').to_owned();
                    let version = u32::from_le_bytes([r[12], r[13], r[14], r[15]]);
                    let e = reg
                        .entries
                        .iter()
                        .find(|e| e.exported == exported && e.version == version)
                        .unwrap_or_else(|| panic!("a record of {exported} that names no entry"));
                    assert_eq!(r, rust_record(e).as_slice(), "{exported}");
                    found += 1;
                }
                assert!(found >= 3, "{compiler_name} {opt}: {found} records");
            }
        }
    }
}

/// The Rust crate's record of an entry, built by its own constructor, as bytes.
fn rust_record(e: &Entry) -> Vec<u8> {
    use cuda_driver_pfn::EntryRecord;
    let floor = e.min_driver.unwrap_or(e.version).max(e.version);
    let flag = u8::from(e.variant.is_some()) + 1;
    let r = EntryRecord::new(EntryRecord::ENTRY, &e.symbol, &e.exported, e.version, floor, e.version, flag, 1);
    // SAFETY: `EntryRecord` is `repr(C)`, 160 bytes of integers and byte arrays, no padding.
    unsafe { std::slice::from_raw_parts((&r as *const EntryRecord).cast::<u8>(), 160) }.to_vec()
}

/// NVIDIA's vectorAddDrv on the header (examples/c-header/), as C and C++ with every compiler:
/// on a real driver without a GPU it gets every function it calls by cuda.h's name, and stops at
/// cuInit with the driver's own error (the GPU machine runs it to `Result = PASS`).
#[test]
fn the_vector_add_sample_builds_and_gets_its_functions() {
    let Some(compilers) = compilers() else { return };
    if !headers_cached() {
        return;
    }
    let reg = registry();
    let newest = reg.toolkits.last().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let src = repo_root().join("examples/c-header/vector_add_drv.c");
    let cpp = dir.path().join("vector_add_drv.cpp");
    std::fs::copy(&src, &cpp).unwrap();
    let mut built = Vec::new();
    for (n, compiler) in compilers.iter().enumerate() {
        for (cxx, file, std) in [(false, &src, "-std=c99"), (true, &cpp, "-std=c++17")] {
            for mode in [None, Some("-DCUDA_API_PER_THREAD_DEFAULT_STREAM")] {
                let out = dir.path().join(format!("vadd-{n}-{cxx}-{}", mode.is_some()));
                let (ok, log) = run(compiler
                    .command(cxx)
                    .args(["-O2", "-Wall", "-Wextra", "-Werror", std, "-I"])
                    .arg(cached_include(&newest, false))
                    .arg("-I")
                    .arg(header_dir())
                    .args(mode)
                    .arg(file)
                    .arg("-o")
                    .arg(&out)
                    .arg("-ldl"));
                assert!(ok, "{} {std} {mode:?}: {}", compiler.name, head(&log));
                built.push(out);
            }
        }
    }
    let drivers = match cuda_sys_gen_tests::drivers::fetch() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED (the run): no real drivers here: {e}");
            return;
        }
    };
    let driver = drivers.last().unwrap();
    for program in &built {
        let (ok, out) = run(Command::new(program).env("LD_LIBRARY_PATH", driver.library_path()));
        assert!(!ok, "{out}");
        assert!(out.contains("cuMemAlloc is cuMemAlloc_v3020 (version 3020)"), "{out}");
        assert!(out.contains("f.cuInit(0) failed: CUDA_ERROR_NO_DEVICE"), "{out}");
    }
}

/// `cuda-sys-gen generate --c-header FILE`: refuses a file it did not write (before any work,
/// leaving it as it was), writes the header alone, and `--check` passes on it; the file is the
/// crate's header but for the command its first line quotes.
#[test]
fn generate_c_header_writes_the_one_file() {
    if !headers_cached() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cuda_pfn.h");
    let generate = |extra: &[&str]| {
        let o = Command::new(cuda_sys_gen_binary())
            .args(["generate", "--pinned-only", "--offline", "--manifest"])
            .arg(repo_root().join("headers-manifest.toml"))
            .arg("--cache")
            .arg(cache_dir())
            .arg("--out")
            .arg(dir.path().join("never-written"))
            .arg("--c-header")
            .arg(&file)
            .args(extra)
            .output()
            .unwrap();
        (o.status.code(), format!("{}{}", text(&o.stdout), text(&o.stderr)))
    };
    // A file of the user's: refused, untouched.
    std::fs::write(&file, "/* mine */\n").unwrap();
    let (code, out) = generate(&[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("did not write"), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "/* mine */\n");
    // A link: refused too.
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(dir.path().join("elsewhere.h"), &file).unwrap();
    let (code, out) = generate(&[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(!dir.path().join("elsewhere.h").exists());
    std::fs::remove_file(&file).unwrap();
    // Written, then checked.
    let (code, out) = generate(&[]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = generate(&["--check"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!dir.path().join("never-written").exists(), "--out was written");
    let written = std::fs::read_to_string(&file).unwrap();
    let crate_header = std::fs::read_to_string(header_dir().join("cuda_pfn.h")).unwrap();
    let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&written), body(&crate_header), "the header differs from the crate's");
    assert!(written.lines().next().unwrap().contains("--c-header"), "{}", written.lines().next().unwrap());
    // Stale: --check fails and names the file.
    std::fs::write(&file, written.replace("cuda_pfn_get_", "cuda_pfn_got_")).unwrap();
    let (code, out) = generate(&["--check"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("cuda_pfn.h"), "{out}");
}

/// The other two ways to a driver, on a real one: the libcuda the program links
/// (`cuda_pfn_driver_from_linked`) and a `cuGetProcAddress_v2` pointer it has
/// (`cuda_pfn_driver_from_get_proc_address_v2`): the same version, the same export, and an ABI
/// newer than the driver refused before it is asked, with the reason.
#[test]
fn a_linked_driver_and_a_get_proc_address_pointer() {
    let Some(compilers) = compilers() else { return };
    if !headers_cached() {
        return;
    }
    let drivers = match cuda_sys_gen_tests::drivers::fetch() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED: no real drivers here: {e}");
            return;
        }
    };
    // The newest driver of the matrix that has cuGetProcAddress_v2 (CUDA 12.0 and later).
    let Some(driver) = drivers.iter().rev().find(|d| d.pin.cuda_version().is_some_and(|v| v >= 12000)) else {
        panic!("no driver of CUDA 12.0 or later in the matrix")
    };
    let version = driver.pin.cuda_version().unwrap();
    let reg = registry();
    let newest = reg.toolkits.last().unwrap();
    let newer = header_entries(&reg)
        .into_iter()
        .find(|e| e.version > version && e.toolkits.contains(newest))
        .expect("an ABI newer than the driver");
    let m = marker(newer);
    let src = format!(
        "#include <dlfcn.h>\n#include \"cuda_pfn.h\"\n\
         static void show(const char *how, const cuda_pfn_driver *d) {{\n\
         \x20   cuda_pfn_PFN_cuMemAlloc_v3020 alloc = NULL; cuda_pfn_PFN_{m} newer = NULL; char why[512];\n\
         \x20   CUresult a = cuda_pfn_get_cuMemAlloc_v3020(d, &alloc), n = cuda_pfn_get_{m}(d, &newer);\n\
         \x20   void *p; memcpy(&p, &alloc, sizeof p);\n\
         \x20   printf(\"%s %d %d %d %d %d\\n\", how, d->version, (int)a, p == dlsym(RTLD_DEFAULT, \"cuMemAlloc_v2\"), (int)n, newer == NULL);\n\
         \x20   printf(\"%s\\n\", CUDA_PFN_ERROR_STRING(why, sizeof why, d, {m}, n));\n}}\n\
         int main(void) {{\n    cuda_pfn_driver d, e;\n\
         \x20   if (cuda_pfn_driver_from_linked(&d) != CUDA_SUCCESS) return 2;\n    show(\"linked\", &d);\n\
         \x20   if (cuda_pfn_driver_from_get_proc_address_v2(&e, (void (*)(void))cuGetProcAddress_v2) != CUDA_SUCCESS) return 3;\n\
         \x20   show(\"pointer\", &e);\n    return 0;\n}}\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("linked.c");
    std::fs::write(&file, src).unwrap();
    for (n, compiler) in compilers.iter().enumerate() {
        let out = dir.path().join(format!("linked-{n}"));
        let (ok, log) = run(compiler
            .command(false)
            .args(["-O2", "-Wall", "-Wextra", "-Werror", "-std=c99", "-D_GNU_SOURCE", "-I"])
            .arg(cached_include(&newest.to_string(), false))
            .arg("-I")
            .arg(header_dir())
            .arg(&file)
            .arg("-o")
            .arg(&out)
            .arg(&driver.libcuda)
            .args(["-ldl", "-Wl,--allow-shlib-undefined"]));
        assert!(ok, "{}: {}", compiler.name, head(&log));
        let (ok, log) = run(Command::new(&out).env("LD_LIBRARY_PATH", driver.library_path()));
        assert!(ok, "{}: {log}", compiler.name);
        for how in ["linked", "pointer"] {
            // cuMemAlloc_v3020 found, and the export cuMemAlloc_v2; the newer ABI refused (36), NULL.
            assert!(log.contains(&format!("{how} {version} 0 1 36 1")), "{}: {log}", compiler.name);
        }
        assert!(log.contains(&format!("{m} (version {}", newer.version)) && log.contains("was not asked for"), "{log}");
    }
}
