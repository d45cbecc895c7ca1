//! Issue 23: `min-driver` never reports a floor lower than what it read. Each program here
//! calls `cuCtxCreate` (CUDA 12.5 as the newest cuda.h means it) in a way rustc accepts, and
//! must get 12.5; legal programs are not refused; lines come from the sources' spans.

use std::path::PathBuf;
use std::time::Instant;

use cuda_sys_gen::min_driver::{floor, Floor};
use cuda_sys_gen_tests::*;

fn registry() -> PathBuf {
    repo_root().join("generated/registry.json")
}

/// The floor of one program, written to `main.rs` in a folder of its own.
fn floor_of(program: &str) -> (Floor, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.rs"), program).unwrap();
    let f = floor(&registry(), &[dir.path().to_owned()], false).unwrap_or_else(|e| panic!("{e:#}\n{program}"));
    (f, dir)
}

/// The version `cuCtxCreate` needs, from the registry (not written out here).
fn cu_ctx_create() -> u32 {
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(registry()).unwrap()).unwrap();
    let newest = json["toolkits"].as_array().unwrap().last().unwrap().as_str().unwrap().to_owned();
    let pfn = json["c_names"][newest.as_str()]["cuCtxCreate"]["default"].as_str().unwrap();
    let v = pfn.rsplit("_v").next().unwrap().parse().unwrap();
    assert!(v > 2000, "cuCtxCreate is no newer than cuInit: these tests would prove nothing");
    v
}

fn assert_floor(program: &str, version: u32) {
    let (f, dir) = floor_of(program);
    assert_eq!(f.version(), version, "{}\n{program}", f.render(dir.path()));
    assert!(f.unresolved.is_empty(), "{}", f.render(dir.path()));
}

const CALL: &str = "(std::ptr::null_mut(), std::ptr::null_mut(), 0, 0)";

#[test]
fn module_aliases_are_followed() {
    let v = cu_ctx_create();
    assert_floor(&format!("use cuda_driver_pfn::api as cu;\nfn main() {{ unsafe {{ cu::cuCtxCreate{CALL}; }} }}\n"), v);
    let marker = format!("cuCtxCreate_v{v}");
    assert_floor(
        &format!("use cuda_driver_pfn::entries as e;\nfn f(d: &cuda_driver_pfn::Driver) {{ let _ = d.get::<e::{marker}>(); }}\n"),
        v,
    );
    assert_floor(
        &format!(
            "use cuda_driver_pfn::api::{{self as cuda}};\nfn main() {{ unsafe {{ cuda::cuCtxCreate{CALL}; }} }}\n"
        ),
        v,
    );
    // The crate itself renamed in use, and reached with a leading `::`.
    assert_floor(&format!("use cuda_driver_pfn as c;\nfn main() {{ unsafe {{ c::api::cuCtxCreate{CALL}; }} }}\n"), v);
    assert_floor(&format!("fn main() {{ unsafe {{ ::cuda_driver_pfn::api::cuCtxCreate{CALL}; }} }}\n"), v);
}

#[test]
fn cu_inside_other_macros_and_renamed() {
    let v = cu_ctx_create();
    assert_floor(
        &format!("use cuda_driver_pfn::cu;\nfn main() {{ unsafe {{ assert!(cu!(cuCtxCreate{CALL}).is_ok()); }} }}\n"),
        v,
    );
    assert_floor(
        &format!(
            "use cuda_driver_pfn::cu;\nfn main() {{ unsafe {{ println!(\"{{:?}}\", cu!(cuCtxCreate{CALL})); }} }}\n"
        ),
        v,
    );
    assert_floor(&format!("use cuda_driver_pfn::cu as cuda_call;\nfn main() {{ unsafe {{ cuda_call!(cuCtxCreate{CALL}).unwrap(); }} }}\n"), v);
    assert_floor(&format!("fn main() {{ unsafe {{ cuda_driver_pfn::cu!(cuCtxCreate{CALL}).unwrap(); }} }}\n"), v);
}

#[test]
fn a_glob_after_its_use_in_a_nested_module() {
    let v = cu_ctx_create();
    assert_floor(
        &format!("mod gpu {{\n    pub fn start() {{ unsafe {{ cuCtxCreate{CALL}; }} }}\n    use cuda_driver_pfn::api::*;\n}}\nfn main() {{ gpu::start() }}\n"),
        v,
    );
    // `use super::*` of a module whose parent holds the glob; and a glob inside a function.
    assert_floor(
        &format!("use cuda_driver_pfn::api::*;\nmod inner {{ use super::*; pub fn f() {{ unsafe {{ cuCtxCreate{CALL}; }} }} }}\nfn main() {{}}\n"),
        v,
    );
    assert_floor(&format!("fn main() {{ use cuda_driver_pfn::api::*; unsafe {{ cuCtxCreate{CALL}; }} }}\n"), v);
}

/// A module folder named `target` is read; the cargo target folder beside Cargo.toml is not.
#[test]
fn only_a_package_s_own_target_folder_is_skipped() {
    let v = cu_ctx_create();
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("Cargo.toml", "[package]\nname = \"app\"\n\n[dependencies]\ncuda-driver-pfn = \"0.1\"\n");
    write("src/main.rs", "mod target;\nfn main() { target::start() }\n");
    write(
        "src/target/mod.rs",
        &format!("use cuda_driver_pfn::cu;\npub fn start() {{ unsafe {{ cu!(cuCtxCreate{CALL}).unwrap(); }} }}\n"),
    );
    // cargo's own output: never read (its names would be a build's copies).
    write("target/debug/build/x/out/gen.rs", "fn f() { cuda_driver_pfn::cu!(cuNoSuchThing()); }\n");
    let f = floor(&registry(), &[dir.path().to_owned()], false).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(f.version(), v, "{}", f.render(dir.path()));
    assert_eq!(f.uses[0].file, dir.path().join("src/target/mod.rs"));
}

