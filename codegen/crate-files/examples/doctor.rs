//! `cargo run --example doctor --features doctor [-- PATH-TO-LIBCUDA]`: loads the CUDA driver, prints its
//! version, and for every entry of the registry whether it resolves, and why not. The whole
//! program is the crate's `doctor::main` (its page says what is checked and the exit
//! statuses); `cuda-sys-gen doctor` runs the same for the crate it was built with.

fn main() -> std::process::ExitCode {
    cuda_driver_pfn::doctor::main()
}
