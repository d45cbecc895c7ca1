//! `min-driver` never reports a floor lower than the truth (users ship what it says). Each program
//! here calls `cuCtxCreate` (CUDA 12.5 as the newest cuda.h means it) in a way rustc accepts,
//! and must get at least 12.5, however it spells the name; what narrows a floor must be proof;
//! what cannot be read is said; the kernels a program embeds count; and the whole is linear.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cuda_sys_gen::min_driver::releases::{cuda_number, Releases};
use cuda_sys_gen::min_driver::{floor, Floor};
use cuda_sys_gen_tests::*;

fn registry() -> PathBuf {
    repo_root().join("generated/registry.json")
}

/// registry.json through the generator's own serde types, as min-driver reads it.
fn json() -> codegen::registry_json::Registry {
    codegen::registry_json::Registry::parse(&std::fs::read_to_string(registry()).unwrap()).unwrap()
}

/// Writes `files` (path, text) into a new folder.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// The floor of one program, written to `main.rs` in a folder of its own.
fn floor_of(program: &str) -> (Floor, tempfile::TempDir) {
    let dir = tree(&[("main.rs", program)]);
    let f = floor(&registry(), &[dir.path().to_owned()]).unwrap_or_else(|e| panic!("{e:#}\n{program}"));
    (f, dir)
}

/// The version the newest cuda.h's `cuCtxCreate` needs, from the registry (not written out).
fn cu_ctx_create() -> u32 {
    let json = json();
    let newest = json.toolkits.last().unwrap();
    let pfn = json.c_names[newest]["cuCtxCreate"].default.as_deref().unwrap();
    let v = pfn.rsplit("_v").next().unwrap().parse().unwrap();
    assert!(v > 2000, "cuCtxCreate is no newer than cuInit: these tests would prove nothing");
    v
}

/// The oldest ABI of `symbol` (default variant), from the registry.
fn oldest_abi(symbol: &str) -> u32 {
    json().entries.iter().filter(|e| e.symbol == symbol && e.variant.is_none()).map(|e| e.version).min().unwrap()
}

fn assert_floor(program: &str, version: u32) {
    let (f, dir) = floor_of(program);
    assert_eq!(f.version(), version, "{}\n{program}", f.render(dir.path(), None));
    assert!(f.unresolved.is_empty(), "{}", f.render(dir.path(), None));
}

const CALL: &str = "(std::ptr::null_mut(), std::ptr::null_mut(), 0, 0)";

/// The stream-mode spellings the crate's docs recommend to libraries. Each
/// said "any driver will do" on the resolver min-driver had before.
#[test]
fn every_stream_mode_spelling_counts() {
    let v = cu_ctx_create();
    for program in [
        format!("fn main() {{ unsafe {{ cuda_driver_pfn::api::ptds::cuCtxCreate{CALL}; }} }}\n"),
        format!("use cuda_driver_pfn::api;\nfn main() {{ unsafe {{ api::legacy::cuCtxCreate{CALL}; }} }}\n"),
        format!("use cuda_driver_pfn::api::ptds as api;\nfn main() {{ unsafe {{ api::cuCtxCreate{CALL}; }} }}\n"),
        format!("use cuda_driver_pfn::cu_ptds as cu;\nfn main() {{ unsafe {{ cu!(cuCtxCreate{CALL}).unwrap(); }} }}\n"),
        format!("use cuda_driver_pfn::cu_legacy;\nfn main() {{ unsafe {{ cu_legacy!(cuCtxCreate{CALL}).unwrap(); }} }}\n"),
        format!("#[macro_use]\nextern crate cuda_driver_pfn;\nfn main() {{ unsafe {{ cu_ptds!(cuCtxCreate{CALL}).unwrap(); }} }}\n"),
    ] {
        assert_floor(&program, v);
    }
}

/// Case 2: a program's own macros around the crate's, and a marker passed into one.
#[test]
fn names_inside_the_program_s_own_macros_count() {
    let v = cu_ctx_create();
    assert_floor(
        &format!(
            "use cuda_driver_pfn::cu;\nmacro_rules! check {{ ($($c:tt)*) => {{ cu!($($c)*).expect(\"\") }} }}\n\
             fn main() {{ unsafe {{ check!(cuCtxCreate{CALL}); }} }}\n"
        ),
        v,
    );
    assert_floor(
        &format!(
            "use cuda_driver_pfn::{{entries, Driver}};\nmacro_rules! get {{ ($d:expr, $n:ident) => {{ $d.get::<entries::$n>() }} }}\n\
             fn f(d: &Driver) {{ let _ = get!(d, cuCtxCreate_v{v}); }}\n"
        ),
        v,
    );
}

/// Case 3: re-exports through another crate of the workspace: the application alone is given.
#[test]
fn names_through_another_crate_s_re_exports_count() {
    let v = cu_ctx_create();
    let dir = tree(&[
        ("wrap/Cargo.toml", "[package]\nname = \"wrap\"\n[dependencies]\ncuda-driver-pfn = \"0.1\"\n"),
        ("wrap/src/lib.rs", "pub use cuda_driver_pfn::{entries, Driver};\npub use cuda_driver_pfn as cuda;\n"),
        ("app/Cargo.toml", "[package]\nname = \"app\"\n[dependencies]\nwrap = { path = \"../wrap\" }\n"),
        (
            "app/src/main.rs",
            &format!(
                "fn main() {{\n    let d = wrap::Driver::load().unwrap();\n    let _ = d.get::<wrap::entries::cuCtxCreate_v{v}>();\n    \
                 let _ = d.get::<wrap::cuda::entries::cuCtxGetId_v12000>();\n}}\n"
            ),
        ),
    ]);
    let f = floor(&registry(), &[dir.path().join("app")]).unwrap();
    let markers: Vec<&str> = f.uses.iter().map(|u| u.marker.as_str()).collect();
    assert_eq!(markers, [format!("cuCtxCreate_v{v}").as_str(), "cuCtxGetId_v12000"], "{}", f.render(dir.path(), None));
    assert_eq!(f.uses[0].spelled, format!("wrap::entries::cuCtxCreate_v{v}"));
}

