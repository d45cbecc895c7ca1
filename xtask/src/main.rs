//! This repository's automation: `cargo xtask generate [--toolkit PATH] [--check]`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use codegen::emit::EmitOptions;
use codegen::pipeline::{self, Config};
use codegen::write::Mode;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "cuda-sys-gen's own automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Regenerate generated/ from the headers of every pinned toolkit.
    Generate {
        /// A local CUDA toolkit (root, include/ folder, or pip layout); may be repeated.
        /// Without it, $CUDA_PATH, $CUDA_HOME and /usr/local/cuda are tried.
        #[arg(long = "toolkit", value_name = "PATH")]
        toolkits: Vec<PathBuf>,
        /// Use only the pinned toolkits, even if a local one is installed.
        #[arg(long, conflicts_with = "toolkits")]
        pinned_only: bool,
        /// Change nothing; fail if generated/ is not what the inputs produce.
        #[arg(long)]
        check: bool,
        /// Never run pip: use only what is cached under target/.
        #[arg(long)]
        offline: bool,
    },
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_owned).unwrap_or_default()
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Generate { toolkits, pinned_only, check, offline } => {
            let root = project_root();
            let local = if !toolkits.is_empty() || pinned_only {
                toolkits
            } else {
                codegen::fetch::default_toolkit_candidates()
                    .into_iter()
                    .filter(|p| codegen::fetch::locate_toolkit(p).is_ok())
                    .take(1)
                    .collect()
            };
            for p in &local {
                eprintln!("using the local toolkit at {}", p.display());
            }
            let cfg = Config {
                manifest: root.join("headers-manifest.toml"),
                out_dir: root.join("generated"),
                cache_dir: root.join("target").join("cuda-headers"),
                local_toolkits: local,
                mode: if check { Mode::Check } else { Mode::Write },
                emit: EmitOptions { crate_name: "cuda-driver-pfn".into(), command: "cargo xtask generate".into() },
                offline,
            };
            let start = std::time::Instant::now();
            let report = pipeline::generate(&cfg).context("generation failed; generated/ is unchanged")?;
            print_report(&report, start.elapsed(), check);
            Ok(())
        }
    }
}

fn print_report(r: &pipeline::Report, elapsed: std::time::Duration, check: bool) {
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    println!("{}", r.libclang);
    for line in &r.toolkit_lines {
        println!("{line}");
    }
    for n in &r.notes {
        println!("note: {n}");
    }
    for d in &r.model.drift {
        let param = d.param.as_deref().unwrap_or("parameter list");
        println!("ABI drift: {} {} -> {}: {param}: {} -> {}", d.pfn, d.from, d.to, d.before, d.after);
    }
    println!(
        "{} entries of {} symbols from {} toolkits",
        r.model.entries.len(),
        r.model.symbols().len(),
        r.model.toolkits.len()
    );
    if check {
        println!("generated/ is up to date ({:.1} s)", elapsed.as_secs_f64());
    } else {
        println!(
            "generated/: {} written, {} removed, {} unchanged ({:.1} s)",
            r.write.written.len(),
            r.write.removed.len(),
            r.write.unchanged,
            elapsed.as_secs_f64()
        );
    }
}
