//! What a floor says: the report `min-driver` prints ([`Floor::render`]), the verdict on one
//! driver (`--driver`, [`Check`]) and the JSON of both. Nothing here reads a file or decides a
//! floor: it renders what the readers and the model gave.

use super::*;

impl Floor {
    /// The report `min-driver` prints; paths relative to `root`.
    pub fn render(&self, root: &Path, releases: Option<&Releases>) -> String {
        let rel = |f: &Path| f.strip_prefix(root).unwrap_or(f).display().to_string();
        let least = if self.at_least() { "at least " } else { "" };
        let mut s = String::new();
        for p in &self.programs {
            s.push_str(&format!("read from {p}\n"));
        }
        let these = match self.programs.len() {
            0 => "these sources",
            1 if self.programs[0].contains(", read as a kernel") => "this kernel file",
            1 if self.programs[0].contains("a member of an archive") => "this archive member",
            1 if self.programs[0].contains("object file (.o") => "this object file",
            1 => "this file",
            _ => "these files",
        };
        for n in &self.notes {
            s.push_str(&format!("{n}\n"));
        }
        // A driver library has no floor of its own: its note is the headline.
        let drivers = self.notes.iter().any(|n| n.starts_with(model::DRIVER_NOTE));
        s.push_str(&match self.setter() {
            None if drivers && !self.at_least() => String::new(),
            None if !self.at_least() => format!(
                "no entry point of the generated crate, no driver function and no kernel is named in {these}: any \
                 driver will do\n"
            ),
            None => format!("nothing that sets a floor could be read in {these}, and what could not may set one\n"),
            Some(setter) => {
                let (counted, version, name, spelled, file, line) = match setter {
                    Setter::Entry(u) => {
                        (format!("{} entry points used", self.uses.len()), u.version, &u.marker, &u.spelled, &u.file, u.line)
                    }
                    Setter::Kernel(k) => (
                        format!("{} entry points and {} kernel needs", self.uses.len(), self.kernels.len()),
                        k.version,
                        &k.needs,
                        &k.what,
                        &k.file,
                        k.line,
                    ),
                };
                format!(
                    "oldest driver for the {counted}: {least}CUDA {} ({version}), set by {name} ({spelled} at {}:{line})\n",
                    cuda_text(version),
                    rel(file)
                )
            }
        });
        if !self.programs.is_empty() {
            // No source lines in a compiled program: `at file:0` is the program itself.
            if let Some(cut) = s.rfind(" at ").filter(|_| s.ends_with(":0)\n")) {
                s.truncate(cut);
                s.push_str(")\n");
            }
            // What was read, said for what the files are: kernel files hold no lookups, and a
            // driver library has no floor of its own.
            let kernel_files = self.programs.iter().all(|p| p.contains(", read as a kernel"));
            let only_drivers = self.setter().is_none() && drivers && !self.at_least();
            if kernel_files {
                s.push_str(
                    "  (read from the kernel files given: every PTX module and cubin they hold; a cubin loads only on \
                     the GPUs of its architecture, the driver JIT-compiles PTX for the others)\n",
                );
            } else if !only_drivers {
                s.push_str(
                    "  (read from the files given: every lookup through the generated crate, every libcuda import, \
                     the runtime it links or holds and the kernels it embeds, also one taken only on some paths; \
                     what it can do at run time that is not read, it names below, and the floor is then \"at \
                     least\")\n",
                );
            }
            if self.uses.iter().any(|u| u.reading == Reading::String) {
                s.push_str(
                    "  (names read from strings count at their highest meaning: an upper estimate of the need, not \
                     the need; `cuda-sys-gen min-driver --run` observes the floor of a run, docs/min-driver.md)\n",
                );
            }
        }
        if let Some(cubins) = self.version_with_cubins().filter(|&c| c < self.version()) {
            let gpus = if self.cubin_gpus.is_empty() {
                "a GPU each fatbin holds a cubin for (no GPU is named by all of them)".to_owned()
            } else {
                format!("a GPU every fatbin holds a cubin for ({})", self.cubin_gpus.join(", "))
            };
            s.push_str(&format!(
                "  on {gpus}: {least}CUDA {} ({cubins}); JIT-compiling its PTX for any other GPU: {least}CUDA {} (pass \
                 --arch for one GPU)\n",
                cuda_text(cubins),
                cuda_text(self.version())
            ));
        }
        for u in &self.uses {
            let how = match u.read_as {
                "exact" => String::new(),
                other => format!(" ({other})"),
            };
            let at = format!("{}:{}", rel(&u.file), u.line);
            s.push_str(&row(u.version, &u.marker, &u.spelled, u.reading, &at, &how));
        }
        if !self.kernels.is_empty() {
            s.push_str(&format!("kernels ({}):\n", self.kernels.len()));
            for k in &self.kernels {
                let at = format!("{}:{}", rel(&k.file), k.line);
                s.push_str(&row(k.version, &k.needs, &k.what, k.reading, &at, ""));
            }
        }
        if !self.unresolved.is_empty() {
            s.push_str(&format!("could not read {} thing(s) that may raise the floor:\n", self.unresolved.len()));
            for u in &self.unresolved {
                if u.reading == Reading::Source {
                    s.push_str(&format!("  {}:{}: {} ({})\n", rel(&u.file), u.line, u.spelled, u.why));
                } else {
                    s.push_str(&format!("  {} [{}]: {}\n", u.spelled, u.reading, u.why));
                }
            }
        }
        for lib in &self.not_read {
            s.push_str(&format!("  not read: {lib} (pass it too)\n"));
        }
        if !self.unused.is_empty() {
            s.push_str(&format!("not loaded on this GPU ({}), not counted:\n", self.unused.len()));
            for u in &self.unused {
                s.push_str(&format!("  {u}\n"));
            }
        }
        for b in &self.build_only {
            s.push_str(&format!("  not counted: {} (a build script's: it runs where the program is built)\n", rel(b)));
        }
        if let (Some(r), v) = (releases, self.version()) {
            if v > 0 {
                s.push_str(&driver_lines(self, r, v, self.at_least()));
            }
        }
        s
    }
}

