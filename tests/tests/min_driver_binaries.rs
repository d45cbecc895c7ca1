//! `min-driver` over compiled programs: the records the generated crate leaves in a binary are
//! exactly those of the lookups in the code the linker kept, whatever the build profile; a
//! lookup whose name or version is known only at run time makes the floor "at least"; C
//! programs count the libcuda functions they import and, where they look functions up by
//! name, the registry names their strings hold.
//!
//! The Rust programs are one scratch workspace (an app and a path dependency of its own, on
//! the generated crate by path), built in four profiles that between them cover debug,
//! release, LTO thin and fat, `codegen-units = 1`, `opt-level = "s"` and `strip`. Its target
//! folder lives under the repository's, so that a second run only links.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use codegen::emit::record::{self, Abi, Record};
use codegen::record_format::{EntryRecord, RecordKind};
use cuda_sys_gen::min_driver::{floor, Floor, Reading};
use cuda_sys_gen_tests::*;

fn registry() -> PathBuf {
    repo_root().join("generated/registry.json")
}

fn json() -> codegen::registry_json::Registry {
    codegen::registry_json::Registry::parse(&std::fs::read_to_string(registry()).unwrap()).unwrap()
}

/// The entry the newest cuda.h's `cuCtxCreate` means (`cuCtxCreate_v12050`), from the registry.
fn cu_ctx_create() -> (String, u32) {
    let json = json();
    let newest = json.toolkits.last().unwrap();
    let pfn = json.c_names[newest]["cuCtxCreate"].default.clone().unwrap();
    let v: u32 = pfn.rsplit("_v").next().unwrap().parse().unwrap();
    assert!(v > 3020, "cuCtxCreate is no newer than its second ABI: these tests would prove nothing");
    (pfn.trim_start_matches("PFN_").to_owned(), v)
}

/// The profiles built: between them debug, release, LTO thin and fat, one codegen unit,
/// `opt-level = "s"` and `strip`.
const PROFILES: [&str; 4] = ["dev", "release", "fat", "small"];

const WORKSPACE: &str = r#"[workspace]
members = ["app", "wrap"]
resolver = "2"

[profile.fat]
inherits = "release"
lto = "fat"
codegen-units = 1

[profile.small]
inherits = "release"
lto = "thin"
opt-level = "s"
strip = true
"#;

/// A library of the program's own: one function that calls `cuCtxCreate` through `cu!`, and
/// one public function nobody calls, which looks up an entry newer than everything else here.
const WRAP: &str = r#"use cuda_driver_pfn::{cu, entries, types::CUcontext, Driver, Error};

pub fn make_context() -> Result<CUcontext, Error> {
    let mut ctx: CUcontext = std::ptr::null_mut();
    unsafe { cu!(cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0))? };
    Ok(ctx)
}

pub fn never_called(driver: &Driver) -> bool {
    driver.get::<entries::cuCheckpointProcessLock_v12080>().is_ok()
}
"#;

/// The app: reaches cuCtxCreate only through `wrap`, and `newest` for one symbol.
const APP: &str = r#"use cuda_driver_pfn::{symbols, Driver};

fn main() {
    if std::env::args().count() > 5 {
        let _ = wrap::make_context();
        if let Ok(d) = Driver::load() {
            let _ = d.newest::<symbols::cuStreamBeginCapture>();
        }
    }
}
"#;

/// A lookup by a name and version known only at run time.
const RAW: &str = r#"use cuda_driver_pfn::{Driver, StreamFlags};

fn main() {
    let name = std::ffi::CString::new(std::env::args().nth(1).unwrap_or_default()).unwrap();
    if let Ok(d) = Driver::load() {
        let _ = unsafe { d.get_raw::<usize>(&name, 12050, StreamFlags::LEGACY_STREAM) };
    }
}
"#;

/// The same lookup with name and version fixed at compile time.
const FIXED: &str = r#"use cuda_driver_pfn::{get_raw, Driver, StreamFlags};

fn main() {
    if let Ok(d) = Driver::load() {
        let _: Result<usize, _> = unsafe { get_raw!(d, "cuCtxCreate", 12050, StreamFlags::LEGACY_STREAM) };
    }
}
"#;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    // Unchanged files keep their times, so cargo only relinks.
    if std::fs::read_to_string(&p).ok().as_deref() != Some(text) {
        std::fs::write(p, text).unwrap();
    }
}

/// The scratch workspace, built in every profile (once per test run).
fn built() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = repo_root().join("target/min-driver-programs");
        let crate_dir = repo_root().join("generated");
        let dep = format!(
            "cuda-driver-pfn = {{ path = {:?}, default-features = false, features = [\"api\", \"newest\"] }}\n",
            crate_dir.display().to_string()
        );
        write(&root, "Cargo.toml", WORKSPACE);
        write(&root, "wrap/Cargo.toml", &format!("[package]\nname = \"wrap\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{dep}"));
        write(&root, "wrap/src/lib.rs", WRAP);
        write(
            &root,
            "app/Cargo.toml",
            &format!(
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nwrap = {{ path = \"../wrap\" }}\n{dep}"
            ),
        );
        write(&root, "app/src/main.rs", APP);
        write(&root, "app/src/bin/raw.rs", RAW);
        write(&root, "app/src/bin/fixed.rs", FIXED);
        for profile in PROFILES {
            let o = Command::new(env!("CARGO"))
                .args(["build", "--quiet", "--profile", profile, "--manifest-path"])
                .arg(root.join("Cargo.toml"))
                .env("CARGO_TARGET_DIR", root.join("target"))
                .env_remove("RUSTFLAGS")
                .output()
                .unwrap();
            assert!(o.status.success(), "cargo build --profile {profile}: {}", text(&o.stderr));
        }
        root
    })
}

