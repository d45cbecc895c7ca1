//! Lookup cost on the fake libcuda: the fake built in release, and a release scratch crate
//! (source in scratch/lookup.rs) that times `Driver::get` against the bare calls.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::{run_quiet, write_file, Env, Paired, Row, Target};
use crate::progress;

const SOURCE: &str = include_str!("scratch/lookup.rs");
const MODULE_FEATURES: &str =
    "\"gl\", \"egl\", \"vdpau\", \"profiler\", \"d3d9\", \"d3d10\", \"d3d11\", \"wgl\", \"visit\", \"api\"";

pub fn run(env: &Env, rounds: usize) -> Result<(Vec<Row>, Vec<String>)> {
    let dir = env.dir.join("lookup");
    // The fake, optimised like a driver would be: a debug fake would inflate the baseline.
    let fake_target = dir.join("fake-target");
    let mut c = env.cargo(&env.root);
    c.args(["build", "--release", "--quiet", "--offline", "-p", "fake-libcuda", "--target-dir"]).arg(&fake_target);
    run_quiet(&mut c, "cargo build -p fake-libcuda --release")?;
    let file = format!("{}fake_libcuda{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    // Named as the driver, so that the api module's `Driver::load` (LD_LIBRARY_PATH below)
    // and the bench's own handle open one copy.
    let fake_dir = dir.join("fake-driver");
    std::fs::create_dir_all(&fake_dir).context("creating the fake's folder")?;
    let fake = fake_dir.join("libcuda.so.1");
    std::fs::copy(fake_target.join("release").join(&file), &fake).context("copying the fake libcuda")?;

    let krate = dir.join("lookup-bench");
    let generated = env.root.join("generated");
    write_file(
        &krate.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"lookup-bench\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ncuda-driver-pfn = {{ path = {:?}, features = [{MODULE_FEATURES}] }}\nlibloading = \"0.8\"\n\n\
             [profile.release]\ndebug = false\n\n[workspace]\n",
            generated.display().to_string()
        ),
    )?;
    write_file(&krate.join("src").join("main.rs"), SOURCE)?;
    progress!("lookup: building the bench (release)");
    run_quiet(env.cargo(&krate).args(["build", "--release", "--quiet", "--offline"]), "cargo build lookup-bench")?;
    let exe: PathBuf = krate.join("target").join("release").join("lookup-bench");
    progress!("lookup: {rounds} rounds");
    let out = Command::new(&exe)
        .arg(&fake)
        .arg(rounds.to_string())
        .env("LD_LIBRARY_PATH", &fake_dir)
        .output()
        .context("running lookup-bench")?;
    if !out.status.success() {
        bail!("lookup-bench failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let series = |name: &str| -> Result<(Vec<f64>, Vec<f64>)> {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{name}\t")))
            .with_context(|| format!("lookup-bench printed no {name}"))?;
        let f: Vec<&str> = line.split('\t').collect();
        let parse = |s: &str| s.split(',').map(|x| x.parse::<f64>().context("a sample")).collect::<Result<Vec<f64>>>();
        Ok((parse(f.get(1).copied().unwrap_or(""))?, parse(f.get(2).copied().unwrap_or(""))?))
    };
    let (fo, fb) = series("first")?;
    let (co, cb) = series("cached")?;
    let (ao, ab) = series("all")?;
    let (po, pb) = series("api")?;
    let (mo, mb) = series("first-model")?;
    let entries =
        text.lines().find_map(|l| l.strip_prefix("entries\t")).context("lookup-bench printed no entry count")?;
    let more = |o: &[f64], b: &[f64]| super::median(&o.iter().zip(b).map(|(o, b)| o - b).collect::<Vec<_>>());
    let (first_more, model_more) = (more(&fo, &fb), more(&mo, &mb));
    let rows = vec![
        Paired {
            metric: "first lookup, fake driver: cuMemAlloc_v3020 on 1000 fresh drivers (ns)".into(),
            baseline_name: "bare cuGetProcAddress_v2",
            unit: "ns",
            digits: 1,
            ours: fo,
            base: fb,
            target: Target::Ratio(1.1),
        }
        .row(),
        Paired {
            metric: "cached lookup + call, fake driver (ns)".into(),
            baseline_name: "call through a raw pointer",
            unit: "ns",
            digits: 2,
            ours: co,
            base: cb,
            target: Target::More(1.0, "ns"),
        }
        .row(),
        Paired {
            metric: "api::cuDriverGetVersion call, fake driver (ns)".into(),
            baseline_name: "call through a resolved pointer",
            unit: "ns",
            digits: 2,
            ours: po,
            base: pb,
            target: Target::More(1.0, "ns"),
        }
        .row(),
        Paired {
            metric: format!("resolve every entry ({entries}), fake driver, fresh Driver (ms)"),
            baseline_name: "bare cuGetProcAddress_v2 per entry",
            unit: "ms",
            digits: 3,
            ours: ao,
            base: ab,
            target: Target::Below(2.0, "ms"),
        }
        .row(),
    ];
    let notes = vec![
        format!(
            "first lookup, where the time goes: ours costs {:.1} ns more than the bare call (median of paired rounds); the cache's memory traffic alone \
             (a fresh driver's slot loaded, then stored), with no shim code, costs {:.1} ns more",
            first_more, model_more
        ),
        "lookup: against tests/fake-libcuda built in release (it logs every request under a lock, so its lookups cost more than nothing); \
         the bench crate is release with every module feature; real-driver figures: `conformance bench` on the GPU machine"
            .into(),
    ];
    Ok((rows, notes))
}
