//! The floor of a run (`min-driver --run -- CMD`, `min-driver --trace FILE`): the oldest driver
//! that would have answered what one run asked the driver for the same way, from the stand-in
//! tracer's record of it (`trace.rs`), and a run as an older driver would answer it
//! (`--as-driver`).
//!
//! - A request (symbol, version, flags) answered with ABI A counts as the least driver that
//!   answers it with A, by the registry's answer rule (`answer::driver_answer` of the
//!   generated types crate: the rule the stand-in answers and identifies by, asked here of
//!   every CUDA release, never restated), and not below the driver measured to first have A
//!   (registry.json's `min_driver`). Drivers between that and the run's own that answer it
//!   otherwise (from 13.0, a version above their own is refused) are listed.
//! - A request the driver refused is listed, not counted.
//! - An ABI called that no request of the run was answered with was called by its exported
//!   name (`dlsym`, or linked): the driver that first exports it (the registry's floor).
//! - An image loaded, from memory or from a file, is read from the copy the tracer made of its
//!   bytes, for the GPU it was loaded on. What is not read makes the floor "at least": an image
//!   that could not be copied, functions the registry does not know.
//! - Under `--as-driver`, each point where the run went otherwise than on the real driver (the
//!   version said, an answer, a missing export called, an image the older driver refused:
//!   `crate::load`) is listed.
//!
//! The floor holds for the paths the run took: another input, GPU or code path may ask for
//! more. The report has the static reading's shape ([`crate::Floor`], its checks and exit
//! statuses), its entries read as `request` or `export`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use cuda_driver_pfn_types::answer::{driver_answer, DriverAnswer};
use cuda_driver_pfn_types::registry::{EntryInfo, ENTRIES};
use serde::Serialize;

use crate::registry::Registry;
use crate::releases::{cuda_text, Releases};
use crate::trace::{self, Trace};
use crate::{Check, Floor, MinDriverArgs, Reading, Unresolved, Use};

/// The environment variable that names the observer library (`libcuda_tracer.so`, or the
/// folder that holds it) for `--run`.
pub const OBSERVER_ENV: &str = "CUDA_SYS_GEN_OBSERVER";
/// The observer's file name, as cargo builds it.
pub const OBSERVER_FILE: &str = "libcuda_tracer.so";

/// Driver functions that load an image (a module, library, linker input): what they load
/// needs a kernel reading the trace cannot give.
const IMAGE_LOADERS: &[&str] = &[
    "cuModuleLoad",
    "cuModuleLoadData",
    "cuModuleLoadDataEx",
    "cuModuleLoadFatBinary",
    "cuLibraryLoadData",
    "cuLibraryLoadFromFile",
    "cuLinkAddData",
    "cuLinkAddFile",
];

/// Where the run went otherwise than the real driver would have taken it (`--as-driver`).
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    /// The trace's line.
    pub line: usize,
    /// What was asked or called.
    pub what: String,
    /// What the older driver answered.
    pub as_driver: String,
    /// What the real driver answered.
    pub real: String,
}

/// A request of the run the driver refused: listed, not counted.
#[derive(Debug, Clone, Serialize)]
pub struct Refused {
    pub line: usize,
    pub request: String,
    pub answer: String,
}

/// A request whose ABI some driver between its floor and the run's own does not answer with.
#[derive(Debug, Clone, Serialize)]
pub struct Gap {
    pub request: String,
    pub abi: String,
    /// The drivers (CUDA versions) that answer it otherwise.
    pub drivers: Vec<u32>,
}

/// What a run (or its trace) says, beside its [`Floor`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunReading {
    /// The real driver the observer forwarded to, and its version.
    pub real_driver: Option<(String, u32)>,
    /// Why the observer opened no real driver (every call then failed), where it says so.
    pub no_driver: Option<String>,
    /// `--as-driver`: the version answered as.
    pub as_driver: Option<u32>,
    pub processes: usize,
    pub requests: usize,
    pub refused: Vec<Refused>,
    pub gaps: Vec<Gap>,
    pub differences: Vec<Difference>,
    /// Requests answered with an older ABI than the version asked names (`"cuCtxCreate" at
    /// 12050 flags 0 -> cuCtxCreate_v11040`).
    pub hazards: Vec<String>,
    /// The program's exit status (`--run`); `None` for a trace.
    pub exit: Option<i32>,
    /// Why there is no floor (the run was not observed), where there is none.
    pub not_observed: Option<String>,
}

/// A request as one text: `"cuCtxCreate" at 12050 flags 0`.
fn request_text(r: &trace::Request) -> String {
    format!("{:?} at {} flags {}", r.symbol, r.version, r.flags)
}

/// The registry's entry of an ABI's marker (`cuCtxCreate_v12050`), for this platform.
fn entry_info(abi: &str) -> Option<&'static EntryInfo> {
    ENTRIES.iter().find(|e| e.platforms.here() && e.pfn.strip_prefix("PFN_") == Some(abi))
}