fn binary(profile: &str, name: &str) -> PathBuf {
    let dir = if profile == "dev" { "debug" } else { profile };
    built().join("target").join(dir).join(name)
}

fn floor_of(path: &Path) -> Floor {
    floor(&registry(), &[path.to_owned()]).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

fn markers(f: &Floor) -> Vec<&str> {
    let mut m: Vec<&str> = f.uses.iter().map(|u| u.marker.as_str()).collect();
    m.sort();
    m
}

/// The call in a path dependency counts (the source scan of the app alone saw nothing), and
/// the dead public function's entry is gone, in every profile.
#[test]
fn the_records_are_exactly_those_of_the_code_kept() {
    let (ctx_create, v) = cu_ctx_create();
    let oldest_capture = json()
        .entries
        .iter()
        .filter(|e| e.symbol == "cuStreamBeginCapture" && e.variant.is_none())
        .map(|e| e.pfn.trim_start_matches("PFN_").to_owned())
        .min()
        .unwrap();
    for profile in PROFILES {
        let f = floor_of(&binary(profile, "app"));
        let report = f.render(Path::new("."), None);
        assert_eq!(f.version(), v, "{profile}:\n{report}");
        assert!(!f.at_least(), "{profile}:\n{report}");
        let mut want = vec![ctx_create.as_str(), oldest_capture.as_str()];
        want.sort();
        assert_eq!(markers(&f), want, "{profile}:\n{report}");
        assert!(f.uses.iter().all(|u| u.reading == Reading::Record), "{profile}:\n{report}");
        let newest = f.uses.iter().find(|u| u.marker == oldest_capture).unwrap();
        assert_eq!(newest.read_as, "oldest ABI", "{report}");
    }
}

/// Every record a built program holds, whole (160 bytes from each magic).
fn records_in(path: &Path) -> Vec<[u8; record::LEN]> {
    let bytes = std::fs::read(path).unwrap();
    let mut out: Vec<[u8; record::LEN]> = Vec::new();
    for at in 0..bytes.len().saturating_sub(record::LEN - 1) {
        if bytes[at..at + 8] == record::MAGIC {
            let r: [u8; record::LEN] = bytes[at..at + record::LEN].try_into().unwrap();
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    out
}

/// The bytes of each entry or symbol record in a binary, in every profile, are exactly what
/// the generator computes for that entry from the registry (`codegen::emit::record`, the one
/// function the emitters write the records with): the records the crate writes as literals
/// are the records min-driver reads.
#[test]
fn a_binarys_records_are_the_bytes_the_generator_computes() {
    let json = json();
    for profile in PROFILES {
        let path = binary(profile, "app");
        let found = records_in(&path);
        let mut compared = Vec::new();
        for r in &found {
            let decoded = EntryRecord::decode(r, true).unwrap_or_else(|| panic!("{profile}: {r:?} does not decode"));
            let symbol = decoded.symbol_name().unwrap().to_owned();
            let abis: Vec<(&codegen::registry_json::Entry, Abi<'_>)> = json
                .entries
                .iter()
                .filter(|e| e.symbol == symbol)
                .map(|e| {
                    let abi = Abi {
                        version: e.version,
                        per_thread: e.variant.is_some(),
                        exported: &e.exported,
                        min_driver: e.min_driver,
                    };
                    (e, abi)
                })
                .collect();
            let want = match decoded.kind() {
                Some(RecordKind::Entry) => {
                    let (version, per_thread) = (decoded.version, decoded.per_thread());
                    let (e, abi) = abis
                        .iter()
                        .find(|(e, _)| e.version == version && e.variant.is_some() == per_thread)
                        .unwrap_or_else(|| panic!("{profile}: a record of {symbol} v{version} the registry lacks"));
                    compared.push(e.pfn.trim_start_matches("PFN_").to_owned());
                    Record::entry(&e.symbol, *abi).bytes().unwrap()
                }
                Some(RecordKind::Newest) => {
                    let all: Vec<Abi<'_>> = abis.iter().map(|(_, a)| *a).collect();
                    compared.push(format!("newest {symbol}"));
                    Record::newest(&symbol, &all).unwrap().bytes().unwrap()
                }
                _ => continue,
            };
            assert_eq!(r.as_slice(), want.as_slice(), "{profile}: the record of {symbol} in {}", path.display());
        }
        compared.sort();
        let (ctx_create, _) = cu_ctx_create();
        assert_eq!(compared, [ctx_create, "newest cuStreamBeginCapture".to_owned()], "{profile}");
    }
}

/// Every record of every built program, in every profile, decodes with `EntryRecord::decode`
/// (the one definition of the format: the crate's type, the emitter's and min-driver's reader's)
/// and encodes back to its own bytes; the programs hold records of every kind, and min-driver
/// reads exactly the records the definition decodes.
#[test]
fn every_record_of_a_built_binary_decodes_with_the_one_definition() {
    for profile in PROFILES {
        let mut kinds = std::collections::BTreeSet::new();
        for name in ["app", "raw", "fixed"] {
            let path = binary(profile, name);
            let found = records_in(&path);
            assert!(!found.is_empty(), "{profile}: no record in {}", path.display());
            let mut symbols = Vec::new();
            for r in &found {
                let d = EntryRecord::decode(r, true)
                    .unwrap_or_else(|| panic!("{profile}: a record of {} does not decode: {r:?}", path.display()));
                assert_eq!(d.to_bytes(), *r, "{profile}: {}", path.display());
                assert_eq!(d.check, d.checksum());
                kinds.insert(d.kind().unwrap_or_else(|| panic!("{profile}: a record of kind {}", d.how)));
                symbols.push((d.symbol_name().unwrap().to_owned(), d.version));
                // Damaged anywhere the check covers, it is no record.
                let mut bad = *r;
                bad[20] ^= 0x40;
                assert!(EntryRecord::decode(&bad, true).is_none());
            }
            // What min-driver reads of the program: the records the definition decodes.
            let f = floor_of(&path);
            for u in f.uses.iter().filter(|u| u.reading == Reading::Record) {
                assert!(
                    symbols.iter().any(|(s, _)| u.spelled.contains(s.as_str())),
                    "{profile}: min-driver read {} that the definition did not decode",
                    u.spelled
                );
            }
        }
        let all = [RecordKind::Entry, RecordKind::Newest, RecordKind::Runtime, RecordKind::Fixed];
        assert_eq!(kinds.into_iter().collect::<Vec<_>>(), all, "{profile}");
    }
}

/// `get_raw` leaves a record that makes the floor "at least"; `get_raw!` one of its name and
/// version, exact.
#[test]
fn run_time_lookups_say_at_least_and_the_compile_time_form_is_exact() {
    let (ctx_create, v) = cu_ctx_create();
    for profile in PROFILES {
        let raw = floor_of(&binary(profile, "raw"));
        assert!(raw.at_least(), "{profile}:\n{}", raw.render(Path::new("."), None));
        assert!(raw.unresolved.iter().any(|u| u.reading == Reading::Runtime && u.spelled.contains("get_raw")));
        let fixed = floor_of(&binary(profile, "fixed"));
        let report = fixed.render(Path::new("."), None);
        assert!(!fixed.at_least(), "{profile}:\n{report}");
        assert_eq!(fixed.version(), v, "{profile}:\n{report}");
        assert_eq!(markers(&fixed), [ctx_create.as_str()], "{profile}:\n{report}");
    }
}

fn cli(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(cuda_sys_gen_binary()).args(args).current_dir(repo_root()).output().unwrap();
    (o.status.code(), format!("{}{}", text(&o.stdout), text(&o.stderr)))
}

/// `--max`, `--driver` and `--json` over a binary: the report says which reading gave each
/// line.
#[test]
fn the_flags_work_on_binaries() {
    let app = binary("release", "app");
    let app = app.to_str().unwrap();
    let (code, out) = cli(&["min-driver", app, "--max", "12.0"]);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("record"), "{out}");
    let (code, out) = cli(&["min-driver", app, "--max", "13.0"]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = cli(&["min-driver", app, "--json"]);
    assert_eq!(code, Some(0), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], 2);
    assert!(v["entries"].as_array().unwrap().iter().all(|e| e["reading"] == "record"), "{out}");
    assert_eq!(v["programs"].as_array().unwrap().len(), 1);
    let raw = binary("release", "raw");
    let (code, out) = cli(&["min-driver", raw.to_str().unwrap(), "--max", "13.0"]);
    assert_eq!(code, Some(2), "{out}");
    // Sources and programs are not mixed.
    let (code, out) = cli(&["min-driver", app, "generated/examples/vector_add_drv.rs"]);
    assert_eq!(code, Some(1), "{out}");
}

/// C programs: a libcuda function imported by its exported name counts as exactly that ABI
/// (`cuCtxCreate_v4` is cuCtxCreate at 12.5); a program that asks cuGetProcAddress counts the
/// registry names among its strings at their highest meaning. Linked against a stand-in
/// libcuda.so that only defines the names (nothing runs).
#[test]
fn c_programs_count_imports_and_the_names_they_look_up() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cc = |args: &[&str]| {
        let o = Command::new("cc").args(args).current_dir(d).output().expect("cc");
        assert!(o.status.success(), "cc {args:?}: {}", text(&o.stderr));
    };
    std::fs::write(
        d.join("stub.c"),
        "int cuCtxCreate_v4(void *a, void *b, unsigned c, int e) { return 0; }\n\
         int cuInit(unsigned f) { return 0; }\n\
         int cuGetProcAddress_v2(const char *s, void **p, int v, unsigned long long f, int *st) { return 0; }\n",
    )
    .unwrap();
    cc(&["-shared", "-fPIC", "-o", "libcuda.so", "stub.c"]);
    std::fs::write(
        d.join("imports.c"),
        "int cuInit(unsigned);\nint cuCtxCreate_v4(void *, void *, unsigned, int);\n\
         int main(void) { cuInit(0); return cuCtxCreate_v4(0, 0, 0, 0); }\n",
    )
    .unwrap();
    cc(&["-o", "imports", "imports.c", "-L.", "-lcuda"]);
    let (ctx_create, v) = cu_ctx_create();
    let f = floor_of(&d.join("imports"));
    let report = f.render(d, None);
    assert_eq!(f.version(), v, "{report}");
    assert!(f.uses.iter().any(|u| u.marker == ctx_create && u.reading == Reading::Import), "{report}");
    assert!(f.uses.iter().any(|u| u.marker == "cuInit_v2000"), "{report}");

    std::fs::write(
        d.join("lookup.c"),
        "int cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);\n\
         int main(int argc, char **argv) { void *p; return cuGetProcAddress_v2(argc > 1 ? argv[1] : \"cuMemAdvise\", &p, 12020, 0, 0); }\n",
    )
    .unwrap();
    cc(&["-o", "lookup", "lookup.c", "-L.", "-lcuda"]);
    let advise = json().entries.iter().filter(|e| e.symbol == "cuMemAdvise").map(|e| e.version).max().unwrap();
    let f = floor_of(&d.join("lookup"));
    let report = f.render(d, None);
    let u = f.uses.iter().find(|u| u.marker.starts_with("cuMemAdvise_v")).unwrap_or_else(|| panic!("{report}"));
    assert_eq!((u.reading, u.read_as, u.version), (Reading::String, "highest", advise), "{report}");
}

/// Two shapes a reader can miss, each said as "at least", never dropped: a program that looks
/// libcuda's functions up with `dlvsym` (dlsym's versioned twin), and a fatbin in `.rodata`
/// whose header is of a version this reader does not know (its entries may need any driver).
#[test]
fn dlvsym_lookups_and_an_unknown_fatbin_layout_are_never_any_driver() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cc = |args: &[&str]| {
        let o = Command::new("cc").args(args).current_dir(d).output().expect("cc");
        assert!(o.status.success(), "cc {args:?}: {}", text(&o.stderr));
    };
    std::fs::write(
        d.join("dlvsym.c"),
        "#define _GNU_SOURCE\n#include <dlfcn.h>\n\
         int main(void) { void *h = dlopen(\"libcuda.so.1\", RTLD_NOW);\n\
         return dlvsym(h, \"cuMemcpyBatchAsync\", \"\") != 0; }\n",
    )
    .unwrap();
    cc(&["-o", "dlvsym", "dlvsym.c", "-ldl"]);
    let f = floor_of(&d.join("dlvsym"));
    let report = f.render(d, None);
    assert!(f.uses.iter().any(|u| u.marker.starts_with("cuMemcpyBatchAsync")), "{report}");
    assert!(f.at_least(), "{report}");

    // Magic, version 2, a header of 16 bytes, 128 bytes of payload.
    let mut k = vec![0x50u8, 0xed, 0x55, 0xba, 2, 0, 16, 0, 128, 0, 0, 0, 0, 0, 0, 0];
    k.resize(144, 0x11);
    let bytes: Vec<String> = k.iter().map(u8::to_string).collect();
    std::fs::write(
        d.join("fatbin.c"),
        format!(
            "__attribute__((used, section(\".rodata.k\"))) const unsigned char k[{}] = {{{}}};\n\
             int main(void) {{ return 0; }}\n",
            k.len(),
            bytes.join(",")
        ),
    )
    .unwrap();
    cc(&["-o", "fatbin", "fatbin.c"]);
    let f = floor_of(&d.join("fatbin"));
    let report = f.render(d, None);
    assert!(f.at_least(), "{report}");
    assert!(f.unresolved.iter().any(|u| u.why.contains("version 2")), "{report}");
}

/// A section that is not a record, or a record cut short, is no record and no panic; a
/// fatbin whose header says size 0 ends.
#[test]
fn damaged_binaries_are_no_panic_and_no_hang() {
    let app = std::fs::read(binary("release", "app")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for cut in [64, 4096, app.len() / 2] {
        let p = dir.path().join(format!("cut{cut}"));
        std::fs::write(&p, &app[..cut]).unwrap();
        let _ = floor(&registry(), &[p]);
    }
    // Fatbins whose headers say size 0, or a header of 0 bytes, embedded by a program.
    let fatbin = |header: u8, size: u8| [0x50, 0xed, 0x55, 0xba, 1, 0, header, 0, size, 0, 0, 0, 0, 0, 0, 0];
    for (header, size) in [(16, 0), (0, 0), (0, 16), (16, 64)] {
        let d = tempfile::tempdir().unwrap();
        let mut bytes = fatbin(header, size).to_vec();
        bytes.extend(fatbin(header, size));
        std::fs::write(d.path().join("k.fatbin"), &bytes).unwrap();
        std::fs::write(d.path().join("main.rs"), "static K: &[u8] = include_bytes!(\"k.fatbin\");\nfn main() {}\n")
            .unwrap();
        let _ = floor(&registry(), &[d.path().to_owned()]);
    }
}

fn nvcc_fixture(name: &str) -> PathBuf {
    repo_root().join("tests/kernels/nvcc").join(name)
}

/// A program nvcc 13.0 built with the shared runtime, as it ran on the GPU machine's 13.0
/// driver: its runtime (libcudart.so.13: minor version compatibility, CUDA 13.0), cubins by
/// ptxas 13.0 and its zstd-compressed PTX (ISA 9.0), all read: exact, 13.0.
#[test]
fn an_nvcc_program_is_read_exactly() {
    let f = floor_of(&nvcc_fixture("k_shared"));
    let report = f.render(Path::new("."), None);
    assert_eq!(f.version(), 13000, "{report}");
    assert!(!f.at_least(), "{report}");
    let needs: Vec<(&str, &str)> = f.kernels.iter().map(|k| (k.needs.as_str(), k.reading.as_str())).collect();
    for want in [
        ("the CUDA 13.x runtime", "runtime"),
        // The PTX of a fatbin that holds cubins too: JIT-compiled only for a GPU without one.
        ("PTX ISA 9.0", "jit"),
        ("a CUDA 13.x cubin", "kernel"),
        ("sm_90", "kernel"),
    ] {
        assert!(needs.contains(&want), "{want:?} in\n{report}");
    }
}

/// A plain C program against cuda.h: its imports (cuda.h 13.0 maps cuCtxCreate to
/// cuCtxCreate_v4, 12.5) and its PTX. The GPU machine's 13.0 driver refused its ISA 9.1 module
/// with CUDA_ERROR_UNSUPPORTED_PTX_VERSION and ran the rest: `--driver 580.65.06` is "does
/// not run", naming that module, and the floor is 13.1.
#[test]
fn a_c_program_against_cuda_h() {
    let drv = nvcc_fixture("drv");
    let f = floor_of(&drv);
    let report = f.render(Path::new("."), None);
    let (ctx_create, _) = cu_ctx_create();
    assert!(f.uses.iter().any(|u| u.marker == ctx_create && u.reading == Reading::Import), "{report}");
    assert_eq!(f.version(), 13010, "{report}");
    let (code, out) = cli(&["min-driver", drv.to_str().unwrap(), "--driver", "580.65.06"]);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("PTX ISA 9.1"), "{out}");
}

/// nvcc 13.5 from PyPI, PTX only: zstd-compressed ISA 9.5 (CUDA 13.5), the shared runtime.
#[test]
fn a_pypi_nvcc_program_needs_its_ptx_isa() {
    let f = floor_of(&nvcc_fixture("k_pip_shared_ptx"));
    let report = f.render(Path::new("."), None);
    assert_eq!(f.version(), 13050, "{report}");
    assert!(!f.at_least(), "{report}");
    assert!(f.kernels.iter().any(|k| k.needs == "PTX ISA 9.5" && k.what.contains("zstd")), "{report}");
}

/// `--arch`: of each fatbin, only the entry the driver loads on that GPU counts; the others
/// are listed as not loaded, and a fatbin with nothing for the GPU is said.
#[test]
fn the_arch_flag_counts_the_entry_the_gpu_loads() {
    let k = nvcc_fixture("k_shared");
    let f = cuda_sys_gen::min_driver::floor_on(&registry(), std::slice::from_ref(&k), Some(90)).unwrap();
    let report = f.render(Path::new("."), None);
    assert!(!f.at_least(), "{report}");
    assert!(f.kernels.iter().any(|k| k.needs == "sm_90") && !f.kernels.iter().any(|k| k.needs == "sm_80"), "{report}");
    assert!(f.unused.iter().any(|u| u.contains("sm_80")), "{report}");
    let f = cuda_sys_gen::min_driver::floor_on(&registry(), std::slice::from_ref(&k), Some(75)).unwrap();
    let report = f.render(Path::new("."), None);
    assert!(f.unresolved.iter().any(|u| u.why.contains("no entry runs on sm_75")), "{report}");
    let (code, out) = cli(&["min-driver", k.to_str().unwrap(), "--arch", "sm_75", "--driver", "13.0"]);
    assert_eq!(code, Some(2), "{out}");
    let (code, out) = cli(&["min-driver", k.to_str().unwrap(), "--arch", "sm_99"]);
    assert_eq!(code, Some(1), "{out}");
}

/// FNV-1a, as the generated crate checks its records.
fn fnv(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// A record of the generated crate (`EntryRecord`, 160 bytes) of kind `how` (4: `get_raw!`).
fn record(how: u8, version: u32, floor: u32, symbol: &str) -> Vec<u8> {
    let mut r = vec![0u8; 160];
    r[..8].copy_from_slice(b"\xc3cuRec\x1a\n");
    r[8] = 1;
    r[9] = how;
    r[10] = 1;
    r[12..16].copy_from_slice(&version.to_le_bytes());
    r[16..20].copy_from_slice(&floor.to_le_bytes());
    r[20..24].copy_from_slice(&version.to_le_bytes());
    r[24..24 + symbol.len()].copy_from_slice(symbol.as_bytes());
    r[88..88 + symbol.len()].copy_from_slice(symbol.as_bytes());
    let check = fnv(&r[..152]);
    r[152..156].copy_from_slice(&check.to_le_bytes());
    r
}

/// A C program holding `records` in its read-only data and `main` as given, built with `cc`
/// (linked against a stand-in libcuda.so that only defines the names `stub` gives).
fn c_program(d: &Path, name: &str, records: &[Vec<u8>], stub: &str, main: &str) -> PathBuf {
    let cc = |args: &[&str]| {
        let o = Command::new("cc").args(args).current_dir(d).output().expect("cc");
        assert!(o.status.success(), "cc {args:?}: {}", text(&o.stderr));
    };
    std::fs::write(d.join(format!("{name}_stub.c")), stub).unwrap();
    cc(&["-shared", "-fPIC", "-o", "libcuda.so", &format!("{name}_stub.c")]);
    let mut src = String::new();
    for (i, r) in records.iter().enumerate() {
        let bytes: Vec<String> = r.iter().map(|b| b.to_string()).collect();
        src.push_str(&format!(
            "__attribute__((used)) static const unsigned char record{i}[160] = {{{}}};\n",
            bytes.join(",")
        ));
    }
    src.push_str(main);
    std::fs::write(d.join(format!("{name}.c")), src).unwrap();
    cc(&["-o", name, &format!("{name}.c"), "-L.", "-lcuda"]);
    d.join(name)
}

/// `get_raw!` at a version that introduced no ABI of its symbol asks for the ABI the driver
/// answers with there (the newest at or below it): its floor is that ABI's, measured floor
/// included, not the version written.
#[test]
fn a_fixed_lookup_between_abis_gets_the_floor_of_the_abi_answered() {
    let json = json();
    let measured = json
        .entries
        .iter()
        .find(|e| e.variant.is_none() && e.min_driver.is_some_and(|m| m > e.version + 10))
        .expect("an entry whose measured floor is above its version");
    let between = measured.version + 10;
    assert!(
        !json.entries.iter().any(|e| e.symbol == measured.symbol && e.version == between),
        "{} has an ABI at {between}: pick another version",
        measured.symbol
    );
    let dir = tempfile::tempdir().unwrap();
    let p = c_program(
        dir.path(),
        "fixed",
        &[record(4, between, between, &measured.symbol)],
        "int cuInit(unsigned f) { return 0; }\n",
        "int cuInit(unsigned);\nint main(void) { return cuInit(0); }\n",
    );
    let f = floor_of(&p);
    let report = f.render(dir.path(), None);
    let marker = measured.pfn.trim_start_matches("PFN_");
    let u = f.uses.iter().find(|u| u.reading == Reading::Record).unwrap_or_else(|| panic!("{report}"));
    assert_eq!((u.marker.as_str(), u.version), (marker, measured.min_driver.unwrap()), "{report}");
    assert_eq!(f.version(), measured.min_driver.unwrap(), "{report}");
}

/// `path` without its section headers, as `llvm-objcopy --strip-sections` or sstrip leave a
/// 64-bit little-endian program: `e_shoff`, `e_shnum` and `e_shstrndx` zeroed.
fn without_sections(path: &Path, to: &Path) -> PathBuf {
    let mut b = std::fs::read(path).unwrap();
    assert!(b.starts_with(b"\x7fELF") && b[4] == 2 && b[5] == 1, "{}: not ELF64 LE", path.display());
    b[0x28..0x30].fill(0);
    b[0x3c..0x40].fill(0);
    std::fs::write(to, &b).unwrap();
    to.to_owned()
}

/// A program without section headers is read from its loaded segments: its records, its
/// imports, the runtime it links and its kernels, as with the headers.
#[test]
fn a_program_without_section_headers_is_read_from_its_segments() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let imports = c_program(
        d,
        "imports",
        &[],
        "int cuCtxCreate_v4(void *a, void *b, unsigned c, int e) { return 0; }\nint cuInit(unsigned f) { return 0; }\n",
        "int cuInit(unsigned);\nint cuCtxCreate_v4(void *, void *, unsigned, int);\n\
         int main(void) { cuInit(0); return cuCtxCreate_v4(0, 0, 0, 0); }\n",
    );
    let lookup = c_program(
        d,
        "lookup",
        &[],
        "int cuGetProcAddress_v2(const char *s, void **p, int v, unsigned long long f, int *st) { return 0; }\n",
        "int cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);\n\
         int main(int argc, char **argv) { void *p; return cuGetProcAddress_v2(argc > 1 ? argv[1] : \"cuMemAdvise\", &p, 12020, 0, 0); }\n",
    );
    let programs = [binary("release", "app"), binary("small", "app"), imports, lookup, nvcc_fixture("k_shared")];
    for (i, p) in programs.iter().enumerate() {
        let whole = floor_of(p);
        let stripped = floor_of(&without_sections(p, &d.join(format!("stripped{i}"))));
        let report = stripped.render(d, None);
        assert!(whole.version() > 0, "{}", whole.render(d, None));
        assert!(stripped.programs[0].contains("no section headers"), "{report}");
        assert_eq!(stripped.version(), whole.version(), "{}:\n{report}", p.display());
        assert_eq!(stripped.at_least(), whole.at_least(), "{}:\n{report}", p.display());
        assert_eq!(markers(&stripped), markers(&whole), "{}:\n{report}", p.display());
        let needs = |f: &Floor| f.kernels.iter().map(|k| k.needs.clone()).collect::<Vec<_>>();
        assert_eq!(needs(&stripped), needs(&whole), "{}:\n{report}", p.display());
    }
}

/// A program that asks for driver functions by name through cudaGetDriverEntryPoint counts the
/// names its strings hold; one that holds records and also imports cuGetProcAddress (a C
/// library linked in) is "at least", saying why.
#[test]
fn lookups_by_name_beside_records_or_through_the_runtime_are_not_missed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stub = "int cudaGetDriverEntryPointByVersion(const char *s, void **p, unsigned v, unsigned long long f, int *st) { return 0; }\n\
                int cuGetProcAddress_v2(const char *s, void **p, int v, unsigned long long f, int *st) { return 0; }\n\
                int cuInit(unsigned f) { return 0; }\n";
    let lock = json()
        .entries
        .iter()
        .filter(|e| e.symbol == "cuCheckpointProcessLock")
        .map(|e| e.version)
        .max()
        .expect("cuCheckpointProcessLock in the registry");
    let runtime = c_program(
        d,
        "runtime",
        &[],
        stub,
        "int cudaGetDriverEntryPointByVersion(const char *, void **, unsigned, unsigned long long, int *);\n\
         int main(int argc, char **argv) { void *p; return cudaGetDriverEntryPointByVersion(argc > 1 ? argv[1] : \"cuCheckpointProcessLock\", &p, 12080, 0, 0); }\n",
    );
    let f = floor_of(&runtime);
    let report = f.render(d, None);
    let u =
        f.uses.iter().find(|u| u.marker.starts_with("cuCheckpointProcessLock_v")).unwrap_or_else(|| panic!("{report}"));
    assert_eq!((u.reading, u.version), (Reading::String, lock), "{report}");
    assert_eq!(f.version(), lock, "{report}");

    let (ctx_create, v) = cu_ctx_create();
    let both = c_program(
        d,
        "both",
        &[record(4, v, v, "cuCtxCreate")],
        stub,
        "int cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);\n\
         int main(int argc, char **argv) { void *p; return cuGetProcAddress_v2(argc > 1 ? argv[1] : \"cuMemAdvise\", &p, 12020, 0, 0); }\n",
    );
    let f = floor_of(&both);
    let report = f.render(d, None);
    assert!(markers(&f).contains(&ctx_create.as_str()), "{report}");
    assert!(!f.uses.iter().any(|u| u.reading == Reading::String), "{report}");
    assert!(f.at_least(), "{report}");
    let u =
        f.unresolved.iter().find(|u| u.spelled.contains("cuGetProcAddress_v2")).unwrap_or_else(|| panic!("{report}"));
    assert!(u.why.contains("records"), "{report}");
}

