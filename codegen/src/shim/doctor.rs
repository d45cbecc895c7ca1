//! The doctor: loads the CUDA driver, prints its version, and for every entry of the registry
//! whether it resolves, and why not. [`main`] is the whole program (the crate's `doctor`
//! example is one call of it, and `cuda-sys-gen doctor` runs it for the crate it was built
//! with); [`check`] is the report alone, for a driver a program already loaded.
//!
//! Every entry of the registry is fetched with `Driver::resolve`, the same request and cache
//! as `Driver::get`, so what this prints is what a program gets; entries of modules this
//! build leaves out (features) are fetched and counted too. Each pointer is then compared with
//! the library's own export of the entry's name (`dlsym`; the driver exports every ABI under
//! the name the registry predicts): another function there is another ABI than the entry's
//! type, counted as WRONG ABI. A driver that answers a lookup with `CUDA_SUCCESS` and a NULL
//! pointer is broken (a driver that lacks an entry says so with its status), counted as BROKEN.
//!
//! The library is first loaded, and every entry looked up, in a child process of the doctor's
//! own (this program run again with [`PROBE`]), and only then in this one. A library can
//! crash the system loader in ways no reading of the file can foresee (its initialisers run,
//! its relocations write what they say), or crash when its functions are called: a child that
//! dies of a signal, stops inside the loader, or does not finish within 15 seconds is
//! reported here ("this library crashes the system loader", or "... when its functions are
//! called", with the signal), and the library is not loaded in this process.
//!
//! Exit status ([`EXIT_STATUSES`]):
//! - 0: the driver loaded, no entry is WRONG and none BROKEN, whatever else the entries say;
//! - 1: it did not load, or it crashes, stops or hangs the system loader (the child's signal or
//!   status is named), or the output could not be written;
//! - 2: a bad command line;
//! - 3: an entry is WRONG (the pointer is another function than its export);
//! - 4: the driver is broken: it answered success with a NULL pointer, for every entry or for
//!   some (and none is WRONG, which is 3).
//!
//! A closed stdout or stderr is no failure of the driver: the doctor stops writing to it and
//! ends with the status the driver calls for (a closed stdout cut the report short: 0 unless
//! WRONG or BROKEN was already seen).

use std::collections::BTreeMap;
use std::ffi::{c_void, OsStr, OsString};
use std::io::Write;
use std::process::ExitCode;

use crate::error::{CudaVersion, Error};
use crate::registry::{EntryInfo, ENTRIES, TOOLKITS};
use crate::Driver;

/// The doctor's exit statuses, as `--help` texts print them.
pub const EXIT_STATUSES: &[(u8, &str)] = &[
    (0, "the driver loaded, no entry is WRONG and none BROKEN, whatever else the entries say"),
    (
        1,
        "it did not load, or it crashes, stops or hangs the system loader (the child's signal or status is \
         named), or the output could not be written",
    ),
    (2, "a bad command line"),
    (3, "an entry is WRONG (the pointer is another function than its export)"),
    (4, "the driver is broken: it answered success with a NULL pointer (and none is WRONG, which is 3)"),
];

/// The argument that makes the program the doctor's child: the whole run, the library loaded
/// and every entry looked up and compared as the parent will, the report thrown away; its exit
/// status is one of [`EXIT_STATUSES`].
pub const PROBE: &str = "--load-probe";

/// What the child says on stderr once the library is loaded: a crash after it is in the
/// library's own functions, not in the loader.
const LOADED: &str = "doctor child: loaded";

/// How long the child may take to load the library (a real driver takes well under a second).
const PROBE_SECONDS: u64 = 15;

/// A line on stderr; a closed stderr is not an error of the doctor's (nothing else could say
/// it), so a failed write is dropped rather than a panic.
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

/// What [`check`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// Entries of the registry asked for.
    pub entries: usize,
    /// Entries the driver resolved.
    pub resolved: usize,
    /// Entries that did not resolve (BROKEN ones included).
    pub failed: usize,
    /// Resolved entries that are the library's export of their name.
    pub verified: usize,
    /// Whether the pointers were compared with the library's exports (it could be opened again).
    pub compared: bool,
    /// Each WRONG entry: what it resolved to and what the library exports.
    pub wrong: Vec<String>,
    /// Lookups answered `CUDA_SUCCESS` with a NULL pointer.
    pub broken: usize,
}

