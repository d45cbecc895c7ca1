//! The sample ports against their counterparts, counted the same way: code lines, without blank
//! lines, comments and the PTX text. vectorAddDrv and deviceQueryDrv against their
//! cudarc ports; the three sample programs ported from C against their C originals in `tests/ports/`,
//! which they must not exceed. Prints the counts (`--nocapture`).

use cuda_driver_pfn::TOOLKITS;
use cuda_sys_gen_tests::{cache_dir, cached_include, repo_root, skip};

/// Lines of code of a Rust or C file: not blank, not a comment (`//`, or a line of a `/* */`
/// block that starts with `/*` or `*`), the PTX string as one line (Rust's `const PTX: &str =
/// "` up to its `";`, C's `static const char *ptx =` up to the line that ends in `";`).
fn code_lines(path: &str) -> usize {
    let text = std::fs::read_to_string(repo_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut count = 0;
    let mut in_ptx = false;
    for line in text.lines().map(str::trim) {
        if in_ptx {
            in_ptx = !line.ends_with("\";");
            continue;
        }
        let ptx = line.starts_with("const PTX: &str = \"") || line.starts_with("static const char *ptx =");
        if ptx && !line.ends_with("\";") {
            in_ptx = true;
        }
        if !line.is_empty() && !line.starts_with("//") && !line.starts_with("/*") && !line.starts_with('*') {
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

/// The sample programs ported from NVIDIA's C samples, and their C originals.
const C_PORTS: &[(&str, &str)] = &[
    ("generated/examples/graphs_drv.rs", "tests/ports/graphs_drv.c"),
    ("generated/examples/vector_add_mmap_drv.rs", "tests/ports/vector_add_mmap_drv.c"),
    ("generated/examples/launch_ex_drv.rs", "tests/ports/launch_ex_drv.c"),
];

#[test]
fn the_ports_are_no_longer_than_their_c_originals() {
    for (rust, c) in C_PORTS {
        let (ours, theirs) = (code_lines(rust), code_lines(c));
        println!("{rust}: {ours} code lines ({c}: {theirs})");
        assert!(ours <= theirs, "{rust} has {ours} code lines, more than the {theirs} of its C original {c}");
        // The same calls: every cuda.h function the C original calls, the port calls too.
        let c_text = std::fs::read_to_string(repo_root().join(c)).unwrap();
        let rust_text = std::fs::read_to_string(repo_root().join(rust)).unwrap();
        for call in c_text.split("CHECK(").skip(2).filter_map(|s| s.split('(').next()) {
            assert!(rust_text.contains(&format!("cu!({call}(")), "{rust} does not call {call} as {c} does");
        }
        assert!(rust_text.contains("Result = {") || rust_text.contains("Result = PASS"), "{rust} prints no result");
    }
}

/// The C originals compile against the newest pinned cuda.h, where the machine has a C compiler
/// and the header cache is filled (it is after `cargo xtask generate`).
#[test]
fn the_c_originals_compile() {
    let Some(newest) = TOOLKITS.last() else { panic!("the crate pins no toolkit") };
    if !cache_dir().join("include").is_dir() {
        skip(&format!("no header cache under {}", cache_dir().display()));
        return;
    }
    let include = cached_include(newest, false);
    for (_, c) in C_PORTS {
        let run = std::process::Command::new("cc")
            .args(["-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(&include)
            .arg(repo_root().join(c))
            .output();
        match run {
            Ok(out) => assert!(out.status.success(), "{c} does not compile:\n{}", String::from_utf8_lossy(&out.stderr)),
            Err(e) => {
                skip(&format!("no C compiler (`cc`: {e})"));
                return;
            }
        }
    }
}