/// One line of the report's entries or kernels: the version, what is needed, how it is
/// spelled and where: at a source line (`at`), or for a compiled program the part it was
/// read from (`reading`: a program has no lines).
fn row(version: u32, needs: &str, spelled: &str, reading: Reading, at: &str, how: &str) -> String {
    if reading == Reading::Source {
        format!("  {version:>5}  {needs:<34} {spelled:<28} {at}{how}\n")
    } else {
        format!("  {version:>5}  {needs:<34} {reading:<7} {spelled}{how}\n")
    }
}

/// "Install at least ..." for each platform of NVIDIA's table.
fn driver_lines(floor: &Floor, r: &Releases, v: u32, at_least: bool) -> String {
    let least = if at_least { "at least " } else { "" };
    let mut s = String::new();
    for p in Platform::ALL {
        let found = floor.driver(r, p);
        if let Some((driver, at)) = found.as_ref().filter(|(d, at)| {
            *at % 1000 == 0 && floor.runtimes.contains(&(at / 1000)) && r.compat_for(at / 1000, p) == Some(d.as_str())
        }) {
            s.push_str(&format!(
                "{} driver: {least}{driver} (NVIDIA's minimum for minor version compatibility of a CUDA {}.x runtime)\n",
                p.driver_name(),
                at / 1000
            ));
            continue;
        }
        match found.as_ref().map(|(d, at)| (d.as_str(), *at)) {
            Some((driver, at)) if at == v => s.push_str(&format!(
                "{} driver: {least}{driver} (NVIDIA's minimum for CUDA {})\n",
                p.driver_name(),
                cuda_text(v)
            )),
            Some((driver, at)) => s.push_str(&format!(
                "{} driver: {least}{driver} (NVIDIA's minimum for CUDA {}; CUDA {}'s row is not known here)\n",
                p.driver_name(),
                cuda_text(at),
                cuda_text(v)
            )),
            None => s.push_str(&format!(
                "{} driver: not known (cuda-releases.toml has no row for CUDA {} or later)\n",
                p.driver_name(),
                cuda_text(v)
            )),
        }
    }
    s
}

/// What a check against a driver or a `--max` found.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// `driver 535.104.05 (Linux x86-64)` or `--max 12.2`.
    pub against: String,
    /// The CUDA version it stands for.
    pub cuda: u32,
    /// `within`, `not proven` (within as far as could be read) or `above`.
    pub verdict: &'static str,
    /// The entries (markers) and kernel needs above it.
    pub missing_entries: Vec<String>,
    pub missing_kernels: Vec<String>,
    /// What is above it was read from strings only, at their highest meaning: an upper
    /// estimate of the need, so "not proven" rather than "above".
    pub upper_estimate: bool,
    /// What is above it is PTX the driver JIT-compiles only for a GPU without a cubin of the
    /// files: it runs on the GPUs they hold cubins for, so "not proven" without `--arch`.
    pub jit_only: bool,
}