/// The drivers the floor is chosen among: every CUDA release of NVIDIA's table and every
/// version an ABI begins at, up to `top`, ascending.
fn candidates(releases: &Releases, top: u32) -> Vec<u32> {
    let mut c: BTreeSet<u32> = releases.driver.iter().filter_map(|d| crate::releases::cuda_number(&d.cuda)).collect();
    c.extend(ENTRIES.iter().map(|e| e.version));
    c.into_iter().filter(|&v| v <= top && v > 0).collect()
}

/// The least driver of `drivers` that answers `(symbol, version, flags)` with `abi`, and the
/// drivers above it that answer otherwise.
fn request_floor(
    symbol: &str,
    version: i32,
    flags: u64,
    abi: &'static EntryInfo,
    drivers: &[u32],
) -> Option<(u32, Vec<u32>)> {
    let same = |d: u32| matches!(driver_answer(symbol.as_bytes(), version, flags, d), DriverAnswer::Entry(e) if core::ptr::eq(e, abi));
    let floor = drivers.iter().copied().find(|&d| same(d))?;
    let gaps = drivers.iter().copied().filter(|&d| d > floor && !same(d)).collect();
    Some((floor, gaps))
}

/// The floor of the run a trace file records, by the registry at `registry` (for the drivers
/// measured to first have an ABI).
pub fn floor_of_trace_file(registry: &Path, trace: &Path) -> Result<(Floor, RunReading)> {
    let reg = Registry::load(registry)?;
    let releases = Releases::load()?;
    Ok(floor_of_trace(&trace::read(trace)?, trace, Some(&reg), &releases))
}

