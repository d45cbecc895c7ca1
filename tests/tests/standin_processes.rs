//! The stand-in (`tests/standin-libcuda`) and the tracer (`examples/libcuda-tracer`) under real
//! processes, in front of Debian's real drivers (no GPU needed): a C program
//! (`tests/standin-libcuda/processes.c`, built with `cc`) loads `libcuda.so.1` by its name, the
//! stand-in's folder first on `LD_LIBRARY_PATH`, and calls the driver from `fork` children, from
//! signal handlers (also during the process's first call, and in a handler that interrupted
//! `malloc`), after `dlclose`; the stand-in's search for the real driver is tried as the loader
//! searches; NVIDIA's CUDA 12.4 runtime runs through it on drivers without
//! `cuGetProcAddress_v2`; the tracer's sink is a FIFO nobody reads and a pipe whose reader
//! leaves; requests at negative versions are checked against the rule.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cuda_sys_gen_tests::drivers::{self, Fetched};
use cuda_sys_gen_tests::{repo_root, text};

fn driver<'a>(drivers: &'a [Fetched], name: &str) -> &'a Fetched {
    drivers.iter().find(|d| d.pin.name == name).unwrap_or_else(|| panic!("driver {name} is pinned"))
}

/// A workspace `cdylib`, built, copied into `dir` (created) as `libcuda.so.1`.
fn built_cdylib(package: &str, file: &str, dir: &Path) -> PathBuf {
    let out = Command::new(env!("CARGO"))
        .current_dir(repo_root())
        .args(["build", "--quiet", "--offline", "-p", package])
        .output()
        .expect("run cargo build");
    assert!(out.status.success(), "cargo build -p {package} failed:\n{}", text(&out.stderr));
    let exe = std::env::current_exe().expect("the test's own path");
    let debug = exe.parent().and_then(Path::parent).expect("target/debug");
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("libcuda.so.1");
    std::fs::copy(debug.join(file), &path).expect("copy the library");
    path
}

fn standin(dir: &Path) -> PathBuf {
    built_cdylib("cuda-sys-gen-standin-libcuda", "libcuda_standin.so", dir)
}

fn tracer(dir: &Path) -> PathBuf {
    built_cdylib("cuda-sys-gen-tracer", "libcuda_tracer.so", dir)
}

/// `processes.c`, built into `dir`; `None` (the test skips) without a C compiler.
fn program(dir: &Path) -> Option<PathBuf> {
    let exe = dir.join("processes");
    let source = repo_root().join("tests/standin-libcuda/processes.c");
    let out = Command::new("cc").args(["-O1", "-pthread", "-o"]).arg(&exe).arg(&source).arg("-ldl").output();
    match out {
        Ok(o) => {
            assert!(o.status.success(), "{} does not compile:\n{}", source.display(), text(&o.stderr));
            Some(exe)
        }
        Err(e) => {
            eprintln!("SKIPPED: no C compiler (`cc`: {e})");
            None
        }
    }
}

