//! Compile time: a clean `cargo build` (debug and release) of a copy of generated/ with its
//! default features and with every feature, against a scratch crate that depends on cudarc
//! (`default-features = false`, `driver`, `dynamic-loading` and one CUDA version), the
//! incumbent a user would pick. Builds alternate, every one from an empty target folder,
//! offline against a registry fetched beforehand, without incremental compilation (as a
//! dependency is built); rustc's peak memory comes from our wrapper.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::rusage::{self, Rustc};
use super::{run_quiet, write_file, Env, Paired, Row, Target};
use crate::progress;

/// cudarc's newest release line, and its newest CUDA version feature.
const CUDARC: &str = "0.19";
const CUDARC_CUDA: &str = "cuda-13040";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Variant {
    OursDefault,
    OursAll,
    Cudarc,
    /// vectorAddDrv through our `api` (`generated/examples/vector_add_drv.rs`).
    OursClient,
    /// The same with cudarc's safe API (`scratch/vector_add_cudarc.rs`).
    CudarcClient,
}

impl Variant {
    /// The crate whose rustc is "its own" in the notes.
    fn own_crate(self) -> &'static str {
        match self {
            Variant::OursDefault | Variant::OursAll => "cuda_driver_pfn",
            Variant::Cudarc => "cudarc",
            Variant::OursClient => "vector_add_ours",
            Variant::CudarcClient => "vector_add_cudarc",
        }
    }
}

/// The crates each variant builds.
struct Crates {
    pfn: PathBuf,
    cudarc: PathBuf,
    ours_client: PathBuf,
    cudarc_client: PathBuf,
}

impl Crates {
    fn of(&self, v: Variant) -> &Path {
        match v {
            Variant::OursDefault | Variant::OursAll => &self.pfn,
            Variant::Cudarc => &self.cudarc,
            Variant::OursClient => &self.ours_client,
            Variant::CudarcClient => &self.cudarc_client,
        }
    }
}

struct Build {
    secs: f64,
    /// The rustc wall time of the crate's own packages, added up (ours: types and crate).
    own_secs: f64,
    /// Their CPU time (user and system), added up.
    own_cpu: f64,
    /// The CPU time of every rustc of the build, added up.
    total_cpu: f64,
    /// The rustc of the crate under test (cuda_driver_pfn or cudarc).
    own: Rustc,
    /// The largest rustc of the build.
    peak_kib: u64,
    rustcs: Vec<Rustc>,
}