/// The floor of a run from its trace: `path` names the trace in the report.
pub(crate) fn floor_of_trace(
    t: &Trace,
    path: &Path,
    reg: Option<&Registry>,
    releases: &Releases,
) -> (Floor, RunReading) {
    let mut floor = Floor::default();
    let mut reading = RunReading {
        real_driver: t.real_driver.clone(),
        no_driver: t.no_driver.clone(),
        as_driver: t.as_driver,
        processes: t.processes,
        requests: t.requests.len(),
        ..RunReading::default()
    };
    // What the run was answered by: the older driver's under `--as-driver`.
    let newest = ENTRIES.iter().map(|e| e.version).max().unwrap_or(0);
    let top = t.as_driver.or(t.real_driver.as_ref().map(|(_, v)| *v)).filter(|&v| v > 0).unwrap_or(newest);
    let drivers = candidates(releases, top);
    let measured = |abi: &str| -> Option<u32> {
        let reg = reg?;
        let m = reg.meanings(abi)?;
        m.exact.iter().map(|&i| reg.entries[i].floor).max()
    };
    let mut answered_abis: BTreeSet<String> = BTreeSet::new();
    let mut seen: BTreeSet<(String, i32, u64)> = BTreeSet::new();
    let mut gaps: HashMap<(String, String), BTreeSet<u32>> = HashMap::new();
    for r in &t.requests {
        if let Some(real) = &r.real {
            let ours = r.answered.clone().or_else(|| r.refusal.as_ref().map(|x| format!("refused {x}")));
            let ours = ours.unwrap_or_else(|| "a function the registry does not know".to_owned());
            // A refusal by its result and status (the older driver's line also names the
            // rule's reason in parentheses).
            let bare = |x: &str| x.split(" (").next().unwrap_or(x).to_owned();
            if bare(&ours) != bare(real) {
                reading.differences.push(Difference {
                    line: r.line,
                    what: request_text(r),
                    as_driver: ours,
                    real: real.clone(),
                });
            }
        }
        if !seen.insert((r.symbol.clone(), r.version, r.flags)) {
            continue;
        }
        if let Some(why) = &r.refusal {
            reading.refused.push(Refused { line: r.line, request: request_text(r), answer: why.clone() });
            continue;
        }
        if r.unknown {
            floor.unresolved.push(Unresolved {
                spelled: request_text(r),
                file: path.to_owned(),
                line: r.line,
                why: "answered with a function the registry does not know (newer than this cuda-sys-gen): its driver \
                      is not known"
                    .to_owned(),
                reading: Reading::Request,
            });
            continue;
        }
        let Some(abi) = r.answered.as_deref() else { continue };
        answered_abis.insert(abi.to_owned());
        if r.hazard {
            reading.hazards.push(format!("{} -> {abi} (trace line {})", request_text(r), r.line));
        }
        let Some(info) = entry_info(abi) else {
            floor.unresolved.push(Unresolved {
                spelled: format!("{} -> {abi}", request_text(r)),
                file: path.to_owned(),
                line: r.line,
                why: "an ABI this registry does not know".to_owned(),
                reading: Reading::Request,
            });
            continue;
        };
        let (by_rule, above) =
            request_floor(&r.symbol, r.version, r.flags, info, &drivers).unwrap_or((info.version, Vec::new()));
        let version = by_rule.max(measured(abi).unwrap_or(0));
        if !above.is_empty() {
            gaps.entry((request_text(r), abi.to_owned()))
                .or_default()
                .extend(above.into_iter().filter(|&d| d > version));
        }
        floor.uses.push(Use {
            marker: abi.to_owned(),
            version,
            spelled: request_text(r),
            file: path.to_owned(),
            line: r.line,
            read_as: if r.hazard { "HAZARD: older than the version asked names" } else { "exact" },
            reading: Reading::Request,
        });
    }
    // Each image copied by the tracer, read as a kernel file is, for the GPU it was loaded on
    // where the trace names one GPU (of a fatbin, what the driver loads there: its cubin, not
    // the PTX it JIT-compiles for another GPU); for every GPU where it names none or several.
    let gpu = match (t.gpus.len(), t.gpus.first()) {
        (1, Some(&cc)) => Some(cc),
        _ => None,
    };
    let mut images_read: BTreeSet<&str> = BTreeSet::new();
    for (line, abi, copy) in &t.images {
        let (Some(copy), Some(reg)) = (copy, reg) else { continue };
        let Ok(data) = std::fs::read(copy) else { continue };
        let name = format!("the image of {abi}");
        let mut ev = crate::model::Evidence {
            file: PathBuf::from(&name),
            format: "an image loaded at run time, read as a kernel".to_owned(),
            kernel_file: true,
            ..crate::model::Evidence::default()
        };
        if copy.ends_with(".ptx") {
            crate::kernels::ptx(&String::from_utf8_lossy(&data), &name, &mut ev.image);
        } else {
            crate::kernels::binary(&data, &name, &mut ev.image);
        }
        if ev.image.needs.is_empty() && ev.image.unreadable.is_empty() {
            // Bytes of no kernel form min-driver reads (a host object or an archive given to
            // the linker): what they hold is not known.
            floor.unresolved.push(Unresolved {
                spelled: name.clone(),
                file: path.to_owned(),
                line: *line,
                why: "an image of no form min-driver reads (fatbin, cubin, PTX): its kernels' needs are not read"
                    .to_owned(),
                reading: Reading::Kernel,
            });
            images_read.insert(abi);
            continue;
        }
        let mut read = crate::model::decide(ev, reg, releases, gpu);
        // Named by the trace's line of the load.
        for k in &mut read.kernels {
            (k.file, k.line) = (path.to_owned(), *line);
        }
        for u in &mut read.unresolved {
            (u.file, u.line) = (path.to_owned(), *line);
        }
        floor.kernels.extend(read.kernels);
        floor.unresolved.extend(read.unresolved);
        images_read.insert(abi);
    }
    // A load whose every image was read is no longer "not read".
    let unread_loads: BTreeSet<&str> =
        t.images.iter().filter(|(_, _, c)| c.is_none() || reg.is_none()).map(|(_, a, _)| a.as_str()).collect();
    for c in &t.calls {
        let loader = IMAGE_LOADERS.iter().any(|l| c.abi.strip_prefix(l).is_some_and(|v| v.starts_with("_v")));
        if loader && (!images_read.contains(c.abi.as_str()) || unread_loads.contains(c.abi.as_str())) {
            floor.unresolved.push(Unresolved {
                spelled: format!("{} ({})", c.abi, c.exported),
                file: path.to_owned(),
                line: c.line,
                why: "an image loaded at run time whose bytes the tracer did not record (a file it named, or a copy \
                      it could not make): its kernels' needs (architecture, PTX ISA) are not read"
                    .to_owned(),
                reading: Reading::Kernel,
            });
        }
        if answered_abis.contains(&c.abi) {
            continue;
        }
        let Some(version) = measured(&c.abi).or_else(|| entry_info(&c.abi).map(|e| e.version)) else { continue };
        floor.uses.push(Use {
            marker: c.abi.clone(),
            version,
            spelled: format!("called as {}", c.exported),
            file: path.to_owned(),
            line: c.line,
            read_as: "exact",
            reading: Reading::Export,
        });
    }
    for (line, path) in &t.runtimes {
        // `libcudart.so.12.4.99`, `libcudart.so.13`: the major (and minor, where named).
        let name = path.rsplit('/').next().unwrap_or(path);
        let mut numbers = name.trim_start_matches("libcudart.so.").split('.').map(|n| n.parse::<u32>().ok());
        let Some(Some(major)) = numbers.next() else { continue };
        let minor = numbers.next().flatten();
        let version = crate::model::runtime_floor(major, minor);
        floor.runtimes.push(major);
        floor.kernels.push(crate::Kernel {
            needs: format!("the CUDA {major}.x runtime"),
            version,
            what: format!("{path}, mapped into the process (NVIDIA's minimum driver for its major counts)"),
            file: PathBuf::from(path),
            line: *line,
            reading: Reading::Runtime,
        });
    }
    floor.runtimes.sort();
    floor.runtimes.dedup();
    for (line, abi, result, why) in &t.refused_images {
        reading.differences.push(Difference {
            line: *line,
            what: format!("a load by {abi}"),
            as_driver: format!("{result}: {why}"),
            real: "loaded".to_owned(),
        });
    }
    for m in &t.missing {
        reading.differences.push(Difference {
            line: m.line,
            what: format!("a call of {} ({})", m.abi, m.exported),
            as_driver: "CUDA_ERROR_NOT_FOUND: that driver does not export it (a program linked against it would not \
                        have loaded)"
                .to_owned(),
            real: "called".to_owned(),
        });
    }
    if let (Some(v), Some((_, real))) = (t.as_driver, &t.real_driver) {
        if t.calls.iter().any(|c| c.abi.starts_with("cuDriverGetVersion_v")) && v != *real {
            reading.differences.insert(
                0,
                Difference {
                    line: 0,
                    what: "cuDriverGetVersion".to_owned(),
                    as_driver: v.to_string(),
                    real: real.to_string(),
                },
            );
        }
    }
    reading.differences.sort_by_key(|d| d.line);
    // The same request asked again went the same way: said once.
    let mut said = BTreeSet::new();
    reading.differences.retain(|d| said.insert((d.what.clone(), d.as_driver.clone())));
    let mut gaps: Vec<Gap> = gaps
        .into_iter()
        .filter(|(_, d)| !d.is_empty())
        .map(|((request, abi), d)| Gap { request, abi, drivers: d.into_iter().collect() })
        .collect();
    gaps.sort_by(|a, b| a.request.cmp(&b.request));
    reading.gaps = gaps;
    floor.uses.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| a.line.cmp(&b.line)));
    floor.kernels.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| a.needs.cmp(&b.needs)));
    (floor, reading)
}

