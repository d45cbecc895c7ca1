//! `min-driver --run` and `--as-driver` over Debian's real drivers (no GPU: their
//! `cuGetProcAddress` answers without one, and `cuInit` fails as on a machine without a GPU):
//! C programs of `tests/min-driver-run/` run through the observer (the tracer,
//! `examples/libcuda-tracer`) in front of each driver. A program that calls libcuda's exports
//! has the run floor its static reading gives; a driver of 12.5 answering as 12.0, 12.2 and
//! 12.4 hands out, request by request, what Debian's 525, 535 and 550 hand out themselves; the
//! wrong-ABI hazard of `cuCtxCreate` asked at 12050 is reported under `--as-driver 12.4`; and
//! a run's floor is tight, replayed on the drivers above and below it.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cuda_driver_pfn::registry::ENTRIES;
use cuda_sys_gen_tests::drivers::{self, Fetched};
use cuda_sys_gen_tests::{cuda_sys_gen_binary, repo_root, text};

fn driver<'a>(drivers: &'a [Fetched], name: &str) -> &'a Fetched {
    drivers.iter().find(|d| d.pin.name == name).unwrap_or_else(|| panic!("driver {name} is pinned"))
}

/// The observer library, built (the current code's).
fn observer() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out = Command::new(env!("CARGO"))
                .current_dir(repo_root())
                .args(["build", "--quiet", "--offline", "-p", "cuda-sys-gen-tracer"])
                .output()
                .expect("run cargo build");
            assert!(out.status.success(), "cargo build -p cuda-sys-gen-tracer failed:\n{}", text(&out.stderr));
            let exe = std::env::current_exe().expect("the test's own path");
            exe.parent().and_then(Path::parent).expect("target/debug").join("libcuda_tracer.so")
        })
        .clone()
}

/// A C program of `tests/min-driver-run/`, built into `dir` (linked against `link`'s libcuda
/// where given); `None` (the test skips) without a C compiler.
fn program(dir: &Path, name: &str, link: Option<&Fetched>) -> Option<PathBuf> {
    let exe = dir.join(name);
    let source = repo_root().join(format!("tests/min-driver-run/{name}.c"));
    let mut cmd = Command::new("cc");
    cmd.arg("-O1").arg("-o").arg(&exe).arg(&source);
    match link {
        Some(d) => {
            cmd.arg(format!("-L{}", d.libcuda.parent().unwrap().display())).arg("-l:libcuda.so.1");
        }
        None => {
            cmd.arg("-ldl");
        }
    }
    match cmd.output() {
        Ok(o) => {
            assert!(o.status.success(), "{} does not compile:\n{}", source.display(), text(&o.stderr));
            Some(exe)
        }
        Err(e) => {
            cuda_sys_gen_tests::skip(&format!("no C compiler (`cc`: {e})"));
            None
        }
    }
}

/// `cuda-sys-gen min-driver ARGS` with `real`'s folders on the library path.
fn min_driver(real: &Fetched, args: &[&str]) -> Output {
    Command::new(cuda_sys_gen_binary())
        .current_dir(repo_root())
        .arg("min-driver")
        .args(args)
        .env("LD_LIBRARY_PATH", real.library_path())
        .env("CUDA_SYS_GEN_OBSERVER", observer())
        .env_remove("CUDA_SYS_GEN_REAL_LIBCUDA")
        .env_remove("CUDA_SYS_GEN_TRACE")
        .output()
        .expect("run cuda-sys-gen")
}

