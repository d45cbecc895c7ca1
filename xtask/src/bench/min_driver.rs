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
    Ok((vec![row], vec![]))
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