/// Runs `cmd` to its end, or kills it after `limit`: (exit code, or `None` if killed by a
/// signal or the limit; stdout; stderr; whether the limit was hit).
fn run(cmd: &mut Command, limit: Duration) -> (Option<i32>, String, String, bool) {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start a child process");
    let start = Instant::now();
    loop {
        if let Some(_status) = child.try_wait().expect("wait") {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("wait");
            return (None, text(&out.stdout), text(&out.stderr), true);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("wait");
    (out.status.code(), text(&out.stdout), text(&out.stderr), false)
}

/// The program in front of `real` with `library` (a stand-in's `libcuda.so.1`) first on the
/// search path, the real driver's folders after it.
fn through(exe: &Path, library: &Path, real: &Fetched, args: &[&str]) -> Command {
    let mut path = vec![library.parent().unwrap().to_owned()];
    path.extend(real.lib_dirs.iter().cloned());
    let mut c = Command::new(exe);
    c.args(args)
        .env("LD_LIBRARY_PATH", std::env::join_paths(path).unwrap())
        .env_remove("CUDA_SYS_GEN_REAL_LIBCUDA")
        .env_remove("CUDA_SYS_GEN_TRACE")
        .env_remove("CUDA_SYS_GEN_TRACE_CALLS");
    c
}

fn line<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines().find(|l| l.starts_with(prefix)).unwrap_or_default()
}

/// One thread calls `cuDriverGetVersion` in a loop while the main thread forks 200 times; each
/// child calls once. Through the stand-in and through the tracer writing to a file: no child
/// hangs (the tracer's lock, held by the parent's other thread at the fork, hung 1 to 4 of 200),
/// and each child's call is traced under the child's own thread id.
#[test]
fn fork_children_call_through_the_standin_and_the_tracer() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else { return };
    let real = driver(&drivers, "555");
    for library in [standin(&dir.path().join("s")), tracer(&dir.path().join("t"))] {
        let trace = dir.path().join("fork.log");
        let _ = std::fs::remove_file(&trace);
        let (code, out, err, late) = run(
            through(&exe, &library, real, &["fork", "200"]).env("CUDA_SYS_GEN_TRACE", &trace),
            Duration::from_secs(120),
        );
        let result = line(&out, "fork:");
        println!("{}: {result}", library.display());
        assert!(!late && code == Some(0), "{}: {result}\n{err}", library.display());
        assert_eq!(result, "fork: 200 children, 0 hung, 0 failed", "{}", library.display());
        if library.parent().unwrap().ends_with("t") {
            let log = std::fs::read_to_string(&trace).unwrap();
            let children: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("child ")).collect();
            assert_eq!(children.len(), 200);
            let untraced: Vec<&&str> =
                children.iter().filter(|pid| !log.contains(&format!("call {pid} cuDriverGetVersion_v2020 "))).collect();
            assert!(
                untraced.is_empty(),
                "{} children's calls not traced under their own id, e.g. {:?}",
                untraced.len(),
                untraced.first()
            );
        }
    }
}

/// Calls from signal handlers: a handler calling `cuDriverGetVersion` every 200 us while the
/// main thread calls (the tracer hung); 200 processes whose first calls are made with a signal
/// every 20 us calling in too (the stand-in's set-up on the first call hung 2 or 3 of 18);
/// 300 processes whose first call of all is made in a handler that interrupted `malloc` (the
/// set-up allocated: SIGSEGV or malloc's assertion). Through the stand-in and the tracer.
#[test]
fn signal_handlers_call_through_the_standin_and_the_tracer() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else { return };
    let real = driver(&drivers, "555");
    for library in [standin(&dir.path().join("s")), tracer(&dir.path().join("t"))] {
        let trace = dir.path().join("signals.log");
        let who = library.display().to_string();
        let go = |args: &[&str]| {
            let _ = std::fs::remove_file(&trace);
            let (code, out, err, late) =
                run(through(&exe, &library, real, args).env("CUDA_SYS_GEN_TRACE", &trace), Duration::from_secs(150));
            assert!(!late && code == Some(0), "{who} {args:?}: exit {code:?}, timed out {late}\n{out}\n{err}");
            out
        };
        let out = go(&["signals"]);
        let result = line(&out, "signals:");
        println!("{who}: {result}");
        let calls: usize = result
            .split("handler calls ")
            .nth(1)
            .and_then(|r| r.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(calls >= 200 && result.contains("handler failures 0,"), "{who}: {result}\n{out}");
        let out = go(&["first-call", "200"]);
        assert_eq!(line(&out, "first-call:"), "first-call: 200 processes, 0 hung, 0 failed", "{who}");
        let out = go(&["first-call-in-malloc", "300"]);
        assert_eq!(
            line(&out, "first-call-in-malloc:"),
            "first-call-in-malloc: 300 processes, 0 hung, 0 failed",
            "{who}"
        );
    }
}

/// `dlopen("libcuda.so.1")`, a call, `dlclose`, `dlopen` again: the second handle is the
/// stand-in's again (it carries the mark), never the real driver the stand-in opened and the
/// loader also knows by that name. Over every driver.
#[test]
fn dlclose_then_dlopen_finds_the_standin_again() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else { return };
    let library = standin(&dir.path().join("s"));
    for real in &drivers {
        let v = real.pin.cuda_version().unwrap();
        let (code, out, err, _) = run(&mut through(&exe, &library, real, &["reload"]), Duration::from_secs(60));
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(
            line(&out, "reload:"),
            format!("reload: first stand-in {v}, second stand-in {v}"),
            "driver {}",
            real.pin.name
        );
    }
}

