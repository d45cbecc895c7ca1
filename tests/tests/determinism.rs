//! Same inputs, byte-identical output: across runs, across checkout paths, across toolkit order.

use std::path::{Path, PathBuf};

use cuda_sys_gen_tests::*;

fn copy_dir(from: &Path, to: &Path) {
    for (rel, text) in read_tree(from) {
        let p = to.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

fn generate_at(case_copy: &Path, order: &[&str]) -> std::collections::BTreeMap<String, String> {
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let out = tempfile::tempdir().unwrap();
    let toolkits: Vec<PathBuf> = order.iter().map(|t| case_copy.join(t)).collect();
    generate_local(manifest.path(), toolkits, out.path(), "fixture").unwrap();
    read_tree(out.path())
}

#[test]
fn output_does_not_depend_on_path_run_or_order() {
    let case = repo_root().join("tests/fixtures/cufoo");
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::Builder::new().prefix("another-place-").tempdir().unwrap();
    copy_dir(&case, a.path());
    copy_dir(&case, &b.path().join("deeper/still"));
    let first = generate_at(a.path(), &["cuda-11.4", "cuda-11.5", "cuda-11.6"]);
    let again = generate_at(a.path(), &["cuda-11.4", "cuda-11.5", "cuda-11.6"]);
    let elsewhere = generate_at(&b.path().join("deeper/still"), &["cuda-11.6", "cuda-11.4", "cuda-11.5"]);
    assert!(!first.is_empty());
    assert_eq!(first, again, "two runs differ");
    assert_eq!(first, elsewhere, "output depends on the checkout path or the toolkit order");
}

#[test]
fn no_toolkit_at_all_is_an_error() {
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let out = tempfile::tempdir().unwrap();
    let err = generate_local(manifest.path(), vec![], out.path(), "x").unwrap_err().to_string();
    assert!(err.contains("no toolkit"), "{err}");
    assert!(read_tree(out.path()).is_empty());
}