/// The program run directly on `real` (no observer): its stdout.
fn direct(real: &Fetched, exe: &Path, args: &[&str]) -> String {
    let out = Command::new(exe).args(args).env("LD_LIBRARY_PATH", real.library_path()).output().expect("run");
    assert!(out.status.success(), "{} on {}: {}{}", exe.display(), real.pin.name, text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

/// The `--json` report of a `--run` (on stderr).
fn json_report(out: &Output) -> serde_json::Value {
    let report = text(&out.stderr);
    let start = report.find("{\n").unwrap_or_else(|| panic!("no JSON report: {report}"));
    serde_json::from_str(&report[start..]).unwrap_or_else(|e| panic!("{e}: {report}"))
}

fn json_version(out: &Output) -> u64 {
    let v = json_report(out);
    v["version"].as_u64().unwrap_or_else(|| panic!("no version: {v}"))
}

/// A program that links libcuda and calls its exports by name: the floor of its run, through
/// every Debian driver, is the floor its static reading gives (both exact: imports, and the
/// ABIs the run called), 12.5 for `cuCtxCreate_v4`, and the program's output is its own.
#[test]
fn a_run_floor_is_the_static_floor_of_a_program_that_calls_exports() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path(), "imports", Some(driver(&drivers, "555"))) else { return };
    let exe_text = exe.to_str().unwrap();
    let static_out = min_driver(driver(&drivers, "555"), &["--json", exe_text]);
    let report = text(&static_out.stdout);
    let v: serde_json::Value = serde_json::from_str(&report).unwrap_or_else(|e| panic!("{e}: {report}"));
    assert_eq!(v["at_least"], false, "the static reading is exact: {report}");
    let static_floor = v["version"].as_u64().unwrap();
    assert_eq!(static_floor, 12050, "{report}");
    for d in &drivers {
        let out = min_driver(d, &["--json", "--run", "--", exe_text]);
        assert_eq!(out.status.code(), Some(0), "driver {}: {}", d.pin.name, text(&out.stderr));
        assert!(
            text(&out.stdout).starts_with("cuDriverGetVersion -> result 0"),
            "driver {}: {}",
            d.pin.name,
            text(&out.stdout)
        );
        assert_eq!(json_version(&out), static_floor, "driver {}: {}", d.pin.name, text(&out.stderr));
    }
}

/// The requests of the answer check: every entry of the registry on Linux at its own version,
/// one below it, and 99999, each with its flag (2 for a per-thread variant). The lookup
/// functions themselves are left out (the stand-in hands out its own, named otherwise).
fn every_request() -> String {
    let mut s = String::new();
    for e in ENTRIES.iter().filter(|e| e.platforms.here() && e.symbol != "cuGetProcAddress") {
        let flags = if e.variant.is_some() { 2 } else { 0 };
        for v in [e.version as i64, e.version as i64 - 10, 99999] {
            s.push_str(&format!("{} {v} {flags}\n", e.symbol));
        }
    }
    s
}

/// Driver 555 (CUDA 12.5) answering as 525, 535 and 550 would (`--as-driver 12.0/12.2/12.4`)
/// hands out, request by request, the function those drivers hand out themselves (by its
/// exported name, `dladdr`), with the same result and status, and `cuDriverGetVersion` says
/// their version; and the report lists where the run went otherwise than on 555.
#[test]
fn as_driver_over_555_answers_as_525_535_550_answer() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path(), "asks", None) else { return };
    let requests = dir.path().join("requests.txt");
    std::fs::write(&requests, every_request()).unwrap();
    let (exe_text, req_text) = (exe.to_str().unwrap(), requests.to_str().unwrap());
    let newest = driver(&drivers, "555");
    for (name, cuda) in [("525", "12.0"), ("535", "12.2"), ("550", "12.4")] {
        let real = direct(driver(&drivers, name), &exe, &[req_text]);
        let out = min_driver(newest, &["--run", "--as-driver", cuda, "--", exe_text, req_text]);
        let (as_driver, report) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{report}");
        let lines = real.lines().count();
        assert!(lines > 2000, "{lines} requests: too few to check anything");
        let differ: Vec<(&str, &str)> = real.lines().zip(as_driver.lines()).filter(|(a, b)| a != b).take(10).collect();
        assert!(differ.is_empty() && lines == as_driver.lines().count(), "driver {name} vs 555 as {cuda}: {differ:#?}");
        assert!(report.contains(&format!("answered as a driver of CUDA {cuda} would")), "{report}");
        assert!(report.contains(&format!("cuDriverGetVersion: {}", cuda.replace('.', "0") + "0")), "{report}");
        println!("driver {name}: {lines} answers the same from 555 as {cuda}");
    }
    // As its own version, 555 hands out its own answers: the run goes as without.
    let real = direct(newest, &exe, &[req_text]);
    let out = min_driver(newest, &["--run", "--as-driver", "12.5", "--", exe_text, req_text]);
    assert!(text(&out.stdout) == real, "555 as 12.5 differs from 555: {}", text(&out.stderr));
    assert!(text(&out.stderr).contains("as CUDA 12.5: the run went as on the real driver"), "{}", text(&out.stderr));
}