impl Report {
    /// The exit status of [`EXIT_STATUSES`] the report calls for: 3 for a WRONG entry, 4 for a
    /// BROKEN one, else 0.
    pub fn exit_status(&self) -> u8 {
        if !self.wrong.is_empty() {
            3
        } else if self.broken > 0 {
            4
        } else {
            0
        }
    }
}

/// A few words for each kind of failure; the full explanation is printed once per kind.
fn kind(e: &Error) -> (&'static str, String) {
    match e {
        Error::DriverTooOld { lookup, .. } => {
            ("newer than the driver", format!("needs a driver for {}", CudaVersion(lookup.version)))
        }
        Error::SymbolNotFound { lookup, .. } | Error::NotFound { lookup, .. } | Error::NotExported { lookup, .. }
            if ENTRIES.iter().any(|e| e.symbol == lookup.symbol && !e.platforms.here()) =>
        {
            ("not on this platform", "an entry point of another platform's driver".into())
        }
        Error::SymbolNotFound { .. } | Error::NotFound { .. } => {
            ("unknown to the driver", "the driver does not know the name".into())
        }
        Error::NotExported { .. } => ("not exported", "the driver does not export the entry's name".into()),
        Error::VersionNotSufficient { .. } => ("version not served", "the driver has the symbol, not this ABI".into()),
        Error::NullPointer { .. } => {
            ("BROKEN: success with a NULL pointer", "the driver answered CUDA_SUCCESS with a NULL pointer".into())
        }
        Error::UnknownStatus { status, .. } => ("unknown status", format!("status {status}, unknown to this crate")),
        Error::Driver { code, name, .. } => {
            ("driver error", format!("{} ({code})", name.as_deref().unwrap_or("an unnamed code")))
        }
        _ => ("other", "see below".into()),
    }
}

struct Doctor<'a> {
    driver: &'a Driver,
    /// The driver's library once more, for its exports (`None`: it could not be opened again,
    /// and nothing is compared).
    exports: Option<libloading::Library>,
    report: Report,
    out: &'a mut dyn Write,
    /// The first write error (a closed pipe, say): then nothing more is written.
    write_error: Option<std::io::Error>,
    failed: BTreeMap<&'static str, (usize, String)>,
}

impl Doctor<'_> {
    fn line(&mut self, text: std::fmt::Arguments<'_>) {
        if self.write_error.is_none() {
            if let Err(e) = self.out.write_fmt(format_args!("{text}\n")) {
                self.write_error = Some(e);
            }
        }
    }

    fn check(&mut self, info: &EntryInfo) {
        let flag = if info.variant.is_some() { "per-thread flag" } else { "legacy-stream flag" };
        match self.driver.resolve(info) {
            Ok(p) => {
                self.report.resolved += 1;
                // SAFETY: only the address is read.
                let export =
                    self.exports.as_ref().map(|lib| unsafe { lib.get::<*mut c_void>(info.exported.as_bytes()) });
                match export {
                    Some(Ok(q)) if *q == p.as_ptr() => self.report.verified += 1,
                    Some(other) => {
                        let found = match other {
                            Ok(q) => format!("the export `{}` is {:p}", info.exported, *q),
                            Err(_) => format!("the library exports no `{}`", info.exported),
                        };
                        let why = format!("{} resolved to {:p}, but {found}", info.pfn, p.as_ptr());
                        self.line(format_args!("  WRONG   {:<52} another function than its export: {why}", info.pfn));
                        self.report.wrong.push(why);
                        return;
                    }
                    None => {}
                }
                self.line(format_args!("  ok      {:<52} {} at {}, {flag}", info.pfn, info.symbol, info.version));
            }
            Err(e) => {
                let (kind, words) = kind(&e);
                let label = if matches!(e, Error::NullPointer { .. }) {
                    self.report.broken += 1;
                    "BROKEN "
                } else {
                    "MISSING"
                };
                self.line(format_args!("  {label} {:<52} {words}", info.pfn));
                self.report.failed += 1;
                let slot = self.failed.entry(kind).or_insert_with(|| (0, e.to_string()));
                slot.0 += 1;
            }
        }
    }
}

