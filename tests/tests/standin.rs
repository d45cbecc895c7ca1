//! The stand-in (`standin` feature, `export_libcuda!`) in front of NVIDIA's real drivers of
//! `tests/real-drivers.toml` (no GPU needed): `tests/standin-libcuda`, every hook only
//! forwarding, copied as `libcuda.so.1` into a folder first on `LD_LIBRARY_PATH`, the real
//! driver's folder second.
//!
//! For every driver with a lookup function, the answer check of `real_driver_answers.rs`
//! (`conformance answers`) made of the stand-in: each request answered as the registry's rule
//! says, each function handed out the stand-in's own export of the entry's name, which
//! forwards to the real driver's export of that name: the ABI the driver returned. Once with
//! the real driver named by `$CUDA_SYS_GEN_REAL_LIBCUDA`, once found by the stand-in's own
//! search of the loader's folders (which must skip the stand-in itself, also named
//! `libcuda.so.1`). And the stand-in's exports: every registry name NVIDIA's Linux library
//! exports, and no other.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_driver_pfn::ENTRIES;
use cuda_sys_gen_tests::drivers::{self, Fetched};
use cuda_sys_gen_tests::{repo_root, text};

/// The stand-in, built (as the tests' own build is) and copied into a folder of its own as
/// `libcuda.so.1`.
fn standin(dir: &Path) -> PathBuf {
    built_cdylib("cuda-sys-gen-standin-libcuda", "libcuda_standin.so", dir)
}

/// A workspace `cdylib`, built, copied into `dir` as `libcuda.so.1`.
fn built_cdylib(package: &str, file: &str, dir: &Path) -> PathBuf {
    let out = Command::new(env!("CARGO"))
        .current_dir(repo_root())
        .args(["build", "--quiet", "--offline", "-p", package])
        .output()
        .expect("run cargo build");
    assert!(out.status.success(), "cargo build -p {package} failed:\n{}", text(&out.stderr));
    let exe = std::env::current_exe().expect("the test's own path");
    let debug = exe.parent().and_then(Path::parent).expect("target/debug");
    let path = dir.join("libcuda.so.1");
    std::fs::copy(debug.join(file), &path).expect("copy the library");
    path
}

fn answers(driver: &Fetched, standin: &Path, named: bool) -> (Option<i32>, String) {
    let mut path = vec![standin.parent().unwrap().to_owned()];
    path.extend(driver.lib_dirs.iter().cloned());
    let mut c = Command::new(env!("CARGO_BIN_EXE_conformance"));
    c.arg("answers")
        .env("LD_LIBRARY_PATH", std::env::join_paths(path).unwrap())
        .env("CUDA_SYS_GEN_LIBRARY", standin)
        .env("CUDA_SYS_GEN_CHECK_REAL", &driver.libcuda)
        .env_remove("CUDA_SYS_GEN_REAL_LIBCUDA");
    if named {
        c.env("CUDA_SYS_GEN_REAL_LIBCUDA", &driver.libcuda);
    }
    let out = c.output().expect("start a child process");
    (out.status.code(), format!("{}{}", text(&out.stdout), text(&out.stderr)))
}