/// The report's lines before the floor's own.
fn header(reading: &RunReading, source: &str) -> String {
    let mut s = format!("{source}\n");
    match &reading.real_driver {
        Some((path, v)) => s.push_str(&format!(
            "  {} process(es) observed, in front of the real driver {path} (CUDA {})\n",
            reading.processes,
            cuda_text(*v)
        )),
        None => s.push_str(&format!(
            "  {} process(es) observed; no real driver: {}\n",
            reading.processes,
            reading.no_driver.as_deref().unwrap_or("the trace does not name one")
        )),
    }
    if let Some(v) = reading.as_driver {
        s.push_str(&format!("  answered as a driver of CUDA {} would (--as-driver)\n", cuda_text(v)));
    }
    s.push_str(&format!(
        "  {} cuGetProcAddress request(s); the floor holds for the paths this run took (another input, GPU or code \
         path may ask for more)\n",
        reading.requests
    ));
    s
}

/// The report's lines after the floor's own.
fn footer(reading: &RunReading) -> String {
    let mut s = String::new();
    if !reading.refused.is_empty() {
        s.push_str(&format!("refused by the driver of this run, not counted ({}):\n", reading.refused.len()));
        for r in &reading.refused {
            s.push_str(&format!("  {}: {} (trace line {})\n", r.request, r.answer, r.line));
        }
    }
    if !reading.gaps.is_empty() {
        s.push_str(&format!(
            "drivers above a request's floor that answer it otherwise (from CUDA 13.0 a version above the driver's own \
             is refused) ({}):\n",
            reading.gaps.len()
        ));
        for g in &reading.gaps {
            let d: Vec<String> = g.drivers.iter().map(|&v| cuda_text(v)).collect();
            s.push_str(&format!("  {} -> {}: not on CUDA {}\n", g.request, g.abi, d.join(", ")));
        }
    }
    for h in &reading.hazards {
        s.push_str(&format!(
            "HAZARD: {h}: older than the ABI the version asked names; a caller that casts the pointer to that \
             version's typedef calls a function of another signature\n"
        ));
    }
    if let Some(v) = reading.as_driver {
        if reading.differences.is_empty() {
            s.push_str(&format!(
                "as CUDA {}: the run went as on the real driver (every answer the same)\n",
                cuda_text(v)
            ));
        } else {
            s.push_str(&format!(
                "as CUDA {}: {} point(s) where the run went differently from the real driver:\n",
                cuda_text(v),
                reading.differences.len()
            ));
            for d in &reading.differences {
                s.push_str(&format!("  {}: {} (the real driver: {})\n", d.what, d.as_driver, d.real));
            }
        }
    }
    if let Some(code) = reading.exit {
        s.push_str(&format!("the program exited with status {code}\n"));
    }
    s
}

/// `--as-driver TEXT`: a CUDA version (`12.4`) or a driver number (`550.54.14`), as the version
/// `cuDriverGetVersion` says (12040).
fn as_driver_version(text: &str, args: &MinDriverArgs, releases: &Releases) -> Result<u32> {
    let (_, cuda, _) = crate::cli::driver_check(text, args.platform, releases).map_err(|e| {
        anyhow::anyhow!("--as-driver: {e:#}").context("give a CUDA version (12.4) or a driver number (550.54.14)")
    })?;
    Ok(cuda)
}

