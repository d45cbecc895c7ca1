//! Helpers shared by the integration tests in `tests/tests/`, and the real-driver
//! conformance checker (`conformance`, run by `src/bin/conformance.rs`).

pub mod conformance;
pub mod drivers;

/// The fake libcuda and its knobs (a crate of its own: `tests/fake-client`).
pub use fake_libcuda_client as fake;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use codegen::emit::EmitOptions;
use codegen::pipeline::{self, Config};
use codegen::report::Report;
use codegen::write::Mode;

/// The repository root.
pub fn repo_root() -> PathBuf {
    fake::repo_root()
}

/// The real manifest.
pub fn real_manifest() -> PathBuf {
    repo_root().join("headers-manifest.toml")
}

/// The shared header cache under target/, so tests do not download twice.
pub fn cache_dir() -> PathBuf {
    repo_root().join("target").join("cuda-headers")
}

/// The include folder of a toolkit's cached nvidia-cuda-runtime wheel (the win_amd64 one when
/// `windows`). Panics where the cache lacks it: tests run after generation filled it.
pub fn cached_include(version: &str, windows: bool) -> PathBuf {
    let dir = cache_dir().join("include");
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let n = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            n.starts_with("nvidia_cuda_runtime")
                && n.contains(&format!("-{version}."))
                && n.ends_with("win_amd64") == windows
        })
        .unwrap_or_else(|| panic!("no cached headers for CUDA {version}"))
}

/// A manifest with the real [fetch], [[header]] and [libclang] sections and only the given
/// pinned toolkits (an empty list: none). Returned as the folder that holds it.
pub fn manifest_with_toolkits(versions: &[&str]) -> tempfile::TempDir {
    manifest_with(None, versions)
}

/// The same with only the named [[header]] rows (`None`: all of them).
pub fn manifest_with(rows: Option<&[&str]>, versions: &[&str]) -> tempfile::TempDir {
    let text = std::fs::read_to_string(real_manifest()).expect("read the real manifest");
    // Split at the [[toolkit]] blocks: keep the head, the blocks asked for, and [libclang].
    let (head, rest) = text.split_once("\n[[toolkit]]\n").expect("the real manifest pins toolkits");
    let (blocks, tail) = rest.split_once("\n[libclang]\n").expect("the real manifest has [libclang]");
    let head = match rows {
        None => head.to_owned(),
        Some(rows) => {
            let mut parts = head.split("\n[[header]]\n");
            let mut h = parts.next().unwrap_or_default().to_owned();
            for part in parts {
                if rows.iter().any(|r| part.contains(&format!("name = \"{r}\"\n"))) {
                    h.push_str("\n[[header]]\n");
                    h.push_str(part);
                }
            }
            h
        }
    };
    let mut out = format!("{head}\n");
    for block in blocks.split("\n[[toolkit]]\n") {
        if versions.iter().any(|v| block.trim_start().starts_with(&format!("version = \"{v}\""))) {
            out.push_str("[[toolkit]]\n");
            out.push_str(block);
            out.push('\n');
        }
    }
    out.push_str("\n[libclang]\n");
    out.push_str(tail);
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("headers-manifest.toml"), out).expect("write manifest");
    dir
}

/// What `cargo run --quiet --package PACKAGE -- ARGS` in the repository would do, with extra
/// environment: the package's binary is built once per test process (with the tests' own
/// environment, never `env`) and then run with `env`. Passing `env` to cargo instead would
/// make a variable some build script watches (`LIBCLANG_PATH`: clang-sys) rebuild and relink
/// the binary while a concurrent test runs it (seen in CI: a run killed by a signal, a warm
/// run that missed the unit cache because its executable had changed).
pub fn cargo_run(package: &str, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = std::process::Command::new(built_binary(package));
    cmd.current_dir(repo_root()).args(args).env("CARGO", env!("CARGO"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the built binary")
}

/// A workspace package's binary (named as the package), built once per test process with
/// `cargo build`, so that it is the current code's.
pub fn built_binary(package: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<BTreeMap<String, PathBuf>> = std::sync::Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = built.get(package) {
        return path.clone();
    }
    let out = std::process::Command::new(env!("CARGO"))
        .current_dir(repo_root())
        .args(["build", "--quiet", "--package", package])
        .output()
        .expect("run cargo build");
    assert!(out.status.success(), "cargo build -p {package} failed:\n{}", text(&out.stderr));
    let exe = std::env::current_exe().expect("the test's own path");
    // target/debug/deps/<test> -> target/debug/<package>
    let debug = exe.parent().and_then(Path::parent).expect("target/debug");
    let path = debug.join(format!("{package}{}", std::env::consts::EXE_SUFFIX));
    built.insert(package.to_owned(), path.clone());
    path
}

/// The `cuda-sys-gen` binary, built once per test process (`cargo build`, so that it is the
/// current code's).
pub fn cuda_sys_gen_binary() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| built_binary("cuda-sys-gen"))
}

/// The generated crate's doctor example, built once per test process.
pub fn doctor_binary() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let out = std::process::Command::new(env!("CARGO"))
            .current_dir(repo_root())
            .args([
                "build",
                "--quiet",
                "-p",
                "cuda-driver-pfn",
                "--example",
                "doctor",
                "--features",
                "doctor",
                "--message-format=json",
            ])
            .output()
            .expect("run cargo");
        assert!(out.status.success(), "building the doctor failed:\n{}", text(&out.stderr));
        text(&out.stdout)
            .lines()
            .filter(|l| l.contains("\"executable\":\"") && l.contains("doctor"))
            .find_map(|l| l.split("\"executable\":\"").nth(1)?.split('"').next().map(PathBuf::from))
            .expect("cargo names the doctor's executable")
    })
}

