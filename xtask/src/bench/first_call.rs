//! The first call through the stand-in, found by its own search: a C program (built with `cc`)
//! times `dlopen("libcuda.so.1")`, `dlsym` and the first `cuDriverGetVersion`, in a process of
//! its own each time, through the stand-in (`tests/standin-libcuda`, release, first on
//! `LD_LIBRARY_PATH`, no `$CUDA_SYS_GEN_REAL_LIBCUDA`: it searches for the real driver itself)
//! and with Debian's 555 driver alone, taking turns.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::{run_quiet, Env, Paired, Row, Target};
use crate::progress;

/// The program timed, the same file the GPU machine's run builds.
const PROGRAM: &str = include_str!("../../../examples/libcuda-tracer/gpu-run/first_call.c");

/// Debian's 555 driver as the real-driver tests unpack it (`tests/src/drivers.rs`).
fn driver_555(root: &Path) -> Result<PathBuf> {
    let cache = root.join("target").join("real-drivers");
    let found = std::fs::read_dir(&cache)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libcuda1_555.")))
        .map(|p| p.join("usr/lib/x86_64-linux-gnu/nvidia/current"))
        .find(|d| d.join("libcuda.so.1").is_file());
    found.with_context(|| format!("no driver 555 under {}: run `cargo test -p cuda-sys-gen-tests --test real_drivers` once: it fetches the drivers", cache.display()))
}

pub fn run(env: &Env, runs: usize) -> Result<(Vec<Row>, Vec<String>)> {
    let dir = env.dir.join("first-call");
    std::fs::create_dir_all(dir.join("standin")).with_context(|| format!("creating {}", dir.display()))?;
    let real = driver_555(&env.root)?;
    progress!("first-call: building the stand-in (release) and the C program");
    let mut c = env.cargo(&env.root);
    c.args(["build", "--release", "--quiet", "--offline", "-p", "cuda-sys-gen-standin-libcuda"]);
    run_quiet(&mut c, "cargo build --release -p cuda-sys-gen-standin-libcuda")?;
    let standin = dir.join("standin").join("libcuda.so.1");
    let built = env.root.join("target/release/libcuda_standin.so");
    std::fs::copy(&built, &standin).with_context(|| format!("copying {}", built.display()))?;
    let source = dir.join("first_call.c");
    std::fs::write(&source, PROGRAM).with_context(|| format!("writing {}", source.display()))?;
    let exe = dir.join("first_call");
    run_quiet(Command::new("cc").arg("-O2").arg("-o").arg(&exe).arg(&source).arg("-ldl"), "cc first_call.c")?;
    let once = |path: &str| -> Result<f64> {
        let out = Command::new(&exe)
            .env("LD_LIBRARY_PATH", path)
            .env_remove("CUDA_SYS_GEN_REAL_LIBCUDA")
            .output()
            .context("running first_call")?;
        let text = String::from_utf8_lossy(&out.stdout);
        match text.lines().find_map(|l| l.strip_prefix("first-call-ms\t")) {
            Some(ms) if out.status.success() => ms.trim().parse::<f64>().with_context(|| format!("a time {ms:?}")),
            _ => bail!("first_call (LD_LIBRARY_PATH={path}) failed: {text}{}", String::from_utf8_lossy(&out.stderr)),
        }
    };
    let through = format!("{}:{}", standin.parent().unwrap_or(&dir).display(), real.display());
    let direct = real.display().to_string();
    // Both once unmeasured: the files are then in the page cache for every measured run.
    once(&through)?;
    once(&direct)?;
    progress!("first-call: {runs} processes each way, taking turns");
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        ours.push(once(&through)?);
        base.push(once(&direct)?);
    }
    let row = Paired {
        metric:
            "first call through the stand-in, found by its own search, driver 555: dlopen + cuDriverGetVersion (ms)"
                .into(),
        baseline_name: "driver 555 alone",
        unit: "ms",
        digits: 2,
        ours,
        base,
        target: Target::More(2.0, "ms"),
    }
    .row();
    Ok((vec![row], Vec::new()))
}