impl Check {
    pub(crate) fn new(
        floor: &Floor,
        against: String,
        cuda: u32,
        open_ended: bool,
        driver: Option<(&[u32], Platform)>,
        releases: &Releases,
    ) -> Self {
        let (entries, kernels) = floor.missing_on(cuda);
        let mut kernels: Vec<String> = kernels.iter().map(|k| format!("{} ({})", k.needs, k.what)).collect();
        // A runtime below its minor version compatibility minimum (450.80.02 for 11.x, above
        // 11.0's own 450.51.05): a driver number says more than the CUDA version it stands for.
        if let Some((number, platform)) = driver {
            for &major in &floor.runtimes {
                let Some(min) = releases.compat_for(major, platform) else { continue };
                if releases::driver_number(min).is_some_and(|m| number < m.as_slice()) {
                    kernels.push(format!(
                        "the CUDA {major}.x runtime (NVIDIA's minimum driver for its minor version compatibility: \
                         {min})"
                    ));
                }
            }
        }
        let (_, above) = floor.missing_on(cuda);
        let jit_only = entries.is_empty()
            && !above.is_empty()
            && above.iter().all(|k| k.reading == Reading::Jit)
            && kernels.len() == above.len();
        let upper_estimate = floor.upper_estimate_above(cuda) && kernels.is_empty();
        // An architecture a release removed from ptxas. The 13.0 driver was measured to
        // JIT-compile and run PTX of removed family targets (`.target sm_52`, `sm_30`: the
        // removals are ptxas'), so only an architecture-specific one (`sm_101a`, which 13.0
        // renamed to `sm_110a`, and which only its own GPU runs) is not proven there.
        let removed = floor.kernels.iter().any(|k| {
            k.needs.starts_with("sm_")
                && k.needs.ends_with(['a', 'f'])
                && releases
                    .arch(&k.needs)
                    .and_then(|a| a.removed.as_deref())
                    .and_then(releases::cuda_number)
                    .is_some_and(|r| r <= cuda)
        });
        let verdict = if (!entries.is_empty() || !kernels.is_empty()) && !open_ended && !upper_estimate && !jit_only {
            "above"
        } else if floor.at_least()
            || removed
            || upper_estimate
            || jit_only
            || open_ended && (!entries.is_empty() || !kernels.is_empty())
        {
            "not proven"
        } else {
            "within"
        };
        Check {
            against,
            cuda,
            verdict,
            missing_entries: entries.iter().map(|u| u.marker.clone()).collect(),
            missing_kernels: kernels,
            upper_estimate,
            jit_only,
        }
    }

    /// The exit status it calls for ([`EXIT_STATUSES`]).
    pub fn status(&self) -> u8 {
        match self.verdict {
            "above" => 3,
            "not proven" => 2,
            _ => 0,
        }
    }