/// A 64-bit ELF shared library copied with its class byte set to 32-bit: the loader passes over
/// such a file.
fn thirty_two_bit(from: &Path, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let mut data = std::fs::read(from).unwrap();
    data[4] = 1;
    let path = dir.join("libcuda.so.1");
    std::fs::write(&path, data).unwrap();
    path
}

/// The stand-in's search is the loader's: a 32-bit `libcuda.so.1` earlier on the path is passed
/// over; an empty element of `LD_LIBRARY_PATH` is the current folder; `;` separates as `:`
/// does; a variable the program changes before loading the library changes nothing (the
/// loader keeps the value the process started with). In each, the stand-in forwards to the
/// real driver the loader would have found (its version, not `CUDA_ERROR_NOT_FOUND`). And
/// `$CUDA_SYS_GEN_REAL_LIBCUDA` naming another stand-in is refused, with the reason.
#[test]
fn the_standin_searches_for_the_real_driver_as_the_loader_does() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else { return };
    let real = driver(&drivers, "555");
    let library = standin(&dir.path().join("s"));
    let front = library.parent().unwrap().to_owned();
    let folders: Vec<String> = real.lib_dirs.iter().map(|d| d.display().to_string()).collect();
    let real_dirs = folders.join(":");
    let bad = thirty_two_bit(&real.libcuda, &dir.path().join("i386"));
    let version = |path: String, cwd: &Path, set: Option<&str>| {
        let mut c = Command::new(&exe);
        c.arg("version")
            .args(set)
            .current_dir(cwd)
            .env("LD_LIBRARY_PATH", &path)
            .env_remove("CUDA_SYS_GEN_REAL_LIBCUDA");
        let (code, out, err, _) = run(&mut c, Duration::from_secs(60));
        assert_eq!(code, Some(0), "{path}: {out}{err}");
        line(&out, "version:").to_owned()
    };
    let cases = [
        (
            "a 32-bit libcuda.so.1 first",
            format!("{}:{}:{real_dirs}", front.display(), bad.parent().unwrap().display()),
            dir.path().to_owned(),
            None,
        ),
        ("an empty element", format!("{}:", front.display()), real.lib_dirs[0].clone(), None),
        ("a ';' separator", format!("{};{}", front.display(), folders.join(";")), dir.path().to_owned(), None),
        (
            "the variable changed by the program",
            format!("{}:{real_dirs}", front.display()),
            dir.path().to_owned(),
            Some(front.display().to_string()),
        ),
    ];
    for (what, path, cwd, set) in cases {
        let got = version(path.clone(), &cwd, set.as_deref());
        println!("{what}: {got}");
        assert_eq!(got, "version: 12050", "{what}: LD_LIBRARY_PATH={path}");
    }
    // Another stand-in named as the real driver: refused (the tracer's first line says why),
    // every call answered CUDA_ERROR_NOT_FOUND.
    let tracer = tracer(&dir.path().join("t"));
    let trace = dir.path().join("named.log");
    let (code, out, err, _) = run(
        through(&exe, &tracer, real, &["version"])
            .env("CUDA_SYS_GEN_REAL_LIBCUDA", &library)
            .env("CUDA_SYS_GEN_TRACE", &trace),
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(line(&out, "version:"), "version: -501");
    let log = std::fs::read_to_string(&trace).unwrap();
    let first = log.lines().next().unwrap_or_default();
    assert!(first.contains("real driver none:") && first.contains("itself a stand-in"), "{first}");
}