/// Case 4: `Driver::newest` counts, as the oldest ABI it can fall back to; and narrowing is
/// refused where `symbols` is not provably the crate's.
#[test]
fn driver_newest_counts_as_its_oldest_abi() {
    let oldest = oldest_abi("cuLaunchKernelEx");
    assert_floor(
        "use cuda_driver_pfn::{symbols, Driver};\nfn f(d: &Driver) { let _ = d.newest::<symbols::cuLaunchKernelEx>(); }\n",
        oldest,
    );
    // cuCtxCreate has four ABIs: Driver::newest needs only the first.
    let (f, dir) = floor_of(
        "fn f(d: &cuda_driver_pfn::Driver) { let _ = d.newest::<cuda_driver_pfn::symbols::cuCtxCreate>(); }\n",
    );
    assert_eq!(f.version(), oldest_abi("cuCtxCreate"), "{}", f.render(dir.path(), None));
    assert_eq!(f.uses[0].read_as, "oldest ABI");
    // A module of the program's own called `symbols`, or `api` renamed to it: no narrowing.
    let v = cu_ctx_create();
    assert_floor(
        &format!("use cuda_driver_pfn::api as symbols;\nfn main() {{ unsafe {{ symbols::cuCtxCreate{CALL}; }} }}\n"),
        v,
    );
    assert_floor(
        &format!("mod symbols {{ pub use cuda_driver_pfn::api::*; }}\nfn main() {{ unsafe {{ symbols::cuCtxCreate{CALL}; }} }}\n"),
        v,
    );
}

/// An older toolkit's C name through `aliases`, and the same name bare after importing it.
#[test]
fn an_older_toolkit_s_alias_is_narrowed_only_on_proof() {
    let json = json();
    let old = json.c_names[&"12.4".parse().unwrap()]["cuCtxCreate"].default.as_deref().unwrap();
    let old_v: u32 = old.rsplit("_v").next().unwrap().parse().unwrap();
    assert!(old_v < cu_ctx_create());
    assert_floor(
        &format!(
            "use cuda_driver_pfn::aliases;\nfn main() {{ unsafe {{ aliases::cuda_12_4::cuCtxCreate{CALL}; }} }}\n"
        ),
        old_v,
    );
    assert_floor(
        &format!("use cuda_driver_pfn as c;\nfn main() {{ unsafe {{ c::aliases::cuda_12_4::cuCtxCreate{CALL}; }} }}\n"),
        old_v,
    );
    // Called bare, the name may mean any toolkit's: the highest counts.
    assert_floor(
        &format!(
            "use cuda_driver_pfn::aliases::cuda_12_4::cuCtxCreate;\nfn main() {{ unsafe {{ cuCtxCreate{CALL}; }} }}\n"
        ),
        cu_ctx_create(),
    );
    // Through another crate's `aliases`: not provably the crate's.
    assert_floor(
        &format!("fn main() {{ unsafe {{ wrap::aliases::cuda_12_4::cuCtxCreate{CALL}; }} }}\n"),
        cu_ctx_create(),
    );
}

/// Case 5: cuDeviceGetLuid is declared at 10.0, but NVIDIA's 450 driver (CUDA 11.0) lacks it
/// (tests/real_drivers.rs measures it): the registry's measured floor is what counts.
#[test]
fn a_measured_driver_floor_corrects_the_header_s_version() {
    let json = json();
    let luid = json.entries.iter().find(|e| e.symbol == "cuDeviceGetLuid").unwrap();
    let header = luid.version;
    let measured = luid.min_driver.expect("registry.json carries the measured floor");
    assert!(measured > 11000 && header < measured, "{header} {measured}");
    assert_floor(
        "use cuda_driver_pfn::cu;\nfn main() { unsafe { cu!(cuDeviceGetLuid(a, b, 0)).unwrap(); } }\n",
        measured,
    );
}

/// Case 6: globs of other crates (and nothing of the crate at all) finish at once. A bound of
/// a minute: this test catches a hang, the benchmark (`cargo xtask bench --only min-driver`)
/// measures speed.
#[test]
fn globs_do_not_hang() {
    let programs = [
        "use std::collections::*;\nuse std::ptr::*;\nfn main() { let _ = null::<u8>(); }\n".to_owned(),
        "use cuda_driver_pfn::api::*;\nuse cuda_driver_pfn::types::*;\nfn main() { unsafe { cuInit(0); } }\n".to_owned(),
        "use std::collections::*;\nuse std::ptr::*;\nuse std::sync::*;\nmod a { use super::*; pub use std::io::*; }\nmod b { use super::*; use a::*; }\nfn main() {}\n".to_owned(),
    ];
    for p in programs {
        let (tx, rx) = std::sync::mpsc::channel();
        let text = p.clone();
        std::thread::spawn(move || {
            let _ = tx.send(floor_of(&text).0.version());
        });
        assert!(rx.recv_timeout(Duration::from_secs(60)).is_ok(), "min-driver did not finish in a minute:\n{p}");
    }
}

/// A build script's entries are not the program's: it runs where the program is built.
#[test]
fn a_build_script_does_not_set_the_program_s_floor() {
    let dir = tree(&[
        ("Cargo.toml", "[package]\nname = \"app\"\n[dependencies]\ncuda-driver-pfn = \"0.1\"\n"),
        (
            "build.rs",
            &format!(
                "mod probe;\nfn main() {{ unsafe {{ cuda_driver_pfn::cu!(cuCtxCreate{CALL}).ok(); }} probe::go(); }}\n"
            ),
        ),
        ("probe.rs", "pub fn go() { unsafe { cuda_driver_pfn::api::cuCtxGetId(a, b); } }\n"),
        ("src/main.rs", "fn main() { unsafe { cuda_driver_pfn::cu!(cuInit(0)).unwrap(); } }\n"),
    ]);
    let f = floor(&registry(), &[dir.path().to_owned()]).unwrap();
    let report = f.render(dir.path(), None);
    assert_eq!(f.version(), oldest_abi("cuInit"), "{report}");
    assert_eq!(f.build_only, [dir.path().join("build.rs"), dir.path().join("probe.rs")], "{report}");
    assert!(report.contains("not counted: build.rs"), "{report}");
    // A file both the build script and the program include counts.
    std::fs::write(
        dir.path().join("src/main.rs"),
        "#[path = \"../probe.rs\"]\nmod probe;\nfn main() { probe::go(); }\n",
    )
    .unwrap();
    let f = floor(&registry(), &[dir.path().to_owned()]).unwrap();
    assert_eq!(f.build_only, [dir.path().join("build.rs")], "{}", f.render(dir.path(), None));
    assert!(f.uses.iter().any(|u| u.marker.starts_with("cuCtxGetId")));
}

/// The module aliases, renames and globs the old resolver followed still count.
#[test]
fn module_aliases_renames_and_globs() {
    let v = cu_ctx_create();
    for program in [
        format!("use cuda_driver_pfn::api as cu;\nfn main() {{ unsafe {{ cu::cuCtxCreate{CALL}; }} }}\n"),
        format!("use cuda_driver_pfn::entries as e;\nfn f(d: &cuda_driver_pfn::Driver) {{ let _ = d.get::<e::cuCtxCreate_v{v}>(); }}\n"),
        format!("use cuda_driver_pfn::api::{{self as cuda}};\nfn main() {{ unsafe {{ cuda::cuCtxCreate{CALL}; }} }}\n"),
        format!("use cuda_driver_pfn::cu as cuda_call;\nfn main() {{ unsafe {{ cuda_call!(cuCtxCreate{CALL}).unwrap(); }} }}\n"),
        format!("mod gpu {{\n    pub fn start() {{ unsafe {{ cuCtxCreate{CALL}; }} }}\n    use cuda_driver_pfn::api::*;\n}}\nfn main() {{ gpu::start() }}\n"),
        format!("use cuda_driver_pfn::cu;\n#[cfg(any())]\nfn never() {{ unsafe {{ cu!(cuCtxCreate{CALL}).unwrap(); }} }}\nfn main() {{}}\n"),
        format!("fn main() {{ unsafe {{ println!(\"{{:?}}\", cuda_driver_pfn::cu!(cuCtxCreate{CALL})); }} }}\n"),
    ] {
        assert_floor(&program, v);
    }
}

