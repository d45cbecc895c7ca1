//! `cargo xtask bench-phases`: where the time of one `generate` goes, phase by phase, on one
//! thread (so that each phase's time is its own CPU time, not a share of two cores).
//!
//! The same calls as `codegen::pipeline`, taken apart: locate the cached headers, bindgen per
//! translation unit (libclang's parse plus bindgen's IR and code generation), reading its
//! output with syn, then the whole model build, emission and writing into a scratch folder.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use codegen::emit::{self, EmitOptions};
use codegen::fetch::Fetcher;
use codegen::manifest::Manifest;
use codegen::pipeline;
use codegen::platform::Platform;
use codegen::read::clang::{self, Unit};
use codegen::write::{self, Mode};

/// Phase name to total time, in the order they ran.
pub type Phases = Vec<(String, Duration)>;

pub fn phases(root: &Path) -> Result<Phases> {
    let manifest_path = root.join("headers-manifest.toml");
    let cache = root.join("target").join("cuda-headers");
    let mut out = Phases::new();
    let t = Instant::now();
    let manifest = Manifest::load(&manifest_path).context("loading the manifest")?;
    let mut fetcher = Fetcher::new(cache, &manifest);
    fetcher.offline = true;
    let toolkits: Vec<_> = manifest
        .toolkits
        .iter()
        .map(|p| fetcher.toolkit(p))
        .collect::<Result<_, _>>()
        .context("locating the cached headers")?;
    clang::ensure_libclang(&manifest, &fetcher).context("loading libclang")?;
    out.push(("manifest, cached headers, libclang".into(), t.elapsed()));

    let standins = codegen::standins::standins_in(&fetcher.cache).context("writing the stand-ins")?;
    let first_api = manifest.headers.first().map_or("cuda.h", |h| h.api.as_str());
    let (mut bindgen, mut syn_parse, mut syn_only) = (BTreeMap::new(), Duration::ZERO, Duration::ZERO);
    for tk in &toolkits {
        for target in [Platform::Linux, Platform::Windows] {
            let rows: Vec<_> = manifest.headers.iter().filter(|h| h.target == target).collect();
            let dirs = tk.include_dirs_for(target);
            if rows.is_empty() || dirs.is_empty() {
                continue;
            }
            let unit = Unit { toolkit: tk.version, target, first_api, headers: rows, include_dirs: dirs };
            let t = Instant::now();
            let b = clang::run_bindgen(&unit, standins.path())
                .with_context(|| format!("bindgen over CUDA {}", tk.version))?;
            *bindgen.entry(target).or_insert(Duration::ZERO) += t.elapsed();
            let t = Instant::now();
            let _: syn::File = syn::parse_str(&b.rust).context("bindgen's output")?;
            syn_only += t.elapsed();
            let t = Instant::now();
            codegen::read::bindgen_output::parse_bindgen(&b.rust, &b.locations).map_err(anyhow::Error::msg)?;
            syn_parse += t.elapsed();
        }
    }
    for (target, d) in bindgen {
        out.push((format!("bindgen, {target} units ({} toolkits, sequential)", toolkits.len()), d));
    }
    out.push((
        "parse bindgen's output (read::bindgen_output::parse_bindgen, every unit, sequential)".into(),
        syn_parse,
    ));
    out.push(("  of which syn::parse_str alone (measured apart)".into(), syn_only));

    // The unit cache (keyed by this executable too) would make this row a read of the
    // output of an earlier `generate`: emptied, as the regeneration bench does.
    let _ = std::fs::remove_dir_all(fetcher.cache.join(codegen::read::unit_cache::DIR));
    let t = Instant::now();
    let built = pipeline::build_model(&manifest, &fetcher, &toolkits).context("building the model")?;
    out.push((
        "build_model: bindgen (parallel) + parse (as it arrives) + merge, as generate runs it".into(),
        t.elapsed(),
    ));
    let t = Instant::now();
    let types = built.types.context("no toolkits")?;
    let modules: Vec<emit::ModuleSpec> =
        manifest.headers.iter().map(codegen::manifest::HeaderSpec::module_spec).collect();
    let opts = EmitOptions::new("cuda-driver-pfn", "cargo xtask generate");
    let input = emit::Input { model: &built.model, types, modules: &modules, opts: &opts };
    let files = emit::emit(input).context("emitting")?;
    out.push(("emit (quote, prettyplease)".into(), t.elapsed()));
    let scratch = tempfile::tempdir().context("creating a temporary folder")?;
    let t = Instant::now();
    write::sync_tree(
        &scratch.path().join("out"),
        &files,
        Mode::Write,
        "cargo xtask generate",
        &Default::default(),
        &|_, _| true,
    )
    .context("writing")?;
    out.push(("write (into an empty scratch folder)".into(), t.elapsed()));
    Ok(out)
}

pub fn print(phases: &Phases) {
    println!("| phase | seconds |\n| --- | ---: |");
    for (name, d) in phases {
        println!("| {name} | {:.2} |", d.as_secs_f64());
    }
}
