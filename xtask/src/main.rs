//! This repository's automation: `cargo xtask generate [--toolkit PATH] [--check] [--add-toolkit V]`,
//! `cargo xtask diff --from A --to B`, `cargo xtask fuzz {seeds,run}`, `cargo xtask tsan`,
//! `cargo xtask bench`, `cargo xtask device-build` and `cargo xtask package`.
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
    #[command(after_help = cuda_sys_gen::generate::exit_status_help())]
    Generate(GenerateArgs),
    /// Report what changed in the driver entry points between two toolkits (markdown, or --json).
    #[command(after_help = cuda_sys_gen::diff::exit_status_help())]
    Diff(DiffArgs),
    /// Build the real-driver checks for the GPU machine into .device-bin/.
    DeviceBuild,
    /// The fuzz targets of fuzz/ (FUZZING.md): rewrite their seeds, or run them.
    #[command(subcommand)]
    Fuzz(fuzz::FuzzCommand),
    /// Benchmarks against their baselines: prints a table, writes target/bench/latest.md.
    Bench(bench::BenchArgs),
    /// The race tests of tests/race under ThreadSanitizer (nightly, rust-src).
    Tsan,
    /// Package the five published crates in order and build a crate outside the workspace
    /// against the packaged files.
    Package,
    /// Where one generate's time goes, phase by phase, on one thread.
    #[command(hide = true)]
    BenchPhases,
    /// `cargo xtask bench`'s own run of the generator: every pinned toolkit, offline, into OUT.
    #[command(hide = true)]
    BenchGenerate {
        #[arg(long)]
        out: PathBuf,
    },
    /// `cargo xtask bench`'s own run of min-driver over one program, in a process of its own
    /// (for its peak memory).
    #[command(hide = true)]
    BenchMinDriver {
        #[arg(long)]
        registry: PathBuf,
        program: PathBuf,
    },
}

mod bench;
mod device;
mod package;
mod tsan;

fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_owned).unwrap_or_default()
}

fn main() -> std::process::ExitCode {
    // `cargo xtask bench` sets this executable as rustc's wrapper to measure rustc's memory.
    bench::rusage::wrap_if_asked();
    let root = project_root();
    let paths = Paths {
        manifest: root.join("headers-manifest.toml"),
        out: root.join("generated"),
        cache: root.join("target").join("cuda-headers"),
        crate_name: "cuda-driver-pfn".into(),
        command: "cargo xtask generate".into(),
        rerun: cuda_sys_gen::rerun_command("cargo xtask", std::env::args_os()),
    };
    let cli = match cuda_sys_gen::parse_args::<Cli>() {
        Ok(cli) => cli,
        Err(status) => return status,
    };
    match cli.command {
        Command::Generate(args) => cuda_sys_gen::exit_code(cuda_sys_gen::generate::run(args, paths)),
        Command::Diff(args) => cuda_sys_gen::exit_status(cuda_sys_gen::diff::run(args, &paths.manifest, &paths.cache)),
        Command::DeviceBuild => cuda_sys_gen::exit_code(device::device_build(&root)),
        Command::Fuzz(cmd) => cuda_sys_gen::exit_code(fuzz::main(cmd, &root)),
        Command::Bench(args) => cuda_sys_gen::exit_code(bench::bench(&root, args)),
        Command::Tsan => cuda_sys_gen::exit_code(tsan::tsan(&root)),
        Command::Package => cuda_sys_gen::exit_code(package::package(&root)),
        Command::BenchGenerate { out } => cuda_sys_gen::exit_code(bench::generate_into(&paths, &out)),
        Command::BenchMinDriver { registry, program } => {
            cuda_sys_gen::exit_code(cuda_sys_gen::min_driver::floor_of_programs(&registry, &[program]).map(|f| {
                // Its own peak (VmHWM): this process's, from its exec on.
                let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
                let hwm = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap_or("").trim().to_owned();
                println!("{} {hwm}", f.version())
            }))
        }
        Command::BenchPhases => cuda_sys_gen::exit_code(bench::phases::phases(&root).map(|p| bench::phases::print(&p))),
    }
}
