//! `cuda-sys-gen`: generate a crate of versioned CUDA driver entry point types in your own
//! repository, from a headers manifest of your own (start from this project's
//! headers-manifest.toml).

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use cuda_sys_gen::{GenerateArgs, Paths};

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
}

fn main() -> std::process::ExitCode {
    let Command::Generate { args, manifest, out, crate_name, cache, regenerate_command } = Cli::parse().command;
    cuda_sys_gen::exit_code(cuda_sys_gen::generate(args, Paths { manifest, out, cache, crate_name, command: regenerate_command }))
}
