//! `cuda-sys-gen`: generate a crate of versioned CUDA driver entry point types in your own
//! repository, from a headers manifest of your own (start from this project's
//! headers-manifest.toml), and compare toolkits before you adopt a new one.

use clap::Parser;

fn main() -> std::process::ExitCode {
    cuda_sys_gen::run(cuda_sys_gen::Cli::parse())
}