#[test]
fn the_standin_answers_every_request_with_its_function_of_the_abi_the_driver_returned() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let standin = standin(dir.path());
    let mut failures = Vec::new();
    let mut total = 0;
    let mut checked = 0;
    for driver in &drivers {
        for named in [true, false] {
            let (code, out) = answers(driver, &standin, named);
            let last = out.lines().last().unwrap_or_default().to_owned();
            let how = if named { "named by $CUDA_SYS_GEN_REAL_LIBCUDA" } else { "found by its search" };
            println!("driver {} ({how}): {last}", driver.pin.name);
            // Drivers without a lookup function answer no request of a stand-in either: the
            // stand-in's cuGetProcAddress finds no real one to ask (and says CUDA_ERROR_NOT_FOUND).
            if last.contains("the real driver has no lookup function") && code == Some(0) {
                continue;
            }
            let n: usize =
                last.split(": ").nth(1).and_then(|s| s.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
            total += n;
            checked += 1;
            if code != Some(0) || !last.contains(", 0 different") || n < 561 * 3 * 4 {
                let shown: Vec<&str> = out.lines().take(30).collect();
                failures.push(format!("driver {} ({how}): exit {code:?}:\n{}", driver.pin.name, shown.join("\n")));
            }
        }
    }
    println!("{total} requests answered by the stand-in over {checked} runs");
    assert!(checked >= 10, "too few drivers with a lookup function were checked: {checked} runs");
    assert!(total >= 10 * 561 * 3 * 4, "{total} requests");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The tracer (`examples/libcuda-tracer`) in front of the 555 driver, called from 8 threads at
/// once: one whole line per call and per answered `cuGetProcAddress`, the ABI and exported
/// name, the enum argument by its enumerator's name, the result by its name, the rule's
/// verdict.
#[test]
fn the_tracer_writes_one_line_per_call_from_many_threads() {
    let Some(drivers) = drivers::fetched() else { return };
    let Some(driver) = drivers.iter().find(|d| d.pin.name == "555") else { panic!("driver 555 is pinned") };
    let dir = tempfile::tempdir().unwrap();
    let tracer = built_cdylib("cuda-sys-gen-tracer", "libcuda_tracer.so", dir.path());
    let trace = dir.path().join("trace.log");
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg("trace-threads")
        .env("CUDA_SYS_GEN_LIBRARY", &tracer)
        .env("CUDA_SYS_GEN_REAL_LIBCUDA", &driver.libcuda)
        .env("CUDA_SYS_GEN_TRACE", &trace)
        .output()
        .expect("start a child process");
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let log = std::fs::read_to_string(&trace).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let count = |needle: &str| lines.iter().filter(|l| l.contains(needle)).count();
    assert!(lines[0].starts_with("start ") && lines[0].contains("(version 12050)"), "{}", lines[0]);
    assert_eq!(count("cuDriverGetVersion_v2020 (cuDriverGetVersion) driverVersion: *mut c_int = 0x"), 4000);
    // Without cuInit the driver answers NOT_INITIALIZED: the result by its name.
    let attribute = "cuDeviceGetAttribute_v2000 (cuDeviceGetAttribute) pi: *mut c_int = 0x";
    let enumerator =
        "attrib: CUdevice_attribute = CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK (1), dev: CUdevice_v1 = 0 \
                      -> CUDA_ERROR_NOT_INITIALIZED ";
    assert_eq!(lines.iter().filter(|l| l.contains(attribute) && l.contains(enumerator)).count(), 4000);
    assert_eq!(count(" (cuGetProcAddress_v2) symbol: *const c_char = 0x"), 4000);
    assert_eq!(count("\"cuMemAlloc\" 3020 flags 0 -> cuMemAlloc_v3020 (cuMemAlloc_v2) rule ok"), 4000);
    // Nothing else, and every line whole: 1 + 3 x 4000 + 4000 lines, each ending in "ns" or "ok".
    assert_eq!(lines.len(), 1 + 4 * 4000);
    let broken: Vec<&&str> = lines[1..]
        .iter()
        .filter(|l| !(l.starts_with("call ") && l.ends_with(" ns") || l.ends_with(" rule ok")))
        .collect();
    assert!(broken.is_empty(), "{} lines not whole, e.g. {:?}", broken.len(), broken.first());
}

/// A hook (the test stand-in's, on `cuDriverGetVersion`: the real version plus 1 through
/// `standin::forward`) takes every call of its ABI, by name and through the function
/// `cuGetProcAddress_v2` hands out, and taking it away restores the real driver's answer.
#[test]
fn a_hook_takes_its_abi_s_calls_by_name_and_through_the_lookup() {
    let Some(drivers) = drivers::fetched() else { return };
    let Some(driver) = drivers.iter().find(|d| d.pin.name == "555") else { panic!("driver 555 is pinned") };
    let dir = tempfile::tempdir().unwrap();
    let standin = standin(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg("hook-check")
        .env("CUDA_SYS_GEN_LIBRARY", &standin)
        .env("CUDA_SYS_GEN_REAL_LIBCUDA", &driver.libcuda)
        .output()
        .expect("start a child process");
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{shown}");
    assert!(
        shown.contains("plain ((0, 12050), (0, 12050)) hooked ((0, 12051), (0, 12051)) after (0, 12050)"),
        "{shown}"
    );
}

/// The stand-in exports every registry name the Linux driver library exports (x86-64: not
/// `cuEventCreateFromEGLSync`, which only aarch64 builds have), and nothing else of `cu`.
#[test]
fn the_standin_exports_every_linux_name_of_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let standin = standin(dir.path());
    let data = std::fs::read(&standin).unwrap();
    let names = exported_functions(&data);
    let expected: std::collections::BTreeSet<String> =
        ENTRIES.iter().filter(|e| e.platforms.here()).map(|e| e.exported.to_owned()).collect();
    // The test stand-in's own two functions for the checks aside.
    let ours: std::collections::BTreeSet<String> =
        names.into_iter().filter(|n| n.starts_with("cu") && !n.starts_with("cuda_standin_")).collect();
    let missing: Vec<&String> = expected.difference(&ours).collect();
    let extra: Vec<&String> = ours.difference(&expected).collect();
    assert!(missing.is_empty() && extra.is_empty(), "missing {missing:?}, extra {extra:?}");
    assert!(ours.len() > 700, "{} names", ours.len());
}

/// The names of the functions an ELF shared library exports: the dynamic symbol table, read
/// with the `object` crate.
fn exported_functions(data: &[u8]) -> Vec<String> {
    use object::{Object, ObjectSymbol};
    let file = object::File::parse(data).expect("an ELF file");
    // STT_GNU_IFUNC (10): the lookup functions, exported as indirect functions.
    let indirect = |s: &object::read::Symbol<'_, '_>| matches!(s.flags(), object::SymbolFlags::Elf { st_info, .. } if st_info & 0xf == 10);
    file.dynamic_symbols()
        .filter(|s| (s.is_definition() && s.kind() == object::SymbolKind::Text) || (!s.is_undefined() && indirect(s)))
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .collect()
}

/// One call of `conformance trace-outputs`: its name, its result, and (parameter, value) of what
/// the caller received.
type Received = (String, u32, Vec<(String, String)>);

/// What `conformance trace-outputs` printed it received.
fn received(out: &str) -> Vec<Received> {
    out.lines()
        .filter_map(|l| l.strip_prefix("received "))
        .map(|l| {
            let mut f = l.split(' ');
            let name = f.next().unwrap_or_default().to_owned();
            let result = f.next().and_then(|r| r.parse().ok()).expect("a result");
            let values = f.filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
            (name, result, values)
        })
        .collect()
}

/// Runs `conformance trace-outputs` through the tracer at `tracer` in front of `real`; checks
/// each traced line against what the caller received: after a successful call, `{*name =
/// value, ...}` with exactly the values received (a NULL pointer as `NULL`); after a failed
/// one, nothing read. Returns the calls and results received.
fn check_outputs(tracer: &Path, real: &Path, fake: bool, trace: &Path) -> Vec<(String, u32)> {
    let _ = std::fs::remove_file(trace);
    let mut c = Command::new(env!("CARGO_BIN_EXE_conformance"));
    c.arg("trace-outputs")
        .env("CUDA_SYS_GEN_LIBRARY", tracer)
        .env("CUDA_SYS_GEN_REAL_LIBCUDA", real)
        .env("CUDA_SYS_GEN_TRACE", trace)
        .env_remove("CUDA_SYS_GEN_TRACE_CALLS");
    if fake {
        c.env("CUDA_SYS_GEN_FAKE", real);
    }
    let out = c.output().expect("start a child process");
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{}: {shown}", real.display());
    let log = std::fs::read_to_string(trace).unwrap();
    let calls: Vec<&str> = log.lines().filter(|l| l.starts_with("call ")).collect();
    let got = received(&text(&out.stdout));
    assert_eq!(got.len(), 6, "{shown}");
    assert_eq!(calls.len(), got.len(), "one traced line per call:\n{log}");
    for ((name, result, values), line) in got.iter().zip(&calls) {
        assert!(line.contains(&format!(" ({name}) ")), "{name}: {line}");
        let after = line.split_once(" -> ").map_or("", |(_, r)| r);
        let outputs = after.split_once(" {").map(|(_, o)| o.rsplit_once("} ").map_or(o, |(o, _)| o));
        if *result != 0 {
            assert!(
                outputs.is_none(),
                "{}: {name} failed ({result}) but its outputs were read: {line}",
                real.display()
            );
            continue;
        }
        // Pointers as the tracer prints them: NULL for 0.
        let shown = |v: &str| if v == "0x0" { "NULL".to_owned() } else { v.to_owned() };
        let expected: Vec<String> = values
            .iter()
            .map(|(k, v)| match k.as_str() {
                // The status by its enumerator's name and value.
                "symbolFound" => format!("*{k} = {} ({v})", status_name(v)),
                _ => format!("*{k} = {}", shown(v)),
            })
            .collect();
        assert_eq!(outputs, Some(expected.join(", ").as_str()), "{}: {name}: {line}", real.display());
    }
    got.into_iter().map(|(n, r, _)| (n, r)).collect()
}

fn status_name(v: &str) -> &'static str {
    match v {
        "0" => "CU_GET_PROC_ADDRESS_SUCCESS",
        "1" => "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND",
        "2" => "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT",
        _ => "?",
    }
}

