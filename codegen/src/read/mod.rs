//! The read stage: one toolkit's headers in, one typed value out ([`ToolkitRead`]): its
//! declarations and the rest of its model input, the types its translation units define, and
//! cuda.h's documentation of the result codes as data. Everything that reads C or bindgen's
//! output lives here: libclang and bindgen ([`clang`]), the unit cache ([`unit_cache`]),
//! bindgen's Rust output read with syn ([`bindgen_output`]), what only the header text has
//! ([`header_text`]), the typedef -> declaration step ([`declarations`]) and the C-name
//! programs ([`c_names`]).
//!
//! Architecture Invariant: the stage imports the model (its vocabulary), never the reverse;
//! nothing here emits or writes.

pub mod bindgen_output;
pub mod c_names;
pub mod clang;
pub mod declarations;
pub mod doc_comments;
pub mod header_text;
pub mod unit_cache;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use self::clang::{BindgenOutput, SourceLine};
use self::declarations::Gathered;
use crate::error::{Error, Warning};
use crate::fetch::{self, ToolkitHeaders};
use crate::manifest::HeaderSpec;
use crate::model::{CrateTypes, ToolkitInput};
use crate::platform::Platform;

/// One toolkit, read.
#[derive(Debug)]
pub struct ToolkitRead {
    /// What it gives the model.
    pub input: ToolkitInput,
    /// Per translation unit read (Linux, then Windows where it has Windows headers): the
    /// types it defines.
    pub units: Vec<UnitTypes>,
    /// cuda.h's comment on each `CUresult` code.
    pub result_docs: BTreeMap<String, String>,
    /// The headers' comments on their types, fields, enumerators and functions.
    pub docs: crate::model::CDocs,
    /// NVIDIA header problems worth a look (broken aliases, unversioned typedefs).
    pub warnings: Vec<Warning>,
}

/// A translation unit's types (bindgen's output less the `PFN_` typedefs), with where each
/// was declared.
#[derive(Debug)]
pub struct UnitTypes {
    pub target: Platform,
    pub types: syn::File,
    pub locations: BTreeMap<String, SourceLine>,
}

/// What clang (or [`unit_cache`]) gave for one toolkit: bindgen's output per target.
struct Units {
    outputs: Vec<(Platform, BindgenOutput)>,
    /// The C-name runs, Linux unit first: (per-thread mode, output).
    c_names: Vec<(bool, BindgenOutput)>,
    warnings: Vec<Warning>,
    /// Whether clang ran (not every unit came from the cache).
    ran_clang: bool,
}

/// Reads every toolkit: bindgen (or its cached output) a few at a time on worker threads, and
/// the parser over each toolkit's output on this thread as it arrives (syn's trees are not
/// `Send`), handing each [`ToolkitRead`] to `each` as it is done, so that the caller keeps
/// only what it needs. On failure, the error of the first toolkit (in `toolkits`' order)
/// that failed.
pub fn read_toolkits(
    headers: &[HeaderSpec],
    toolkits: &[ToolkitHeaders],
    cache: &Path,
    progress: Option<&fetch::Progress>,
    mut each: impl FnMut(ToolkitRead),
) -> Result<(), Error> {
    let standins = crate::standins::standins_in(cache)?;
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut failed: BTreeMap<usize, Error> = BTreeMap::new();
    let mut done = vec![false; toolkits.len()];
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..workers.min(toolkits.len()) {
            let tx = tx.clone();
            let (next, standins) = (&next, standins.path());
            s.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(tk) = toolkits.get(i) else { break };
                let start = std::time::Instant::now();
                let units = run_units(headers, tk, standins, cache);
                if tx.send((i, units, start.elapsed())).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (n, (i, units, took)) in rx.into_iter().enumerate() {
            let tk = &toolkits[i];
            done[i] = true;
            if let (Some(progress), Ok(Units { ran_clang: true, .. })) = (progress, &units) {
                progress.say(&format!(
                    "clang [{}/{}] read CUDA {} in {:.1} s",
                    n + 1,
                    toolkits.len(),
                    tk.version,
                    took.as_secs_f64()
                ));
            }
            match units.and_then(|u| read_toolkit(headers, tk, u)) {
                Ok(read) => each(read),
                Err(e) => {
                    failed.insert(i, e);
                }
            }
        }
    });
    if let Some(i) = done.iter().position(|d| !d) {
        failed
            .entry(i)
            .or_insert(Error::Bindgen { toolkit: toolkits[i].version, message: "worker thread died".into() });
    }
    match failed.into_values().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The crate's types: the newest Linux unit's, and the newest Windows unit's own per module
