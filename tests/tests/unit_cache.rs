//! The bindgen unit cache (codegen/src/unit_cache.rs): a second run with the same headers
//! reuses the first run's bindgen output, and a changed header is never served from it.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cuda_sys_gen_tests::*;

/// The cache entries that name a file under `dir` (each lists the files it was made from).
fn entries_for(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let needle = serde_json::to_string(&dir.display().to_string()).unwrap();
    let needle = needle.trim_matches('"');
    let cache = cache_dir().join(codegen::read::unit_cache::DIR);
    let mut out: Vec<(PathBuf, SystemTime)> = std::fs::read_dir(&cache)
        .map(|rd| rd.flatten().map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(needle)))
        .map(|p| {
            let t = std::fs::metadata(&p).and_then(|m| m.modified()).unwrap();
            (p, t)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn unchanged_headers_are_reused_and_changed_ones_read_again() {
    let toolkit = tempfile::tempdir().unwrap();
    let src = repo_root().join("tests").join("fixtures").join("per-thread").join("cuda-12.9");
    for f in ["cuda.h", "cudaTypedefs.h"] {
        std::fs::copy(src.join(f), toolkit.path().join(f)).unwrap();
    }
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let run = || {
        let out = tempfile::tempdir().unwrap();
        generate_local(manifest.path(), vec![toolkit.path().to_owned()], out.path(), "unit-cache").unwrap();
        read_tree(out.path())
    };

    let first = run();
    let written = entries_for(toolkit.path());
    // The toolkit's one (Linux) unit, and its two C-name runs (default and per-thread).
    assert_eq!(written.len(), 3, "one entry per bindgen run of the Linux unit: {written:?}");

    let second = run();
    assert_eq!(first, second, "the same headers give the same crate");
    assert_eq!(entries_for(toolkit.path()), written, "the entry was reused, not written again");

    // A new typedef in the header: the cached output no longer matches its content.
    let header = toolkit.path().join("cudaTypedefs.h");
    let mut text = std::fs::read_to_string(&header).unwrap();
    text.push_str("typedef CUresult (CUDAAPI *PFN_cuUnitCacheProbe_v12090)(int probe);\n");
    std::fs::write(&header, text).unwrap();
    let third = run();
    let pfn = third.get("types/src/pfn.rs").expect("a pfn module");
    assert!(pfn.contains("PFN_cuUnitCacheProbe_v12090"), "the changed header was read again");
    assert_ne!(entries_for(toolkit.path()), written, "and its entry replaced");
}