/// `min-driver --trace FILE` or `--run -- CMD ARGS...`: the report and the exit status.
pub fn run(args: &MinDriverArgs, releases: &Releases) -> Result<u8> {
    // Arguments first, as the static reading does.
    let mut wanted = Vec::new();
    if let Some(text) = &args.driver {
        wanted.push(crate::cli::driver_check(text, args.platform, releases)?);
    }
    if let Some(text) = &args.max {
        let cuda = crate::releases::parse_cuda(text).map_err(|why| anyhow::anyhow!("--max {text}: {why}"))?;
        crate::cli::released(cuda, releases).map_err(|why| anyhow::anyhow!("--max {text}: {why}"))?;
        wanted.push((format!("--max {}", cuda_text(cuda)), cuda, false));
    }
    let as_driver = args.as_driver.as_deref().map(|t| as_driver_version(t, args, releases)).transpose()?;
    // The registry gives the drivers measured to lack an ABI their version has; without it
    // (an installed cuda-sys-gen run away from the generated crate) the rule alone counts.
    let reg = match args.registry_source().and_then(|source| source.load()) {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("min-driver: {e:#}: the drivers measured to lack an ABI are not applied (pass --registry)");
            None
        }
    };
    let mut bypassed: Vec<String> = Vec::new();
    let (trace_path, source, exit, scratch) = match (&args.trace, args.command.is_empty()) {
        (Some(_), false) => bail!("--trace and --run: give one (a trace recorded elsewhere, or a command to run)"),
        (Some(t), true) => {
            if as_driver.is_some() {
                bail!("--as-driver needs --run: a trace records the answers its run was given");
            }
            (t.clone(), format!("read from the trace {}", t.display()), None, None)
        }
        (None, false) => {
            let (trace, exit, scratch) = run_observed(&args.command, as_driver)?;
            bypassed = driver_loaded_past_the_observer(&scratch);
            let shown = args.command.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
            (
                trace,
                format!("run of `{shown}` through the observer (a stand-in libcuda in front of the driver)"),
                Some(exit),
                Some(scratch),
            )
        }
        (None, true) => bail!("--run needs a command after `--`: min-driver --run -- CMD ARGS..."),
    };
    let t = trace::read(&trace_path);
    let t = match t {
        Ok(t) => t,
        Err(e) => {
            remove_scratch(scratch.as_deref());
            return Err(e);
        }
    };
    // A run's trace is removed with its folder: its lines are named as the run's.
    let shown = if scratch.is_some() { PathBuf::from("the run's trace") } else { trace_path.clone() };
    let (floor, mut reading) = floor_of_trace(&t, &shown, reg.as_ref(), releases);
    remove_scratch(scratch.as_deref());
    reading.exit = exit;
    let program_status = exit.filter(|&c| c != 0).map(|c| u8::try_from(c).unwrap_or(1));
    if !bypassed.is_empty() {
        // A process that loaded the real driver itself: its calls were not seen, and a floor
        // of the rest would be one of part of the run.
        reading.not_observed = Some(format!(
            "{}: the stand-in did not see its calls, so no floor of this run is reported (give the program the \
             driver by its name, libcuda.so.1, through the loader's search: no absolute path, no DT_RPATH naming \
             the driver's folder)",
            bypassed.join("; ")
        ));
    } else if t.processes == 0 {
        reading.not_observed = Some(if args.command.is_empty() {
            "the trace has no `start` line: no process loaded the tracer".to_owned()
        } else {
            "no process of the run loaded a CUDA driver (libcuda) through the dynamic loader (a program that never \
             used CUDA, or one run by a static program the loader never sees): no floor can be observed"
                .to_owned()
        });
    } else if let Some(why) = &t.as_driver_refused {
        bail!("--as-driver: the observer refused it: {why} (a driver can be stood in for only below the real one)");
    }
    let checks: Vec<Check> = if reading.not_observed.is_some() {
        Vec::new()
    } else {
        let number = args.driver.as_deref().and_then(crate::releases::driver_number).filter(|n| n[0] >= 100);
        wanted
            .into_iter()
            .map(|(against, cuda, open)| {
                let driver = number.as_deref().filter(|_| against.starts_with("driver ")).map(|n| (n, args.platform));
                Check::new(&floor, against, cuda, open, driver, releases)
            })
            .collect()
    };
    let mut out = String::new();
    if args.json {
        let report = RunJson { report: floor.json_report(releases, &checks), run: &reading };
        out.push_str(&serde_json::to_string_pretty(&report)?);
        out.push('\n');
    } else {
        out.push_str(&header(&reading, &source));
        match &reading.not_observed {
            Some(why) => out.push_str(&format!("not observed: {why}\n")),
            None if floor.uses.is_empty() && floor.unresolved.is_empty() && floor.kernels.is_empty() => {
                out.push_str("the run asked the driver for nothing: any driver answers it the same way\n")
            }
            None => {
                let rendered = floor.render(Path::new("."), Some(releases));
                out.push_str(&rendered.replace("entry points used", "requests and calls of this run"));
            }
        }
        out.push_str(&footer(&reading));
        for c in &checks {
            out.push_str(&c.render(&floor, Path::new(".")));
        }
    }
    // With --run, the program's own stdout stays its own: the report goes to stderr.
    if args.command.is_empty() {
        print!("{out}");
    } else {
        // A closed or full stderr loses the report, as any message, and changes no status.
        use std::io::Write as _;
        let _ = std::io::stderr().write_all(out.as_bytes());
    }
    if reading.not_observed.is_some() {
        return Ok(program_status.unwrap_or(2));
    }
    let status = checks.iter().map(Check::status).max().unwrap_or(0);
    Ok(program_status.unwrap_or(status))
}

