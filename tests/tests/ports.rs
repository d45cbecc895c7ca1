//! The sample ports of issue 17 against their cudarc counterparts, counted the same way: code
//! lines, without blank lines, comments and the PTX text. Prints the counts (`--nocapture`).

use cuda_sys_gen_tests::repo_root;

/// Lines of code of a Rust file: not blank, not a comment, the PTX string as one line.
fn code_lines(path: &str) -> usize {
    let text = std::fs::read_to_string(repo_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut count = 0;
    let mut in_ptx = false;
    for line in text.lines().map(str::trim) {
        if in_ptx {
            in_ptx = !line.ends_with("\";");
            continue;
        }
        if line.starts_with("const PTX: &str = \"") && !line.ends_with("\";") {
            in_ptx = true;
        }
        if !line.is_empty() && !line.starts_with("//") {
            count += 1;
        }
    }
    count
}

#[test]
fn the_ports_fit_in_fifty_lines() {
    let ours = code_lines("generated/examples/vector_add_drv.rs");
    let theirs = code_lines("xtask/src/bench/scratch/vector_add_cudarc.rs");
    let query = code_lines("generated/examples/device_query_drv.rs");
    let query_theirs = code_lines("xtask/src/bench/scratch/device_query_cudarc.rs");
    println!("vectorAddDrv: {ours} code lines (cudarc safe API: {theirs})");
    println!("deviceQueryDrv: {query} code lines (cudarc safe API: {query_theirs})");
    assert!(ours <= 50, "vector_add_drv has {ours} code lines; the aim is at most 50");
    assert!(query <= 50, "device_query_drv has {query} code lines; the aim is at most 50");
    let text = std::fs::read_to_string(repo_root().join("generated/examples/vector_add_drv.rs")).unwrap();
    assert_eq!(text.matches("unsafe").count(), 1, "one unsafe block, around the calls");
}