/// The tracer logs what each output parameter points to after a successful call, equal to what
/// the caller received (`cuDriverGetVersion`'s `int*`, both lookups' `pfn`: the stand-in's own
/// function, as substituted; the status; `cuGetErrorName`'s string pointer), and reads nothing
/// after a failed call (`cuDeviceGet` without a GPU, `cuInit` of the fake): in front of the fake
/// libcuda and of every real driver of the matrix with `cuGetProcAddress_v2`.
#[test]
fn the_tracer_logs_what_output_parameters_point_to_after_a_successful_call() {
    let dir = tempfile::tempdir().unwrap();
    let tracer = built_cdylib("cuda-sys-gen-tracer", "libcuda_tracer.so", dir.path());
    let trace = dir.path().join("trace.log");
    let fake = fake_libcuda_client::build(fake_libcuda_client::Flavour::Full);
    let got = check_outputs(&tracer, &fake, true, &trace);
    let ok = |name: &str| got.iter().any(|(n, r)| n == name && *r == 0);
    assert!(ok("cuDriverGetVersion") && ok("cuGetProcAddress_v2") && ok("cuGetProcAddress"), "{got:?}");
    // The fake's cuInit answers 9009; it has no cuDeviceGet (the stand-in answers NOT_FOUND).
    assert!(got.iter().any(|(n, r)| n == "cuDeviceGet" && *r == 500), "{got:?}");
    let Some(drivers) = drivers::fetched() else { return };
    let mut checked = 0;
    for driver in drivers.iter().filter(|d| d.pin.cuda_version().is_some_and(|v| v >= 12000)) {
        let got = check_outputs(&tracer, &driver.libcuda, false, &trace);
        assert!(got.iter().filter(|(_, r)| *r == 0).count() >= 4, "driver {}: {got:?}", driver.pin.name);
        println!("driver {}: {got:?}", driver.pin.name);
        checked += 1;
    }
    assert!(checked >= 3, "{checked} drivers with cuGetProcAddress_v2");
}

