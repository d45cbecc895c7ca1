//! Mistakes a new user makes with the generated crate get a hint, not only rustc's
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

/// A `pfn::PFN_…` type where an entry marker belongs (`entry_table!`, `Driver::get`) says which
/// marker to write.
#[test]
fn a_function_type_where_a_marker_belongs_names_the_marker() {
    let program = "use cuda_driver_pfn::{entry_table, pfn};\n\
                   entry_table! { struct Cuda { init: pfn::PFN_cuInit_v2000 } }\n\
                   fn main() {}\n";
    let err = check_program("", program).expect("a table of a pfn type built");
    assert!(err.contains("is not a registry entry: name its marker in `entries`"), "{err}");
    assert!(err.contains("`entries::cuInit_v2000`"), "{err}");
    let fixed = program.replace("pfn::PFN_cuInit_v2000", "cuda_driver_pfn::entries::cuInit_v2000");
    assert_eq!(check_program("", &fixed), None);
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