/// The doctor's report on `driver`, written to `out`: the library, the driver's version, a
/// line per entry of the registry, and the counts. This process asks the driver itself: a
/// library that may crash the loader is [`run`]'s to load apart first.
///
/// The error is the first write to `out` that failed (a closed pipe, say): nothing more was
/// written after it, and the report still counts every entry.
pub fn check(driver: &Driver, out: &mut dyn Write) -> (Report, Option<std::io::Error>) {
    // SAFETY: the driver's library, already loaded by `driver`: this only takes a reference.
    let exports = unsafe { libloading::Library::new(driver.library()) }.ok();
    let compared = exports.is_some();
    let report = Report { entries: ENTRIES.len(), compared, ..Report::default() };
    let mut doctor = Doctor { driver, exports, report, out, write_error: None, failed: BTreeMap::new() };
    doctor.line(format_args!("library:  {}", driver.library()));
    doctor.line(format_args!(
        "driver:   {:#}, lookups through {}",
        CudaVersion(driver.version()),
        driver.query_api().name()
    ));
    doctor.line(format_args!(
        "registry: {} entries, from the headers of CUDA {} to {}\n",
        ENTRIES.len(),
        TOOLKITS.first().copied().unwrap_or("?"),
        TOOLKITS.last().copied().unwrap_or("?")
    ));
    for info in &ENTRIES {
        doctor.check(info);
    }
    let Report { resolved, verified, failed, .. } = doctor.report;
    let wrong = doctor.report.wrong.len();
    doctor.line(format_args!("\n{resolved} of {} entries resolve, {failed} do not", ENTRIES.len()));
    if compared {
        doctor.line(format_args!(
            "{verified} of the {resolved} are the library's export of their name; WRONG ABI: {wrong}"
        ));
    } else {
        doctor.line(format_args!(
            "the library could not be opened again by its name: no pointer was compared with its exports"
        ));
    }
    for (kind, (count, example)) in std::mem::take(&mut doctor.failed) {
        doctor.line(format_args!("  {count} {kind}; for example: {example}"));
    }
    let null = doctor.report.broken;
    if null > 0 {
        doctor.line(format_args!(
            "BROKEN DRIVER: {null} of {} lookups answered CUDA_SUCCESS with a NULL pointer. A driver that lacks an \
             entry says so with its status (symbol not found, version not sufficient); success with NULL is no answer \
             a working driver gives: reinstall the NVIDIA driver, or check that this library is NVIDIA's",
            ENTRIES.len()
        ));
    }
    for why in doctor.report.wrong.clone() {
        doctor.line(format_args!(
            "  WRONG ABI: {why}. Calling it through the entry's type would be undefined behaviour: report it to the \
             cuda-driver-pfn maintainers with the driver version"
        ));
    }
    (doctor.report, doctor.write_error)
}

/// The doctor as a program's whole `main`: `PROGRAM [LIBCUDA]` (the driver by its name when no
/// path is given; [`PROBE`] first makes this process the child of another doctor).
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     cuda_driver_pfn::doctor::main()
/// }
/// ```
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let child = args.first().is_some_and(|a| a == PROBE);
    let args = if child { &args[1..] } else { &args[..] };
    let path = match args {
        [] => None,
        [path] if !path.as_encoded_bytes().starts_with(b"-") => Some(path.as_os_str()),
        _ => {
            say!("usage: doctor [PATH-TO-LIBCUDA]");
            return ExitCode::from(2);
        }
    };
    if child {
        run_child(path)
    } else {
        run(path, &[])
    }
}