/// (the CUDA types it shares with the Linux unit are the Linux unit's).
pub fn crate_types(
    headers: &[HeaderSpec],
    linux: UnitTypes,
    windows: Option<UnitTypes>,
    result_docs: BTreeMap<String, String>,
    docs: crate::model::CDocs,
) -> CrateTypes {
    let windows = match windows {
        Some(w) => split_by_module(headers, w.types, &w.locations, &linux.types),
        None => BTreeMap::new(),
    };
    CrateTypes { linux: linux.types, windows, result_docs, docs }
}

/// Both translation units of one toolkit through bindgen (or the unit cache).
fn run_units(headers: &[HeaderSpec], tk: &ToolkitHeaders, standins: &Path, cache: &Path) -> Result<Units, Error> {
    let mut units = Units { outputs: Vec::new(), c_names: Vec::new(), warnings: Vec::new(), ran_clang: false };
    let first_api = headers.first().map_or("cuda.h", |h| h.api.as_str());
    for target in Platform::ALL {
        let rows: Vec<&HeaderSpec> = headers.iter().filter(|h| h.target == target).collect();
        if rows.is_empty() {
            continue;
        }
        let dirs = tk.include_dirs_for(target);
        if dirs.is_empty() {
            let names: Vec<&str> = rows.iter().map(|h| h.typedefs.as_str()).collect();
            units.warnings.push(Warning::of(
                tk.version,
                format!("no Windows headers for this toolkit; not read: {}", names.join(", ")),
            ));
            continue;
        }
        let unit = clang::Unit { toolkit: tk.version, target, first_api, headers: rows, include_dirs: dirs };
        let (out, source) = unit_cache::run_bindgen(&unit, standins, cache)?;
        units.ran_clang |= source == unit_cache::Source::Bindgen;
        units.outputs.push((target, out));
        let candidates = c_names::c_name_candidates(&unit);
        for per_thread in [false, true] {
            let (out, source) = unit_cache::run_c_names(&unit, per_thread, &candidates, standins, cache)?;
            units.ran_clang |= source == unit_cache::Source::Bindgen;
            units.c_names.push((per_thread, out));
        }
    }
    Ok(units)
}

/// One toolkit's units, read and merged into its model input.
fn read_toolkit(headers: &[HeaderSpec], tk: &ToolkitHeaders, units: Units) -> Result<ToolkitRead, Error> {
    let mut acc = Gathered { warnings: units.warnings, ..Gathered::default() };
    let mut types = Vec::new();
    for (target, out) in units.outputs {
        let rows: Vec<&HeaderSpec> = headers.iter().filter(|h| h.target == target).collect();
        let types_of_unit = acc.add_unit(tk.version, &rows, tk.include_dirs_for(target), &out)?;
        types.push(UnitTypes { target, types: types_of_unit, locations: out.locations });
    }
    let mut c_names: BTreeMap<String, crate::model::CNameExports> = BTreeMap::new();
    let mut unnamed = std::collections::BTreeSet::new();
    for (per_thread, out) in &units.c_names {
        let read = bindgen_output::parse_c_names(&out.rust)
            .map_err(|message| Error::BindgenOutput { toolkit: tk.version, message })?;
        for (c, exported) in read.names {
            let slot = c_names.entry(c).or_default();
            let mode = if *per_thread { &mut slot.per_thread } else { &mut slot.default };
            mode.get_or_insert(exported);
        }
        unnamed.extend(read.unnamed.into_iter().map(|n| (*per_thread, n)));
    }
    for (per_thread, name) in unnamed {
        acc.warnings.push(Warning::of(
            tk.version,
            format!(
                "{name} is declared{} but no C name expands to it (C reaches it another way, such as cuda.h's inline \
                 cuGetProcAddress_v2_ptsz wrapper): it has no C-name function in that mode",
                if per_thread { " with CUDA_API_PER_THREAD_DEFAULT_STREAM" } else { "" }
            ),
        ));
    }
    let input = ToolkitInput {
        version: tk.version,
        source: tk.source.clone(),
        declarations: acc.declarations,
        aliases: acc.aliases,
        counts: acc.counts,
        c_names,
    };
    Ok(ToolkitRead {
        input,
        units: types,
        result_docs: result_docs(headers, tk),
        docs: acc.docs,
        warnings: acc.warnings,
    })
}

