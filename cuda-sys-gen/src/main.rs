//! `cuda-sys-gen`: generate a crate of versioned CUDA driver entry point types in your own
//! repository, from a headers manifest of your own (start from this project's
//! headers-manifest.toml), and compare toolkits before you adopt a new one.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use cuda_sys_gen::{DiffArgs, GenerateArgs, Paths};

#[derive(Parser)]
#[command(name = "cuda-sys-gen", version, about = "Versioned CUDA driver entry point types from NVIDIA's headers")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write (or, with --check, verify) the generated crate.
    Generate {
        #[command(flatten)]
        args: GenerateArgs,
        /// The headers manifest.
        #[arg(long, default_value = "headers-manifest.toml")]
        manifest: PathBuf,
        /// The folder of the generated crate; everything in it belongs to the generator.
        #[arg(long, default_value = "generated")]
        out: PathBuf,
        /// The generated crate's package name.
        #[arg(long, default_value = "cuda-driver-pfn")]
        crate_name: String,
        /// Where wheels and extracted headers are cached.
        #[arg(long, default_value = "target/cuda-headers")]
        cache: PathBuf,
        /// The command quoted in the generated files' headers.
        #[arg(long, default_value = "cuda-sys-gen generate")]
        regenerate_command: String,
    },
    /// Report what changed in the driver entry points between two toolkits (markdown, or --json).
    #[command(after_help = cuda_sys_gen::diff_exit_status())]
    Diff {
        #[command(flatten)]
        args: DiffArgs,
        /// The headers manifest (pinned versions are looked up in it).
        #[arg(long, default_value = "headers-manifest.toml")]
        manifest: PathBuf,
        /// Where wheels and extracted headers are cached.
        #[arg(long, default_value = "target/cuda-headers")]
        cache: PathBuf,
    },
}

fn main() -> std::process::ExitCode {
    match Cli::parse().command {
        Command::Generate { args, manifest, out, crate_name, cache, regenerate_command } => {
            cuda_sys_gen::exit_code(cuda_sys_gen::generate(args, Paths { manifest, out, cache, crate_name, command: regenerate_command }))
        }
        Command::Diff { args, manifest, cache } => cuda_sys_gen::exit_status(cuda_sys_gen::diff(args, &manifest, &cache)),
    }
}
