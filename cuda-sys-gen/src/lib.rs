//! The command-line front end of cuda-sys-gen, shared by the `cuda-sys-gen` binary (for other
//! repositories) and this repository's `cargo xtask` (which fixes the paths).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use codegen::emit::EmitOptions;
use codegen::pipeline::{self, Config};
use codegen::write::Mode;

/// The options every `generate` takes.
#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    /// A local CUDA toolkit (root, include/ folder, or pip layout); may be repeated.
    /// Without it, $CUDA_PATH, $CUDA_HOME and /usr/local/cuda are tried.
    #[arg(long = "toolkit", value_name = "PATH")]
    pub toolkits: Vec<PathBuf>,
    /// Use only the pinned toolkits, even if a local one is installed.
    #[arg(long, conflicts_with = "toolkits")]
    pub pinned_only: bool,
    /// Change nothing; exit non-zero if the generated crate is not what the inputs produce.
    #[arg(long)]
    pub check: bool,
    /// Never run pip: use only the cache.
    #[arg(long)]
    pub offline: bool,
}

/// Where things are: fixed by `cargo xtask`, options of `cuda-sys-gen`.
#[derive(Debug, Clone)]
pub struct Paths {
    pub manifest: PathBuf,
    pub out: PathBuf,
    pub cache: PathBuf,
    pub crate_name: String,
    /// Quoted in every generated file's header.
    pub command: String,
}

/// Runs the pipeline and prints its summary.
pub fn generate(args: GenerateArgs, paths: Paths) -> Result<()> {
    let mut toolkits = args.toolkits;
    if toolkits.is_empty() && !args.pinned_only {
        toolkits.extend(codegen::fetch::discover_local_toolkit());
    }
    for p in &toolkits {
        eprintln!("using the local toolkit at {}", p.display());
    }
    let mode = if args.check { Mode::Check } else { Mode::Write };
    let cfg = Config {
        manifest: paths.manifest,
        out_dir: paths.out.clone(),
        cache_dir: paths.cache,
        local_toolkits: toolkits,
        mode,
        emit: EmitOptions { crate_name: paths.crate_name, command: paths.command },
        offline: args.offline,
    };
    let start = std::time::Instant::now();
    let report = pipeline::generate(&cfg).with_context(|| format!("generation failed; {} is unchanged", paths.out.display()))?;
    print!("{}", report.summary(mode, start.elapsed()));
    Ok(())
}

/// `main` for both binaries: runs `f`, prints an error chain the way rustc would.
pub fn exit_code(result: Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