/// [`header_text::result_code_docs`] of a toolkit's first API header (cuda.h); empty where
/// it cannot be read (bindgen, reading the same file, said what failed).
fn result_docs(headers: &[HeaderSpec], tk: &ToolkitHeaders) -> BTreeMap<String, String> {
    let first_api = headers.first().map_or("cuda.h", |h| h.api.as_str());
    let text = tk
        .include_dirs_for(Platform::Linux)
        .iter()
        .map(|d| d.join(first_api))
        .find_map(|p| crate::input::read_bytes(&p, "cuda.h").ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    header_text::result_code_docs(&text)
}

/// The Windows unit's own types (D3D opaque interfaces, `HGPUNV`, the D3D enums), assigned
/// to the module of the header or stand-in that declares them. Types the Linux unit already
/// has (the CUDA ones, cudaGL.h's) are dropped.
fn split_by_module(
    headers: &[HeaderSpec],
    types: syn::File,
    locations: &BTreeMap<String, SourceLine>,
    linux: &syn::File,
) -> BTreeMap<String, Vec<syn::Item>> {
    let known: BTreeSet<String> = linux.items.iter().filter_map(crate::syntax::item_name).collect();
    let rows: Vec<&HeaderSpec> = headers.iter().filter(|h| h.target == Platform::Windows).collect();
    // Every module whose header or stand-in declares the item: a shared stand-in (dxgi.h)
    // gives each module its own copy of the opaque type.
    let modules_of = |name: &str| -> Vec<String> {
        let Some(loc) = locations.get(name) else { return vec![] };
        let file = loc.file.to_string_lossy().replace('\\', "/");
        rows.iter()
            .filter(|h| {
                [&h.api, &h.typedefs].iter().any(|f| file.ends_with(&format!("/{f}")))
                    || h.standins.iter().any(|s| file.ends_with(&format!("/{s}")))
            })
            .map(|h| h.name.clone())
            .collect()
    };
    let mut out: BTreeMap<String, Vec<syn::Item>> = BTreeMap::new();
    let mut last: Vec<String> = vec![];
    for item in types.items {
        let name = crate::syntax::item_name(&item);
        let modules = match &name {
            Some(n) if known.contains(n.trim_start_matches("impl ")) => {
                last.clear();
                continue;
            }
            // Layout tests (`const _`) follow the type they test, impls their type.
            None => last.clone(),
            Some(n) => {
                let m = modules_of(n.trim_start_matches("impl "));
                if m.is_empty() {
                    last.clone()
                } else {
                    m
                }
            }
        };
        last = modules.clone();
        for m in modules {
            out.entry(m).or_default().push(item.clone());
        }
    }
    // Two stand-ins of one module may both declare a type (`UINT`): it keeps one.
    for items in out.values_mut() {
        let mut seen = BTreeSet::new();
        items.retain(|i| crate::syntax::item_name(i).is_none_or(|n| seen.insert(n)));
    }
    out
}
