//! The command-line front end of cuda-sys-gen, shared by the `cuda-sys-gen` binary (for other
//! repositories) and this repository's `cargo xtask` (which fixes the paths).
//!
//! A room per command, each with its options, its `run` and its exit statuses: [`generate`]
//! (with `--add-toolkit`, and `init`), [`diff`], [`min_driver`], [`doctor`] (feature
//! `driver`); [`exit`] is how every command starts and
//! ends (usage errors, the error chain, the exit-status tables of `--help`). This file is the
//! `cuda-sys-gen` command line and nothing else. `--help` says what an installed binary must
//! say by itself (the options, the exit statuses) and names the page of docs/ for the rest.

pub mod diff;
#[cfg(feature = "driver")]
pub mod doctor;
pub mod exit;
pub mod generate;
pub mod min_driver;

use clap::{Parser, Subcommand};

pub use diff::{DiffArgs, FailOn};
pub use exit::{error_chain, exit_code, exit_status, parse_args, parse_from};
pub use generate::{rerun_command, GenerateArgs, Paths};
pub use min_driver::MinDriverArgs;

/// The `cuda-sys-gen` command line (its `--help` is the reference the docs are tested against).
#[derive(Parser)]
#[command(
    name = "cuda-sys-gen",
    version,
    about = "Versioned CUDA driver entry point types from NVIDIA's headers",
    after_help = "The generated crate, porting C code that calls cuGetProcAddress, and the rest: docs/ in \
                  cuda-sys-gen's repository (docs/generator.md, docs/porting.md, docs/diff.md, docs/min-driver.md)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Write (or, with --check, verify) the generated crate.
    #[command(after_help = generate::exit_status_help())]
    Generate(generate::StandaloneArgs),
    /// Write a new headers manifest pinning the toolkits given (or the latest); never replaces one.
    #[command(after_help = generate::init_exit_status_help())]
    Init(generate::InitArgs),
    /// Report what changed in the driver entry points between two toolkits (markdown, or --json).
    #[command(after_help = diff::exit_status_help())]
    Diff {
        #[command(flatten)]
        args: DiffArgs,
        /// The headers manifest (pinned versions are looked up in it).
        #[arg(long, default_value = "headers-manifest.toml")]
        manifest: std::path::PathBuf,
        /// Where wheels and extracted headers are cached.
        #[arg(long, default_value = "target/cuda-headers")]
        cache: std::path::PathBuf,
    },
    /// The oldest driver that runs a program, from its Rust sources or its compiled binary.
    ///
    /// Every entry point and kernel the sources name, or (given a compiled program, library,
    /// object or archive, or a kernel file) what the code it links asks the driver for and the
    /// kernels it embeds; and the driver to install for it. Never lower than the truth: what
    /// cannot be read, and what the program can do at run time that no file shows, is listed
    /// and makes the floor "at least".
    #[command(after_help = min_driver::exit_status_help())]
    MinDriver(MinDriverArgs),
    /// Every entry of the registry this binary was built with, against a CUDA driver.
    ///
    /// Loads the driver (in a child process first: a library that crashes the loader is
    /// reported, never suffered), prints its version and, for every entry, whether it resolves
    /// and whether the pointer is the library's export of the entry's name.
    #[cfg(feature = "driver")]
    #[command(after_help = doctor::exit_status_help())]
    Doctor(doctor::DoctorArgs),
}

/// The registry.json of the crate this binary was built with: what `min-driver` reads without
/// `--registry`. (A build without the `driver` feature, `cargo xtask`'s, has none.)
pub fn builtin_registry() -> Option<&'static str> {
    #[cfg(feature = "driver")]
    return Some(cuda_driver_pfn::REGISTRY_JSON);
    #[cfg(not(feature = "driver"))]
    None
}

/// `main` of the `cuda-sys-gen` binary.
pub fn run(cli: Cli) -> std::process::ExitCode {
    match cli.command {
        Command::Generate(standalone) => {
            let (args, paths) = standalone.split(rerun_command("cuda-sys-gen", std::env::args_os()));
            exit_code(generate::run(args, paths))
        }
        Command::Init(args) => exit_code(generate::run_init(&args)),
        Command::Diff { args, manifest, cache } => exit_status(diff::run(args, &manifest, &cache)),
        Command::MinDriver(mut args) => {
            args.builtin_registry = builtin_registry();
            exit_status(min_driver::run(&args))
        }
        #[cfg(feature = "driver")]
        Command::Doctor(args) => doctor::run(&args),
    }
}