/// A crate renamed in Cargo.toml, and a module folder named `target` (only a package's own
/// target/ is skipped).
#[test]
fn a_renamed_dependency_and_a_target_module() {
    let v = cu_ctx_create();
    let dir = tree(&[
        ("Cargo.toml", "[package]\nname = \"app\"\n[dependencies]\ncuda = { package = \"cuda-driver-pfn\", version = \"0.1\" }\n"),
        ("src/main.rs", "mod target;\nfn main() { target::start() }\n"),
        ("src/target/mod.rs", &format!("pub fn start() {{ unsafe {{ cuda::aliases::cuda_12_4::cuCtxCreate{CALL}; cuda::cu!(cuCtxCreate{CALL}).unwrap(); }} }}\n")),
        ("target/debug/build/x/out/gen.rs", "fn f() { cuda::cu!(cuGraphAddNode(a)); }\n"),
    ]);
    let f = floor(&registry(), &[dir.path().to_owned()]).unwrap();
    assert_eq!(f.version(), v, "{}", f.render(dir.path(), None));
    assert_eq!(f.uses[0].file, dir.path().join("src/target/mod.rs"));
    assert!(!f.uses.iter().any(|u| u.marker.starts_with("cuGraphAddNode")), "{}", f.render(dir.path(), None));
}

/// Names that are not the crate's are no error: a variable beside `use api::*`, a module of
/// the program's own called `entries`.
#[test]
fn names_that_are_not_the_crate_s_are_no_error() {
    let (f, dir) = floor_of(
        "use cuda_driver_pfn::api::*;\nfn main() {\n    let mut cuDevice = 0;\n    unsafe { cuDeviceGet(&mut cuDevice, 0); }\n    println!(\"{}\", cuDevice);\n}\n",
    );
    let markers: Vec<&str> = f.uses.iter().map(|u| u.marker.as_str()).collect();
    assert_eq!(markers, ["cuDeviceGet_v2000"], "{}", f.render(dir.path(), None));
    let (f, dir) = floor_of("mod entries { pub fn all() {} }\nfn main() { entries::all(); }\n");
    assert!(f.uses.is_empty() && f.unresolved.is_empty(), "{}", f.render(dir.path(), None));
}

/// Lines come from spans: a call split over lines is at the line of its name.
#[test]
fn lines_are_the_names_own() {
    let program = "use cuda_driver_pfn::{cu, api};\nfn main() {\n    unsafe {\n        let _ = api::cuMemAllocHost;\n        cu!(cuMemAlloc(std::ptr::null_mut(), 1)).unwrap();\n        cu!(\n            cuMemFree(\n                0\n            )\n        )\n        .unwrap();\n    }\n}\n";
    let (f, dir) = floor_of(program);
    let line = |m: &str| f.uses.iter().find(|u| u.marker.starts_with(m)).map(|u| u.line);
    assert_eq!(line("cuMemAlloc_"), Some(5), "{}", f.render(dir.path(), None));
    assert_eq!(line("cuMemAllocHost_"), Some(4), "{}", f.render(dir.path(), None));
    assert_eq!(line("cuMemFree_"), Some(7), "{}", f.render(dir.path(), None));
}

/// 20,000 multi-line `cu!` calls (840 KB) in one file finish (linear; the bound only catches
/// a quadratic or worse reader).
#[test]
fn a_large_file_is_read_in_linear_time() {
    let mut program = String::from("use cuda_driver_pfn::cu;\nfn main() {\n    unsafe {\n");
    for i in 0..20_000 {
        program.push_str(&format!(
            "        cu!(\n            cuMemAlloc(std::ptr::null_mut(), {i})\n        )\n        .unwrap();\n"
        ));
    }
    program.push_str("    }\n}\n");
    assert!(program.len() > 800_000);
    let start = Instant::now();
    let (f, _dir) = floor_of(&program);
    let took = start.elapsed();
    assert_eq!(f.uses.len(), 1);
    assert!(took.as_secs() < 60, "{took:?} for {} bytes", program.len());
}

/// What cannot be read is said, and the floor is "at least": a module file that is not there,
/// identifiers pasted together, a kernel the build makes, a name the registry lacks.
#[test]
fn what_cannot_be_read_is_said() {
    let dir = tree(&[(
        "gpu.rs",
        "mod missing;\nuse cuda_driver_pfn::{cu, entries};\npub fn f() {\n    paste::paste! { let _ = cuda_driver_pfn::api::[<cuCtx Create>]; }\n    \
         unsafe { cu!(cuInit(0)).unwrap(); cu!(cuNoSuchThing(1)).unwrap(); }\n    let _ = entries::cuMemAlloc_v1;\n    \
         static K: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/k.cubin\"));\n}\n",
    )]);
    let f = floor(&registry(), &[dir.path().join("gpu.rs")]).unwrap();
    let report = f.render(dir.path(), None);
    assert!(f.at_least() && report.contains("at least CUDA 2.0"), "{report}");
    for (line, what) in [
        (1, "mod missing;"),
        (4, "paste!"),
        (5, "cu!(cuNoSuchThing)"),
        (6, "entries::cuMemAlloc_v1"),
        (7, "include_bytes!"),
    ] {
        assert!(report.contains(&format!("gpu.rs:{line}: {what}")), "{what} at {line}:\n{report}");
    }
}

fn releases() -> Releases {
    Releases::load().unwrap()
}

fn kernels_dir() -> PathBuf {
    repo_root().join("tests/kernels")
}