/// The crate renamed in the program's Cargo.toml is followed under its new name.
#[test]
fn a_dependency_renamed_in_cargo_toml() {
    let v = cu_ctx_create();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"app\"\n\n[dependencies]\ncuda = { package = \"cuda-driver-pfn\", version = \"0.1\" }\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/main.rs"),
        format!("fn main() {{ unsafe {{ cuda::api::cuCtxCreate{CALL}; }} }}\n"),
    )
    .unwrap();
    let f = floor(&registry(), &[dir.path().to_owned()], false).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(f.version(), v, "{}", f.render(dir.path()));
}

/// Legal programs: a variable named like a C function beside `use api::*`, a module of the
/// program's own named `entries`.
#[test]
fn names_that_are_not_the_crate_s_are_no_error() {
    let (f, dir) = floor_of(
        "use cuda_driver_pfn::api::*;\nfn main() {\n    let mut cuDevice = 0;\n    unsafe { cuDeviceGet(&mut cuDevice, 0); }\n    println!(\"{}\", cuDevice);\n}\n",
    );
    let markers: Vec<&str> = f.uses.iter().map(|u| u.marker.as_str()).collect();
    assert_eq!(markers, ["cuDeviceGet_v2000"], "{}", f.render(dir.path()));
    let (f, dir) = floor_of("mod entries { pub fn all() {} }\nfn main() { entries::all(); }\n");
    assert!(f.uses.is_empty() && f.unresolved.is_empty(), "{}", f.render(dir.path()));
}

/// Lines come from spans: `cuMemAlloc` is not found on the line of `cuMemAllocHost`, and a call
/// split over lines is at the line of its name.
#[test]
fn lines_are_the_names_own() {
    let program = "use cuda_driver_pfn::{cu, api};\nfn main() {\n    unsafe {\n        let _ = api::cuMemAllocHost;\n        cu!(cuMemAlloc(std::ptr::null_mut(), 1)).unwrap();\n        cu!(\n            cuMemFree(\n                0\n            )\n        )\n        .unwrap();\n    }\n}\n";
    let (f, dir) = floor_of(program);
    let line = |m: &str| f.uses.iter().find(|u| u.marker.starts_with(m)).map(|u| u.line);
    assert_eq!(line("cuMemAlloc_"), Some(5), "{}", f.render(dir.path()));
    assert_eq!(line("cuMemAllocHost_"), Some(4), "{}", f.render(dir.path()));
    assert_eq!(line("cuMemFree_"), Some(7), "{}", f.render(dir.path()));
}

/// 20,000 multi-line `cu!` calls (840 KB) in one file: linear, not a line search per name.
#[test]
fn a_large_file_is_read_in_linear_time() {
    let mut program = String::from("use cuda_driver_pfn::cu;\nfn main() {\n    unsafe {\n");
    for i in 0..20_000 {
        // The name on the line after `cu!(`: the old line search, wanting both on one line,
        // read the whole file for each call.
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
    assert!(took.as_secs() < 20, "{took:?} for {} bytes", program.len());
}

/// What cannot be followed is said, and the floor is "at least": a module whose crate root was
/// not given reaches the crate through `crate::`.
#[test]
fn what_cannot_be_resolved_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gpu.rs");
    std::fs::write(&file, format!("use cuda_driver_pfn::cu;\npub fn f() {{ unsafe {{ crate::cuda::api::cuCtxCreate{CALL}; cu!(cuInit(0)).unwrap(); }} }}\n")).unwrap();
    let f = floor(&registry(), &[file], false).unwrap_or_else(|e| panic!("{e:#}"));
    let report = f.render(dir.path());
    assert_eq!(f.unresolved.len(), 1, "{report}");
    assert!(
        report.contains("at least CUDA 2.0") && report.contains("gpu.rs:2: crate::cuda::api::cuCtxCreate"),
        "{report}"
    );
    assert!(report.contains("could not resolve 1 name(s)"), "{report}");
}

/// Code under any `#[cfg]` counts, and `--help` says so.
#[test]
fn cfg_d_out_code_counts_and_the_help_says_so() {
    let v = cu_ctx_create();
    assert_floor(&format!("use cuda_driver_pfn::cu;\n#[cfg(any())]\nfn never() {{ unsafe {{ cu!(cuCtxCreate{CALL}).unwrap(); }} }}\nfn main() {{}}\n"), v);
    let o = cargo_run("cuda-sys-gen", &["min-driver", "--help"], &[]);
    let help = text(&o.stdout);
    assert!(help.contains("Code under every `#[cfg(..)]` counts, even `#[cfg(any())]`"), "{help}");
}

/// `--per-thread` and a C name that has no function in that mode: the reason, not "misspelt".
#[test]
fn a_name_without_a_per_thread_function_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("main.rs");
    std::fs::write(
        &file,
        "use cuda_driver_pfn::cu;\nfn main() { unsafe { cu!(cuGetProcAddress(a, b, c, d, e)).unwrap(); } }\n",
    )
    .unwrap();
    let err = format!("{:#}", floor(&registry(), std::slice::from_ref(&file), true).unwrap_err());
    assert!(
        err.contains("main.rs:2: cu!(cuGetProcAddress): cuda.h")
            && err.contains("has no per-thread-default-stream function"),
        "{err}"
    );
    assert!(!err.contains("misspelt"), "{err}");
    floor(&registry(), &[file], false).unwrap_or_else(|e| panic!("without --per-thread it has one: {e:#}"));
}
