//! The command-line tools as a user runs them: exit codes and messages.

use std::process::{Command, Output};

use cuda_sys_gen_tests::*;

fn cargo_run(package: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(repo_root()).args(["run", "--quiet", "--package", package, "--"]).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run cargo")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn check_names_every_stale_file_and_the_fix() {
    let case = repo_root().join("tests/fixtures/cudaapi-in-param");
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let out = tempfile::tempdir().unwrap();
    for (rel, body) in read_tree(&case.join("expected")) {
        let p = out.path().join(&rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    std::fs::write(out.path().join("src/pfn.rs"), "// edited by hand\n").unwrap();
    std::fs::remove_file(out.path().join("src/aliases.rs")).unwrap();
    std::fs::write(out.path().join("src/stray.rs"), "").unwrap();
    let m = manifest.path().join("headers-manifest.toml");
    let toolkit = case.join("cuda-13.0");
    let args = [
        "generate", "--check", "--manifest", m.to_str().unwrap(), "--out", out.path().to_str().unwrap(),
        "--toolkit", toolkit.to_str().unwrap(), "--crate-name", "fixture-cudaapi-in-param",
        "--regenerate-command", "cargo xtask generate",
    ];
    let o = cargo_run("cuda-sys-gen", &args, &[]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for f in ["src/pfn.rs", "src/aliases.rs", "src/stray.rs (not produced by the generator)"] {
        assert!(err.contains(&format!("{}", out.path().join(f).display())), "{f} not named: {err}");
    }
    assert!(err.contains("run `cargo xtask generate` and commit the result"), "{err}");
    assert!(!err.contains("src/lib.rs"), "an up-to-date file was named: {err}");
    // And check mode changed nothing.
    assert_eq!(std::fs::read_to_string(out.path().join("src/pfn.rs")).unwrap(), "// edited by hand\n");
}

#[test]
fn bad_command_lines_fail_cleanly() {
    let o = cargo_run("cuda-sys-gen", &["generate", "--crate-name", "9lives", "--pinned-only"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("`9lives` is not a valid crate name"), "{}", text(&o.stderr));
    let o = cargo_run("cuda-sys-gen", &["generate", "--toolkit", "/x", "--pinned-only"], &[]);
    assert_eq!(o.status.code(), Some(2), "clap rejects conflicting flags");
    let o = cargo_run("xtask", &["generate", "--toolkit", "/nonexistent/cuda"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("generated/ is unchanged") || err.contains("generated is unchanged"), "{err}");
    assert!(err.contains("/nonexistent/cuda: no such file or directory"), "{err}");
}

/// Without a system libclang the generator fetches the pinned libclang wheel and, thanks to
/// its own stand-in C library headers, produces the very same crate.
#[test]
fn libclang_wheel_fallback_gives_the_same_crate() {
    let o = cargo_run("xtask", &["generate", "--check", "--pinned-only"], &[("LIBCLANG_PATH", "/nonexistent")]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("libclang 18.1.1 wheel"), "{out}");
    assert!(out.contains("up to date"), "{out}");
}