/// PTX in a string and in files, cubins and fatbins that NVIDIA's tools built
/// (tests/kernels/README.md): each needs what NVIDIA's tables say, with file and line.
#[test]
fn embedded_kernels_set_a_floor_of_their_own() {
    let r = releases();
    let k = kernels_dir();
    let arch = |a: &str| cuda_number(&r.arch(a).unwrap_or_else(|| panic!("{a} in cuda-releases.toml")).cuda).unwrap();
    let ptx = |isa: &str| r.ptx(isa).unwrap_or_else(|| panic!("PTX {isa} in cuda-releases.toml"));

    // A PTX string: the higher of its ISA and its target.
    let (f, dir) =
        floor_of("const PTX: &str = \".version 8.4\\n.target sm_90a\\n.address_size 64\\n\";\nfn main() {}\n");
    assert_eq!(f.version(), ptx("8.4").max(arch("sm_90a")), "{}", f.render(dir.path(), None));
    assert_eq!(f.kernels[0].line, 1);

    // include_str! of a PTX file, by a relative path and through CARGO_MANIFEST_DIR.
    let dir = tree(&[
        ("Cargo.toml", "[package]\nname = \"app\"\n"),
        ("src/main.rs", "static A: &str = include_str!(\"../k/a.ptx\");\nstatic B: &[u8] =\n    include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/k/b.cubin\"));\nfn main() {}\n"),
    ]);
    std::fs::create_dir(dir.path().join("k")).unwrap();
    std::fs::copy(k.join("sm100a_ptx87.ptx"), dir.path().join("k/a.ptx")).unwrap();
    std::fs::copy(k.join("add_sm90_cuda13.5.cubin"), dir.path().join("k/b.cubin")).unwrap();
    let f = floor(&registry(), &[dir.path().to_owned()]).unwrap();
    let report = f.render(dir.path(), None);
    let need = |n: &str| f.kernels.iter().find(|k| k.needs == n).unwrap_or_else(|| panic!("{n}:\n{report}"));
    assert_eq!(need("PTX ISA 8.7").version, ptx("8.7"));
    assert_eq!((need("sm_100a").version, need("sm_100a").line), (arch("sm_100a"), 1));
    assert_eq!((need("sm_90").version, need("sm_90").line), (arch("sm_90"), 3), "{report}");
    // The 13.5 cubin says which CUDA built it: a 13.x driver at least.
    assert_eq!(need("a CUDA 13.x cubin").version, 13000, "{report}");
    assert_eq!(f.version(), 13000.max(arch("sm_100a")), "{report}");
    assert!(!f.at_least(), "{report}");
}

/// The generated crate's `include_ptx!` embeds a PTX file as `include_str!` does, and
/// its kernel counts the same.
#[test]
fn include_ptx_counts_as_include_str() {
    let r = releases();
    let dir = tree(&[("main.rs", "fn main() {\n    let _image = cuda_driver_pfn::include_ptx!(\"k.ptx\");\n}\n")]);
    std::fs::copy(kernels_dir().join("sm100a_ptx87.ptx"), dir.path().join("k.ptx")).unwrap();
    let f = floor(&registry(), &[dir.path().to_owned()]).unwrap();
    let report = f.render(dir.path(), None);
    let sm100a = cuda_number(&r.arch("sm_100a").unwrap().cuda).unwrap();
    let k = f.kernels.iter().find(|k| k.needs == "sm_100a").unwrap_or_else(|| panic!("{report}"));
    assert_eq!((k.version, k.line), (sm100a, 2), "{report}");
    assert!(f.version() >= sm100a && !f.at_least(), "{report}");
}

/// A cubin without a toolkit note, fatbins plain and compressed: what can be read counts,
/// what cannot is listed.
#[test]
fn cubins_and_fatbins() {
    let r = releases();
    let k = kernels_dir();
    let arch = |a: &str| cuda_number(&r.arch(a).unwrap().cuda).unwrap();
    let dir = tree(&[("main.rs", "static A: &[u8] = include_bytes!(\"a.cubin\");\nstatic B: &[u8] = include_bytes!(\"b.fatbin\");\nstatic C: &[u8] = include_bytes!(\"c.fatbin\");\nstatic D: &[u8] = include_bytes!(\"d.cubin\");\nfn main() {}\n")]);
    std::fs::copy(k.join("add_sm80_cuda12.4.cubin"), dir.path().join("a.cubin")).unwrap();
    std::fs::copy(k.join("sm90_ptx95.fatbin"), dir.path().join("b.fatbin")).unwrap();
    std::fs::copy(k.join("sm90_ptx95_compressed.fatbin"), dir.path().join("c.fatbin")).unwrap();
    std::fs::copy(k.join("add_sm100a_cuda12.8.cubin"), dir.path().join("d.cubin")).unwrap();
    let f = floor(&registry(), &[dir.path().to_owned()]).unwrap();
    let report = f.render(dir.path(), None);
    let at = |line: usize, needs: &str| f.kernels.iter().any(|k| k.line == line && k.needs == needs);
    assert!(at(1, "sm_80") && at(2, "sm_90") && at(2, "PTX ISA 9.5") && at(2, "a CUDA 13.x cubin"), "{report}");
    assert!(at(3, "sm_90") && at(4, "sm_100a") && at(4, "a CUDA 12.x cubin"), "{report}");
    assert_eq!(f.version(), r.ptx("9.5").unwrap().max(arch("sm_100a")), "{report}");
    // The 12.4 cubin does not name its toolkit; the compressed (zstd) fatbin is decompressed
    // and read as the plain one.
    assert!(report.contains("main.rs:1: a kernel image (a.cubin: a cubin for sm_80 that does not say"), "{report}");
    assert!(at(3, "PTX ISA 9.5") && at(3, "a CUDA 13.x cubin"), "{report}");
    assert!(!report.contains("main.rs:3: a kernel image"), "{report}");
    // Damaged images are reported, never a panic.
    for cut in [4, 20, 100, 1000] {
        let bytes = std::fs::read(k.join("sm90_ptx95.fatbin")).unwrap();
        std::fs::write(dir.path().join("b.fatbin"), &bytes[..cut]).unwrap();
        let bytes = std::fs::read(k.join("add_sm90_cuda13.5.cubin")).unwrap();
        std::fs::write(dir.path().join("a.cubin"), &bytes[..cut]).unwrap();
        floor(&registry(), &[dir.path().to_owned()]).unwrap();
    }
}