/// NVIDIA's CUDA 12.4 runtime (`libcudart.so.12` of its pip wheel, in the header cache) asks
/// `cudaDriverGetVersion` through the stand-in and without it: the same version on every
/// driver, 450, 460 and 470 (without `cuGetProcAddress_v2`, which the runtime then does not
/// find, and falls back) among them.
#[test]
fn an_older_runtime_sees_the_lookup_functions_the_driver_has() {
    let Some(drivers) = drivers::fetched() else { return };
    let wheel = repo_root()
        .join("target/cuda-headers/wheels/nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl");
    let Ok(file) = std::fs::File::open(&wheel) else {
        eprintln!("SKIPPED: no {} (cargo xtask generate fetches it)", wheel.display());
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
         if(!h){printf(\"no runtime\\n\");return 1;}int(*f)(int*)=(int(*)(int*))dlsym(h,\"cudaDriverGetVersion\");\
         int v=-1;int r=f(&v);printf(\"runtime: %d %d\\n\",r,v);return 0;}\n",
    )
    .unwrap();
    let exe = dir.path().join("rt");
    let exe = exe.with_extension("bin");
    match Command::new("cc").arg("-o").arg(&exe).arg(&source).arg("-ldl").output() {
        Ok(o) => assert!(o.status.success(), "{}", text(&o.stderr)),
        Err(e) => {
            eprintln!("SKIPPED: no C compiler (`cc`: {e})");
            return;
        }
    }
    let library = standin(&dir.path().join("s"));
    for real in &drivers {
        let v = real.pin.cuda_version().unwrap();
        let ask = |front: Option<&Path>| {
            let mut path: Vec<PathBuf> = front.map(|f| f.parent().unwrap().to_owned()).into_iter().collect();
            path.extend(real.lib_dirs.iter().cloned());
            path.push(rt.clone());
            let mut c = Command::new(&exe);
            c.env("LD_LIBRARY_PATH", std::env::join_paths(path).unwrap()).env_remove("CUDA_SYS_GEN_REAL_LIBCUDA");
            let (code, out, err, _) = run(&mut c, Duration::from_secs(60));
            assert_eq!(code, Some(0), "{out}{err}");
            line(&out, "runtime:").to_owned()
        };
        let (direct, via) = (ask(None), ask(Some(&library)));
        println!("driver {}: {direct} without, {via} through the stand-in", real.pin.name);
        // 418 is older than the 12.4 runtime supports: it says so, the same way both times.
        if real.pin.name != "418" {
            assert_eq!(direct, format!("runtime: 0 {v}"), "driver {}", real.pin.name);
        }
        assert_eq!(via, direct, "driver {}", real.pin.name);
    }
}

/// A trace sink never blocks or signals the program: a FIFO nobody reads leaves the program
/// running, untraced (it blocked at its first call); a pipe whose reader leaves after two lines
/// (`CUDA_SYS_GEN_TRACE=/dev/stdout | head -n 2`) ends the trace, not the program (SIGPIPE,
/// exit 141).
#[test]
fn a_trace_sink_never_blocks_or_signals_the_program() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else { return };
    let real = driver(&drivers, "555");
    let tracer = tracer(&dir.path().join("t"));
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let (code, out, err, late) =
        run(through(&exe, &tracer, real, &["version"]).env("CUDA_SYS_GEN_TRACE", &fifo), Duration::from_secs(30));
    assert!(!late && code == Some(0), "a FIFO nobody reads: exit {code:?}, timed out {late}: {out}{err}");
    assert_eq!(line(&out, "version:"), "version: 12050");

    let mut child = through(&exe, &tracer, real, &["calls", "20000"])
        .env("CUDA_SYS_GEN_TRACE", "/dev/stdout")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a child process");
    let stdout = child.stdout.take().unwrap();
    let mut reader = std::io::BufReader::new(stdout);
    let mut first = String::new();
    for _ in 0..2 {
        first.clear();
        reader.read_line(&mut first).unwrap();
    }
    drop(reader);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
    assert_eq!(status.and_then(|s| s.code()), Some(0), "the reader left: {status:?}: {err}");
    assert!(err.contains("calls: 20000 of 20000"), "{err}");
}

/// Requests at negative versions (-1, -2, -1000, `i32::MIN`; flags 0, 1, 2) through the tracer
/// in front of every driver with a lookup function: the drivers read the version as unsigned,
/// and so does the rule: every answer `rule ok`.
#[test]
fn negative_versions_are_read_as_the_drivers_read_them() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else { return };
    let tracer = tracer(&dir.path().join("t"));
    let mut checked = 0;
    for real in drivers.iter().filter(|d| d.pin.cuda_version().is_some_and(|v| v >= 11030)) {
        let trace = dir.path().join(format!("negative-{}.log", real.pin.name));
        let (code, out, err, _) = run(
            through(&exe, &tracer, real, &["negative"])
                .env("CUDA_SYS_GEN_TRACE", &trace)
                .env("CUDA_SYS_GEN_TRACE_CALLS", "0"),
            Duration::from_secs(60),
        );
        assert_eq!(code, Some(0), "{out}{err}");
        let log = std::fs::read_to_string(&trace).unwrap();
        let ok = log.lines().filter(|l| l.starts_with("request ") && l.ends_with(" rule ok")).count();
        let different: Vec<&str> = log.lines().filter(|l| l.contains("rule DIFFERENT")).collect();
        println!("driver {}: {} ({ok} rule ok)", real.pin.name, line(&out, "negative:"));
        assert!(
            ok >= 60 && different.is_empty(),
            "driver {}: {ok} ok, {} different, e.g. {:?}",
            real.pin.name,
            different.len(),
            different.first()
        );
        checked += 1;
    }
    assert!(checked >= 5, "{checked} drivers");
}