pub fn run(env: &Env, runs: usize) -> Result<(Vec<Row>, Vec<String>)> {
    let dir = env.dir.join("compile");
    let crates = prepare(env, &dir)?;
    let cudarc_version = locked_version(&crates.cudarc.join("Cargo.lock"), "cudarc").unwrap_or_else(|| CUDARC.into());
    let mut results: Vec<(bool, Variant, Build)> = Vec::new();
    let variants =
        [Variant::OursDefault, Variant::OursAll, Variant::Cudarc, Variant::OursClient, Variant::CudarcClient];
    for i in 0..runs {
        for release in [false, true] {
            // Rotate the order each run: each variant goes first, second and third in turn.
            for k in 0..variants.len() {
                let v = variants[(k + i) % variants.len()];
                let b = build(env, &dir, crates.of(v), v, release)?;
                progress!(
                    "compile run {}/{runs}: {v:?} {}: {:.1} s, peak rustc {} MiB",
                    i + 1,
                    profile(release),
                    b.secs,
                    b.peak_kib / 1024
                );
                results.push((release, v, b));
            }
        }
    }
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let pick = |release: bool, v: Variant| -> Vec<&Build> {
        results.iter().filter(|(r, x, _)| *r == release && *x == v).map(|(_, _, b)| b).collect()
    };
    let baseline = format!("cudarc {cudarc_version}");
    for release in [false, true] {
        let base = pick(release, Variant::Cudarc);
        // The targets: default features at most a fifth of cudarc's debug build (a quarter of
        // its release build), every feature at most half of it (a crate that only names entry
        // points should cost a user less to build than cudarc's, which binds the whole API).
        let default_target = if release { Target::Ratio(0.25) } else { Target::Ratio(0.2) };
        for (v, label, target) in [
            (Variant::OursDefault, "default features", default_target),
            (Variant::OursAll, "every feature", Target::Ratio(0.5)),
        ] {
            let ours = pick(release, v);
            // The same builds' CPU time, every rustc added up: where other sessions load the
            // machine, wall time stretches with the number of crates a build waits on in turn,
            // CPU time much less.
            rows.push(
                Paired {
                    metric: format!("clean build, {}, {label}, rustc CPU time (s)", profile(release)),
                    baseline_name: &baseline,
                    unit: "s",
                    digits: 2,
                    ours: ours.iter().map(|b| b.total_cpu).collect(),
                    base: base.iter().map(|b| b.total_cpu).collect(),
                    target: Target::None,
                }
                .row(),
            );
            rows.push(
                Paired {
                    metric: format!("clean build, {}, {label} (s)", profile(release)),
                    baseline_name: &baseline,
                    unit: "s",
                    digits: 1,
                    ours: ours.iter().map(|b| b.secs).collect(),
                    base: base.iter().map(|b| b.secs).collect(),
                    target,
                }
                .row(),
            );
        }
        rows.push(
            Paired {
                metric: format!("one-file client (vectorAddDrv), clean build, {} (s)", profile(release)),
                baseline_name: &format!("the same with cudarc {cudarc_version}"),
                unit: "s",
                digits: 1,
                ours: pick(release, Variant::OursClient).iter().map(|b| b.secs).collect(),
                base: pick(release, Variant::CudarcClient).iter().map(|b| b.secs).collect(),
                target: Target::Ratio(0.3),
            }
            .row(),
        );
        let ours = pick(release, Variant::OursAll);
        rows.push(
            Paired {
                metric: format!("peak rustc memory, {}, every feature (MiB)", profile(release)),
                baseline_name: &baseline,
                unit: "MiB",
                digits: 0,
                ours: ours.iter().map(|b| b.peak_kib as f64 / 1024.0).collect(),
                base: base.iter().map(|b| b.peak_kib as f64 / 1024.0).collect(),
                target: Target::Ratio(0.6),
            }
            .row(),
        );
        // The crate's own rustc time (both of its packages, types and crate, added up) against
        // cudarc's, default features: what a user's build pays for the crate itself.
        if !release {
            rows.push(
                Paired {
                    metric: "rustc of the crate itself (types + crate), debug, default features (s)".into(),
                    baseline_name: &format!("rustc of cudarc {cudarc_version}"),
                    unit: "s",
                    digits: 2,
                    ours: pick(release, Variant::OursDefault).iter().map(|b| b.own_secs).collect(),
                    base: base.iter().map(|b| b.own_secs).collect(),
                    target: Target::Ratio(0.1),
                }
                .row(),
            );
            rows.push(
                Paired {
                    metric: "rustc CPU time of the crate itself (types + crate), debug, default features (s)".into(),
                    baseline_name: &format!("rustc of cudarc {cudarc_version}"),
                    unit: "s",
                    digits: 2,
                    ours: pick(release, Variant::OursDefault).iter().map(|b| b.own_cpu).collect(),
                    base: base.iter().map(|b| b.own_cpu).collect(),
                    target: Target::None,
                }
                .row(),
            );
        }
        // Where the time goes: the crate's own rustc against the whole build.
        for v in variants {
            let bs = pick(release, v);
            let own: Vec<f64> = bs.iter().map(|b| b.own.secs).collect();
            let total: Vec<f64> = bs.iter().map(|b| b.secs).collect();
            let others: Vec<String> = bs
                .first()
                .map(|b| {
                    b.rustcs
                        .iter()
                        .filter(|r| r.krate != b.own.krate)
                        .map(|r| format!("{} {:.1} s", r.krate, r.secs))
                        .collect()
                })
                .unwrap_or_default();
            notes.push(format!(
                "compile, {} {v:?}: whole build {:.1} s (median), of which rustc on {} {:.1} s ({} MiB peak); other rustc runs (first build): {}",
                profile(release),
                super::median(&total),
                bs.first().map_or("?", |b| b.own.krate.as_str()),
                super::median(&own),
                bs.first().map_or(0, |b| b.own.peak_kib / 1024),
                others.join(", ")
            ));
        }
    }
    let toolkits =
        codegen::manifest::Manifest::load(&env.root.join("headers-manifest.toml")).map_or(0, |m| m.toolkits.len());
    notes.push(format!(
        "compile: every build is `cargo build --offline` from an empty target folder with {} jobs; ours is a copy of generated/ ({toolkits} toolkits); \
         the baseline an empty library crate depending on cudarc {cudarc_version} with `default-features = false`, features `driver`, `dynamic-loading`, `{CUDARC_CUDA}`; \
         peak memory is the largest rustc of the build (getrusage of each rustc, through a RUSTC_WRAPPER)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    ));
    Ok((rows, notes))
}

fn profile(release: bool) -> &'static str {
    if release {
        "release"
    } else {
        "debug"
    }
}

/// A copy of generated/ as a workspace of its own, in `dir`.
fn copy_crate(env: &Env, dir: &Path) -> Result<PathBuf> {
    let pfn = dir.join("cuda-driver-pfn");
    let _ = std::fs::remove_dir_all(&pfn);
    copy_tree(&env.root.join("generated"), &pfn)?;
    let toml_path = pfn.join("Cargo.toml");
    let mut toml = std::fs::read_to_string(&toml_path).with_context(|| format!("reading {}", toml_path.display()))?;
    toml.push_str("\n# A scratch copy for `cargo xtask bench`: its own workspace.\n[workspace]\n");
    write_file(&toml_path, &toml)?;
    Ok(pfn)
}

/// A lock file and every dependency of the crate in `d` fetched (nothing downloads while timed).
fn lock_and_fetch(env: &Env, d: &Path) -> Result<()> {
    // From the local index when it has what is needed; else from the network.
    if run_quiet(env.cargo(d).args(["generate-lockfile", "--offline"]), "cargo generate-lockfile --offline").is_err() {
        run_quiet(env.cargo(d).arg("generate-lockfile"), "cargo generate-lockfile")?;
    }
    run_quiet(env.cargo(d).arg("fetch"), "cargo fetch")?;
    Ok(())
}

/// The crates, their lock files, and every dependency fetched (nothing downloads while timed).
fn prepare(env: &Env, dir: &Path) -> Result<Crates> {
    let pfn = copy_crate(env, dir)?;
    let cudarc = dir.join("cudarc-user");
    write_file(
        &cudarc.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"cudarc-user\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ncudarc = {{ version = \"{CUDARC}\", default-features = false, features = [\"driver\", \"dynamic-loading\", \"{CUDARC_CUDA}\"] }}\n\n\
             [workspace]\n"
        ),
    )?;
    write_file(
        &cudarc.join("src").join("lib.rs"),
        "//! Depends on cudarc, nothing more: its build is the baseline.\npub use cudarc;\n",
    )?;
    // The clients: one file each, the sample port and its cudarc counterpart.
    let ours_client = dir.join("vector-add-ours");
    write_file(
        &ours_client.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"vector-add-ours\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ncuda-driver-pfn = {{ path = {:?}, features = [\"api\"] }}\n\n[workspace]\n",
            pfn.display().to_string()
        ),
    )?;
    let example = std::fs::read_to_string(env.root.join("generated/examples/vector_add_drv.rs"))
        .context("reading generated/examples/vector_add_drv.rs")?;
    write_file(&ours_client.join("src").join("main.rs"), &example)?;
    let cudarc_client = dir.join("vector-add-cudarc");
    write_file(
        &cudarc_client.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"vector-add-cudarc\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ncudarc = {{ version = \"{CUDARC}\", default-features = false, features = [\"std\", \"driver\", \"nvrtc\", \"dynamic-loading\", \"{CUDARC_CUDA}\"] }}\n\n\
             [workspace]\n"
        ),
    )?;
    write_file(&cudarc_client.join("src").join("main.rs"), include_str!("scratch/vector_add_cudarc.rs"))?;
    write_file(&cudarc_client.join("src").join("vector_add.ptx"), include_str!("scratch/vector_add.ptx"))?;
    for d in [&pfn, &cudarc, &ours_client, &cudarc_client] {
        lock_and_fetch(env, d)?;
    }
    Ok(Crates { pfn, cudarc, ours_client, cudarc_client })
}

