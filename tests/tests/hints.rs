//! Issue 23: mistakes a new user makes with the generated crate get a hint, not only rustc's
//! bare error.

use cuda_sys_gen_tests::*;

/// A program of the generated crate, checked by cargo in a scratch package; the compiler's
/// messages, or `None` if it builds.
fn check_program(features: &str, main: &str) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let generated = repo_root().join("generated");
    std::fs::write(
        dir.path().join("Cargo.toml"),
        format!(
            "[package]\nname = \"hint\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\n\
             cuda-driver-pfn = {{ path = {:?}, default-features = false, features = [{features}] }}\n\n[workspace]\n",
            generated.display().to_string()
        ),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), main).unwrap();
    let o = std::process::Command::new(env!("CARGO"))
        .args(["check", "--quiet", "--offline", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .arg("--target-dir")
        .arg(repo_root().join("target").join("hints"))
        .output()
        .expect("run cargo");
    (!o.status.success()).then(|| text(&o.stderr))
}

/// `cu!` without the `api` feature says which feature brings it.
#[test]
fn cu_without_the_api_feature_names_the_feature() {
    let program = "use cuda_driver_pfn::cu;\nfn main() {\n    let _ = unsafe { cu!(cuInit(0)) };\n}\n";
    let err = check_program("", program).expect("cu! built without the api feature");
    assert!(err.contains("`cu!` (and `api::`) need the `api` feature of cuda-driver-pfn"), "{err}");
    assert!(err.contains("src/main.rs:3"), "the error is not where cu! is called: {err}");
    // With the feature, the same program builds.
    assert_eq!(check_program("\"api\"", program), None);
}
