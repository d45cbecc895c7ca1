//! Regeneration: a full generate over every pinned toolkit and header (headers cached), against
//! the bindgen command-line tool of the same pinned version run over the same headers one by
//! one, and clang's own parse of our translation units as the floor.
//!
//! Ours runs as this executable's `bench-generate` (the pipeline with `Mode::Write` into a
//! scratch folder, so generated/ is never touched), in the profile `cargo xtask` builds.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use codegen::fetch::{Fetcher, ToolkitHeaders};
use codegen::manifest::{HeaderSpec, Manifest};
use codegen::platform::Platform;
use codegen::read::clang;

use super::{run_quiet, Env, Paired, Row, Target};
use crate::progress;

/// The bindgen the generator links (the workspace's `=0.73.2` pin), as its command-line tool.
pub const BINDGEN_VERSION: &str = "0.73.2";

/// One command of a baseline or floor run.
struct Job {
    what: String,
    program: PathBuf,
    args: Vec<OsString>,
}

pub fn run(env: &Env, runs: usize) -> Result<(Vec<Row>, Vec<String>)> {
    let manifest = Manifest::load(&env.root.join("headers-manifest.toml")).context("loading the manifest")?;
    let mut fetcher = Fetcher::new(env.root.join("target").join("cuda-headers"), &manifest);
    fetcher.offline = true;
    let toolkits: Vec<ToolkitHeaders> = manifest
        .toolkits
        .iter()
        .map(|p| fetcher.toolkit(p))
        .collect::<Result<_, _>>()
        .context("the pinned headers are not all cached: run `cargo xtask generate` once first")?;
    let bindgen = bindgen_cli(env)?;
    let scratch = env.dir.join("regen");
    let _ = std::fs::remove_dir_all(&scratch);
    let standins = scratch.join("standins");
    codegen::standins::write_standins(&standins).context("writing the stand-in headers")?;
    let out_rs = scratch.join("bindgen-cli-out.rs");
    let cli = cli_jobs(&manifest, &toolkits, &bindgen, &standins, &out_rs);
    let units = floor_jobs(&manifest, &toolkits, &standins, &scratch)?;
    let jobs = workers(toolkits.len());
    progress!(
        "regen: {} toolkits; baseline: {} bindgen CLI runs, one header each; floor: clang -fsyntax-only over our {} units, {jobs} at a time",
        toolkits.len(),
        cli.len(),
        units.len()
    );

    let unit_cache = fetcher.cache.join(codegen::read::unit_cache::DIR);
    let (mut cold, mut warm, mut base, mut floor) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..runs {
        // Alternate which side goes first, so that a slow spell of the machine is shared.
        let order: [&str; 3] = if i % 2 == 0 { ["ours", "base", "floor"] } else { ["base", "floor", "ours"] };
        for side in order {
            match side {
                "ours" => {
                    // Cold: no bindgen output to reuse (a first run, or every header changed);
                    // then warm: the same again, every unit's output reused.
                    let _ = std::fs::remove_dir_all(&unit_cache);
                    cold.push(generate(env, &scratch.join(format!("cold-{i}")), i == 0)?);
                    warm.push(generate(env, &scratch.join(format!("warm-{i}")), i == 0)?);
                }
                "base" => base.push(run_all(&cli, 1)?.as_secs_f64()),
                _ => floor.push(run_all(&units, jobs)?.as_secs_f64()),
            }
        }
        progress!(
            "regen run {}/{runs}: ours {:.1} s cold, {:.1} s warm; bindgen CLI {:.1} s; clang floor {:.1} s",
            i + 1,
            cold[i],
            warm[i],
            base[i],
            floor[i]
        );
    }
    let n = toolkits.len();
    let cli_name = "bindgen CLI, one header at a time";
    let rows = vec![
        Paired {
            metric: format!("regenerate, {n} toolkits, every header, cold: every unit through bindgen (s)"),
            baseline_name: cli_name,
            unit: "s",
            digits: 1,
            ours: cold.clone(),
            base: base.clone(),
            target: Target::Ratio(0.3),
        }
        .row(),
        Paired {
            metric: format!(
                "regenerate, {n} toolkits, every header, warm: headers unchanged, bindgen output reused (s)"
            ),
            baseline_name: cli_name,
            unit: "s",
            digits: 1,
            ours: warm,
            base,
            target: Target::Ratio(0.3),
        }
        .row(),
        Paired {
            metric: "regenerate, cold, against clang's parse alone (s)".into(),
            baseline_name: "clang -fsyntax-only, same units",
            unit: "s",
            digits: 1,
            ours: cold,
            base: floor,
            target: Target::None,
        }
        .row(),
    ];
    let notes = vec![format!(
        "regenerate: ours is `cargo xtask generate`'s pipeline as `cargo xtask` builds it (dev profile), {jobs} worker threads, into a scratch folder, \
         cold (the unit cache target/cuda-headers/{} emptied first) and then warm; \
         the baseline runs bindgen {BINDGEN_VERSION}'s CLI {} times (one typedef header of one toolkit each, sequentially) with the generator's own \
         options and clang arguments (`--formatter none` included); the floor is `clang -fsyntax-only` over the same {} translation units the generator parses, {jobs} at a time",
        codegen::read::unit_cache::DIR,
        cli.len(),
        units.len()
    )];
    Ok((rows, notes))
}

