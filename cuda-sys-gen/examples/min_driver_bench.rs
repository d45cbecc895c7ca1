//! `min-driver` over a compiled program against the `object` crate's bare parse of the same
//! file, alternately, in one process: medians and their ratio.
//!
//! `cargo run --release -p cuda-sys-gen --example min_driver_bench -- PROGRAM [--registry
//! registry.json] [--runs N]`. The baseline reads the file, parses it, and walks its sections
//! (taking each one's bytes) and symbols: the least any reader of the program must do.

use std::path::PathBuf;
use std::time::Instant;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut program = None;
    let mut registry = PathBuf::from("generated/registry.json");
    let mut runs = 5usize;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--registry" => registry = args.next().map(PathBuf::from).unwrap_or(registry),
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs).max(1),
            _ => program = Some(PathBuf::from(a)),
        }
    }
    let program =
        program.ok_or_else(|| anyhow::anyhow!("usage: min_driver_bench PROGRAM [--registry R] [--runs N]"))?;
    let size = std::fs::metadata(&program)?.len();
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let floor = cuda_sys_gen::min_driver::floor_of_programs(&registry, std::slice::from_ref(&program))?;
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        last = Some(floor);
        let t = Instant::now();
        let data = std::fs::read(&program)?;
        std::hint::black_box(cuda_sys_gen::min_driver::object_bare_parse(&data)?);
        base.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let floor = last.expect("at least one run");
    // Each run's pair, in order (the spread of the ratio is theirs).
    let pairs: Vec<String> = ours.iter().zip(&base).map(|(o, b)| format!("{o:.0}/{b:.0}")).collect();
    let ratios: Vec<f64> = ours.iter().zip(&base).map(|(o, b)| o / b.max(1e-9)).collect();
    let (lo, hi) = ratios.iter().fold((f64::MAX, 0f64), |(l, h), &r| (l.min(r), h.max(r)));
    let (o, b) = (median(&mut ours), median(&mut base));
    println!(
        "min-driver over {} ({:.1} MB): median {o:.1} ms; object's bare parse {b:.1} ms; ratio {:.2}x ({runs} runs; floor {} from {} entries, {} kernel needs, {} unread)",
        program.display(),
        size as f64 / 1e6,
        o / b.max(1e-9),
        floor.version(),
        floor.uses.len(),
        floor.kernels.len(),
        floor.unresolved.len()
    );
    println!("runs (min-driver/bare parse, ms): {}; ratio {lo:.2}-{hi:.2}x", pairs.join(", "));
    Ok(())
}