/// The processes of a run that loaded a CUDA driver other than the observer without the observer
/// (a `dlopen` of the driver's absolute path, a DT_RPATH searched before `LD_LIBRARY_PATH`), by
/// the dynamic loader's own record of the run (`LD_DEBUG=files` into `dir/ld.PID`): each a line
/// naming the process, the library and what loaded it. A process whose loader record shows the
/// observer initialised loaded the real driver through it (the observer opens it): not listed.
fn driver_loaded_past_the_observer(dir: &Path) -> Vec<String> {
    let ours = format!("{}/", dir.display());
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found = Vec::new();
    let mut files: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let pid = name.to_str()?.strip_prefix("ld.")?.parse::<u32>().ok()?;
            Some((pid, e.path()))
        })
        .collect();
    files.sort();
    for (pid, file) in files {
        let Ok(bytes) = codegen::input::read_bytes(&file, "the dynamic loader's record of a run") else { continue };
        let text = String::from_utf8_lossy(&bytes);
        let is_driver = |p: &str| p.rsplit('/').next().is_some_and(|n| n.starts_with("libcuda.so"));
        let mut observer = false;
        let mut drivers: Vec<&str> = Vec::new();
        let mut loaded_by: HashMap<&str, &str> = HashMap::new();
        for line in text.lines() {
            // `   PID:\tcalling init: PATH`, `   PID:\tfile=PATH [0];  dynamically loaded by WHO [0]`.
            let Some((_, body)) = line.split_once(":\t") else { continue };
            if let Some(p) = body.strip_prefix("calling init: ").map(str::trim) {
                if p.starts_with(&ours) {
                    observer = true;
                } else if is_driver(p) && !drivers.contains(&p) {
                    drivers.push(p);
                }
            } else if let Some(rest) = body.strip_prefix("file=") {
                let Some((p, by)) = rest.split_once(" [") else { continue };
                let who = by
                    .split_once("dynamically loaded by ")
                    .or_else(|| by.split_once("needed by "))
                    .map(|(_, w)| w.rsplit_once(" [").map_or(w, |(w, _)| w));
                if let (true, Some(w)) = (is_driver(p), who) {
                    loaded_by.entry(p).or_insert(w);
                }
            }
        }
        if observer {
            continue;
        }
        for d in drivers {
            let by = loaded_by.get(d).map_or(String::new(), |w| format!(" (loaded by {w})"));
            found.push(format!("process {pid} loaded the driver {d} itself{by}, past the stand-in"));
        }
    }
    found
}

/// The folder `run_observed` made (its trace, the images the tracer copied and the loader's
/// record: nothing else).
fn remove_scratch(dir: Option<&Path>) {
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `--json` of a run: the static reading's document, and the run's own part.
#[derive(Serialize)]
struct RunJson<'a> {
    #[serde(flatten)]
    report: crate::report::JsonReport<'a>,
    run: &'a RunReading,
}

/// The observer library: `$CUDA_SYS_GEN_OBSERVER` (the file, or its folder), else
/// `libcuda_tracer.so` beside this executable (or one folder up, as cargo's `deps/`).
pub fn find_observer() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(OBSERVER_ENV).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        let file = if p.is_dir() { p.join(OBSERVER_FILE) } else { p };
        if !file.is_file() {
            bail!(
                "${OBSERVER_ENV} is {}: no such library (build it: cargo build --release -p cuda-sys-gen-tracer)",
                file.display()
            );
        }
        return Ok(file);
    }
    let exe = std::env::current_exe().context("this executable's path")?;
    for dir in exe.ancestors().skip(1).take(2) {
        let candidate = dir.join(OBSERVER_FILE);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    bail!(
        "no observer library: build it in cuda-sys-gen's repository with `cargo build --release -p cuda-sys-gen-tracer` \
         and set {OBSERVER_ENV}=target/release/{OBSERVER_FILE} (or put {OBSERVER_FILE} beside {})",
        exe.display()
    )
}

/// Whether `cmd` (found on `PATH` as the shell would) is a static ELF program, which the
/// loader never gives a `libcuda.so.1` it did not link.
fn is_static(cmd: &std::ffi::OsStr) -> Option<PathBuf> {
    let p = Path::new(cmd);
    let path = if p.components().count() > 1 {
        p.to_owned()
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(p)).find(|c| c.is_file())?
    };
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(&path).ok()?.take(1 << 20).read_to_end(&mut head).ok()?;
    // No program interpreter (`PT_INTERP`): nothing loads libraries by name for it (a static-pie
    // too). Read from the program headers, which the kernel reads too (section headers may be
    // stripped), within the file's first MiB.
    (!elf_interpreter(&head)?).then_some(path)
}