    pub(crate) fn render(&self, floor: &Floor, root: &Path) -> String {
        let rel = |f: &Path| f.strip_prefix(root).unwrap_or(f).display().to_string();
        let mut s = match self.verdict {
            "within" => format!("{}: runs (CUDA {} has everything listed)\n", self.against, cuda_text(self.cuda)),
            "not proven" if self.jit_only => format!(
                "{}: not proven: it runs on a GPU the files hold cubins for; on any other GPU the driver \
                 JIT-compiles PTX that needs more than CUDA {} (pass --arch for the GPU it runs on):\n",
                self.against,
                cuda_text(self.cuda)
            ),
            "not proven" if self.upper_estimate => format!(
                "{}: not proven: {} entry point(s) newer than CUDA {} were read only from the program's strings, at \
                 their highest meaning (an upper estimate of the need, not a proof it fails); a run's observed floor \
                 decides:\n",
                self.against,
                self.missing_entries.len(),
                cuda_text(self.cuda)
            ),
            "not proven" if !self.missing_entries.is_empty() || !self.missing_kernels.is_empty() => format!(
                "{}: not proven: {} entry point(s) and {} kernel need(s) are newer than CUDA {}, the newest row of \
                 NVIDIA's table this driver meets; a driver newer than the table may have them:\n",
                self.against,
                self.missing_entries.len(),
                self.missing_kernels.len(),
                cuda_text(self.cuda)
            ),
            "not proven" if floor.unresolved.is_empty() && floor.not_read.is_empty() => format!(
                "{}: not proven: CUDA {} has everything listed, but a release up to it removed an architecture a \
                 kernel targets from ptxas, and whether its driver still JIT-compiles that PTX is not in NVIDIA's \
                 tables:\n{}",
                self.against,
                cuda_text(self.cuda),
                floor
                    .kernels
                    .iter()
                    .filter(|k| k.needs.starts_with("sm_"))
                    .map(|k| format!("  {} ({})\n", k.needs, k.what))
                    .collect::<String>()
            ),
            "not proven" => format!(
                "{}: runs as far as could be read (CUDA {} has everything listed), but {} thing(s) could not be read{}\n",
                self.against,
                cuda_text(self.cuda),
                floor.unresolved.len() + floor.not_read.len(),
                if floor.not_read.is_empty() {
                    String::new()
                } else {
                    format!(" (not read: {}; pass them too)", floor.not_read.join(", "))
                }
            ),
            _ => format!(
                "{}: does not run: {} entry point(s) and {} kernel need(s) are newer than CUDA {}:\n",
                self.against,
                self.missing_entries.len(),
                self.missing_kernels.len(),
                cuda_text(self.cuda)
            ),
        };
        let (entries, kernels) = floor.missing_on(self.cuda);
        let extra: Vec<&String> = self
            .missing_kernels
            .iter()
            .filter(|k| k.starts_with("the CUDA ") && k.contains("minimum driver"))
            .collect();
        for k in extra {
            s.push_str(&format!("  {k}\n"));
        }
        let lacks = entries.into_iter().map(|u| (&u.file, u.line, &u.spelled, u.version, &u.marker));
        let lacks = lacks.chain(kernels.into_iter().map(|k| (&k.file, k.line, &k.needs, k.version, &k.what)));
        for (file, line, what, version, which) in lacks {
            s.push_str(&format!("  {}:{line}: {what} needs CUDA {} ({which})\n", rel(file), cuda_text(version)));
        }
        s
    }
}

impl Floor {
    /// The `--json` report of this floor with its verdicts (the static reading's, and a run's
    /// beside its `run` object).
    pub(crate) fn json_report<'a>(&'a self, releases: &Releases, checks: &'a [Check]) -> JsonReport<'a> {
        let v = self.version();
        let drivers = Platform::ALL
            .into_iter()
            .map(|p| (p.as_str(), (v > 0).then(|| self.driver(releases, p).map(|(d, _)| d)).flatten()))
            .collect();
        JsonReport {
            schema: 2,
            version: v,
            cuda: (v > 0).then(|| cuda_text(v)),
            at_least: self.at_least(),
            drivers,
            entries: &self.uses,
            kernels: &self.kernels,
            unresolved: &self.unresolved,
            build_only: &self.build_only,
            programs: &self.programs,
            unused: &self.unused,
            not_read: &self.not_read,
            notes: &self.notes,
            runtimes: &self.runtimes,
            checks,
        }
    }
}

/// `min-driver --json`'s document (its schema is in docs/min-driver.md).
#[derive(Serialize)]
pub(crate) struct JsonReport<'a> {
    schema: u32,
    /// The floor: `major * 1000 + minor * 10`, 0 when nothing was found.
    version: u32,
    cuda: Option<String>,
    /// Something could not be read: the floor is a lower bound.
    at_least: bool,
    /// The driver to install per platform (`None`: not known).
    drivers: BTreeMap<&'static str, Option<String>>,
    entries: &'a [Use],
    kernels: &'a [Kernel],
    unresolved: &'a [Unresolved],
    build_only: &'a [PathBuf],
    /// The compiled programs read (empty for sources).
    programs: &'a [String],
    /// With `--arch`: fatbin entries not loaded on that GPU.
    unused: &'a [String],
    /// Shared libraries the programs need that were not read.
    not_read: &'a [String],
    /// What a file is where it is no program (a CUDA driver library).
    notes: &'a [String],
    /// The majors of the CUDA runtimes linked or held.
    runtimes: &'a [u32],
    checks: &'a [Check],
}
