//! Forwarding cost on the fake libcuda: `conformance forward-bench` (release) calls
//! `cuDriverGetVersion` through the stand-in (`tests/standin-libcuda`, every hook only
//! forwarding, its real driver the fake) and the fake's own, in paired runs taking turns.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::{run_quiet, Env, Paired, Row, Target};
use crate::progress;

pub fn run(env: &Env, rounds: usize) -> Result<(Vec<Row>, Vec<String>)> {
    let dir = env.dir.join("forward");
    let target = env.root.join("target");
    progress!("forward: building the fake, the stand-in and conformance (release)");
    let mut c = env.cargo(&env.root);
    c.args(["build", "--release", "--quiet", "--offline", "-p", "fake-libcuda", "-p", "cuda-sys-gen-standin-libcuda"])
        .args(["-p", "cuda-sys-gen-tests", "--lib", "--bin", "conformance"]);
    run_quiet(&mut c, "cargo build --release -p fake-libcuda -p cuda-sys-gen-standin-libcuda -p cuda-sys-gen-tests")?;
    let release = target.join("release");
    let dll = |name: &str| format!("{}{name}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    // Each as `libcuda.so.1` in a folder of its own, as they would be met.
    let place = |from: &str, folder: &str| -> Result<std::path::PathBuf> {
        let to_dir = dir.join(folder);
        std::fs::create_dir_all(&to_dir).with_context(|| format!("creating {}", to_dir.display()))?;
        let to = to_dir.join("libcuda.so.1");
        std::fs::copy(release.join(dll(from)), &to).with_context(|| format!("copying {from} to {}", to.display()))?;
        Ok(to)
    };
    let fake = place("fake_libcuda", "fake")?;
    let standin = place("cuda_standin", "standin")?;
    progress!("forward: {rounds} paired rounds of 10^6 calls");
    let out = Command::new(release.join("conformance"))
        .args(["forward-bench", &rounds.to_string()])
        .env("CUDA_SYS_GEN_LIBRARY", &standin)
        .env("CUDA_SYS_GEN_CHECK_REAL", &fake)
        .env("CUDA_SYS_GEN_REAL_LIBCUDA", &fake)
        .output()
        .context("running conformance forward-bench")?;
    if !out.status.success() {
        bail!("conformance forward-bench failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    let (ours, base) = samples(&String::from_utf8_lossy(&out.stdout), &standin)?;
    let row = Paired {
        metric: "call through the stand-in, hook only forwarding, fake driver: cuDriverGetVersion (ns)".into(),
        baseline_name: "the fake's own export",
        unit: "ns",
        digits: 2,
        ours,
        base,
        target: Target::More(5.0, "ns"),
    }
    .row();
    Ok((vec![row], Vec::new()))
}

/// The `forward-samples` line: (through the stand-in, direct), ns per call.
fn samples(text: &str, standin: &Path) -> Result<(Vec<f64>, Vec<f64>)> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("forward-samples\t"))
        .with_context(|| format!("conformance forward-bench ({}) printed no samples", standin.display()))?;
    let mut f = line.split('\t');
    let mut parse = || -> Result<Vec<f64>> {
        f.next().unwrap_or("").split(',').map(|x| x.parse::<f64>().with_context(|| format!("a sample {x:?}"))).collect()
    };
    let ours = parse()?;
    let base = parse()?;
    if ours.is_empty() || ours.len() != base.len() {
        bail!("forward-samples: {} against {} samples", ours.len(), base.len());
    }
    Ok((ours, base))
}