/// Whether the little-endian ELF file whose first bytes are `head` has a `PT_INTERP` program
/// header; `None` where `head` is no such file or does not hold its program headers.
fn elf_interpreter(head: &[u8]) -> Option<bool> {
    const PT_INTERP: u32 = 3;
    if !head.starts_with(b"\x7fELF") || head.get(5) != Some(&1) {
        return None;
    }
    let u16_at = |o: usize| Some(u16::from_le_bytes(head.get(o..o.checked_add(2)?)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(head.get(o..o.checked_add(4)?)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(head.get(o..o.checked_add(8)?)?.try_into().ok()?));
    let (phoff, phentsize, phnum) = match head.get(4)? {
        1 => (u64::from(u32_at(0x1c)?), u16_at(0x2a)?, u16_at(0x2c)?),
        2 => (u64_at(0x20)?, u16_at(0x36)?, u16_at(0x38)?),
        _ => return None,
    };
    let phoff = usize::try_from(phoff).ok()?;
    let mut found = false;
    for i in 0..usize::from(phnum) {
        let at = phoff.checked_add(i.checked_mul(usize::from(phentsize))?)?;
        found |= u32_at(at)? == PT_INTERP;
    }
    Some(found)
}

/// Runs `command` with the observer first on the library path, its trace in a folder of our
/// own: (the trace, the exit status, the folder to remove).
fn run_observed(command: &[std::ffi::OsString], as_driver: Option<u32>) -> Result<(PathBuf, i32, PathBuf)> {
    let observer = find_observer()?;
    if let Some(p) = is_static(&command[0]) {
        bail!(
            "{} is a static program: the loader never gives it a libcuda.so.1 to stand in for, so no run of it can be \
             observed (read it statically: min-driver {})",
            p.display(),
            p.display()
        );
    }
    // A folder of this process's own (create_dir fails where the name is taken: nothing of
    // another's is written to or removed).
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    // Absolute (a relative TMPDIR too): the program may change its folder before it loads the
    // driver or writes the loader's record.
    let dir = std::path::absolute(std::env::temp_dir())
        .context("the temporary folder's path")?
        .join(format!("cuda-sys-gen-run-{}-{nanos}", std::process::id()));
    std::fs::create_dir(&dir).with_context(|| format!("creating {} for the observer", dir.display()))?;
    let lib = dir.join("libcuda.so.1");
    let trace = dir.join("trace.log");
    let images = dir.join("images");
    let made = std::fs::copy(&observer, &lib)
        .with_context(|| format!("copying {} into {}", observer.display(), dir.display()))
        .and_then(|_| std::fs::create_dir(&images).with_context(|| format!("creating {}", images.display())));
    if let Err(e) = made {
        remove_scratch(Some(&dir));
        return Err(e);
    }
    let mut path = std::ffi::OsString::from(&dir);
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|p| !p.is_empty()) {
        path.push(":");
        path.push(old);
    }
    let mut cmd = std::process::Command::new(&command[0]);
    cmd.args(&command[1..])
        .env("LD_LIBRARY_PATH", path)
        .env("CUDA_SYS_GEN_TRACE", &trace)
        .env("CUDA_SYS_GEN_TRACE_CALLS", "first")
        .env("CUDA_SYS_GEN_TRACE_IMAGES", &images);
    // The dynamic loader's own record of which libraries each process initialised (one file per
    // process, `ld.PID`, in our folder; nothing on the program's output): a driver loaded past
    // the observer is found there. A user's own LD_DEBUG is left as it is.
    if std::env::var_os("LD_DEBUG").is_none() {
        cmd.env("LD_DEBUG", "files").env("LD_DEBUG_OUTPUT", dir.join("ld"));
    }
    match as_driver {
        Some(v) => cmd.env("CUDA_SYS_GEN_AS_DRIVER", v.to_string()),
        None => cmd.env_remove("CUDA_SYS_GEN_AS_DRIVER"),
    };
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            bail!("could not run {}: {e}", Path::new(&command[0]).display());
        }
    };
    #[cfg(unix)]
    let code = {
        use std::os::unix::process::ExitStatusExt;
        status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
    };
    #[cfg(not(unix))]
    let code = status.code().unwrap_or(1);
    if !trace.exists() {
        std::fs::write(&trace, b"").with_context(|| format!("writing {}", trace.display()))?;
    }
    Ok((trace, code, dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        Registry::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/registry.json")).unwrap()
    }

    fn floor(text: &str) -> (Floor, RunReading) {
        floor_of_trace(&trace::parse(text), Path::new("t.log"), Some(&registry()), &Releases::load().unwrap())
    }

    /// The 12050 ABI of `cuCtxCreate`, answered by 12.5 to asks at 12050: the floor is 12.5;
    /// the 11040 ABI answered to the same ask (by a 12.2 driver) is the floor of every driver
    /// from 11.4 that answers it so, and no 13.x driver refuses 12050.
    #[test]
    fn a_request_counts_as_the_least_driver_that_answers_it_the_same() {
        let (f, r) = floor("start 1 real driver /d (version 12050)\nrequest 1 \"cuCtxCreate\" 12050 flags 0 -> cuCtxCreate_v12050 (cuCtxCreate_v4) rule ok\n");
        assert_eq!(f.version(), 12050, "{:?}", f.uses);
        assert!(r.gaps.is_empty());
        let (f, _) = floor("start 1 real driver /d (version 12020)\nrequest 1 \"cuCtxCreate\" 12050 flags 0 -> cuCtxCreate_v11040 (cuCtxCreate_v3) HAZARD: x; rule ok\n");
        assert_eq!(f.version(), 11040, "{:?}", f.uses);
        assert!(f.uses[0].read_as.starts_with("HAZARD"));
    }

    /// Asked above 13.0 of a 13.x driver: 12.x drivers answer the same ABI, 13.0 refuses.
    #[test]
    fn a_13_0_driver_that_refuses_is_a_gap_above_the_floor() {
        let (f, r) = floor("start 1 real driver /d (version 13020)\nrequest 1 \"cuCtxCreate\" 13020 flags 0 -> cuCtxCreate_v12050 (cuCtxCreate_v4) rule ok\n");
        assert_eq!(f.version(), 12050);
        assert_eq!(r.gaps.len(), 1, "{:?}", r.gaps);
        assert!(r.gaps[0].drivers.contains(&13000) && !r.gaps[0].drivers.contains(&13020), "{:?}", r.gaps);
    }

    /// Refused requests are listed, not counted; an ABI called that no request answered was
    /// called by its exported name; an image loader makes the floor "at least".
    #[test]
    fn refusals_exports_and_images() {
        let (f, r) = floor(
            "start 1 real driver /d (version 12050)\n\
             refused 1 \"cuNoSuch\" 12050 flags 0 -> CUDA_SUCCESS status 1\n\
             request 1 \"cuMemAlloc\" 12000 flags 0 -> cuMemAlloc_v3020 (cuMemAlloc_v2) rule ok\n\
             call 1 cuMemAlloc_v3020 (cuMemAlloc_v2) a -> CUDA_SUCCESS 1 ns\n\
             call 1 cuInit_v2000 (cuInit) a -> CUDA_SUCCESS 1 ns\n\
             call 1 cuModuleLoadData_v2000 (cuModuleLoadData) a -> CUDA_SUCCESS 1 ns\n",
        );
        let (with_runtime, _) = floor("start 1 real driver /d (version 13000)\nruntime 1 /x/libcudart.so.13\n");
        assert_eq!(with_runtime.runtimes, [13]);
        assert_eq!(with_runtime.version(), 13000);
        assert_eq!(with_runtime.kernels[0].reading, Reading::Runtime);
        assert_eq!(r.refused.len(), 1);
        let exports: Vec<&str> =
            f.uses.iter().filter(|u| u.reading == Reading::Export).map(|u| u.marker.as_str()).collect();
        assert_eq!(exports, ["cuInit_v2000", "cuModuleLoadData_v2000"]);
        assert_eq!(f.version(), 3020);
        assert!(f.at_least());
    }

    /// A program's interpreter is read from its program headers; a cut or foreign header is no
    /// answer, never a panic.
    #[test]
    fn a_dynamic_program_has_an_interpreter() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(elf_interpreter(&exe), Some(true));
        let mut no_interp = exe[..4096.min(exe.len())].to_vec();
        // Every program header's type made PT_LOAD (1): no interpreter.
        let (phoff, phentsize, phnum) = (0x40, 56, u16::from_le_bytes([no_interp[0x38], no_interp[0x39]]));
        for i in 0..usize::from(phnum) {
            no_interp[phoff + i * phentsize..phoff + i * phentsize + 4].copy_from_slice(&1u32.to_le_bytes());
        }
        assert_eq!(elf_interpreter(&no_interp), Some(false));
        for cut in [&exe[..4], &exe[..0x30], &exe[..0x41], b"MZ\x90\x00".as_slice()] {
            assert_eq!(elf_interpreter(cut), None);
        }
        // A program header table said to lie at the end of the address space: no answer.
        let mut far = no_interp.clone();
        far[0x20..0x28].copy_from_slice(&(u64::MAX - 1).to_le_bytes());
        assert_eq!(elf_interpreter(&far), None);
    }

    /// Under --as-driver, each answer other than the real driver's, each missing export and the
    /// version said are differences.
    #[test]
    fn as_driver_differences() {
        let (_, r) = floor(
            "start 1 real driver /d (version 12050)\nas-driver 12040\n\
             call 1 cuDriverGetVersion_v2020 (cuDriverGetVersion) a -> CUDA_SUCCESS 1 ns\n\
             as-driver 1 \"cuCtxCreate\" 12050 flags 0 -> cuCtxCreate_v11040 (cuCtxCreate_v3) real cuCtxCreate_v12050 (cuCtxCreate_v4) HAZARD: x;\n\
             as-driver 1 \"cuMemAlloc\" 12000 flags 0 -> cuMemAlloc_v3020 (cuMemAlloc_v2) real cuMemAlloc_v3020 (cuMemAlloc_v2)\n\
             missing 1 cuCtxCreate_v12050 (cuCtxCreate_v4) -> CUDA_ERROR_NOT_FOUND: x\n\
             image-refused 1 cuModuleLoadData_v2000 -> CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): a driver of 12040 would not load it: PTX ISA 8.5\n",
        );
        let what: Vec<&str> = r.differences.iter().map(|d| d.what.as_str()).collect();
        assert_eq!(
            what,
            [
                "cuDriverGetVersion",
                "\"cuCtxCreate\" at 12050 flags 0",
                "a call of cuCtxCreate_v12050 (cuCtxCreate_v4)",
                "a load by cuModuleLoadData_v2000"
            ]
        );
        assert_eq!(r.differences[3].as_driver, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): PTX ISA 8.5");
    }
}