/// `cuCtxCreate` asked at 12050: 555 answers the 12050 ABI (a floor of 12.5, above a
/// `--driver 12.4`: exit 3); answering as 12.4 it is the 11040 ABI, the wrong-ABI hazard,
/// reported as such and as the point where the run went otherwise.
#[test]
fn cu_ctx_create_at_12050_as_driver_12_4_is_the_wrong_abi_hazard() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path(), "asks", None) else { return };
    let requests = dir.path().join("requests.txt");
    std::fs::write(&requests, "cuCtxCreate 12050 0\n").unwrap();
    let (exe_text, req_text) = (exe.to_str().unwrap(), requests.to_str().unwrap());
    let newest = driver(&drivers, "555");
    let plain = min_driver(newest, &["--run", "--driver", "12.4", "--", exe_text, req_text]);
    let report = text(&plain.stderr);
    assert_eq!(plain.status.code(), Some(3), "above 12.4: {report}");
    assert!(report.contains("CUDA 12.5 (12050), set by cuCtxCreate_v12050"), "{report}");
    assert!(!report.contains("HAZARD"), "{report}");
    let as_12_4 = min_driver(newest, &["--run", "--as-driver", "12.4", "--", exe_text, req_text]);
    let report = text(&as_12_4.stderr);
    assert!(
        text(&as_12_4.stdout).contains("cuCtxCreate 12050 0 -> result 0 status 0 cuCtxCreate_v3"),
        "{}",
        text(&as_12_4.stdout)
    );
    assert!(
        report.contains("HAZARD: \"cuCtxCreate\" at 12050 flags 0 -> cuCtxCreate_v11040"),
        "the hazard is reported: {report}"
    );
    assert!(
        report.contains("\"cuCtxCreate\" at 12050 flags 0: cuCtxCreate_v11040 (the real driver: cuCtxCreate_v12050)"),
        "{report}"
    );
    // Above the machine's driver: refused, said in one line.
    let above = min_driver(newest, &["--run", "--as-driver", "12.6", "--", exe_text, req_text]);
    assert_eq!(above.status.code(), Some(1), "{}", text(&above.stderr));
    assert!(text(&above.stderr).contains("above the real driver"), "{}", text(&above.stderr));
}

/// The floor of a run is tight: replayed on each Debian driver at or above it, the run's
/// requests get the answers 555 gave; on the newest one below it (where a request sets it), at
/// least one differs.
#[test]
fn a_run_floor_is_tight_by_replay() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path(), "asks", None) else { return };
    let newest = driver(&drivers, "555");
    let with_lookup: Vec<&Fetched> =
        drivers.iter().filter(|d| d.pin.cuda_version().is_some_and(|v| v >= 12000)).collect();
    for (i, set) in [
        "cuCtxCreate 12050 0\ncuMemAlloc 3020 0\n",
        "cuMemcpy 7000 2\ncuStreamGetCaptureInfo 11030 0\ncuMemAlloc 3020 0\ncuCtxCreate 11040 0\n",
        "cuGraphAddNode 12030 0\ncuMemAlloc 3020 0\n",
    ]
    .iter()
    .enumerate()
    {
        let requests = dir.path().join(format!("set{i}.txt"));
        std::fs::write(&requests, set).unwrap();
        let (exe_text, req_text) = (exe.to_str().unwrap(), requests.to_str().unwrap());
        let out = min_driver(newest, &["--json", "--run", "--", exe_text, req_text]);
        let floor = json_version(&out) as u32;
        let answers =
            |s: &str| s.lines().filter(|l| !l.starts_with("cuDriverGetVersion")).map(str::to_owned).collect::<Vec<_>>();
        let on_555 = answers(&text(&out.stdout));
        let mut below: Option<(&Fetched, u32)> = None;
        for d in &with_lookup {
            let v = d.pin.cuda_version().unwrap();
            let replayed = answers(&direct(d, &exe, &[req_text]));
            if v >= floor {
                assert_eq!(replayed, on_555, "set {i}: driver {} at or above the floor {floor}", d.pin.name);
            } else if below.is_none_or(|(_, b)| v > b) {
                below = Some((d, v));
            }
        }
        let report = json_report(&out);
        let set_by_request = report["entries"][0]["reading"] == "request";
        if let (Some((d, _)), true) = (below, set_by_request) {
            let replayed = answers(&direct(d, &exe, &[req_text]));
            assert_ne!(
                replayed, on_555,
                "set {i}: driver {} below the floor {floor} answers the same: {report}",
                d.pin.name
            );
        }
        println!("set {i}: floor {floor}; set by a request: {set_by_request}");
    }
}