/// The project's hazard, flagged: `cuCtxCreate` asked for at 12050 of driver 535 (CUDA 12.2),
/// which answers `CUDA_SUCCESS` with `cuCtxCreate_v3`, the 11040 ABI, where a caller of 12050
/// casts to the 12050 typedef. Driver 555 (CUDA 12.5), which has the 12050 ABI, is not
/// flagged, nor a request at 535's own version, nor one at a negative version.
#[test]
fn a_request_answered_with_an_older_abi_than_it_names_is_flagged() {
    let Some(drivers) = drivers::fetched() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else { return };
    let tracer = tracer(&dir.path().join("t"));
    let ask = |name: &str, args: &[&str]| {
        let trace = dir.path().join(format!("ask-{name}-{}.log", args.join("-")));
        let mut all = vec!["ask"];
        all.extend_from_slice(args);
        let (code, out, err, _) = run(
            through(&exe, &tracer, driver(&drivers, name), &all)
                .env("CUDA_SYS_GEN_TRACE", &trace)
                .env("CUDA_SYS_GEN_TRACE_CALLS", "0"),
            Duration::from_secs(60),
        );
        assert_eq!(code, Some(0), "{out}{err}");
        assert!(line(&out, "ask:").ends_with("result 0 status 0 function"), "driver {name}: {out}");
        let log = std::fs::read_to_string(&trace).unwrap();
        log.lines().find(|l| l.starts_with("request ")).unwrap_or_default().to_owned()
    };
    let old = ask("535", &["cuCtxCreate", "12050", "0"]);
    assert!(
        old.contains(
            "-> cuCtxCreate_v11040 (cuCtxCreate_v3) HAZARD: asked 12050, got cuCtxCreate_v11040 (11040), \
             older than cuCtxCreate_v12050, the ABI of 12050; rule ok"
        ),
        "{old}"
    );
    println!("{old}");
    let new = ask("555", &["cuCtxCreate", "12050", "0"]);
    assert!(new.ends_with("-> cuCtxCreate_v12050 (cuCtxCreate_v4) rule ok"), "{new}");
    for (driver, args) in [("535", ["cuCtxCreate", "12020", "0"]), ("535", ["cuCtxCreate", "-1", "0"])] {
        let l = ask(driver, &args);
        assert!(l.contains("-> cuCtxCreate_v11040") && !l.contains("HAZARD"), "{l}");
    }
}

