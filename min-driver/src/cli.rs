//! `cuda-sys-gen min-driver`'s options and its one function ([`run`]): the CLI's command is a
//! thin caller of this.

use super::*;

/// `min-driver`'s options.
#[derive(Debug, clap::Args)]
pub struct MinDriverArgs {
    /// Compiled programs, libraries, objects and archives (ELF, PE, COFF), kernel files (PTX,
    /// cubin, fatbin); or Rust files (named .rs), or folders searched for them (hidden folders, and the target/ folder beside a Cargo.toml, skipped; path dependencies
    /// and workspace members of the packages found followed).
    #[arg(required_unless_present_any = ["trace", "run"], value_name = "PATH")]
    pub sources: Vec<PathBuf>,
    /// The floor of one run: runs the command after `--` with the observer (a stand-in
    /// libcuda.so.1, `cargo build --release -p cuda-sys-gen-tracer`; found beside this program
    /// or by $CUDA_SYS_GEN_OBSERVER) in front of this machine's driver, then reports on stderr
    /// the oldest driver that answers that run the same way. The program's output and exit
    /// status are its own.
    #[arg(long, requires = "command", conflicts_with_all = ["sources", "trace"])]
    pub run: bool,
    /// The floor of a run recorded by the libcuda tracer (its CUDA_SYS_GEN_TRACE file).
    #[arg(long, value_name = "FILE", conflicts_with = "sources")]
    pub trace: Option<PathBuf>,
    /// With --run: the observer answers as a driver of this version would (a CUDA version
    /// `12.4`, or a driver number; not above this machine's): its version, its answers to
    /// lookups, its errors for images it cannot load (222, 209); the report lists each point
    /// where the run went differently.
    #[arg(long, value_name = "VERSION", requires = "run")]
    pub as_driver: Option<String>,
    /// With --run: the command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD", requires = "run")]
    pub command: Vec<std::ffi::OsString>,
    /// A generated crate's registry.json. Default: the registry built into this cuda-sys-gen (of
    /// the toolkits it was built with).
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// The registry.json text the caller was built with, read where --registry is not given.
    #[arg(skip)]
    pub builtin_registry: Option<&'static str>,
    /// Does the program run on this driver? A driver version (`535.104.05`) or a CUDA version
    /// (`12.2`); what it lacks is listed with its line.
    #[arg(long, value_name = "VERSION")]
    pub driver: Option<String>,
    /// Fail (exit 3) when the floor is above this CUDA version (`12.2`): a CI gate.
    #[arg(long, value_name = "CUDA")]
    pub max: Option<String>,
    /// The GPU the program runs on (`sm_90`): of each fatbin, only the entry the driver loads
    /// there counts (a cubin for it, else the PTX it JIT-compiles); the others are listed as
    /// unused there, and a fatbin with no entry for it is said.
    #[arg(long, value_name = "SM")]
    pub arch: Option<String>,
    /// Whose driver numbers `--driver` reads (the report names both platforms' drivers).
    #[arg(long, default_value = "linux", value_parser = platform_parser())]
    pub platform: Platform,
    /// The report as JSON (its schema: docs/min-driver.md).
    #[arg(long)]
    pub json: bool,
}

impl MinDriverArgs {
    /// `--registry`, else the registry built into the program.
    pub fn registry_source(&self) -> Result<RegistrySource<'_>> {
        match (&self.registry, self.builtin_registry) {
            (Some(path), _) => Ok(RegistrySource::File(path)),
            (None, Some(text)) => Ok(RegistrySource::BuiltIn(text, "the registry built into cuda-sys-gen")),
            (None, None) => anyhow::bail!(
                "no registry: this program was built without one; pass --registry FILE (the generated crate's \
                 registry.json)"
            ),
        }
    }
}

/// `--platform`: the generator's [`Platform`], by the names the manifest uses too.
fn platform_parser() -> impl clap::builder::TypedValueParser<Value = Platform> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = Platform::ALL.map(|p| {
        let example = match p {
            Platform::Linux => "555.42.02",
            Platform::Windows => "555.85",
        };
        PossibleValue::new(p.as_str()).help(format!("{} driver numbers ({example})", p.driver_name()))
    });
    PossibleValuesParser::new(values).try_map(|s| s.parse::<Platform>())
}

/// What `min-driver --help` says after its exit statuses.
pub const HELP_CLOSING: &str =
    "\nWhat counts (every token, code under every #[cfg(..)], kernels), what is \"at least\", the \
     JSON schema and CI: docs/min-driver.md in cuda-sys-gen's repository.";

/// `cuda-sys-gen min-driver`: prints the report (and the checks) and gives the exit status.
pub fn run(args: &MinDriverArgs) -> Result<u8> {
    let platform = args.platform;
    let releases = Releases::load()?;
    if args.run || args.trace.is_some() {
        return runs::run(args, &releases);
    }
    // Arguments first: a bad one is said before any file is read.
    let mut wanted = Vec::new();
    let driver_number = args.driver.as_deref().and_then(releases::driver_number).filter(|n| n[0] >= 100);
    if let Some(text) = &args.driver {
        wanted.push(driver_check(text, platform, &releases)?);
    }
    if let Some(text) = &args.max {
        let cuda = releases::parse_cuda(text).map_err(|why| anyhow::anyhow!("--max {text}: {why}"))?;
        released(cuda, &releases).map_err(|why| anyhow::anyhow!("--max {text}: {why}"))?;
        wanted.push((format!("--max {}", cuda_text(cuda)), cuda, false));
    }
    let gpu = match &args.arch {
        Some(a) => Some(gpu_arch(a, &releases)?),
        None => None,
    };
    let floor = floor_on(args.registry_source()?, &args.sources, gpu)?;
    let checks: Vec<Check> = wanted
        .into_iter()
        .map(|(against, cuda, open)| {
            let driver = driver_number.as_deref().filter(|_| against.starts_with("driver ")).map(|n| (n, platform));
            Check::new(&floor, against, cuda, open, driver, &releases)
        })
        .collect();
    let status = checks.iter().map(Check::status).max().unwrap_or(0);
    if args.json {
        let report = floor.json_report(&releases, &checks);
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", floor.render(Path::new("."), Some(&releases)));
        for c in &checks {
            print!("{}", c.render(&floor, Path::new(".")));
        }
    }
    Ok(status)
}