/// A trace recorded elsewhere (`--trace FILE`) reads as the run did; a missing observer is said
/// in one line with how to build it.
#[test]
fn a_trace_file_and_a_missing_observer() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.log");
    std::fs::write(
        &trace,
        "start 1 real driver /x/libcuda.so.1 (version 12040)\n\
         request 1 \"cuCtxCreate\" 12050 flags 0 -> cuCtxCreate_v11040 (cuCtxCreate_v3) HAZARD: asked 12050, got cuCtxCreate_v11040 (11040), older than cuCtxCreate_v12050, the ABI of 12050; rule ok\n\
         refused 1 \"cuNoSuch\" 12040 flags 0 -> CUDA_SUCCESS status 1\n",
    )
    .unwrap();
    let out = Command::new(cuda_sys_gen_binary())
        .current_dir(repo_root())
        .args(["min-driver", "--max", "11.3", "--trace"])
        .arg(&trace)
        .output()
        .unwrap();
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "11.4 is above 11.3: {report}");
    assert!(report.contains("CUDA 11.4 (11040), set by cuCtxCreate_v11040"), "{report}");
    assert!(report.contains("\"cuNoSuch\" at 12040 flags 0: CUDA_SUCCESS status 1"), "{report}");
    assert!(report.contains("HAZARD: \"cuCtxCreate\" at 12050 flags 0"), "{report}");
    let out = Command::new(cuda_sys_gen_binary())
        .current_dir(repo_root())
        .args(["min-driver", "--run", "--", "true"])
        .env("CUDA_SYS_GEN_OBSERVER", dir.path().join("none.so"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("cargo build --release -p cuda-sys-gen-tracer"), "{}", text(&out.stderr));
    // A run that never loads libcuda: not observed, said so; the program's status passes.
    let out = Command::new(cuda_sys_gen_binary())
        .current_dir(repo_root())
        .args(["min-driver", "--run", "--", "sh", "-c", "exit 7"])
        .env("CUDA_SYS_GEN_OBSERVER", observer())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not observed"), "{}", text(&out.stderr));
}

