//! The commands with a closed stdout or stderr, and under `ulimit -v` and `ulimit -f`: each
//! ends with a status of its table (a lost stdout is `exit::CLOSED_OUTPUT`, 141; a lost stderr
//! changes nothing), never a panic, a 101 or a signal, and says why where stderr is open.

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use cuda_sys_gen_tests::*;

/// The write end of a pipe whose reader is gone: every write to it fails with EPIPE.
fn dead_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: a two-int array for pipe(2); the read end is closed at once, the write end owned.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        libc::close(fds[0]);
        Stdio::from(OwnedFd::from_raw_fd(fds[1]))
    }
}

#[derive(Clone, Copy, Debug)]
enum Closed {
    Stdout,
    Stderr,
}

/// `program args`, with `closed` a dead pipe and the other stream captured.
fn run(program: &Path, args: &[&std::ffi::OsStr], closed: Option<Closed>, shell_limit: Option<&str>) -> Output {
    let mut cmd = match shell_limit {
        // `ulimit` set in a shell that then becomes the program.
        Some(limit) => {
            let mut c = Command::new("sh");
            c.arg("-c").arg(format!("{limit} && exec \"$0\" \"$@\"")).arg(program).args(args);
            c
        }
        None => {
            let mut c = Command::new(program);
            c.args(args);
            c
        }
    };
    cmd.current_dir(repo_root()).env("CARGO", env!("CARGO")).stdin(Stdio::null());
    match closed {
        Some(Closed::Stdout) => cmd.stdout(dead_pipe()).stderr(Stdio::piped()),
        Some(Closed::Stderr) => cmd.stdout(Stdio::piped()).stderr(dead_pipe()),
        None => cmd.stdout(Stdio::piped()).stderr(Stdio::piped()),
    };
    cmd.output().expect("start the command")
}

/// No signal, no panic, a status of `allowed`.
fn ended_well(what: &str, o: &Output, allowed: &[i32]) {
    let err = text(&o.stderr);
    assert_eq!(o.status.signal(), None, "{what}: died of a signal: {err}");
    assert!(!err.contains("panicked"), "{what}: panicked: {err}");
    assert!(o.status.code().is_some_and(|c| allowed.contains(&c)), "{what}: status {:?}: {err}", o.status.code());
}

/// The cufoo fixture's generate command into `out`.
fn generate_args(manifest: &Path, out: &Path) -> Vec<std::ffi::OsString> {
    let case = repo_root().join("tests/fixtures/cufoo");
    let mut args: Vec<std::ffi::OsString> = vec!["generate".into(), "--manifest".into()];
    args.push(manifest.join("headers-manifest.toml").into());
    args.extend(["--out".into(), out.as_os_str().to_owned(), "--crate-name".into(), "fixture".into()]);
    for t in ["cuda-11.4", "cuda-11.5"] {
        args.push("--toolkit".into());
        args.push(case.join(t).into());
    }
    args
}

fn os(args: &[std::ffi::OsString]) -> Vec<&std::ffi::OsStr> {
    args.iter().map(|a| a.as_os_str()).collect()
}

/// `generate | true`: the crate is written, the summary is lost, the status says so (141, not
/// a panic's 101); a dead stderr: written, 0.
#[test]
fn generate_with_a_closed_stdout_or_stderr_writes_the_crate_and_ends_quietly() {
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    for (closed, status) in [(Closed::Stdout, 141), (Closed::Stderr, 0)] {
        let out = tempfile::tempdir().unwrap();
        let o = run(cuda_sys_gen_binary(), &os(&generate_args(manifest.path(), out.path())), Some(closed), None);
        ended_well(&format!("generate, {closed:?} closed"), &o, &[status]);
        assert!(out.path().join("src/lib.rs").is_file(), "{closed:?}: the crate was not written");
    }
}