fn build(env: &Env, dir: &Path, crate_dir: &Path, v: Variant, release: bool) -> Result<Build> {
    let features: &[&str] = if v == Variant::OursAll { &["--all-features"] } else { &[] };
    build_with(env, dir, crate_dir, &format!("{v:?}"), v.own_crate(), features, release)
}

/// A clean build of `crate_dir` with `features` (cargo's arguments), its rustc runs logged.
fn build_with(
    env: &Env,
    dir: &Path,
    crate_dir: &Path,
    label: &str,
    own_crate: &str,
    features: &[&str],
    release: bool,
) -> Result<Build> {
    let target = dir.join(format!("target-{label}-{}", profile(release)).to_lowercase());
    let _ = std::fs::remove_dir_all(&target);
    let log = dir.join("rustc.log");
    let _ = std::fs::remove_file(&log);
    let mut c = env.cargo(crate_dir);
    c.args(["build", "--offline", "--locked", "--quiet", "--target-dir"]).arg(&target);
    if release {
        c.arg("--release");
    }
    c.args(features);
    // As a user's build compiles a dependency from a registry: without incremental
    // compilation. Cargo turns it on in debug builds for the root package (which our copy
    // is) and never for registry crates (which cudarc is); with it, rustc also writes its
    // incremental cache, 1.4 s of a 5.4 s clean debug build of ours here.
    c.env("CARGO_INCREMENTAL", "0");
    c.env("RUSTC_WRAPPER", &env.exe).env(rusage::LOG_VAR, &log);
    let secs = run_quiet(&mut c, &format!("cargo build ({label}, {})", profile(release)))?.as_secs_f64();
    let rustcs = rusage::read_log(&log)?;
    let name = own_crate;
    let own = rustcs
        .iter()
        .filter(|r| r.krate == name)
        .max_by_key(|r| r.peak_kib)
        .cloned()
        .with_context(|| format!("no rustc of {name} in {}", log.display()))?;
    let own_secs = rustcs.iter().filter(|r| is_own(own_crate, &r.krate)).map(|r| r.secs).sum();
    let own_cpu = rustcs.iter().filter(|r| is_own(own_crate, &r.krate)).map(|r| r.cpu).sum();
    let total_cpu = rustcs.iter().map(|r| r.cpu).sum();
    let peak_kib = rustcs.iter().map(|r| r.peak_kib).max().unwrap_or(0);
    let _ = std::fs::remove_dir_all(&target);
    Ok(Build { secs, own_secs, own_cpu, total_cpu, own, peak_kib, rustcs })
}

