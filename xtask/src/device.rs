//! `cargo xtask device-build`: builds what the GPU machine runs (it has no Rust toolchain)
//! as release x86-64 binaries, stripped, into `.device-bin/` with a script that runs them all
//! and leaves the results in `$OUT`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The test binaries and examples that need a real driver, and how each is run there.
const RUN_ALL: &str = r#"#!/usr/bin/env bash
# Runs on the device machine from the repository root: `bash .device-bin/run-all.sh`.
# Every output goes to $OUT (or ./device-out); nothing here needs Rust.
set -u
out=${OUT:-device-out}; mkdir -p "$out"; bin=.device-bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
step() { name=$1; shift; echo "== $name"; "$@" > "$out/$name.log" 2>&1; echo "rc=$?" >> "$out/$name.log"; tail -n 25 "$out/$name.log"; }
step conformance "$bin/conformance" check "$out"
step launch "$bin/conformance" launch
step roundtrip "$bin/roundtrip"
step doctor "$bin/doctor"
step gpu_machine "$bin/gpu_machine" --ignored --nocapture --test-threads 1
step bench "$bin/conformance" bench
step c_names "$bin/conformance" c-names
step probe "$bin/conformance" probe
step ctx_create_null "$bin/conformance" ctx-create-null
step c_names_per_thread "$bin/conformance-per-thread" c-names
step vector_add_drv "$bin/vector_add_drv"
step device_query_drv "$bin/device_query_drv"
step graphs_drv "$bin/graphs_drv"
step vector_add_mmap_drv "$bin/vector_add_mmap_drv"
step launch_ex_drv "$bin/launch_ex_drv"
step graphs_drv_per_thread "$bin/graphs_drv-per-thread"
step vector_add_mmap_drv_per_thread "$bin/vector_add_mmap_drv-per-thread"
step vector_add_cudarc "$bin/vector_add_cudarc"
step device_query_cudarc "$bin/device_query_cudarc"
# The machine's own libcuda, cut short: a reason, never a SIGBUS inside the loader.
lib=$(ldconfig -p | awk '/libcuda\.so\.1 / {print $NF; exit}'); lib=${lib:-/usr/lib/x86_64-linux-gnu/libcuda.so.1}
cut=$(mktemp -d); head -c 3000 "$lib" > "$cut/cut3000.so"; head -c 1000000 "$lib" > "$cut/cut1m.so"
step doctor_cut3000 "$bin/doctor" "$cut/cut3000.so"
step doctor_cut1m "$bin/doctor" "$cut/cut1m.so"
"#;

/// The sample ports of `generated/examples/`: NVIDIA's driver-API samples, ported with `api`.
const SAMPLES: [&str; 5] = ["vector_add_drv", "device_query_drv", "graphs_drv", "vector_add_mmap_drv", "launch_ex_drv"];

