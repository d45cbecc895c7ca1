//! This repository's automation: `cargo xtask generate [--toolkit PATH] [--check] [--add-toolkit V]`,
//! `cargo xtask diff --from A --to B` and `cargo xtask fuzz {seeds,run}`.
//!
//! The same front end as the `cuda-sys-gen` command, with this repository's paths fixed:
//! headers-manifest.toml, generated/ and the cache under target/.

mod fuzz;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use cuda_sys_gen::{DiffArgs, GenerateArgs, Paths};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "cuda-sys-gen's own automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Regenerate generated/ from the headers of every pinned toolkit.
    Generate(GenerateArgs),
    /// Report what changed in the driver entry points between two toolkits (markdown, or --json).
    #[command(after_help = cuda_sys_gen::DIFF_EXIT_STATUS)]
    Diff(DiffArgs),
    /// Build the real-driver checks for the GPU machine into .device-bin/.
    DeviceBuild,
    /// The fuzz targets of fuzz/ (FUZZING.md): rewrite their seeds, or run them.
    #[command(subcommand)]
    Fuzz(fuzz::FuzzCommand),
}

mod device;

fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_owned).unwrap_or_default()
}

fn main() -> std::process::ExitCode {
    let root = project_root();
    let paths = Paths {
        manifest: root.join("headers-manifest.toml"),
        out: root.join("generated"),
        cache: root.join("target").join("cuda-headers"),
        crate_name: "cuda-driver-pfn".into(),
        command: "cargo xtask generate".into(),
    };
    match Cli::parse().command {
        Command::Generate(args) => cuda_sys_gen::exit_code(cuda_sys_gen::generate(args, paths)),
        Command::Diff(args) => cuda_sys_gen::exit_status(cuda_sys_gen::diff(args, &paths.manifest, &paths.cache)),
        Command::DeviceBuild => cuda_sys_gen::exit_code(device::device_build(&root)),
        Command::Fuzz(cmd) => cuda_sys_gen::exit_code(fuzz::main(cmd, &root)),
    }
}
