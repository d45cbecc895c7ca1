//! What a run tells its user: [`Report`], the few lines of a summary (and, with `--verbose`,
//! every header warning, per-toolkit count and ABI drift). Shared by `generate`, `diff` and
//! `--add-toolkit`.

use std::path::Path;

use crate::error::Warning;
use crate::model::Model;
use crate::version::ToolkitVersion;
use crate::write::{Mode, WriteReport};

/// What a run did, for the summary.
#[derive(Debug)]
pub struct Report {
    pub model: Model,
    pub libclang: String,
    pub write: WriteReport,
    /// Per toolkit: one line of counts.
    pub toolkit_lines: Vec<String>,
    /// Local toolkits added or used instead of a pin, and how they compare; a killed
    /// `--add-toolkit` made whole before the run.
    pub notes: Vec<String>,
    /// NVIDIA header problems worth a look (broken aliases, unversioned typedefs).
    pub warnings: Vec<Warning>,
}

impl Report {
    /// The run's summary, as printed by the command-line tools: a few lines (notes on local
    /// toolkits, libclang, what was read, what was written); with `verbose`, every warning,
    /// the per-toolkit counts and each ABI drift too.
    pub fn summary(&self, mode: Mode, out: &Path, elapsed: std::time::Duration, verbose: bool) -> String {
        let mut s = String::new();
        if verbose {
            for w in &self.warnings {
                s.push_str(&format!("warning: {w}\n"));
            }
            for line in &self.toolkit_lines {
                s.push_str(&format!("{line}\n"));
            }
            for d in &self.model.drift {
                let param = d.param.as_deref().unwrap_or("parameter list");
                s.push_str(&format!(
                    "ABI drift: {} {} -> {}: {param}: {} -> {}\n",
                    d.pfn, d.from, d.to, d.before, d.after
                ));
            }
        }
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        s.push_str(&format!("{}\n", self.libclang));
        let versions: Vec<ToolkitVersion> = self.model.toolkits.iter().map(|t| t.version).collect();
        let range = match (versions.first(), versions.last()) {
            (Some(a), Some(b)) if a != b => format!(" ({a} to {b})"),
            (Some(a), _) => format!(" ({a})"),
            _ => String::new(),
        };
        s.push_str(&format!(
            "{} toolkits{range}: {} entries of {} symbols; every type their signatures name is defined (the crate builds with every feature)\n",
            versions.len(),
            self.model.entries.len(),
            self.model.symbols().len(),
        ));
        if !verbose && (!self.model.drift.is_empty() || !self.warnings.is_empty()) {
            s.push_str(&format!(
                "{} ABI drift notes and {} warnings about the headers: --verbose lists them\n",
                self.model.drift.len(),
                self.warnings.len()
            ));
        }
        let secs = elapsed.as_secs_f64();
        match mode {
            Mode::Check => s.push_str(&format!("{}: up to date ({secs:.1} s)\n", out.display())),
            Mode::Write => s.push_str(&format!(
                "{}: {} files written, {} removed, {} unchanged ({secs:.1} s)\n",
                out.display(),
                self.write.written.len(),
                self.write.removed.len(),
                self.write.unchanged
            )),
        }
        s.push_str(&self.write.notes());
        s
    }
}

/// Per toolkit, one line of counts: typedefs and aliases per header, entries in all.
pub fn toolkit_lines(model: &Model) -> Vec<String> {
    model
        .toolkits
        .iter()
        .map(|t| {
            let entries = model.entries.values().filter(|e| e.toolkits.contains(&t.version)).count();
            let headers: Vec<String> = t
                .headers
                .iter()
                .map(|(h, c)| {
                    format!("{h}: {} typedefs, {} aliases ({} broken)", c.typedefs, c.aliases, c.broken_aliases)
                })
                .collect();
            format!("CUDA {:<5} {} -> {entries} entries", t.version, headers.join("; "))
        })
        .collect()
}