/// Two stand-ins on one search path, each first in turn (the test stand-in and the tracer, and
/// two copies of the test stand-in): the one a program loads finds the real driver past the
/// other (by the mark `export_libcuda!` exports), never forwarding to it, so no call loops
/// between them. Through the front one, every request of the answer check is answered as the
/// real driver answers (driver 555, in front of which the rule holds with 0 differences), each
/// function handed out the front stand-in's own export, forwarding to the real driver's export of
/// that name (the test stand-in says where it forwards); the tracer's trace names the real
/// driver's file as the one it opened.
#[test]
fn two_standins_on_one_search_path_each_forward_to_the_real_driver() {
    let Some(drivers) = drivers::fetched() else { return };
    let Some(driver) = drivers.iter().find(|d| d.pin.name == "555") else { panic!("driver 555 is pinned") };
    let dir = tempfile::tempdir().unwrap();
    let folder = |name: &str| {
        let f = dir.path().join(name);
        std::fs::create_dir_all(&f).unwrap();
        f
    };
    let standin = standin(&folder("standin"));
    let copy = folder("copy").join("libcuda.so.1");
    std::fs::copy(&standin, &copy).unwrap();
    let tracer = built_cdylib("cuda-sys-gen-tracer", "libcuda_tracer.so", &folder("tracer"));
    let real = std::fs::canonicalize(&driver.libcuda).unwrap();
    for (front, behind) in [(&standin, &tracer), (&tracer, &standin), (&standin, &copy)] {
        let trace = dir.path().join("trace.log");
        let _ = std::fs::remove_file(&trace);
        let mut path = vec![front.parent().unwrap().to_owned(), behind.parent().unwrap().to_owned()];
        path.extend(driver.lib_dirs.iter().cloned());
        let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
            .arg("answers")
            .env("LD_LIBRARY_PATH", std::env::join_paths(path).unwrap())
            .env("CUDA_SYS_GEN_LIBRARY", front)
            .env("CUDA_SYS_GEN_CHECK_REAL", &driver.libcuda)
            .env("CUDA_SYS_GEN_TRACE", &trace)
            .env("CUDA_SYS_GEN_TRACE_CALLS", "0")
            .env_remove("CUDA_SYS_GEN_REAL_LIBCUDA")
            .output()
            .expect("start a child process");
        let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
        let last = shown.lines().last().unwrap_or_default();
        let order = format!("{} in front of {}", front.display(), behind.display());
        println!("{order}: {last}");
        assert!(out.status.success() && last.contains(", 0 different"), "{order}:\n{shown}");
        let n: usize =
            last.split(": ").nth(1).and_then(|s| s.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
        assert!(n >= 561 * 3 * 4, "{order}: {n} requests");
        if front == &tracer {
            let log = std::fs::read_to_string(&trace).unwrap();
            let first = log.lines().next().unwrap_or_default();
            let opened =
                first.split(" real driver ").nth(1).and_then(|r| r.split(" (version").next()).unwrap_or_default();
            assert_eq!(std::fs::canonicalize(opened).ok().as_ref(), Some(&real), "{order}: {first}");
            let requests = log.lines().filter(|l| l.starts_with("request ")).count();
            assert!(requests > 561 && !log.contains("rule DIFFERENT"), "{order}: {requests} requests traced");
        }
    }
}