/// NVIDIA's CUDA 12.4 runtime (from its wheel, which `cargo xtask generate` fetches) under
/// `--run`: the runtime mapped into the process counts (the CUDA 12.x runtime, and NVIDIA's
/// minimum driver for it); and driver 555 answering as 470 (CUDA 11.4) makes the runtime
/// refuse the driver exactly as 470 itself does (`cudaGetDeviceCount`: 35, insufficient
/// driver, where 555 says 100, no device).
#[test]
fn a_runtime_counts_and_refuses_an_older_driver_as_on_that_driver() {
    let Some(drivers) = drivers::fetched() else { return };
    let wheel = repo_root()
        .join("target/cuda-headers/wheels/nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl");
    let Ok(file) = std::fs::File::open(&wheel) else {
        cuda_sys_gen_tests::skip(&format!("no {} (cargo xtask generate fetches it)", wheel.display()));
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut zip = zip::ZipArchive::new(file).expect("the wheel is a zip file");
    let mut lib = zip.by_name("nvidia/cuda_runtime/lib/libcudart.so.12").expect("libcudart.so.12 in the wheel");
    let rt = dir.path().join("rt");
    std::fs::create_dir_all(&rt).unwrap();
    std::io::copy(&mut lib, &mut std::fs::File::create(rt.join("libcudart.so.12")).unwrap()).unwrap();
    let source = dir.path().join("rt.c");
    std::fs::write(
        &source,
        "#include <dlfcn.h>\n#include <stdio.h>\nint main(void){void*h=dlopen(\"libcudart.so.12\",RTLD_NOW);\
         if(!h){printf(\"no runtime\\n\");return 1;}int(*f)(int*)=(int(*)(int*))dlsym(h,\"cudaGetDeviceCount\");\
         int n=-1;int r=f(&n);printf(\"cudaGetDeviceCount: %d\\n\",r);return 0;}\n",
    )
    .unwrap();
    let exe = dir.path().join("rt.bin");
    match Command::new("cc").arg("-o").arg(&exe).arg(&source).arg("-ldl").output() {
        Ok(o) => assert!(o.status.success(), "{}", text(&o.stderr)),
        Err(e) => {
            cuda_sys_gen_tests::skip(&format!("no C compiler (`cc`: {e})"));
            return;
        }
    }
    let with_rt = |d: &Fetched| {
        let mut p: Vec<PathBuf> = d.lib_dirs.clone();
        p.push(rt.clone());
        std::env::join_paths(p).unwrap()
    };
    let run = |d: &Fetched, args: &[&str]| {
        Command::new(cuda_sys_gen_binary())
            .current_dir(repo_root())
            .arg("min-driver")
            .args(args)
            .env("LD_LIBRARY_PATH", with_rt(d))
            .env("CUDA_SYS_GEN_OBSERVER", observer())
            .env_remove("CUDA_SYS_GEN_REAL_LIBCUDA")
            .output()
            .expect("run cuda-sys-gen")
    };
    let exe_text = exe.to_str().unwrap();
    let newest = driver(&drivers, "555");
    let out = run(newest, &["--json", "--run", "--", exe_text]);
    assert_eq!(text(&out.stdout), "cudaGetDeviceCount: 100\n", "{}", text(&out.stderr));
    let report = json_report(&out);
    assert_eq!(report["runtimes"], serde_json::json!([12]), "{report}");
    assert!(report["kernels"][0]["needs"] == "the CUDA 12.x runtime", "{report}");
    let on_470 = Command::new(&exe).env("LD_LIBRARY_PATH", with_rt(driver(&drivers, "470"))).output().unwrap();
    assert_eq!(text(&on_470.stdout), "cudaGetDeviceCount: 35\n", "470 refuses the 12.4 runtime");
    let as_470 = run(newest, &["--run", "--as-driver", "11.4", "--", exe_text]);
    assert_eq!(text(&as_470.stdout), text(&on_470.stdout), "{}", text(&as_470.stderr));
    assert!(
        text(&as_470.stderr).contains("cuDriverGetVersion: 11040 (the real driver: 12050)"),
        "{}",
        text(&as_470.stderr)
    );
}

/// What cannot be run or observed is said, with exit 1, before or instead of a floor, and the
/// observer's scratch folder is left nowhere: a static program, a command that is not there, a
/// version that is none, `--as-driver` on a trace.
#[test]
fn what_cannot_be_observed_is_said() {
    let dir = tempfile::tempdir().unwrap();
    // The scratch folders go under a TMPDIR of this test's own (other tests run beside it).
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let scratch = || std::fs::read_dir(&tmp).unwrap().count();
    let cli = |args: &[&str]| {
        Command::new(cuda_sys_gen_binary())
            .current_dir(repo_root())
            .arg("min-driver")
            .args(args)
            .env("CUDA_SYS_GEN_OBSERVER", observer())
            .env("TMPDIR", &tmp)
            .output()
            .unwrap()
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--run", "--", "/nonexistent/program"], "could not run /nonexistent/program"),
        (vec!["--run", "--as-driver", "twelve", "--", "true"], "--as-driver"),
        (vec!["--as-driver", "12.4", "--trace", "x.log"], "--run"),
        (vec!["--run"], "CMD"),
    ];
    for (args, says) in cases {
        let out = cli(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{args:?}: {}", text(&out.stderr));
    }
    let source = dir.path().join("st.c");
    std::fs::write(&source, "int main(void) { return 0; }\n").unwrap();
    let exe = dir.path().join("st");
    let built = Command::new("cc").arg("-static").arg("-o").arg(&exe).arg(&source).output();
    if built.is_ok_and(|o| o.status.success()) {
        let out = cli(&["--run", "--", exe.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("is a static program"), "{}", text(&out.stderr));
    } else {
        eprintln!("no static C library here: the static program is not tried");
    }
    let out = cli(&["--run", "--", "sh", "-c", "exit 0"]);
    assert_eq!(out.status.code(), Some(2), "not observed: {}", text(&out.stderr));
    assert_eq!(scratch(), 0, "a scratch folder was left behind");
}

/// The "real driver" of the image tests: a C library that loads any image and says its device
/// is an sm_90 GPU (`tests/min-driver-run/loader.c`; without a GPU a real driver loads
/// nothing), and the C program `program` of tests/min-driver-run/ linked against it. `None`
/// where there is no C compiler.
fn loader_and(program: &str, dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let loader = dir.join("fake").join("libcuda.so.1");
    std::fs::create_dir_all(loader.parent().unwrap()).unwrap();
    let source = repo_root().join("tests/min-driver-run/loader.c");
    match Command::new("cc")
        .args(["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(&loader)
        .arg(&source)
        .output()
    {
        Ok(o) => assert!(o.status.success(), "{}", text(&o.stderr)),
        Err(e) => {
            cuda_sys_gen_tests::skip(&format!("no C compiler (`cc`: {e})"));
            return None;
        }
    }
    let exe = dir.join(program);
    let o = Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(repo_root().join(format!("tests/min-driver-run/{program}.c")))
        .arg(format!("-L{}", loader.parent().unwrap().display()))
        .arg("-l:libcuda.so.1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    Some((loader, exe))
}

/// `min-driver --json --run -- EXE ARGS` in front of `loader`.
fn run_over_loader(loader: &Path, exe: &Path, args: &[&Path]) -> Output {
    Command::new(cuda_sys_gen_binary())
        .current_dir(repo_root())
        .args(["min-driver", "--json", "--run", "--"])
        .arg(exe)
        .args(args)
        .env("CUDA_SYS_GEN_OBSERVER", observer())
        .env("CUDA_SYS_GEN_REAL_LIBCUDA", loader)
        .output()
        .unwrap()
}

/// An image loaded from memory (`cuModuleLoadData` of PTX of ISA 8.5) is copied by the tracer
/// and read as a kernel file is: the run's floor is the release that JIT-compiles it, 12.5.
#[test]
fn an_image_loaded_at_run_time_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let Some((loader, exe)) = loader_and("loads", dir.path()) else { return };
    let out = run_over_loader(&loader, &exe, &[]);
    assert_eq!(text(&out.stdout), "cuModuleLoadData -> result 0\n", "{}", text(&out.stderr));
    let report = json_report(&out);
    assert_eq!(report["version"], 12050, "{report}");
    assert_eq!(report["kernels"][0]["needs"], "PTX ISA 8.5", "{report}");
    assert_eq!(report["at_least"], false, "the image was read: {report}");
}

/// A fatbin of an sm_90 cubin (ptxas 13.5) and PTX of ISA 9.5, loaded on a GPU the driver says
/// is sm_90: the driver loads the cubin there, so the run needs CUDA 13.0 (a 13.x cubin), not
/// the 13.5 the PTX would need on another GPU (CuPy's run on the GPU machine read 13.2 so).
#[test]
fn an_image_is_read_for_the_gpu_it_was_loaded_on() {
    let dir = tempfile::tempdir().unwrap();
    let Some((loader, exe)) = loader_and("loads_file", dir.path()) else { return };
    let fatbin = repo_root().join("tests/kernels/sm90_ptx95.fatbin");
    let out = run_over_loader(&loader, &exe, &[&fatbin]);
    assert_eq!(text(&out.stdout), "cuModuleLoadData -> result 0\n", "{}", text(&out.stderr));
    let report = json_report(&out);
    assert_eq!(report["version"], 13000, "{report}");
    assert_eq!(report["at_least"], false, "the image was read: {report}");
}

/// `min-driver --json --run ARGS -- EXE PROGRAM_ARGS` in front of `loader`.
fn run_over_loader_with(loader: &Path, args: &[&str], exe: &Path, program_args: &[&Path]) -> Output {
    Command::new(cuda_sys_gen_binary())
        .current_dir(repo_root())
        .args(["min-driver", "--json", "--run"])
        .args(args)
        .arg("--")
        .arg(exe)
        .args(program_args)
        .env("CUDA_SYS_GEN_OBSERVER", observer())
        .env("CUDA_SYS_GEN_REAL_LIBCUDA", loader)
        .output()
        .unwrap()
}

/// The `--as-driver` differences of a `--json` report, as `what: as_driver`.
fn differences(out: &Output) -> Vec<String> {
    let report = json_report(out);
    report["run"]["differences"]
        .as_array()
        .unwrap_or_else(|| panic!("no differences: {report}"))
        .iter()
        .map(|d| format!("{}: {}", d["what"].as_str().unwrap_or("?"), d["as_driver"].as_str().unwrap_or("?")))
        .collect()
}

/// Under `--as-driver`, an image the older driver cannot load fails with that driver's own
/// error, in front of a driver (loader.c, CUDA 12.5, an sm_90 GPU) that loads anything: PTX of
/// ISA 8.5 (CUDA 12.5's) as 12.0 is `CUDA_ERROR_UNSUPPORTED_PTX_VERSION` (222); a fatbin of a
/// 13.5 cubin and PTX ISA 9.5 as 12.4 too (its PTX is what 12.4 would JIT-compile); a cubin of
/// ptxas 13.5 alone as 12.4 is `CUDA_ERROR_NO_BINARY_FOR_GPU` (209). Each refusal is a point
/// where the run went otherwise than on the real driver; at the floor, 12.5, the PTX loads.
#[test]
fn as_driver_refuses_an_image_the_older_driver_cannot_load() {
    let dir = tempfile::tempdir().unwrap();
    let Some((loader, exe)) = loader_and("loads", dir.path()) else { return };
    let as_12_0 = run_over_loader_with(&loader, &["--as-driver", "12.0"], &exe, &[]);
    assert_eq!(text(&as_12_0.stdout), "cuModuleLoadData -> result 222\n", "{}", text(&as_12_0.stderr));
    let said = differences(&as_12_0);
    assert!(
        said.iter().any(|d| d.starts_with(
            "a load by cuModuleLoadData_v2000: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): PTX ISA 8.5 (CUDA 12.5's)"
        )),
        "{said:#?}"
    );
    // The image still counts for the floor: the run on the real driver loads it. The module the
    // real driver made of it was unloaded again.
    assert_eq!(json_report(&as_12_0)["version"], 12050);
    assert!(text(&as_12_0.stderr).contains("loader: cuModuleUnload 0x1"), "{}", text(&as_12_0.stderr));
    let at_floor = run_over_loader_with(&loader, &["--as-driver", "12.5"], &exe, &[]);
    assert_eq!(text(&at_floor.stdout), "cuModuleLoadData -> result 0\n", "{}", text(&at_floor.stderr));
    assert!(!text(&at_floor.stderr).contains("cuModuleUnload"), "{}", text(&at_floor.stderr));
    assert!(differences(&at_floor).iter().all(|d| !d.starts_with("a load")), "{:?}", differences(&at_floor));

    let Some((loader, exe)) = loader_and("loads_file", dir.path()) else { return };
    for (kernel, result, name) in [
        ("sm90_ptx95.fatbin", 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"),
        ("add_sm90_cuda13.5.cubin", 209, "CUDA_ERROR_NO_BINARY_FOR_GPU"),
    ] {
        let file = repo_root().join("tests/kernels").join(kernel);
        let out = run_over_loader_with(&loader, &["--as-driver", "12.4"], &exe, &[&file]);
        assert_eq!(text(&out.stdout), format!("cuModuleLoadData -> result {result}\n"), "{}", text(&out.stderr));
        let said = differences(&out);
        assert!(said.iter().any(|d| d.contains(&format!("{name} ({result})"))), "{kernel}: {said:#?}");
    }
}

/// A linker input given with its size (`cuLinkAddData`, PTX of ISA 8.5): read for the floor, and
/// as 12.0 refused with 222 before the driver sees it; at the floor it reaches the driver.
#[test]
fn a_linker_input_is_read_and_judged_before_the_driver_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some((loader, exe)) = loader_and("links", dir.path()) else { return };
    let plain = run_over_loader_with(&loader, &[], &exe, &[]);
    assert_eq!(text(&plain.stdout), "cuLinkAddData -> result 0\n", "{}", text(&plain.stderr));
    let report = json_report(&plain);
    assert_eq!((report["version"].as_u64(), report["at_least"].as_bool()), (Some(12050), Some(false)), "{report}");
    assert!(text(&plain.stderr).contains("loader: cuLinkAddData_v2"), "{}", text(&plain.stderr));
    let as_12_0 = run_over_loader_with(&loader, &["--as-driver", "12.0"], &exe, &[]);
    assert_eq!(text(&as_12_0.stdout), "cuLinkAddData -> result 222\n", "{}", text(&as_12_0.stderr));
    assert!(!text(&as_12_0.stderr).contains("loader: cuLinkAddData_v2"), "{}", text(&as_12_0.stderr));
    let said = differences(&as_12_0);
    assert!(
        said.iter().any(|d| d.starts_with("a load by cuLinkAddData_v6050: CUDA_ERROR_UNSUPPORTED_PTX_VERSION")),
        "{said:#?}"
    );
}

/// An image loaded from a file (`cuModuleLoad`): the observer reads the file the program named,
/// so the run's floor is exact (PTX ISA 8.5: 12.5), and as 12.0 the load fails with 222 before
/// the driver sees it.
#[test]
fn an_image_loaded_from_a_file_is_read_and_judged() {
    let dir = tempfile::tempdir().unwrap();
    let Some((loader, exe)) = loader_and("loads_path", dir.path()) else { return };
    let ptx = dir.path().join("k.ptx");
    std::fs::write(&ptx, ".version 8.5\n.target sm_90\n.address_size 64\n\n.visible .entry k() { ret; }\n").unwrap();
    let out = run_over_loader_with(&loader, &[], &exe, &[&ptx]);
    assert_eq!(text(&out.stdout), "cuModuleLoad -> result 0\n", "{}", text(&out.stderr));
    let report = json_report(&out);
    assert_eq!(report["version"], 12050, "{report}");
    assert_eq!(report["kernels"][0]["needs"], "PTX ISA 8.5", "{report}");
    assert_eq!(report["at_least"], false, "the file was read: {report}");
    let as_12_0 = run_over_loader_with(&loader, &["--as-driver", "12.0"], &exe, &[&ptx]);
    assert_eq!(text(&as_12_0.stdout), "cuModuleLoad -> result 222\n", "{}", text(&as_12_0.stderr));
    let said = differences(&as_12_0);
    assert!(
        said.iter().any(|d| d.starts_with("a load by cuModuleLoad_v2000: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)")),
        "{said:#?}"
    );
}

/// A program that opens the driver by its absolute path passes over the stand-in: the run is
/// "not observed" (exit 2), naming the process and the library it loaded, and no floor is
/// given; the same program given the name `libcuda.so.1` is observed.
#[test]
fn a_driver_opened_by_its_path_is_not_observed() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path(), "opens_path", None) else { return };
    let real = driver(&drivers, "555");
    let path = real.libcuda.to_str().unwrap();
    let out = min_driver(real, &["--run", "--", exe.to_str().unwrap(), path]);
    let report = text(&out.stderr);
    assert_eq!(text(&out.stdout), "cuDriverGetVersion -> result 0 version 12050\n", "{report}");
    assert_eq!(out.status.code(), Some(2), "{report}");
    assert!(report.contains("not observed: process "), "{report}");
    assert!(report.contains(&format!("loaded the driver {path} itself")), "{report}");
    assert!(!report.contains("oldest driver"), "no floor: {report}");
    let by_name = min_driver(real, &["--json", "--run", "--", exe.to_str().unwrap(), "libcuda.so.1"]);
    assert_eq!(by_name.status.code(), Some(0), "{}", text(&by_name.stderr));
    assert_eq!(json_report(&by_name)["run"]["not_observed"], serde_json::Value::Null, "{}", text(&by_name.stderr));
}