/// `diff --json | head -c 100` (a reader gone before the report) and a dead stderr: diff's
/// statuses (2 for additions here), 141 for the lost report, with a line on stderr saying so.
#[test]
fn diff_with_a_closed_stdout_or_stderr_ends_with_a_documented_status() {
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let case = repo_root().join("tests/fixtures/cufoo");
    let m = manifest.path().join("headers-manifest.toml");
    let args: Vec<std::ffi::OsString> = vec![
        "diff".into(),
        "--json".into(),
        "--manifest".into(),
        m.into(),
        "--from".into(),
        case.join("cuda-11.4").into(),
        "--to".into(),
        case.join("cuda-11.5").into(),
    ];
    let o = run(cuda_sys_gen_binary(), &os(&args), None, None);
    ended_well("diff", &o, &[2, 3]);
    let verdict = o.status.code().unwrap();
    let o = run(cuda_sys_gen_binary(), &os(&args), Some(Closed::Stdout), None);
    ended_well("diff, stdout closed", &o, &[141]);
    assert!(text(&o.stderr).contains("stdout was closed"), "{}", text(&o.stderr));
    let o = run(cuda_sys_gen_binary(), &os(&args), Some(Closed::Stderr), None);
    ended_well("diff, stderr closed", &o, &[verdict]);
    assert!(text(&o.stdout).starts_with('{'), "{}", text(&o.stdout));
}

/// min-driver prints through `println!`: its closed stdout ends the same way (141).
#[test]
fn min_driver_with_a_closed_stdout_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("main.rs");
    std::fs::write(&file, "fn main() { unsafe { cuda_driver_pfn::api::cuInit(0); } }\n").unwrap();
    let args: Vec<std::ffi::OsString> = vec!["min-driver".into(), file.into()];
    let o = run(cuda_sys_gen_binary(), &os(&args), Some(Closed::Stdout), None);
    ended_well("min-driver, stdout closed", &o, &[141]);
    let o = run(cuda_sys_gen_binary(), &os(&args), Some(Closed::Stderr), None);
    ended_well("min-driver, stderr closed", &o, &[0]);
}

/// The doctor on the fake driver with a closed stdout (a reader that left: 0, the driver's
/// verdict) and a dead stderr.
#[test]
fn the_doctor_with_a_closed_stdout_or_stderr_ends_with_its_status() {
    let fake = fake::build(fake::Flavour::Full);
    let args = [fake.as_os_str()];
    for closed in [Closed::Stdout, Closed::Stderr] {
        let o = run(doctor_binary(), &args, Some(closed), None);
        ended_well(&format!("doctor, {closed:?} closed"), &o, &[0]);
    }
    // A broken driver is still said by the status when its report cannot be printed.
    let o = Command::new(doctor_binary())
        .arg(&fake)
        .env("FAKE_LIBCUDA_NULL_POINTERS", "all")
        .stdout(dead_pipe())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    ended_well("doctor, broken driver, stdout closed", &o, &[4]);
}

/// Under `ulimit -v 2000000` (2 GB of address space) `generate`, `diff` and the doctor finish,
/// or fail with a message; under `ulimit -f` a file cut short is an error that names it, not
/// SIGXFSZ.
#[test]
fn under_ulimit_the_commands_end_with_a_status_and_a_message() {
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let out = tempfile::tempdir().unwrap();
    let gen = generate_args(manifest.path(), out.path());
    let o = run(cuda_sys_gen_binary(), &os(&gen), None, Some("ulimit -v 2000000"));
    ended_well("generate under ulimit -v", &o, &[0, 1]);
    if o.status.code() == Some(1) {
        assert!(text(&o.stderr).contains("error: "), "{}", text(&o.stderr));
    }
    let fake = fake::build(fake::Flavour::Full);
    let o = run(doctor_binary(), &[fake.as_os_str()], None, Some("ulimit -v 2000000"));
    ended_well("doctor under ulimit -v", &o, &[0, 1]);
    // 8 blocks of 512 bytes: the generated crate's larger files do not fit.
    let out = tempfile::tempdir().unwrap();
    let gen = generate_args(manifest.path(), out.path());
    let o = run(cuda_sys_gen_binary(), &os(&gen), None, Some("ulimit -f 8"));
    ended_well("generate under ulimit -f", &o, &[1]);
    let err = text(&o.stderr);
    assert!(err.contains("error: ") && err.contains("File too large"), "{err}");
    assert!(!out.path().join("src/lib.rs").exists(), "a failed run left a crate: {err}");
    let case: PathBuf = repo_root().join("tests/fixtures/cufoo");
    let m = manifest.path().join("headers-manifest.toml");
    let diff: Vec<std::ffi::OsString> = vec![
        "diff".into(),
        "--manifest".into(),
        m.into(),
        "--from".into(),
        case.join("cuda-11.4").into(),
        "--to".into(),
        case.join("cuda-11.5").into(),
    ];
    for limit in ["ulimit -v 2000000", "ulimit -f 1"] {
        let o = run(cuda_sys_gen_binary(), &os(&diff), None, Some(limit));
        ended_well(&format!("diff under {limit}"), &o, &[1, 2, 3]);
    }
}