/// NVIDIA's older fatbin compression (entry flag 0x2000, fatbinary's `--compress-mode=speed`,
/// the default before zstd) is an LZ4 block: read as the plain fatbin, exact. Damaged or cut
/// short, it is "at least" with the reason, never a panic.
#[test]
fn an_lz4_compressed_fatbin_is_read_as_the_plain_one() {
    let r = releases();
    let k = kernels_dir();
    let bytes = std::fs::read(k.join("sm90_ptx95_lz4.fatbin")).unwrap();
    // The fixture is what the test says it is: both entries carry the older flag, not zstd's.
    let flags: Vec<u64> = [16usize, 16 + 64 + 1080]
        .iter()
        .map(|&e| u64::from_le_bytes(bytes[e + 40..e + 48].try_into().unwrap()))
        .collect();
    assert!(flags.iter().all(|f| f & 0x2000 != 0 && f & 0x8000 == 0), "{flags:x?}");
    let dir = tree(&[("main.rs", "static K: &[u8] = include_bytes!(\"k.fatbin\");\nfn main() {}\n")]);
    std::fs::write(dir.path().join("k.fatbin"), &bytes).unwrap();
    let f = floor(&registry(), &[dir.path().to_owned()]).unwrap();
    let report = f.render(dir.path(), None);
    let has = |needs: &str| f.kernels.iter().any(|k| k.needs == needs && k.what.contains("LZ4"));
    assert!(has("PTX ISA 9.5") && has("a CUDA 13.x cubin") && has("sm_90"), "{report}");
    assert!(!f.at_least(), "{report}");
    assert_eq!(f.version(), r.ptx("9.5").unwrap(), "{report}");
    // The cubin's sizes damaged: its uncompressed size smaller (the block does not fit), or
    // its block cut short. Not read, said so: "at least", never a panic.
    for (at, value) in [(16 + 56, 3000u32), (16 + 16, 100u32)] {
        let mut bad = bytes.clone();
        bad[at..at + 4].copy_from_slice(&value.to_le_bytes());
        std::fs::write(dir.path().join("k.fatbin"), &bad).unwrap();
        let f = floor(&registry(), &[dir.path().to_owned()]).unwrap();
        let report = f.render(dir.path(), None);
        assert!(f.at_least(), "{at}:\n{report}");
        assert!(report.contains("a compressed cubin"), "{at}:\n{report}");
    }
    for cut in [100, 200, 1000, 1200] {
        std::fs::write(dir.path().join("k.fatbin"), &bytes[..cut]).unwrap();
        floor(&registry(), &[dir.path().to_owned()]).unwrap();
    }
}

fn cli(args: &[&str]) -> (Option<i32>, String) {
    let o = cargo_run("cuda-sys-gen", args, &[]);
    (o.status.code(), format!("{}{}", text(&o.stdout), text(&o.stderr)))
}

fn program_dir(program: &str) -> tempfile::TempDir {
    tree(&[("main.rs", program)])
}

