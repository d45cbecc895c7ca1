//! `cargo xtask fuzz seeds` and `cargo xtask fuzz run`: the fuzz targets of `fuzz/` (see
//! FUZZING.md) with their seed corpora, dictionaries and limits.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use codegen::fetch::Fetcher;
use codegen::manifest::Manifest;
use codegen::platform::Platform;
use codegen::read::clang::{self, Unit};

#[derive(Debug, Subcommand)]
pub enum FuzzCommand {
    /// Rewrite fuzz/seeds/ from the fixture toolkits: their headers, bindgen's output for
    /// them, zips of them, and headers-manifest.toml.
    Seeds,
    /// Run fuzz targets (all of them by default), one after the other, with
    /// `cargo +nightly fuzz run`.
    Run(RunArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Only these targets.
    pub targets: Vec<String>,
    /// Seconds per target (libFuzzer's -max_total_time).
    #[arg(long, default_value_t = 120)]
    pub time: u64,
    /// Stop each target after this many inputs (libFuzzer's -runs) instead of after --time.
    #[arg(long)]
    pub runs: Option<u64>,
    /// The sanitizer cargo-fuzz builds with: `none` (fastest) or `address`.
    #[arg(long, default_value = "none")]
    pub sanitizer: String,
}

/// The targets, each with its dictionary if it has one and its largest input: the grammar
/// target needs few bytes per item, the seeds of the others are up to 20 KB.
pub const TARGETS: &[(&str, Option<&str>, usize)] = &[
    ("parse_bindgen", None, 8 << 10),
    ("parse_bindgen_text", Some("fuzz/dicts/parse_bindgen.dict"), 64 << 10),
    ("macros", Some("fuzz/dicts/macros.dict"), 64 << 10),
    ("manifest", Some("fuzz/dicts/manifest.dict"), 32 << 10),
    ("extract", None, 64 << 10),
];

pub fn main(cmd: FuzzCommand, root: &Path) -> Result<()> {
    match cmd {
        FuzzCommand::Seeds => seeds(root),
        FuzzCommand::Run(args) => run(args, root),
    }
}

fn run(args: RunArgs, root: &Path) -> Result<()> {
    for t in &args.targets {
        if !TARGETS.iter().any(|(n, _, _)| n == t) {
            bail!("no fuzz target `{t}` (there are: {})", TARGETS.iter().map(|t| t.0).collect::<Vec<_>>().join(", "));
        }
    }
    for (name, dict, max_len) in TARGETS {
        if !args.targets.is_empty() && !args.targets.iter().any(|t| t == name) {
            continue;
        }
        let corpus = root.join("fuzz/corpus").join(name);
        std::fs::create_dir_all(&corpus).with_context(|| format!("could not create {}", corpus.display()))?;
        let mut cmd = Command::new("cargo");
        cmd.current_dir(root).args(["+nightly", "fuzz", "run", "--sanitizer", &args.sanitizer, name]).arg(&corpus);
        let seeds = root.join("fuzz/seeds").join(name);
        if seeds.is_dir() {
            cmd.arg(&seeds);
        }
        // A hang is an input that takes 10 s; memory is capped at 2 GiB.
        cmd.args(["--", "-timeout=10", "-rss_limit_mb=2048", "-len_control=10", "-print_final_stats=1"]);
        cmd.arg(format!("-max_len={max_len}"));
        match args.runs {
            Some(n) => cmd.arg(format!("-runs={n}")),
            None => cmd.arg(format!("-max_total_time={}", args.time)),
        };
        if let Some(d) = dict {
            cmd.arg(format!("-dict={}", root.join(d).display()));
        }
        eprintln!("fuzz: {name}");
        let status =
            cmd.status().context("could not run `cargo +nightly fuzz` (install it with `cargo install cargo-fuzz`)")?;
        if !status.success() {
            bail!("fuzz target {name} failed ({status}); the input is under fuzz/artifacts/{name}/");
        }
    }
    Ok(())
}

const MINIMAL_MANIFEST: &str = "schema = 1\n[fetch]\nplatform = \"manylinux2014_x86_64\"\n\
[[header]]\nname = \"cuda\"\napi = \"cuda.h\"\ntypedefs = \"cudaTypedefs.h\"\n\
[[header]]\nname = \"gl\"\napi = \"cudaGL.h\"\ntypedefs = \"cudaGLTypedefs.h\"\nfeature = \"gl\"\n";

fn seeds(root: &Path) -> Result<()> {
    let seeds = root.join("fuzz/seeds");
    let toolkits = fixture_toolkits(root)?;
    let write = |target: &str, name: &str, bytes: &[u8]| -> Result<()> {
        let dir = seeds.join(target);
        std::fs::create_dir_all(&dir).with_context(|| format!("could not create {}", dir.display()))?;
        std::fs::write(dir.join(name), bytes).with_context(|| format!("could not write {}/{name}", dir.display()))
    };
    for target in ["macros", "manifest", "extract", "parse_bindgen_text"] {
        let dir = seeds.join(target);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("could not remove {}", dir.display()))?;
        }
    }
    let manifest_path = root.join("headers-manifest.toml");
    let manifest = Manifest::load(&manifest_path)?;
    write("manifest", "headers-manifest.toml", &std::fs::read(&manifest_path)?)?;
    // A small one too: mutations of the real one mostly land in its 17 toolkit pins.
    write("manifest", "minimal.toml", MINIMAL_MANIFEST.as_bytes())?;
    let fetcher = Fetcher::new(root.join("target/cuda-headers"), &manifest);
    clang::ensure_libclang(&manifest, &fetcher)?;
    let standins = codegen::standins::standins_in(&fetcher.cache)?;
    for (label, dir) in &toolkits {
        let mut headers: Vec<PathBuf> = std::fs::read_dir(dir)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "h"))
            .collect();
        headers.sort();
        for h in &headers {
            let file = h.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            write("macros", &format!("{label}-{file}"), &std::fs::read(h)?)?;
        }
        write("extract", &format!("{label}.zip"), &zip_of(&headers)?)?;
        for target in [Platform::Linux, Platform::Windows] {
            let rows: Vec<_> = manifest
                .headers
                .iter()
                .filter(|h| h.target == target && dir.join(&h.api).is_file() && dir.join(&h.typedefs).is_file())
                .collect();
            if rows.is_empty() {
                continue;
            }
            let include_dirs = [dir.clone()];
            let version = codegen::locate::read_cuda_version(dir)?;
            let unit =
                Unit { toolkit: version, target, first_api: "cuda.h", headers: rows, include_dirs: &include_dirs };
            let out = clang::run_bindgen(&unit, standins.path())
                .with_context(|| format!("bindgen over {}", dir.display()))?;
            write("parse_bindgen_text", &format!("{label}-{target}.rs"), out.rust.as_bytes())?;
        }
    }
    eprintln!("fuzz/seeds/ rewritten from {} fixture toolkits", toolkits.len());
    Ok(())
}