pub fn device_build(root: &Path) -> Result<()> {
    let dest = root.join(".device-bin");
    std::fs::create_dir_all(&dest).with_context(|| format!("creating {}", dest.display()))?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = "x86_64-unknown-linux-gnu";
    let features = "cuda-driver-pfn/gl,cuda-driver-pfn/egl,cuda-driver-pfn/vdpau,cuda-driver-pfn/profiler,cuda-driver-pfn/d3d9,cuda-driver-pfn/d3d10,cuda-driver-pfn/d3d11,cuda-driver-pfn/wgl,cuda-driver-pfn/runtime,cuda-driver-pfn/api";
    // Every module's feature, so that the checks reach every registry entry.
    let examples = "gl,egl,vdpau,profiler,d3d9,d3d10,d3d11,wgl,newest,api,doctor";
    let builds: [&[&str]; 3] = [
        &["build", "--release", "-p", "cuda-sys-gen-tests", "--bin", "conformance", "--features", features],
        &["build", "--release", "-p", "cuda-driver-pfn", "--examples", "--features", examples],
        &[
            "test",
            "--release",
            "-p",
            "cuda-sys-gen-tests",
            "--test",
            "gpu_machine",
            "--no-run",
            "--message-format=json",
            "--features",
            features,
        ],
    ];
    for args in builds {
        let out = cargo_stripped(&cargo, root, args, target)?;
        if args[0] == "test" {
            // The test harness's path is only in cargo's JSON messages.
            let text = String::from_utf8_lossy(&out.stdout);
            let exe = text
                .lines()
                .filter(|l| l.contains("\"executable\":\"") && l.contains("gpu_machine"))
                .filter_map(|l| l.split("\"executable\":\"").nth(1)?.split('"').next().map(PathBuf::from))
                .next()
                .context("cargo printed no gpu_machine executable")?;
            copy(&exe, &dest.join("gpu_machine"))?;
        }
    }
    let rel = root.join("target").join(target).join("release");
    copy(&rel.join("conformance"), &dest.join("conformance"))?;
    copy(&rel.join("examples").join("roundtrip"), &dest.join("roundtrip"))?;
    copy(&rel.join("examples").join("doctor"), &dest.join("doctor"))?;
    for sample in SAMPLES {
        copy(&rel.join("examples").join(sample), &dest.join(sample))?;
    }
    // The C-name check again with the crate's `per-thread-default-stream` feature, where
    // cuda.h's names mean the _ptds/_ptsz entries (built last: it changes the crate's features).
    let per_thread = format!("{features},cuda-driver-pfn/per-thread-default-stream");
    let args = ["build", "--release", "-p", "cuda-sys-gen-tests", "--bin", "conformance", "--features", &per_thread];
    cargo_stripped(&cargo, root, &args, target)?;
    copy(&rel.join("conformance"), &dest.join("conformance-per-thread"))?;
    // The samples that use streams again, with `cu!` meaning `api::ptds`.
    let per_thread_examples = format!("{examples},per-thread-default-stream");
    let args = ["build", "--release", "-p", "cuda-driver-pfn", "--examples", "--features", &per_thread_examples];
    cargo_stripped(&cargo, root, &args, target)?;
    for sample in ["graphs_drv", "vector_add_mmap_drv"] {
        copy(&rel.join("examples").join(sample), &dest.join(format!("{sample}-per-thread")))?;
    }
    build_cudarc_ports(root, &cargo, target, &dest)?;
    std::fs::write(dest.join("run-all.sh"), RUN_ALL).context("writing run-all.sh")?;
    println!("built into {}: run `bash .device-bin/run-all.sh` there (carry .device-bin)", dest.display());
    Ok(())
}

/// `cargo ARGS --target TARGET` in `dir`, stripped; its output, or an error with its stderr.
fn cargo_stripped(cargo: &str, dir: &Path, args: &[&str], target: &str) -> Result<std::process::Output> {
    let out = Command::new(cargo)
        .current_dir(dir)
        .args(args)
        .args(["--target", target])
        .env("RUSTFLAGS", "-C strip=symbols")
        .output()
        .with_context(|| format!("running cargo {}", args.join(" ")))?;
    if !out.status.success() {
        bail!("cargo {} failed:\n{}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    }
    Ok(out)
}

/// The cudarc counterparts of the sample ports (`xtask/src/bench/scratch/*_cudarc.rs`), in a
/// scratch crate under `target/`, for the same GPU run.
fn build_cudarc_ports(root: &Path, cargo: &str, target: &str, dest: &Path) -> Result<()> {
    let scratch = root.join("target").join("device-cudarc");
    let sources = root.join("xtask").join("src").join("bench").join("scratch");
    std::fs::create_dir_all(scratch.join("src").join("bin")).context("creating the cudarc scratch crate")?;
    std::fs::write(
        scratch.join("Cargo.toml"),
        "[package]\nname = \"cudarc-ports\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n\n\
         [dependencies]\ncudarc = { version = \"=0.19.10\", default-features = false, features = [\"std\", \"driver\", \"nvrtc\", \"dynamic-loading\", \"cuda-13000\"] }\n",
    )?;
    for (file, bin) in
        [("vector_add_cudarc.rs", "vector_add_cudarc"), ("device_query_cudarc.rs", "device_query_cudarc")]
    {
        std::fs::copy(sources.join(file), scratch.join("src").join("bin").join(format!("{bin}.rs")))?;
    }
    std::fs::copy(sources.join("vector_add.ptx"), scratch.join("src").join("bin").join("vector_add.ptx"))?;
    // Fetched first (a fresh machine has no cudarc in cargo's cache), then built offline.
    let fetch = Command::new(cargo)
        .current_dir(&scratch)
        .args(["fetch", "--target", target])
        .status()
        .context("running cargo fetch for the cudarc ports")?;
    if !fetch.success() {
        bail!("cargo fetch of cudarc 0.19.10 for the cudarc ports failed (see above): it needs crates.io or a mirror");
    }
    cargo_stripped(cargo, &scratch, &["build", "--release", "--offline"], target)
        .context("building the cudarc ports")?;
    for bin in ["vector_add_cudarc", "device_query_cudarc"] {
        copy(&scratch.join("target").join(target).join("release").join(bin), &dest.join(bin))?;
    }
    Ok(())
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to).with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    Ok(())
}