/// Whether rustc's crate `krate` is part of `own` (our crate is two packages).
fn is_own(own: &str, krate: &str) -> bool {
    krate == own || (own == "cuda_driver_pfn" && krate == "cuda_driver_pfn_types")
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    for rel in codegen::write::list_tree(from).with_context(|| format!("listing {}", from.display()))? {
        let dest = to.join(&rel);
        if let Some(d) = dest.parent() {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        std::fs::copy(from.join(&rel), &dest).with_context(|| format!("copying {rel}"))?;
    }
    Ok(())
}

/// A package's version in a Cargo.lock.
pub fn locked_version(lock: &Path, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(lock).ok()?;
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if l == format!("name = \"{name}\"") {
            return lines.next()?.strip_prefix("version = \"")?.strip_suffix('"').map(str::to_owned);
        }
    }
    None
}

/// `--only features`: a clean debug build of the crate with each of its features alone
/// (`--no-default-features --features F`), and with none, against its default build, taking
/// turns run after run: what each feature adds to a user's build, so that a change that makes
/// one dearer shows it.
pub fn features(env: &Env, runs: usize) -> Result<(Vec<Row>, Vec<String>)> {
    let dir = env.dir.join("features");
    let pfn = copy_crate(env, &dir)?;
    lock_and_fetch(env, &pfn)?;
    let names = features_of(&pfn.join("Cargo.toml"))?;
    // The default build first in each run's rotation, then "none", then each feature alone.
    let mut builds: Vec<(String, Vec<String>)> =
        vec![("default".into(), vec![]), ("none".into(), vec!["--no-default-features".into()])];
    for f in &names {
        builds.push((f.clone(), vec!["--no-default-features".into(), "--features".into(), f.clone()]));
    }
    let mut secs: Vec<Vec<f64>> = vec![Vec::new(); builds.len()];
    let mut own: Vec<Vec<f64>> = vec![Vec::new(); builds.len()];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); builds.len()];
    for i in 0..runs {
        for k in 0..builds.len() {
            let j = (k + i) % builds.len();
            let (label, args) = &builds[j];
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let b = build_with(env, &dir, &pfn, &format!("feature-{label}"), "cuda_driver_pfn", &args, false)?;
            progress!(
                "features run {}/{runs}: {label}: {:.1} s (rustc of the crate {:.2} s, {:.2} s CPU)",
                i + 1,
                b.secs,
                b.own_secs,
                b.own_cpu
            );
            secs[j].push(b.secs);
            own[j].push(b.own_secs);
            cpu[j].push(b.own_cpu);
        }
    }
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for (j, (label, _)) in builds.iter().enumerate().skip(1) {
        let what = if label == "none" { "no feature".to_owned() } else { format!("feature `{label}` alone") };
        rows.push(
            Paired {
                metric: format!("clean build, debug, {what} (s)"),
                baseline_name: "default features",
                unit: "s",
                digits: 2,
                ours: secs[j].clone(),
                base: secs[0].clone(),
                target: Target::None,
            }
            .row(),
        );
        // The CPU time of the crate's own rustc runs: on a shared machine the steadier figure.
        rows.push(
            Paired {
                metric: format!("rustc CPU time of the crate (types + crate), debug, {what} (s)"),
                baseline_name: "default features",
                unit: "s",
                digits: 2,
                ours: cpu[j].clone(),
                base: cpu[0].clone(),
                target: Target::None,
            }
            .row(),
        );
        notes.push(format!(
            "features, {what}: rustc wall time of the crate (types + crate, added up) {:.2} s (median), default features {:.2} s",
            super::median(&own[j]),
            super::median(&own[0])
        ));
    }
    notes.push(
        "features: each build is `cargo build --offline` of a copy of generated/ from an empty target folder, \
         debug, without incremental compilation; \"alone\" is `--no-default-features --features F`"
            .into(),
    );
    Ok((rows, notes))
}

/// The features a Cargo.toml declares, `default` left out, in its order.
fn features_of(toml: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(toml).with_context(|| format!("reading {}", toml.display()))?;
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[features]";
        } else if inside {
            if let Some((name, _)) = line.split_once('=') {
                let name = name.trim();
                if !name.starts_with('#') && name != "default" {
                    out.push(name.to_owned());
                }
            }
        }
    }
    if out.is_empty() {
        anyhow::bail!("{}: no [features] found", toml.display());
    }
    Ok(out)
}