/// `--driver TEXT`: a driver version (`535.104.05`: its first number is 100 or more) or a CUDA
/// version (`12.2`), as the CUDA version it stands for.
/// `--arch sm_90` (or `90`) as 90: a GPU's compute capability, one of NVIDIA's table.
fn gpu_arch(text: &str, releases: &Releases) -> Result<u32> {
    let digits = text.trim_start_matches("sm_").trim_start_matches("compute_");
    let n: u32 = digits.parse().map_err(|_| {
        anyhow::anyhow!("--arch {text}: not a GPU architecture; give it as sm_90 (a GPU's own, without a or f)")
    })?;
    if releases.arch(&format!("sm_{n}")).is_none() {
        bail!("--arch {text}: sm_{n} is not in NVIDIA's table (cuda-releases.toml): a newer cuda-sys-gen may know it");
    }
    Ok(n)
}

/// Whether CUDA `cuda` is a release NVIDIA made, or may make: minors run 0 to 9, and within
/// NVIDIA's driver table only its rows were released (no 12.7); older and newer ones pass.
pub(crate) fn released(cuda: u32, releases: &Releases) -> std::result::Result<(), String> {
    if cuda % 1000 / 10 > 9 {
        return Err(format!(
            "CUDA {} is no release: NVIDIA's minor versions run from 0 to 9 (12.9 was the last 12.x)",
            cuda_text(cuda)
        ));
    }
    let rows: Vec<u32> = releases.driver.iter().filter_map(|d| releases::cuda_number(&d.cuda)).collect();
    let (Some(&low), Some(&high)) = (rows.iter().min(), rows.iter().max()) else { return Ok(()) };
    if (low..=high).contains(&cuda) && !rows.contains(&cuda) {
        return Err(format!(
            "NVIDIA never released CUDA {} (its driver table, cuda-releases.toml, has no such row); give a release \
             such as {}",
            cuda_text(cuda),
            cuda_text(rows.iter().copied().filter(|&r| r < cuda).max().unwrap_or(low))
        ));
    }
    Ok(())
}

pub(crate) fn driver_check(text: &str, platform: Platform, releases: &Releases) -> Result<(String, u32, bool)> {
    let number = releases::driver_number(text);
    match number {
        Some(n) if n[0] >= 100 => {
            // Windows drivers are numbered `555.85`; `555.42.02` is a Linux driver's number.
            if platform == Platform::Windows && n.len() == 3 {
                bail!(
                    "--driver {text}: a Linux driver's number (Windows drivers are numbered like 555.85): pass \
                     --platform linux, or the Windows driver's number"
                );
            }
            let newest = releases
                .driver
                .iter()
                .filter_map(|d| {
                    let v = d.minimum(platform)?;
                    Some((releases::driver_number(v)?, releases::cuda_number(&d.cuda)?))
                })
                .max_by_key(|(_, c)| *c);
            // Newer than every row: it has at least the newest row's CUDA, and may have more.
            let open_ended = newest.as_ref().is_some_and(|(d, _)| n.as_slice() > d.as_slice() && n[0] > d[0]);
            let Some(cuda) = releases.cuda_of_driver(&n, platform) else {
                let oldest = releases
                    .driver
                    .iter()
                    .filter_map(|d| Some((releases::cuda_number(&d.cuda)?, d)))
                    .min_by_key(|(v, _)| *v)
                    .map(|(_, d)| d.cuda.clone())
                    .unwrap_or_default();
                bail!(
                    "--driver {text}: older than every {} driver NVIDIA's table names (its oldest row is CUDA {oldest}): \
                     too old for anything here; check --platform",
                    platform.driver_name()
                );
            };
            let label = if open_ended {
                format!(
                    "driver {text} ({}: newer than NVIDIA's table, CUDA {} or later)",
                    platform.driver_name(),
                    cuda_text(cuda)
                )
            } else {
                format!("driver {text} ({}: CUDA {})", platform.driver_name(), cuda_text(cuda))
            };
            Ok((label, cuda, open_ended))
        }
        _ => match releases::parse_cuda(text) {
            Ok(cuda) => {
                released(cuda, releases).map_err(|why| anyhow::anyhow!("--driver {text}: {why}"))?;
                Ok((format!("CUDA {}", cuda_text(cuda)), cuda, false))
            }
            // Two numbers (`12.05`): a CUDA version written as CUDA writes none; the reader
            // says what to write.
            Err(why) if number.is_some() => bail!("--driver {text}: {why}"),
            Err(_) => bail!(
                "--driver {text}: neither a driver version (such as 535.104.05, or 555.85 on Windows) nor a CUDA \
                 version (such as 12.2)"
            ),
        },
    }
}