/// Only the files given are read: a shared library the program needs (not the C runtime, not
/// libcuda) is named as not read, and is not once it is given too.
#[test]
fn the_libraries_a_program_needs_are_named_until_given() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("foo.c"), "int foo(void) { return 1; }\n").unwrap();
    let o = Command::new("cc").args(["-shared", "-fPIC", "-o", "libfoo.so", "foo.c"]).current_dir(d).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::write(d.join("uses_foo_stub.c"), "int cuInit(unsigned f) { return 0; }\n").unwrap();
    let o = Command::new("cc")
        .args(["-shared", "-fPIC", "-o", "libcuda.so", "uses_foo_stub.c"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::write(
        d.join("uses_foo.c"),
        "int cuInit(unsigned);\nint foo(void);\nint main(void) { return cuInit(0) + foo(); }\n",
    )
    .unwrap();
    let o = Command::new("cc")
        .args(["-o", "uses_foo", "uses_foo.c", "-L.", "-lfoo", "-lcuda"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let f = floor_of(&d.join("uses_foo"));
    let report = f.render(d, None);
    assert_eq!(f.not_read, ["libfoo.so"], "{report}");
    assert!(report.contains("not read: libfoo.so (pass it too)"), "{report}");
    let both = floor(&registry(), &[d.join("uses_foo"), d.join("libfoo.so")]).unwrap();
    assert!(both.not_read.is_empty(), "{}", both.render(d, None));
}

/// A CUDA 10.x runtime (no minor version compatibility before 11) needs its own release: a
/// program linking `libcudart.so.10.1` needs CUDA 10.1, and says why.
#[test]
fn a_runtime_before_cuda_11_needs_its_own_release() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rt.c"), "int cudaFree(void *p) { return 0; }\n").unwrap();
    let run = |args: &[&str]| {
        let o = Command::new("cc").args(args).current_dir(d).output().unwrap();
        assert!(o.status.success(), "cc {args:?}: {}", text(&o.stderr));
    };
    run(&["-shared", "-fPIC", "-Wl,-soname,libcudart.so.10.1", "-o", "libcudart.so.10.1", "rt.c"]);
    std::fs::write(d.join("old.c"), "int cudaFree(void *);\nint main(void) { return cudaFree(0); }\n").unwrap();
    run(&["-o", "old", "old.c", "./libcudart.so.10.1"]);
    let f = floor_of(&d.join("old"));
    let report = f.render(d, None);
    assert_eq!(f.version(), 10010, "{report}");
    let k = f.kernels.iter().find(|k| k.reading == Reading::Runtime).unwrap_or_else(|| panic!("{report}"));
    assert!(k.what.contains("no minor version compatibility"), "{report}");
    assert!(f.not_read.is_empty(), "{report}");
}

/// A program on cudarc, as its users write one: dynamic loading, `sys` calls and the safe API.
/// cudarc opens libcuda by a name built at run time ("lib" + "cuda" + ".so") and looks each
/// function up by its exported name, a Rust string without a NUL, so the names of the
/// functions the program can call lie run together in its read-only data
/// (`cuDeviceGetcuCtxCreate_v4cuCtxDestroy_v2...`). Only those the linker kept are there, not
/// the hundreds of its bindings.
const CUDARC_PROGRAM: &str = r#"use cudarc::driver::{sys, CudaContext};

fn main() {
    if std::env::args().count() > 5 {
        let mut ctx = std::ptr::null_mut();
        unsafe {
            sys::cuInit(0);
            sys::cuCtxCreate_v4(&mut ctx, std::ptr::null_mut(), 0, 0);
        }
        let _ = CudaContext::new(0);
    }
}
"#;

/// cudarc's release, pinned: what its bindings leave in a program is what this test reads.
const CUDARC: &str = "=0.19.10";

/// The cudarc program, built in release under the repository's target folder (cudarc is
/// downloaded from crates.io the first time; without a network, outside CI, the test says
/// SKIPPED).
fn cudarc_program() -> Option<PathBuf> {
    let root = repo_root().join("target/min-driver-cudarc");
    write(
        &root,
        "Cargo.toml",
        &format!(
            "[package]\nname = \"cudarc-program\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ncudarc = {{ version = \"{CUDARC}\", default-features = false, features = [\"std\", \"driver\", \"dynamic-loading\", \"cuda-13040\"] }}\n\n\
             [workspace]\n"
        ),
    );
    write(&root, "src/main.rs", CUDARC_PROGRAM);
    let o = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--release", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    if !o.status.success() {
        let err = text(&o.stderr);
        let offline = ["download", "Unable to update", "failed to get", "network", "resolve host"];
        if std::env::var("CI").as_deref() != Ok("true") && offline.iter().any(|w| err.contains(w)) {
            eprintln!("SKIPPED: cudarc could not be fetched from crates.io:\n{err}");
            return None;
        }
        panic!("cargo build of the cudarc program: {err}");
    }
    Some(root.join("target/release/cudarc-program"))
}

/// A program on cudarc holds no records and imports no libcuda function: the names its strings
/// hold count, each at its highest meaning and said so. The floor is the newest function it
/// can call (`cuCtxCreate_v4`, 12.5), never "any driver" (what it was while a program had to
/// hold the string "libcuda.so" and whole words to be read), and not the newest of cudarc's
/// bindings.
#[test]
fn a_cudarc_program_needs_the_functions_it_can_call() {
    let Some(program) = cudarc_program() else { return };
    let (ctx_create, v) = cu_ctx_create();
    let f = floor_of(&program);
    let report = f.render(Path::new("."), None);
    assert_eq!(f.version(), v, "{report}");
    let top = f.uses.iter().find(|u| u.marker == ctx_create).unwrap_or_else(|| panic!("{report}"));
    assert_eq!((top.reading, top.read_as), (Reading::String, "highest"), "{report}");
    assert!(top.spelled.contains("\"cuCtxCreate_v4\""), "{report}");
    assert!(f.uses.iter().all(|u| u.reading == Reading::String && u.read_as == "highest"), "{report}");
    assert!(report.contains("(highest)"), "{report}");
    for called in ["cuInit_v2000", "cuDevicePrimaryCtxRetain_v7000"] {
        assert!(markers(&f).contains(&called), "{called}:\n{report}");
    }
    // The safe API's few, not the bindings' hundreds; an unused binding leaves nothing.
    assert!(f.uses.len() < 30, "{report}");
    assert!(!f.uses.iter().any(|u| u.marker.starts_with("cuCheckpoint")), "{report}");
    // A name it builds at run time would not be among its strings: the floor is a lower bound.
    assert!(f.at_least(), "{report}");
    assert!(
        f.unresolved.iter().any(|u| u.reading == Reading::Capability && u.why.contains("builds at run time")),
        "{report}"
    );
    // Read from strings only: an upper estimate, never "does not run".
    let (code, out) = cli(&["min-driver", program.to_str().unwrap(), "--max", "12.4"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("upper estimate"), "{out}");
    let (code, out) = cli(&["min-driver", program.to_str().unwrap(), "--max", "12.5"]);
    assert_eq!(code, Some(2), "within 12.5 as far as could be read, not proven: {out}");
}

/// A library for Windows x86-64 that imports cuInit and cuCtxCreate_v4 from `nvcuda.dll` (and
/// cublasCreate_v2 from `cublas64_12.dll`), and the same for Linux aarch64, built here by rustc and its own linker (rust-lld; `no_std`,
/// `raw-dylib` for the DLL): each import counts as exactly its ABI, as in an x86-64 ELF
/// program. Without the two targets installed (`rustup target add`), outside CI, SKIPPED.
#[test]
fn pe_and_aarch64_imports_count_exactly() {
    const SOURCE: &str = r#"#![no_std]
#[cfg_attr(windows, link(name = "nvcuda", kind = "raw-dylib"))]
extern "system" {
    fn cuInit(flags: u32) -> i32;
    fn cuCtxCreate_v4(ctx: *mut *mut u8, params: *mut u8, flags: u32, dev: i32) -> i32;
}
#[cfg(windows)]
#[link(name = "cublas64_12", kind = "raw-dylib")]
extern "system" {
    fn cublasCreate_v2(handle: *mut *mut u8) -> i32;
}
#[cfg(not(windows))]
unsafe fn cublasCreate_v2(_: *mut *mut u8) -> i32 {
    0
}
#[no_mangle]
pub extern "system" fn start() -> i32 {
    let mut c = core::ptr::null_mut();
    unsafe { cuInit(0) + cuCtxCreate_v4(&mut c, core::ptr::null_mut(), 0, 0) + cublasCreate_v2(&mut c) }
}
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
"#;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("lib.rs"), SOURCE).unwrap();
    let (ctx_create, v) = cu_ctx_create();
    let builds: [(&str, &str, &[&str], &str); 2] = [
        (
            "x86_64-pc-windows-msvc",
            "nvuser.dll",
            &["-C", "linker-flavor=lld-link", "-C", "link-arg=/NODEFAULTLIB", "-C", "link-arg=/NOENTRY"],
            "Pe X86_64",
        ),
        ("aarch64-unknown-linux-gnu", "libnvuser.so", &["-C", "linker-flavor=ld.lld"], "Elf Aarch64"),
    ];
    for (target, out, flags, format) in builds {
        let o = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
            .args(["--edition", "2021", "--crate-type", "cdylib", "--target", target, "-C", "panic=abort"])
            .args(["-C", "opt-level=2", "-C", "linker=rust-lld"])
            .args(flags)
            .arg("-o")
            .arg(d.join(out))
            .arg(d.join("lib.rs"))
            .env_remove("RUSTFLAGS")
            .output()
            .unwrap();
        if !o.status.success() {
            let err = text(&o.stderr);
            if std::env::var("CI").as_deref() != Ok("true") && err.contains("can't find crate for `core`") {
                eprintln!("SKIPPED: the {target} target is not installed: {err}");
                continue;
            }
            panic!("rustc --target {target}: {err}");
        }
        let f = floor_of(&d.join(out));
        let report = f.render(d, None);
        assert!(f.programs[0].contains(format), "{report}");
        assert_eq!(f.version(), v, "{report}");
        assert_eq!(markers(&f), [ctx_create.as_str(), "cuInit_v2000"], "{report}");
        assert!(f.uses.iter().all(|u| (u.reading, u.read_as) == (Reading::Import, "exact")), "{report}");
        // The DLL beside the driver is named as not read (what cuBLAS asks for is not counted,
        // so the floor is "at least"); nvcuda.dll itself is not.
        let not_read: &[&str] = if format.starts_with("Pe") { &["cublas64_12.dll"] } else { &[] };
        assert_eq!(f.not_read, not_read, "{report}");
        assert_eq!(f.at_least(), !not_read.is_empty(), "{report}");
    }
}
