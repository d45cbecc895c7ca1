//! `cargo xtask tsan`: the race tests of `tests/race` under ThreadSanitizer.
//!
//! ThreadSanitizer only sees the memory accesses of code built with it, so std is rebuilt
//! instrumented (`-Zbuild-std`, nightly with the `rust-src` component) together with the
//! generated crate and the tests, into their own target folder. The fake libcuda the tests
//! load is an ordinary build, as a real driver would be: what is checked is the shim's side.
//! The fake locks with `pthread_mutex_lock`, which TSan intercepts, so its own state needs no
//! suppression. Any report fails the run (`halt_on_error=1`, and TSan's exit code 66).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

const TARGET: &str = "x86_64-unknown-linux-gnu";

pub fn tsan(root: &Path) -> Result<()> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        bail!("cargo xtask tsan runs on x86-64 Linux only (ThreadSanitizer with -Zbuild-std for {TARGET})");
    }
    let sysroot = Command::new("rustc")
        .args(["+nightly", "--print", "sysroot"])
        .output()
        .context("could not run `rustc +nightly` (install a nightly toolchain with rustup)")?;
    if !sysroot.status.success() {
        bail!("`rustc +nightly --print sysroot` failed: {}; install a nightly toolchain with `rustup toolchain install nightly`", String::from_utf8_lossy(&sysroot.stderr).trim());
    }
    let src = Path::new(String::from_utf8_lossy(&sysroot.stdout).trim()).join("lib/rustlib/src/rust/library");
    if !src.is_dir() {
        bail!(
            "nightly has no std sources at {}: run `rustup component add rust-src --toolchain nightly`",
            src.display()
        );
    }
    let mut cmd = Command::new("cargo");
    cmd.current_dir(root)
        .args(["+nightly", "test", "-Zbuild-std", "--target", TARGET, "-p", "cuda-sys-gen-race", "--target-dir"])
        .arg(root.join("target/tsan"))
        // Only this crate's build sees the flag (with --target, build scripts and the fake
        // libcuda, built by the test with its own cargo, do not).
        .env("RUSTFLAGS", "-Zsanitizer=thread -Cunsafe-allow-abi-mismatch=sanitizer")
        .env("RUSTDOCFLAGS", "-Zsanitizer=thread")
        .env("TSAN_OPTIONS", "halt_on_error=1 second_deadlock_stack=1")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC_WRAPPER");
    eprintln!(
        "tsan: cargo +nightly test -Zbuild-std --target {TARGET} -p cuda-sys-gen-race (RUSTFLAGS=-Zsanitizer=thread)"
    );
    let status = cmd.status().context("could not run `cargo +nightly test`")?;
    if !status.success() {
        bail!("the race tests failed under ThreadSanitizer ({status}); its report is above");
    }
    Ok(())
}