/// `--driver` (a driver or a CUDA version), `--max` and their exit statuses.
#[test]
fn the_driver_and_max_flags() {
    let v = cu_ctx_create();
    let dir = program_dir(&format!(
        "use cuda_driver_pfn::cu;\nfn main() {{\n    unsafe {{ cu!(cuInit(0)).unwrap(); }}\n    unsafe {{ cu!(cuCtxCreate{CALL}).unwrap(); }}\n}}\n"
    ));
    let main = dir.path().join("main.rs");
    let main = main.to_str().unwrap();
    let reg = registry();
    let reg = reg.to_str().unwrap();
    let r = releases();
    // The Linux driver of the release below the floor, and of the floor itself.
    let below = r
        .driver
        .iter()
        .filter(|d| cuda_number(&d.cuda).unwrap() < v && d.linux.is_some())
        .max_by_key(|d| cuda_number(&d.cuda))
        .unwrap();
    let (code, out) = cli(&["min-driver", "--registry", reg, "--driver", below.linux.as_deref().unwrap(), main]);
    assert_eq!(code, Some(3), "{out}");
    assert!(
        out.contains("does not run: 1 entry point(s)") && out.contains("main.rs:4: cu!(cuCtxCreate) needs CUDA"),
        "{out}"
    );
    let (exact, _) = r.driver_for(v, cuda_sys_gen::min_driver::releases::Platform::Linux).unwrap();
    let (code, out) = cli(&["min-driver", "--registry", reg, "--driver", exact, main]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = cli(&["min-driver", "--registry", reg, "--driver", "12.2", main]);
    assert_eq!(code, Some(3), "{out}");
    let (code, out) = cli(&["min-driver", "--registry", reg, "--max", "12.2", main]);
    assert_eq!(code, Some(3), "{out}");
    let newest = json().toolkits.last().unwrap().to_string();
    let (code, out) = cli(&["min-driver", "--registry", reg, "--max", &newest, main]);
    assert_eq!(code, Some(0), "{out}");
    // Within the bound as far as could be read, with something unread: 2.
    std::fs::write(
        dir.path().join("main.rs"),
        "mod gone;\nfn main() { unsafe { cuda_driver_pfn::cu!(cuInit(0)).unwrap(); } }\n",
    )
    .unwrap();
    let (code, out) = cli(&["min-driver", "--registry", reg, "--max", "12.2", main]);
    assert_eq!(code, Some(2), "{out}");
    // Bad values: exit 1, saying the form.
    for bad in [["--driver", "12.x"], ["--max", "twelve"]] {
        let (code, out) = cli(&["min-driver", "--registry", reg, bad[0], bad[1], main]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains(&format!("{} {}", bad[0], bad[1])) && out.contains("such as"), "{out}");
    }
    // A CUDA version is read as the generator reads one everywhere: `12.05` is no spelling
    // of 12.5 (min-driver's own reader once took it), and the error says what to write.
    for flag in ["--driver", "--max"] {
        let (code, out) = cli(&["min-driver", "--registry", reg, flag, "12.05", main]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains(&format!("{flag} 12.05: `12.05`")) && out.contains("write `12.5`"), "{out}");
    }
    assert_eq!(cuda_sys_gen::min_driver::releases::cuda_number("12.05"), None);
    assert_eq!(cuda_sys_gen::min_driver::releases::cuda_number("12.5"), Some(12050));
}

/// `--json`: the documented fields, and the same floor as the text.
#[test]
fn the_json_report() {
    let v = cu_ctx_create();
    let dir = program_dir(&format!("fn main() {{ unsafe {{ cuda_driver_pfn::cu!(cuCtxCreate{CALL}).unwrap(); }} }}\n"));
    let main = dir.path().join("main.rs");
    let reg = registry();
    let (code, out) =
        cli(&["min-driver", "--registry", reg.to_str().unwrap(), "--json", "--max", "12.0", main.to_str().unwrap()]);
    assert_eq!(code, Some(3), "{out}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(j["schema"], 2);
    assert_eq!(j["version"], v);
    assert_eq!(j["at_least"], false);
    assert_eq!(j["entries"][0]["marker"], format!("cuCtxCreate_v{v}"));
    assert_eq!(j["entries"][0]["line"], 1);
    assert!(j["drivers"]["linux"].is_string(), "{j}");
    assert_eq!(j["checks"][0]["verdict"], "above");
    assert_eq!(j["checks"][0]["missing_entries"][0], format!("cuCtxCreate_v{v}"));
    // docs/min-driver.md documents every field.
    let readme = std::fs::read_to_string(repo_root().join("docs/min-driver.md")).unwrap();
    let mut keys: Vec<String> = j.as_object().unwrap().keys().cloned().collect();
    keys.extend(j["entries"][0].as_object().unwrap().keys().cloned());
    keys.extend(j["checks"][0].as_object().unwrap().keys().cloned());
    for k in keys {
        assert!(readme.contains(&format!("`{k}`")), "docs/min-driver.md's --json schema does not name `{k}`");
    }
}

/// `--help` lists the exit statuses docs/min-driver.md does, and names that page for what counts.
#[test]
fn the_help_says_the_exit_statuses_and_where_the_rest_is() {
    let (_, help) = cli(&["min-driver", "--help"]);
    assert!(help.contains("docs/min-driver.md"), "{help}");
    // What --help leaves to the docs is said on the page it names.
    let page = std::fs::read_to_string(repo_root().join("docs/min-driver.md")).unwrap();
    assert!(
        page.contains("counts, even `#[cfg(any())]`"),
        "docs/min-driver.md does not say that cfg'd-out code counts"
    );
    for (code, meaning) in cuda_sys_gen::min_driver::EXIT_STATUSES {
        assert!(help.contains(&format!("  {code}  {}", meaning.replace('`', ""))), "{help}");
        assert!(page.contains(&format!("| {code} | {meaning} |")), "docs/min-driver.md lacks exit status {code}");
    }
}

/// The bundled table parses, and is ordered as NVIDIA's: each newer PTX ISA needs no older CUDA.
#[test]
fn the_release_tables_are_consistent() {
    let r = releases();
    let mut ptx: Vec<(u32, u32)> =
        r.ptx.iter().map(|p| (cuda_number(&p.isa).unwrap(), cuda_number(&p.cuda).unwrap())).collect();
    ptx.sort();
    assert!(ptx.windows(2).all(|w| w[0].1 <= w[1].1), "{ptx:?}");
    let mut drivers: Vec<(u32, Vec<u32>)> = r
        .driver
        .iter()
        .filter_map(|d| {
            Some((cuda_number(&d.cuda)?, cuda_sys_gen::min_driver::releases::driver_number(d.linux.as_deref()?)?))
        })
        .collect();
    drivers.sort();
    assert!(drivers.windows(2).all(|w| w[0].1 <= w[1].1), "{drivers:?}");
    // The newest toolkit the registry pins has its PTX ISA and its driver row.
    let newest = json().toolkits.last().unwrap().to_string();
    let v = cuda_number(&newest).unwrap();
    assert!(r.ptx.iter().any(|p| cuda_number(&p.cuda) == Some(v)), "no PTX ISA of CUDA {newest}");
    // Where NVIDIA's table has no row for it (13.4 and 13.5 publish none), the report says so
    // rather than naming an older driver.
    let (f, dir) = floor_of(&format!(
        "const K: &str = \".version {}\\n.target sm_90\\n\";\nfn main() {{}}\n",
        r.ptx.iter().find(|p| cuda_number(&p.cuda) == Some(v)).unwrap().isa
    ));
    let report = f.render(dir.path(), Some(&r));
    assert_eq!(f.version(), v, "{report}");
    match r.driver_for(v, cuda_sys_gen::min_driver::releases::Platform::Linux) {
        Some((driver, at)) if at == v => assert!(
            report.contains(&format!("Linux x86-64 driver: {driver} (NVIDIA's minimum for CUDA {newest})")),
            "{report}"
        ),
        _ => assert!(report.contains("Linux x86-64 driver: not known"), "{report}"),
    }
}

/// `--platform windows` reads a Windows driver number with NVIDIA's Windows column.
#[test]
fn the_platform_flag() {
    let v = cu_ctx_create();
    let r = releases();
    let below = r
        .driver
        .iter()
        .filter(|d| cuda_number(&d.cuda).unwrap() < v && d.windows.is_some())
        .max_by_key(|d| cuda_number(&d.cuda))
        .unwrap();
    let dir = program_dir(&format!("fn main() {{ unsafe {{ cuda_driver_pfn::cu!(cuCtxCreate{CALL}).unwrap(); }} }}\n"));
    let main = dir.path().join("main.rs");
    let reg = registry();
    let windows = below.windows.as_deref().unwrap();
    let (code, out) = cli(&[
        "min-driver",
        "--registry",
        reg.to_str().unwrap(),
        "--platform",
        "windows",
        "--driver",
        windows,
        main.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains(&format!("driver {windows} (Windows x86-64: CUDA {})", below.cuda)), "{out}");
}

/// Sources and kernel files cut and garbled at many points: an error or a report, never a
/// panic (min-driver reads outside input).
#[test]
fn damaged_input_is_no_panic() {
    let text = std::fs::read(repo_root().join("generated/examples/vector_add_drv.rs")).unwrap();
    let cubin = std::fs::read(kernels_dir().join("add_sm90_cuda13.5.cubin")).unwrap();
    let fatbin = std::fs::read(kernels_dir().join("sm90_ptx95.fatbin")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..150 {
        let mut t = text.clone();
        let at = (next() as usize) % t.len();
        match next() % 3 {
            0 => t.truncate(at),
            1 => t[at] = (next() % 128) as u8,
            _ => t.insert(at, b"{[(\"'"[(next() % 5) as usize]),
        }
        std::fs::write(dir.path().join("main.rs"), &t).unwrap();
        let mut c = cubin.clone();
        let n = (next() as usize) % c.len();
        c[n] ^= 0xff;
        c.truncate(64 + (next() as usize) % c.len());
        std::fs::write(dir.path().join("k.cubin"), &c).unwrap();
        let mut f = fatbin.clone();
        let n = (next() as usize) % f.len();
        f[n] = f[n].wrapping_add(0x80);
        std::fs::write(dir.path().join("k.fatbin"), &f).unwrap();
        std::fs::write(
            dir.path().join("k.rs"),
            "static A: &[u8] = include_bytes!(\"k.cubin\");\nstatic B: &[u8] = include_bytes!(\"k.fatbin\");\n",
        )
        .unwrap();
        let _ = floor(&registry(), &[dir.path().to_owned()]);
    }
}

/// A folder of libraries or kernels, not of Rust sources (a framework's `lib/`), is not read as
/// an empty program: the error names the files to pass, in a pattern that leaves the rest out.
#[test]
fn a_folder_of_compiled_files_is_named_not_read_as_sources() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("lib");
    std::fs::create_dir(&lib).unwrap();
    std::fs::copy(kernels_dir().join("add_sm90_cuda13.5.cubin"), lib.join("libk.so.1")).unwrap();
    std::fs::write(lib.join("README"), "not a program\n").unwrap();
    let e = format!("{:#}", floor(&registry(), std::slice::from_ref(&lib)).unwrap_err());
    assert!(
        e.contains("1 compiled program(s) or kernel file(s)") && e.contains(&format!("{}/*.so*", lib.display())),
        "{e}"
    );
    // What it names reads.
    floor(&registry(), &[lib.join("libk.so.1")]).unwrap();
    std::fs::remove_file(lib.join("libk.so.1")).unwrap();
    let e = format!("{:#}", floor(&registry(), std::slice::from_ref(&lib)).unwrap_err());
    assert!(e.contains("no .rs files") && !e.contains("compiled program"), "{e}");
}

/// A driver newer than NVIDIA's table is not known to lack anything: "not proven" (exit 2),
/// never "does not run".
#[test]
fn a_driver_newer_than_the_table_is_not_proven() {
    let r = releases();
    let newest_row = r.driver.iter().filter(|d| d.linux.is_some()).filter_map(|d| cuda_number(&d.cuda)).max().unwrap();
    let newer = json()
        .entries
        .iter()
        .filter(|e| e.version > newest_row && e.variant.is_none())
        .min_by_key(|e| e.version)
        .map(|e| e.pfn.trim_start_matches("PFN_").to_owned())
        .expect("an entry newer than the driver table's newest row");
    let dir = program_dir(&format!("fn main() {{ let _ = cuda_driver_pfn::entries::{newer}::VERSION; }}\n"));
    let main = dir.path().join("main.rs");
    let reg = registry();
    let (code, out) =
        cli(&["min-driver", "--registry", reg.to_str().unwrap(), "--driver", "999.99.99", main.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("not proven") && !out.contains("does not run"), "{out}");
}

/// CUDA versions NVIDIA never released, and a Linux driver number given for Windows, are
/// errors that say so.
#[test]
fn versions_that_never_existed_are_errors() {
    let dir = program_dir("fn main() {}\n");
    let main = dir.path().join("main.rs");
    let main = main.to_str().unwrap();
    let reg = registry();
    let reg = reg.to_str().unwrap();
    for (flag, value, says) in [
        ("--driver", "12.10", "minor versions run from 0 to 9"),
        ("--max", "99.99", "minor versions run from 0 to 9"),
        ("--driver", "10.3", "never released CUDA 10.3"),
        ("--max", "10.3", "never released CUDA 10.3"),
    ] {
        let (code, out) = cli(&["min-driver", "--registry", reg, flag, value, main]);
        assert_eq!(code, Some(1), "{flag} {value}: {out}");
        assert!(out.contains(says), "{flag} {value}: {out}");
    }
    let (code, out) = cli(&["min-driver", "--registry", reg, "--platform", "windows", "--driver", "580.65.06", main]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("a Linux driver's number"), "{out}");
    // A release newer than the table is not known, and no error.
    let (code, out) = cli(&["min-driver", "--registry", reg, "--max", "14.0", main]);
    assert_eq!(code, Some(0), "{out}");
}

/// A string that only mentions `.version` and `.target` is no PTX; a module's `.version`
/// line followed by its `.target` line is.
#[test]
fn only_ptx_is_ptx() {
    let (f, _d) = floor_of("fn main() { println!(\"set .version 8.5 and .target sm_90 in the file\"); }\n");
    assert!(f.kernels.is_empty() && f.unresolved.is_empty(), "{:?}", f.kernels);
    let (f, _d) =
        floor_of("const K: &str = \"//\\n.version 8.5\\n.target sm_90\\n.address_size 64\\n\";\nfn main() {}\n");
    assert_eq!(f.kernels.len(), 2, "{:?}", f.kernels);
}

/// `.target sm_101a`: CUDA 13.0 removed the architecture-specific target from ptxas (renamed
/// sm_110a), and whether 13.0's driver JIT-compiles its PTX is not in NVIDIA's tables:
/// `--driver 13.0` is not proven. A removed family target (`sm_52`) passes: the GPU machine's
/// 13.0 driver JIT-compiled and ran `.version 8.0`/`.target sm_52` PTX (tests/kernels/nvcc).
#[test]
fn an_architecture_a_release_removed_is_not_proven_there() {
    let dir = program_dir("const K: &str = \".version 8.7\\n.target sm_101a\\n.address_size 64\\n\";\nfn main() {}\n");
    let main = dir.path().join("main.rs");
    let reg = registry();
    let (code, out) =
        cli(&["min-driver", "--registry", reg.to_str().unwrap(), "--driver", "13.0", main.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{out}");
    let (code, out) =
        cli(&["min-driver", "--registry", reg.to_str().unwrap(), "--driver", "12.9", main.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}");
    let dir = program_dir("const K: &str = \".version 8.0\\n.target sm_52\\n.address_size 64\\n\";\nfn main() {}\n");
    let main = dir.path().join("main.rs");
    let (code, out) =
        cli(&["min-driver", "--registry", reg.to_str().unwrap(), "--driver", "13.0", main.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}");
}

/// What the source scan cannot see it says ("at least"), or reads: a path dependency of the
/// program's own workspace (its Cargo.toml is followed), a lookup's explicit version, names and
/// PTX assembled with `concat!` or held as a byte array, `#[cfg_attr(.., path)]`, a file module
/// inside an inline module, kernels loaded from files at run time, a walk of `ENTRIES`.
#[test]
fn what_the_scan_cannot_see_is_said_or_read() {
    let v = cu_ctx_create();
    let call = CALL;
    // A path dependency, and only the app's folder given.
    let dir = tree(&[
        (
            "app/Cargo.toml",
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nwrap = { path = \"../wrap\" }\n",
        ),
        ("app/src/main.rs", "fn main() { wrap::make_context(); }\n"),
        ("wrap/Cargo.toml", "[package]\nname = \"wrap\"\nversion = \"0.1.0\"\n"),
        (
            "wrap/src/lib.rs",
            &format!("pub fn make_context() {{ unsafe {{ cuda_driver_pfn::cu!(cuCtxCreate{call}).unwrap(); }} }}\n"),
        ),
    ]);
    let f = floor(&registry(), &[dir.path().join("app")]).unwrap();
    assert_eq!(f.version(), v, "{}", f.render(dir.path(), None));
    // The version a lookup asks for, written as a literal, counts; one passed as a value is
    // "at least".
    let (f, d) = floor_of(&format!(
        "fn main() {{ let d = cuda_driver_pfn::Driver::load().unwrap(); let _ = unsafe {{ d.get_raw::<usize>(c\"cuCtxCreate\", {v}, cuda_driver_pfn::StreamFlags::LEGACY_STREAM) }}; }}\n"
    ));
    assert_eq!(f.version(), v, "{}", f.render(d.path(), None));
    let (f, d) = floor_of(
        "fn main() { let v = 12050; let d = cuda_driver_pfn::Driver::load().unwrap(); let _ = unsafe { d.get_raw::<usize>(c\"cuCtxCreate\", v, cuda_driver_pfn::StreamFlags::LEGACY_STREAM) }; }\n",
    );
    assert!(f.at_least(), "{}", f.render(d.path(), None));
    // concat!: whole, read; in pieces a macro makes, listed.
    let (f, d) = floor_of("fn main() { let _ = concat!(\"cuCtx\", \"Create_v4\"); }\n");
    assert_eq!(f.version(), 12050, "{}", f.render(d.path(), None));
    let (f, d) = floor_of("fn main() { let _ = concat!(\"cu\", stringify!(CtxCreate)); }\n");
    assert!(f.at_least(), "{}", f.render(d.path(), None));
    // PTX as a byte array.
    let ptx: Vec<String> =
        ".version 8.5\n.target sm_90\n.address_size 64\n".bytes().map(|b| format!("{b:#04x}")).collect();
    let (f, d) = floor_of(&format!("static K: [u8; {}] = [{}];\nfn main() {{}}\n", ptx.len(), ptx.join(", ")));
    assert!(f.kernels.iter().any(|k| k.needs == "PTX ISA 8.5"), "{}", f.render(d.path(), None));
    // #[cfg_attr(.., path)] and a file module inside an inline module, main.rs given alone.
    let dir = tree(&[
        ("main.rs", "#[cfg_attr(feature = \"x\", path = \"backend_new.rs\")]\nmod backend;\nmod launch;\nmod gpu { pub mod launch; }\nfn main() {}\n"),
        ("backend.rs", "pub fn f() { unsafe { cuda_driver_pfn::cu!(cuInit(0)).unwrap(); } }\n"),
        ("backend_new.rs", &format!("pub fn f() {{ unsafe {{ cuda_driver_pfn::cu!(cuCtxCreate{call}).unwrap(); }} }}\n")),
        ("launch.rs", "pub fn f() {}\n"),
        ("gpu/launch.rs", "pub fn f() { let _ = cuda_driver_pfn::entries::cuCheckpointProcessLock_v12080::VERSION; }\n"),
    ]);
    let f = floor(&registry(), &[dir.path().join("main.rs")]).unwrap();
    let report = f.render(dir.path(), None);
    assert!(f.uses.iter().any(|u| u.marker == format!("cuCtxCreate_v{v}")), "{report}");
    assert!(f.uses.iter().any(|u| u.marker == "cuCheckpointProcessLock_v12080"), "{report}");
    // Kernels loaded from files at run time.
    for program in [
        "fn main() { let _ = std::fs::read(\"k.ptx\"); }\n",
        "fn main() { let mut m = std::ptr::null_mut(); unsafe { cuda_driver_pfn::cu!(cuModuleLoad(&mut m, c\"k.cubin\".as_ptr())).unwrap(); } }\n",
    ] {
        let (f, d) = floor_of(program);
        assert!(f.at_least(), "{program}\n{}", f.render(d.path(), None));
    }
    // A walk of the registry's table (the doctor).
    let f = floor(&registry(), &[repo_root().join("generated/examples/doctor.rs")]).unwrap();
    assert!(f.at_least(), "{}", f.render(&repo_root(), None));
}

/// A folder holding a FIFO named `x.rs` and two links to itself: walked once, the FIFO named
/// and not opened (opening it would wait for a writer forever).
#[cfg(unix)]
#[test]
fn fifos_and_link_loops_do_not_hang() {
    let dir = tree(&[("main.rs", "fn main() { unsafe { cuda_driver_pfn::cu!(cuInit(0)).unwrap(); } }\n")]);
    let fifo = dir.path().join("x.rs");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
    std::os::unix::fs::symlink(".", dir.path().join("here")).unwrap();
    std::os::unix::fs::symlink(".", dir.path().join("again")).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let root = dir.path().to_owned();
    std::thread::spawn(move || {
        let _ =
            tx.send(floor(&registry(), &[root]).map(|f| (f.version(), f.unresolved.len())).map_err(|e| e.to_string()));
    });
    let (version, unresolved) = rx.recv_timeout(Duration::from_secs(60)).expect("min-driver did not return").unwrap();
    assert_eq!(version, 2000);
    if made {
        assert_eq!(unresolved, 1, "the FIFO is named");
    }
}

/// A macro that imports the crate's `api` under a name its caller picks, beside another
/// module's `use ... aliases::cuda_11_7 as cuda`: `cuda::cuCtxCreate` may be either, so it is
/// not narrowed to 11.7's meaning.
#[test]
fn a_macro_made_import_stops_narrowing_by_imports() {
    let v = cu_ctx_create();
    let program = format!(
        "macro_rules! bind {{ ($name:ident) => {{ use cuda_driver_pfn::api as $name; }}; }}\n\
         mod a {{ use cuda_driver_pfn::aliases::cuda_11_7 as cuda; pub fn f() {{ let _ = cuda::cuInit; }} }}\n\
         mod b {{ bind!(cuda); pub fn g() {{ unsafe {{ cuda::cuCtxCreate{CALL}; }} }} }}\n\
         fn main() {{}}\n"
    );
    assert_floor(&program, v);
}

/// `newest::<symbols::X>` whose pointer the program turns into a function type of its own: the
/// ABI that type describes is not read, so the oldest ABI is only "at least".
#[test]
fn newest_through_a_type_of_the_program_s_own_is_at_least() {
    let program = "use cuda_driver_pfn::{symbols, Driver, NewestAbi};\n\
        type MyCreate = unsafe extern \"system\" fn(*mut usize, *mut usize, u32, i32) -> u32;\n\
        fn main() { let d = Driver::load().unwrap(); let abi = d.newest::<symbols::cuCtxCreate>().unwrap();\n\
        let _f: MyCreate = unsafe { std::mem::transmute(abi.as_ptr()) }; }\n";
    let (f, d) = floor_of(program);
    assert!(f.at_least(), "{}", f.render(d.path(), None));
}

/// r565's CUDA version, 12.7, was never a toolkit but is a driver branch's: `--max 12.7`,
/// `--driver 12.7` and `--driver 565.57.01` agree, as the PTX table (ISA 8.6: CUDA 12.7, r565)
/// does.
#[test]
fn a_driver_branch_s_cuda_version_is_a_row() {
    let dir = program_dir("const K: &str = \".version 8.6\\n.target sm_90\\n.address_size 64\\n\";\nfn main() {}\n");
    let main = dir.path().join("main.rs");
    let main = main.to_str().unwrap();
    let reg = registry();
    let reg = reg.to_str().unwrap();
    for (flag, value) in [("--max", "12.7"), ("--driver", "12.7"), ("--driver", "565.57.01")] {
        let (code, out) = cli(&["min-driver", "--registry", reg, flag, value, main]);
        assert_eq!(code, Some(0), "{flag} {value}: {out}");
        assert!(out.contains("CUDA 12.7"), "{flag} {value}: {out}");
    }
    for (flag, value) in [("--max", "12.6"), ("--driver", "560.35.03")] {
        let (code, out) = cli(&["min-driver", "--registry", reg, flag, value, main]);
        assert_eq!(code, Some(3), "{flag} {value}: {out}");
    }
    let (_, out) = cli(&["min-driver", "--registry", reg, main]);
    assert!(out.contains("Linux x86-64 driver: 565.57.01"), "{out}");
}