/// Every `tests/{fixtures,diff-fixtures}/<case>/cuda-X.Y/`, as (`<case>-cuda-X.Y`, path).
fn fixture_toolkits(root: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for group in ["tests/fixtures", "tests/diff-fixtures"] {
        let mut cases: Vec<PathBuf> =
            std::fs::read_dir(root.join(group))?.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
        cases.sort();
        for case in cases {
            let mut tks: Vec<PathBuf> = std::fs::read_dir(&case)?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("cuda-")))
                .collect();
            tks.sort();
            for tk in tks {
                let label = format!(
                    "{}-{}",
                    case.file_name().unwrap_or_default().to_string_lossy(),
                    tk.file_name().unwrap_or_default().to_string_lossy()
                );
                out.push((label, tk));
            }
        }
    }
    Ok(out)
}

/// A wheel-like zip of headers under `nvidia/include/`, prefixed with the extract target's
/// "raw bytes" mode byte (0).
fn zip_of(headers: &[PathBuf]) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    z.add_directory("nvidia/include/", opts)?;
    for h in headers {
        let name = h.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        z.start_file(format!("nvidia/include/{name}"), opts)?;
        z.write_all(&std::fs::read(h)?)?;
    }
    z.start_file("nvidia_cuda_runtime-0.0.dist-info/RECORD", opts)?;
    z.write_all(b"nvidia/include/cuda.h,,\n")?;
    let mut bytes = vec![0u8];
    bytes.extend(z.finish()?.into_inner());
    Ok(bytes)
}
