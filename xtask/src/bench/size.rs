//! Binary size: a release binary that resolves one entry against one that depends on the crate
//! and resolves none, unstripped (cargo's release default) and stripped.

use anyhow::{Context, Result};

use super::{run_quiet, write_file, Env, Paired, Row, Target};
use crate::progress;

pub fn run(env: &Env) -> Result<(Vec<Row>, Vec<String>)> {
    let krate = env.dir.join("size");
    let generated = env.root.join("generated");
    write_file(
        &krate.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"size-bench\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ncuda-driver-pfn = {{ path = {:?} }}\n\n\
             [profile.release-stripped]\ninherits = \"release\"\nstrip = true\n\n[workspace]\n",
            generated.display().to_string()
        ),
    )?;
    write_file(&krate.join("src").join("bin").join("none.rs"), include_str!("scratch/size_none.rs"))?;
    write_file(&krate.join("src").join("bin").join("one.rs"), include_str!("scratch/size_one.rs"))?;
    let mut rows = Vec::new();
    for (profile, label) in
        [("release", "release, symbols kept (cargo's default)"), ("release-stripped", "release, strip = true")]
    {
        progress!("size: building ({profile})");
        run_quiet(
            env.cargo(&krate).args(["build", "--quiet", "--offline", "--profile", profile]),
            "cargo build size-bench",
        )?;
        let size = |bin: &str| -> Result<f64> {
            let p = krate.join("target").join(profile).join(bin);
            Ok(std::fs::metadata(&p).with_context(|| format!("reading {}", p.display()))?.len() as f64 / 1000.0)
        };
        rows.push(
            Paired {
                metric: format!("binary size, resolves one entry, {label} (KB)"),
                baseline_name: "resolves none",
                unit: "KB",
                digits: 1,
                ours: vec![size("one")?],
                base: vec![size("none")?],
                target: Target::More(50.0, "KB"),
            }
            .row(),
        );
    }
    let notes = vec!["size: two binaries of one scratch crate depending on cuda-driver-pfn (default features); builds are deterministic, so one run".into()];
    Ok((rows, notes))
}