/// The doctor's run: loads `library` (a path, or the driver by its name where `None`) in a
/// child process first, then here, and prints the report on stdout; the exit status is one of
/// [`EXIT_STATUSES`].
///
/// The child is this very program (`std::env::current_exe`) run with `again`, then [`PROBE`],
/// then the path: `again` holds the words that lead this program to the doctor
/// (`&["doctor"]` for `cuda-sys-gen doctor`; none where the program is the doctor alone), and
/// the program must end in [`run_child`] when it sees [`PROBE`] there.
pub fn run(library: Option<&OsStr>, again: &[&str]) -> ExitCode {
    if let Err(why) = probe(library, again) {
        say!("doctor: {}: {why}", library.map_or("the driver (libcuda.so.1)".into(), |p| p.to_string_lossy()));
        return ExitCode::FAILURE;
    }
    report_on(library, false)
}

/// The child's part of [`run`]: the same run, the report thrown away, a line on stderr once
/// the library is loaded.
pub fn run_child(library: Option<&OsStr>) -> ExitCode {
    report_on(library, true)
}

fn report_on(library: Option<&OsStr>, child: bool) -> ExitCode {
    let loaded = match library {
        None => Driver::load(),
        Some(path) => Driver::from_path(path),
    };
    if child && loaded.is_ok() {
        say!("{LOADED}");
    }
    let driver = match loaded {
        Ok(d) => d,
        Err(e) => {
            say!("doctor: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (report, write_error) = if child {
        check(&driver, &mut std::io::sink())
    } else {
        check(&driver, &mut std::io::stdout().lock())
    };
    match write_error {
        // A reader that stopped early (`doctor | head`) is no failure of the driver.
        Some(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            say!("doctor: cannot write the report: {e}");
            ExitCode::FAILURE
        }
        _ => ExitCode::from(report.exit_status()),
    }
}

/// Loads the library (the one named, or the driver by name) in a child process first: `Ok` when
/// the child ended normally (loaded, or refused with the error this process will give too),
/// else what the loader did to it.
fn probe(path: Option<&OsStr>, again: &[&str]) -> Result<(), String> {
    use std::process::{Command, Stdio};
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find this program to load the library apart: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.args(again).arg(PROBE).args(path).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot start a process to load the library apart: {e}"))?;
    // The loader's own last words (`Inconsistency detected by ld.so: ...`), read on a thread so
    // that a full pipe never stops the child; kept to the first 4 KiB.
    let mut pipe = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(p) = pipe.as_mut() {
            use std::io::Read;
            let _ = p.take(4096).read_to_end(&mut text);
            let _ = std::io::copy(p, &mut std::io::sink());
        }
        String::from_utf8_lossy(&text).trim().to_owned()
    });
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed().as_secs() < PROBE_SECONDS => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "this library hangs: loading it and asking it for its entry points in a separate process did \
                     not end within {PROBE_SECONDS} s; it was not loaded here"
                ));
            }
            Err(e) => return Err(format!("cannot wait for the process that loads the library apart: {e}")),
        }
    };
    let said = reader.join().unwrap_or_default();
    let loaded = said.lines().any(|l| l == LOADED);
    let said: Vec<&str> = said.lines().filter(|l| *l != LOADED).collect();
    let said = if said.is_empty() { String::new() } else { format!("; it said: {}", said.join(" ")) };
    // Where it stopped: in the loader, or in the library's own functions once loaded.
    let (crashes, stops, doing) = if loaded {
        (
            "this library crashes when its functions are called",
            "this library stops the process when its functions are called",
            "asking it for its entry points",
        )
    } else {
        ("this library crashes the system loader", "this library stops the system loader", "loading it")
    };
    match status.code() {
        // The statuses of the table: the child loaded it, or refused it with an error.
        Some(0 | 1 | 3 | 4) => Ok(()),
        Some(code) => Err(format!(
            "{stops}: {doing} in a separate process ended with exit status {code}{said}; it was not loaded here"
        )),
        None => Err(format!(
            "{crashes}: {doing} in a separate process ended with {}{said}; it was not loaded here. The file is damaged \
             or no CUDA driver: reinstall the NVIDIA driver",
            signal_name(&status)
        )),
    }
}

#[cfg(unix)]
fn signal_name(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    let n = status.signal().unwrap_or(0);
    let name = match n {
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        31 => "SIGSYS",
        _ => "a signal",
    };
    format!("{name} (signal {n})")
}

#[cfg(not(unix))]
fn signal_name(status: &std::process::ExitStatus) -> String {
    format!("{status}")
}