/// The stand-in with no real driver (`$CUDA_SYS_GEN_REAL_LIBCUDA` names a file that is not
/// there) and nothing answered by the layer: one line on stderr says why every call returns
/// `CUDA_ERROR_NOT_FOUND`. With `standin::answer_as_driver(12020)` from the library's `init`
/// function (`export_libcuda!(init = ...)`, run before any call): no line, `cuDriverGetVersion`
/// says 12020 and `cuGetProcAddress_v2` answers by the rule for a 12.2 driver with the
/// stand-in's own functions (`cuCtxCreate` at 12050: `CUDA_SUCCESS`, the 11040 ABI; an unknown
/// name: not found; above its own version, a 13.0 driver: `CUDA_ERROR_INVALID_VALUE`).
#[test]
fn without_a_real_driver_the_standin_says_why_or_answers_itself() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else { return };
    let standin = standin(&dir.path().join("s"));
    let absent = dir.path().join("no-such-libcuda.so.1");
    let run_with = |answer_as: Option<&str>, args: &[&str]| {
        let mut c = Command::new(&exe);
        c.args(args)
            .env("LD_LIBRARY_PATH", standin.parent().unwrap())
            .env("CUDA_SYS_GEN_REAL_LIBCUDA", &absent)
            .env_remove("CUDA_SYS_GEN_TEST_ANSWER_AS");
        if let Some(v) = answer_as {
            c.env("CUDA_SYS_GEN_TEST_ANSWER_AS", v);
        }
        let (code, out, err, _) = run(&mut c, Duration::from_secs(60));
        assert_eq!(code, Some(0), "{out}{err}");
        (out, err)
    };
    let (out, err) = run_with(None, &["version"]);
    assert_eq!(line(&out, "version:"), "version: -501", "{out}");
    let said: Vec<&str> = err.lines().filter(|l| l.starts_with("libcuda.so.1 (a cuda-sys-gen stand-in): ")).collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(said[0].contains(&absent.display().to_string()) && said[0].contains("CUDA_ERROR_NOT_FOUND (500)"), "{err}");

    let (out, err) = run_with(Some("12020"), &["version"]);
    assert_eq!(line(&out, "version:"), "version: 12020", "{out}{err}");
    assert!(!err.contains("cuda-sys-gen stand-in"), "{err}");
    let (out, _) = run_with(Some("12020"), &["ask", "cuCtxCreate", "12050", "0"]);
    assert_eq!(line(&out, "ask:"), "ask: cuCtxCreate 12050 flags 0 -> result 0 status 0 function", "{out}");
    let (out, _) = run_with(Some("12020"), &["ask", "cuNoSuchThing", "12020", "0"]);
    assert_eq!(line(&out, "ask:"), "ask: cuNoSuchThing 12020 flags 0 -> result 0 status 1 NULL", "{out}");
    let (out, _) = run_with(Some("13000"), &["ask", "cuCtxCreate", "13010", "0"]);
    assert_eq!(line(&out, "ask:"), "ask: cuCtxCreate 13010 flags 0 -> result 1 status -1 NULL", "{out}");
}

/// A hook per symbol: `set_symbol_hooks::<symbols::cuMemAlloc>` with both of its ABIs, each of
/// its own signature, in the stand-in's `init`; a program that calls `cuMemAlloc` (2000) and
/// `cuMemAlloc_v2` (3020) by their exported names reaches each hook (no real driver: without
/// the hooks both are `CUDA_ERROR_NOT_FOUND`). Given one ABI only, the other is said left out.
#[test]
fn a_hook_per_symbol_covers_every_abi_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else { return };
    let standin = standin(&dir.path().join("s"));
    let absent = dir.path().join("no-such-libcuda.so.1");
    let run_with = |hooks: bool| {
        let mut c = Command::new(&exe);
        c.arg("mem-alloc")
            .env("LD_LIBRARY_PATH", standin.parent().unwrap())
            .env("CUDA_SYS_GEN_REAL_LIBCUDA", &absent)
            .env_remove("CUDA_SYS_GEN_TEST_ANSWER_AS")
            .env_remove("CUDA_SYS_GEN_TEST_SYMBOL_HOOKS");
        if hooks {
            c.env("CUDA_SYS_GEN_TEST_SYMBOL_HOOKS", "1");
        }
        let (code, out, err, _) = run(&mut c, Duration::from_secs(60));
        assert_eq!(code, Some(0), "{out}{err}");
        (out, err)
    };
    let (out, _) = run_with(false);
    assert_eq!(line(&out, "mem-alloc:"), "mem-alloc: cuMemAlloc 500 0, cuMemAlloc_v2 500 0", "{out}");
    let (out, err) = run_with(true);
    assert_eq!(line(&out, "mem-alloc:"), "mem-alloc: cuMemAlloc 0 2000, cuMemAlloc_v2 0 3020", "{out}{err}");
    assert!(err.contains("symbol hooks: cuMemAlloc, 1 ABI left out"), "{err}");
    assert!(err.contains("symbol hooks: cuMemAlloc, 0 ABIs left out"), "{err}");
}
