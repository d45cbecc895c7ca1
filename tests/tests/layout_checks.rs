//! Bindgen's layout checks (`const _: () = { ["Size of X"][..]; .. }`)
//! are compiled only where they can fail for a user: every target but x86-64 Linux, where
//! bindgen computed the layouts, and the crate's own tests everywhere. This proves both
//! halves on a copy of generated/ with one check made wrong.

#![cfg(all(target_arch = "x86_64", target_os = "linux"))]

use std::path::Path;
use std::process::Command;

use cuda_sys_gen_tests::*;

fn cargo(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO"))
        .current_dir(dir)
        .args(args)
        .args(["--offline", "--quiet"])
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo")
}

#[test]
fn layout_checks_are_compiled_where_they_can_fail() {
    let copy = tempfile::tempdir().unwrap();
    for (rel, body) in read_tree(&repo_root().join("generated")) {
        let path = copy.path().join(&rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    // A crate of its own, not a member of this workspace.
    let manifest = copy.path().join("Cargo.toml");
    let toml = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, format!("{toml}\n[workspace]\n")).unwrap();
    let types = copy.path().join("types/src/types.rs");
    let source = std::fs::read_to_string(&types).unwrap();
    let right = "[\"Size of CUuuid_st\"][::core::mem::size_of::<CUuuid_st>() - 16usize];";
    assert!(source.contains(right), "the first layout check of types.rs changed form");
    std::fs::write(&types, source.replacen(right, &right.replace("16usize", "17usize"), 1)).unwrap();

    let build = cargo(copy.path(), &["build", "--lib"]);
    assert!(build.status.success(), "a user's build on x86-64 Linux compiles no layout check:\n{}", text_of(&build));
    // The types are the types crate's (`types/`, a member of the copy's workspace).
    let tests = cargo(copy.path(), &["test", "-p", "cuda-driver-pfn-types", "--lib", "--no-run"]);
    assert!(!tests.status.success(), "the types crate's own tests compile the layout checks");
    assert!(text_of(&tests).contains("Size of CUuuid_st"), "{}", text_of(&tests));
    // Another target compiles them in every build, where its standard library is installed.
    let windows = "x86_64-pc-windows-msvc";
    let installed = Command::new("rustc")
        .args(["--print", "target-libdir", "--target", windows])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| Path::new(text(&o.stdout).trim()).is_dir())
        .unwrap_or(false);
    if installed {
        let check = cargo(copy.path(), &["check", "--lib", "--target", windows]);
        assert!(!check.status.success(), "a {windows} build compiles the layout checks");
        assert!(text_of(&check).contains("Size of CUuuid_st"), "{}", text_of(&check));
    } else {
        skip(&format!("the {windows} half (its standard library is not installed)"));
    }
}

fn text_of(o: &std::process::Output) -> String {
    format!("{}{}", text(&o.stdout), text(&o.stderr))
}