/// A test that cannot have what it needs here (a tool, a target, a download) says SKIPPED with
/// the reason and passes, on a newcomer's machine; under `CI=true` (set by `.ci/run`) it fails
/// with the reason instead, so that a CI machine that lost a tool cannot pass by skipping.
pub fn skip(why: &str) {
    assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true and this test cannot run: {why}");
    eprintln!("SKIPPED: {why}");
}

/// A process's output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The fake driver (or runtime) with every registry entry in its table, each at its own
/// pointer ([`fake::pointer_for`] its index).
pub fn fake_with_every_entry(flavour: fake::Flavour) -> fake::Fake {
    let fake = fake::Fake::new(flavour);
    for (i, e) in cuda_driver_pfn::ENTRIES.iter().enumerate() {
        fake.add_abi(e.symbol, e.version, e.variant.is_some(), fake::pointer_for(i));
    }
    fake
}

/// Runs the pipeline over local toolkit folders only, into `out`.
pub fn generate_local(
    manifest_dir: &Path,
    toolkits: Vec<PathBuf>,
    out: &Path,
    crate_name: &str,
) -> Result<Report, codegen::Error> {
    pipeline::generate(&Config {
        manifest: manifest_dir.join("headers-manifest.toml"),
        out_dir: out.to_owned(),
        cache_dir: cache_dir(),
        local_toolkits: toolkits,
        mode: Mode::Write,
        emit: EmitOptions::new(crate_name, "cargo xtask generate"),
        offline: false,
        progress: None,
    })
}

/// Every file under `dir`, relative path to text.
pub fn read_tree(dir: &Path) -> BTreeMap<String, String> {
    codegen::write::list_tree(dir)
        .unwrap_or_default()
        .into_iter()
        .map(|rel| {
            let text = std::fs::read_to_string(dir.join(&rel)).unwrap_or_default();
            (rel, text)
        })
        .collect()
}

/// Compares `actual` with the golden folder; with `CUDA_SYS_GEN_BLESS=1` rewrites it instead.
/// Returns a readable, coloured diff of everything that differs.
pub fn compare_golden(golden: &Path, actual: &BTreeMap<String, String>) -> Result<(), String> {
    if std::env::var_os("CUDA_SYS_GEN_BLESS").is_some_and(|v| v == "1") {
        let _ = std::fs::remove_dir_all(golden);
        for (rel, text) in actual {
            let path = golden.join(rel);
            std::fs::create_dir_all(path.parent().unwrap_or(golden)).map_err(|e| e.to_string())?;
            std::fs::write(&path, text).map_err(|e| e.to_string())?;
        }
        return Ok(());
    }
    let expected = read_tree(golden);
    let mut report = String::new();
    let names: std::collections::BTreeSet<&String> = expected.keys().chain(actual.keys()).collect();
    for name in names {
        let (e, a) = (expected.get(name), actual.get(name));
        if e == a {
            continue;
        }
        let (e, a) = (e.map_or("", String::as_str), a.map_or("", String::as_str));
        report.push_str(&format!("\x1b[1m--- {}/{name} (golden)\n+++ actual\x1b[0m\n", golden.display()));
        let diff = similar::TextDiff::from_lines(e, a);
        for hunk in diff.unified_diff().context_radius(2).iter_hunks() {
            for change in hunk.iter_changes() {
                let (sign, colour) = match change.tag() {
                    similar::ChangeTag::Delete => ('-', "\x1b[31m"),
                    similar::ChangeTag::Insert => ('+', "\x1b[32m"),
                    similar::ChangeTag::Equal => (' ', ""),
                };
                report.push_str(&format!("{colour}{sign}{}\x1b[0m", change));
                if change.missing_newline() {
                    report.push('\n');
                }
            }
        }
    }
    if report.is_empty() {
        Ok(())
    } else {
        Err(format!("{report}\nrun with CUDA_SYS_GEN_BLESS=1 to accept the new output"))
    }
}

/// The model input of one parse, as the pipeline builds it from a header row `module` of
/// cudaTypedefs.h on Linux (not legacy: the header text would say otherwise), through the
/// pipeline's own typedef -> declaration step.
pub fn declarations_of(
    parsed: &codegen::read::bindgen_output::ParsedOutput,
    module: &str,
) -> Vec<codegen::model::Declaration> {
    let row = codegen::manifest::HeaderSpec::linux(module, "cuda.h", "cudaTypedefs.h");
    codegen::read::declarations::declarations(parsed, &row)
}

/// A copy of `from` at `to` made of hard links (`cp -al`), for a test's own cache beside the
/// shared one. Other tests of the same binary write into the shared cache while this runs (a
/// run's scratch folders come and go), so a file or folder that is gone by the time it is
/// reached is skipped, not an error: `cp -al` failed on exactly that.
pub fn link_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    std::fs::create_dir_all(to)?;
    let entries = match std::fs::read_dir(from) {
        Ok(entries) => entries,
        Err(e) if gone(&e) => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) if gone(&e) => continue,
            Err(e) => return Err(e),
        };
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = match std::fs::symlink_metadata(&src) {
            Ok(m) => m.file_type(),
            Err(e) if gone(&e) => continue,
            Err(e) => return Err(e),
        };
        let done = if kind.is_dir() { link_tree(&src, &dst) } else { std::fs::hard_link(&src, &dst) };
        match done {
            Err(e) if !gone(&e) => return Err(e),
            _ => {}
        }
    }
    Ok(())
}
