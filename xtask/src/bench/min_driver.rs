//! `min-driver` over every `.rs` file of the generated crate itself (its sources and
//! examples: 7 MB of Rust), against syn's bare parse of the same files, in one process,
//! alternately, run after run. The baseline is the least any syntax-based reader must do;
//! min-driver lexes every token and looks each name up, and reads its registry.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};

use super::{Env, Paired, Row, Target};
use crate::progress;

pub fn run(env: &Env, runs: usize) -> Result<(Vec<Row>, Vec<String>)> {
    let crate_dir = env.root.join("generated");
    let registry = crate_dir.join("registry.json");
    let mut files = Vec::new();
    collect(&crate_dir, &mut files)?;
    files.sort();
    let bytes: u64 = files.iter().map(|f| std::fs::metadata(f).map_or(0, |m| m.len())).sum();
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let t = Instant::now();
        let floor = cuda_sys_gen::min_driver::floor(&registry, std::slice::from_ref(&crate_dir))
            .context("min-driver over the generated crate")?;
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        for f in &files {
            let text = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
            let file = syn::parse_file(&text).with_context(|| format!("syn cannot parse {}", f.display()))?;
            std::hint::black_box(&file);
        }
        base.push(t.elapsed().as_secs_f64() * 1000.0);
        progress!(
            "min-driver run {}/{runs}: {:.0} ms, syn {:.0} ms ({} entries)",
            i + 1,
            ours[i],
            base[i],
            floor.uses.len()
        );
    }
    let metric = format!("min-driver over the generated crate ({} files, {:.1} MB)", files.len(), bytes as f64 / 1e6);
    let row = Paired {
        metric,
        baseline_name: "syn::parse_file of the same files",
        unit: "ms",
        digits: 0,
        ours,
        base,
        target: Target::None,
    }
    .row();
    let mut rows = vec![row];
    let mut notes = Vec::new();
    match large_release_binary() {
        Some(program) => rows.push(over_binary(&registry, &program, runs)?),
        None => notes.push("no release binary of 50 MB or more found (rustc's librustc_driver): min-driver over a compiled program not measured".to_owned()),
    }
    Ok((rows, notes))
}

/// A release binary of 50 MB or more that is on every machine that builds this: rustc's own
/// `librustc_driver-*.so` (or `.dll`), in the sysroot's `lib` (`bin` on Windows).
fn large_release_binary() -> Option<PathBuf> {
    let out = std::process::Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    ["lib", "bin"]
        .iter()
        .filter_map(|d| std::fs::read_dir(sysroot.join(d)).ok())
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            name.starts_with("librustc_driver") && std::fs::metadata(p).is_ok_and(|m| m.len() >= 50_000_000)
        })
}

/// min-driver over a compiled program against the object crate's bare parse of it (both read
/// the file), alternately.
fn over_binary(registry: &std::path::Path, program: &std::path::Path, runs: usize) -> Result<Row> {
    let size = std::fs::metadata(program)?.len();
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let t = Instant::now();
        let floor = cuda_sys_gen::min_driver::floor_of_programs(registry, &[program.to_owned()])?;
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let data = std::fs::read(program)?;
        std::hint::black_box(cuda_sys_gen::min_driver::object_bare_parse(&data)?);
        base.push(t.elapsed().as_secs_f64() * 1000.0);
        progress!(
            "min-driver over a binary, run {}/{runs}: {:.0} ms, object {:.0} ms ({} entries)",
            i + 1,
            ours[i],
            base[i],
            floor.uses.len()
        );
    }
    Ok(Paired {
        metric: format!(
            "min-driver over a compiled program ({}, {:.0} MB)",
            program.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            size as f64 / 1e6
        ),
        baseline_name: "object's bare parse of the same file",
        unit: "ms",
        digits: 0,
        ours,
        base,
        target: Target::None,
    }
    .row())
}

fn collect(dir: &std::path::Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let p = e?.path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if p.is_dir() {
            collect(&p, out)?;
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
    Ok(())
}
