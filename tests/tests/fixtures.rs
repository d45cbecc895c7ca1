//! Golden tests: fixture headers written for this project, one folder per header quirk, each
//! turned into a whole crate and compared with `expected/` (bless: `CUDA_SYS_GEN_BLESS=1`).
//! `expected/` is itself a crate; `goldens_compile` builds each one.

use std::path::PathBuf;

use cuda_sys_gen_tests::*;

fn fixtures() -> PathBuf {
    repo_root().join("tests").join("fixtures")
}

/// Runs one case: every `cuda-*` folder of the case is a toolkit.
fn run_case(case: &str) {
    let dir = fixtures().join(case);
    let mut toolkits: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("cuda-")))
        .collect();
    toolkits.sort();
    // A case reads cuda.h only, unless it names its headers in `headers.txt`.
    let rows = std::fs::read_to_string(dir.join("headers.txt")).unwrap_or_else(|_| "cuda".into());
    let rows: Vec<&str> = rows.split_whitespace().collect();
    let manifest = manifest_with(Some(&rows), &[]);
    let out = tempfile::tempdir().unwrap();
    let report = generate_local(manifest.path(), toolkits, out.path(), &format!("fixture-{case}"))
        .unwrap_or_else(|e| panic!("fixture {case}: {e}"));
    let mut actual = read_tree(out.path());
    // The shim, the examples, the README and the licences are the same in every crate but for
    // its name: not repeated in the goldens, but checked to be exactly the real crate's, renamed.
    for file in codegen::emit::same_in_every_crate() {
        if let Some(text) = actual.remove(file) {
            assert_eq!(
                without_marker(&text),
                without_marker(&renamed_real_file(file, &format!("fixture-{case}"))),
                "fixture {case}: {file} is not the real crate's, renamed"
            );
        }
    }
    // Warnings name the fixture's own files: make them independent of the checkout path.
    let root = dir.display().to_string();
    let warnings: Vec<String> = report.warnings.iter().map(|w| w.to_string().replace(&root, "$FIXTURE")).collect();
    let mut summary = report.toolkit_lines.join("\n");
    summary.push('\n');
    for w in warnings {
        summary.push_str(&format!("warning: {w}\n"));
    }
    for d in &report.model.drift {
        summary.push_str(&format!(
            "drift: {} {} -> {}: {:?}: {} -> {}\n",
            d.pfn, d.from, d.to, d.param, d.before, d.after
        ));
    }
    actual.insert("summary.txt".into(), summary);
    if let Err(diff) = compare_golden(&dir.join("expected"), &actual) {
        panic!("fixture {case} differs from its golden output:\n{diff}");
    }
}

macro_rules! cases {
    ($($name:ident => $dir:literal,)*) => {
        $(#[test] fn $name() { run_case($dir); })*
        const CASES: &[&str] = &[$($dir),*];
    };
}

cases! {
    internal_guard => "internal-guard",
    per_thread => "per-thread",
    aliases => "aliases",
    renamed_typedef => "renamed-typedef",
    cudaapi_in_param => "cudaapi-in-param",
    cufoo => "cufoo",
    drift => "drift",
    linux_headers => "linux-headers",
    windows_headers => "windows-headers",
}

/// Every fixture folder has a test, and every test a folder.
#[test]
fn every_fixture_folder_is_a_case() {
    let mut dirs: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut cases: Vec<String> = CASES.iter().map(|s| s.to_string()).collect();
    cases.sort();
    assert_eq!(dirs, cases);
}

/// The goldens are crates: each must build, with the files the goldens do not repeat, and pass
/// its doc examples, so an emitter change that breaks Rust is caught here and not only on the
/// full generated crate.
#[test]
fn goldens_compile() {
    let target = repo_root().join("target").join("fixture-goldens");
    // Outside the workspace's folder, or cargo takes the golden for a stray member.
    let scratch = tempfile::tempdir().unwrap();
    for case in CASES {
        let copy = scratch.path().join(case);
        // The examples but doctor are written only where the registry has what they call.
        let same = codegen::emit::same_in_every_crate()
            .filter(|f| !f.starts_with("examples/") || f.ends_with("/doctor.rs"))
            .map(|f| (f.to_string(), renamed_real_file(f, &format!("fixture-{case}"))));
        for (rel, text) in read_tree(&fixtures().join(case).join("expected")).into_iter().chain(same) {
            let path = copy.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let manifest = copy.join("Cargo.toml");
        // Every target (the doctor example too), then the doc examples.
        for args in [&["check", "--all-targets"][..], &["test", "--doc"]] {
            let out = std::process::Command::new(env!("CARGO"))
                .args(args)
                .args(["--quiet", "--offline", "--manifest-path"])
                .arg(&manifest)
                .arg("--target-dir")
                .arg(&target)
                .output()
                .expect("run cargo");
            assert!(
                out.status.success(),
                "cargo {args:?} of {} fails:\n{}",
                manifest.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// A file of the real crate (generated/) that every crate has the same, named for another crate
/// as the emitter names it.
fn renamed_real_file(file: &str, crate_name: &str) -> String {
    let text = std::fs::read_to_string(repo_root().join("generated").join(file))
        .unwrap_or_else(|e| panic!("generated/{file}: {e}"));
    text.replace("cuda_driver_pfn", &crate_name.replace('-', "_")).replace("cuda-driver-pfn", crate_name)
}

/// A generated file less its `@generated` marker (it names the crate's toolkits).
fn without_marker(text: &str) -> String {
    let marker =
        |l: &&str| l.starts_with("// @generated") || l.starts_with("// Inputs:") || l.starts_with("<!-- @generated");
    text.lines().skip_while(marker).collect::<Vec<_>>().join("\n")
}
