//! `cuda-sys-gen`: generate a crate of versioned CUDA driver entry point types in your own
//! repository, from a headers manifest of your own (start from this project's
//! headers-manifest.toml), and compare toolkits before you adopt a new one.

fn main() -> std::process::ExitCode {
    match cuda_sys_gen::parse_args::<cuda_sys_gen::Cli>() {
        Ok(cli) => cuda_sys_gen::run(cli),
        Err(status) => status,
    }
}