/// One `bench-generate` into `out`; its wall time. The first is compared with generated/.
fn generate(env: &Env, out: &Path, check: bool) -> Result<f64> {
    let mut c = Command::new(&env.exe);
    c.arg("bench-generate").arg("--out").arg(out);
    let secs = run_quiet(&mut c, "bench-generate")?.as_secs_f64();
    if check {
        check_same(out, &env.root.join("generated"))?;
    }
    let _ = std::fs::remove_dir_all(out);
    Ok(secs)
}

/// The generator's worker count for this many toolkits (as `read::read_toolkits` picks it).
fn workers(toolkits: usize) -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8).min(toolkits.max(1))
}

/// `target/bench-tools/bin/bindgen`, installed with `cargo install` when missing.
fn bindgen_cli(env: &Env) -> Result<PathBuf> {
    let tools = env.root.join("target").join("bench-tools");
    let exe = tools.join("bin").join("bindgen");
    let version = |exe: &Path| {
        Command::new(exe).arg("--version").output().ok().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let want = format!("bindgen {BINDGEN_VERSION}");
    if version(&exe).as_deref() != Some(want.as_str()) {
        progress!("installing bindgen-cli {BINDGEN_VERSION} into {}", tools.display());
        let mut c = env.cargo(&env.root);
        c.args(["install", "bindgen-cli", "--version", BINDGEN_VERSION, "--locked", "--root"]).arg(&tools);
        run_quiet(&mut c, "cargo install bindgen-cli")?;
    }
    match version(&exe) {
        Some(v) if v == want => Ok(exe),
        other => bail!("{} is {other:?}, not {want}", exe.display()),
    }
}

/// One bindgen CLI run per typedef header per toolkit: the header itself as input, and before
/// it (`-include`) what the generator's wrapper puts before it: cuda.h, then the row's system
/// and stand-in headers (cudaVDPAU.h and cudaD3D9.h use CUDA types without including cuda.h).
fn cli_jobs(manifest: &Manifest, toolkits: &[ToolkitHeaders], bindgen: &Path, standins: &Path, out: &Path) -> Vec<Job> {
    let first_api = manifest.headers.first().map_or("cuda.h", |h| h.api.as_str());
    let mut jobs = Vec::new();
    for tk in toolkits {
        for h in &manifest.headers {
            let dirs = tk.include_dirs_for(h.target);
            let Some(input) = dirs.iter().map(|d| d.join(&h.typedefs)).find(|p| p.is_file()) else { continue };
            let mut args: Vec<OsString> = vec![input.into_os_string(), "-o".into(), out.into()];
            for a in [
                "--allowlist-file",
                &clang::allowlist(first_api, &[h]),
                "--no-include-path-detection",
                "--ignore-functions",
                "--ignore-methods",
                "--no-doc-comments",
                "--no-derive-debug",
                "--use-core",
                "--ctypes-prefix",
                "::core::ffi",
                "--default-enum-style",
                "newtype",
                "--no-prepend-enum-name",
                "--formatter",
                "none",
                "--rust-target",
                "1.82",
            ] {
                args.push(a.into());
            }
            if h.target == Platform::Windows {
                args.push("--no-recursive-allowlist".into());
            }
            args.push("--".into());
            args.extend(clang::clang_args(h.target, &[h], dirs, standins).into_iter().map(OsString::from));
            for pre in std::iter::once(first_api)
                .chain(h.system.iter().map(String::as_str))
                .chain(h.standins.iter().map(String::as_str))
            {
                args.push("-include".into());
                args.push(pre.into());
            }
            jobs.push(Job {
                what: format!("bindgen CLI over CUDA {} {}", tk.version, h.typedefs),
                program: bindgen.to_owned(),
                args,
            });
        }
    }
    jobs
}

/// `clang -fsyntax-only` over the generator's own translation units: its wrapper source and
/// clang arguments, per toolkit and target.
fn floor_jobs(manifest: &Manifest, toolkits: &[ToolkitHeaders], standins: &Path, scratch: &Path) -> Result<Vec<Job>> {
    let first_api = manifest.headers.first().map_or("cuda.h", |h| h.api.as_str());
    let mut jobs = Vec::new();
    for target in [Platform::Linux, Platform::Windows] {
        let rows: Vec<&HeaderSpec> = manifest.headers.iter().filter(|h| h.target == target).collect();
        if rows.is_empty() {
            continue;
        }
        let wrapper = scratch.join(format!("wrapper-{target}.h"));
        super::write_file(&wrapper, &clang::wrapper_source(first_api, &rows))?;
        for tk in toolkits {
            let dirs = tk.include_dirs_for(target);
            if dirs.is_empty() {
                continue;
            }
            let mut args: Vec<OsString> = vec!["-fsyntax-only".into()];
            args.extend(clang::clang_args(target, &rows, dirs, standins).into_iter().map(OsString::from));
            args.push(wrapper.clone().into_os_string());
            jobs.push(Job {
                what: format!("clang over CUDA {} ({target})", tk.version),
                program: "clang".into(),
                args,
            });
        }
    }
    Ok(jobs)
}

/// Runs every job, `parallel` at a time; returns the wall time of the whole set.
fn run_all(jobs: &[Job], parallel: usize) -> Result<Duration> {
    let t = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..parallel.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let out = Command::new(&job.program).args(&job.args).stdout(Stdio::null()).output();
                let err = match out {
                    Ok(o) if o.status.success() => continue,
                    Ok(o) => format!("{} failed ({}):\n{}", job.what, o.status, String::from_utf8_lossy(&o.stderr)),
                    Err(e) => format!("{}: could not start {}: {e}", job.what, job.program.display()),
                };
                failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(err);
                break;
            });
        }
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        bail!("{e}");
    }
    Ok(t.elapsed())
}

/// Ours must have produced exactly generated/: otherwise it did other work than the real one.
fn check_same(out: &Path, generated: &Path) -> Result<()> {
    let a = codegen::write::list_tree(out).context("listing the scratch output")?;
    let b = codegen::write::list_tree(generated).context("listing generated/")?;
    let differ: Vec<&String> = a
        .iter()
        .chain(&b)
        .filter(|f| std::fs::read(out.join(f)).ok() != std::fs::read(generated.join(f)).ok())
        .collect();
    if !differ.is_empty() {
        bail!("bench-generate's output differs from generated/ in {differ:?}: is generated/ up to date (`cargo xtask generate --check`)?");
    }
    Ok(())
}
