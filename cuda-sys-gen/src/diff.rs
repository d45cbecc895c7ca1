//! `diff`: one model over two toolkits, the report on stdout (markdown or JSON), the header
//! warnings of both sides on stderr (one that both give said once), and the exit status the
//! verdict and `--fail-on` call for.

use std::path::Path;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use codegen::diff::toolkits::{self, DiffConfig};
use codegen::diff::{self, Verdict};
use codegen::error::Warning;
use codegen::locate::ToolkitSpec;
use codegen::ToolkitVersion;

/// The options of `diff`.
#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The older toolkit: a pinned version (12.9) or the path of a local toolkit.
    #[arg(long, value_name = "VERSION|PATH")]
    pub from: ToolkitSpec,
    /// The newer toolkit: a pinned version (13.0) or the path of a local toolkit.
    #[arg(long, value_name = "VERSION|PATH")]
    pub to: ToolkitSpec,
    /// Print the report as JSON, for tools, instead of markdown.
    #[arg(long)]
    pub json: bool,
    /// Which changes make the exit status non-zero: `breaking` lets additions pass (exit 0);
    /// `additive` fails on any change (2 or 3), as does leaving the option out.
    #[arg(long, value_enum, value_name = "KIND")]
    pub fail_on: Option<FailOn>,
    /// Never run pip: use only the cache.
    #[arg(long)]
    pub offline: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Any change fails: 2 for additions only, 3 for breaking changes.
    Additive,
    /// Only breaking changes fail (3); additions exit 0.
    Breaking,
}

/// `diff --help`'s closing text: [`diff::EXIT_STATUSES`] (the docs' table is tested against
/// the same), the `--fail-on` policy, and where the rest is.
pub fn exit_status_help() -> String {
    crate::exit::exit_status_help(
        &diff::EXIT_STATUSES,
        "Without --fail-on every change is a failure exit (2 or 3), as with diff(1); --fail-on additive\n\
         says so explicitly; --fail-on breaking lets additions through with 0.\n\n\
         What each section of the report means, its JSON and its use in CI: docs/diff.md in cuda-sys-gen's \
         repository.",
    )
}

/// `diff`: one model over both toolkits, the report on stdout (markdown or JSON), and the
/// exit status of [`exit_status_help`].
pub fn run(args: DiffArgs, manifest: &Path, cache: &Path) -> Result<u8> {
    let cfg = DiffConfig {
        manifest: manifest.to_owned(),
        cache_dir: cache.to_owned(),
        from: args.from.clone(),
        to: args.to.clone(),
        offline: args.offline,
        progress: Some(crate::generate::stderr_progress()),
    };
    let run =
        toolkits::diff_toolkits(&cfg).with_context(|| format!("could not compare {} with {}", args.from, args.to))?;
    for w in merge_toolkit_warnings(&run.built.warnings) {
        crate::say!("warning: {w}");
    }
    let d = &run.diff;
    if d.from.version > d.to.version {
        crate::say!(
            "note: --from {} is newer than --to {}: the report reads as a downgrade, what moving back to {} changes \
             (removals are then the newer toolkit's additions); swap them for what {} brings",
            d.from.version,
            d.to.version,
            d.to.version,
            d.from.version
        );
    }
    if args.json {
        crate::exit::out(format_args!("{}", diff::json(d).context("could not write the report as JSON")?));
    } else {
        crate::exit::out(format_args!("{}", diff::markdown::render(d)));
    }
    let status = match (args.fail_on, d.verdict) {
        (Some(FailOn::Breaking), Verdict::Additive) => 0,
        (_, v) => v.exit_status(),
    };
    if crate::exit::stdout_lost() {
        crate::say!(
            "CUDA {} -> {}: {}; stdout was closed before the report was printed in full (exit status {})",
            d.from.version,
            d.to.version,
            d.verdict.as_str(),
            crate::exit::CLOSED_OUTPUT
        );
    } else {
        crate::say!("CUDA {} -> {}: {} (exit status {status})", d.from.version, d.to.version, d.verdict.as_str());
    }
    Ok(status)
}

/// Header warnings of a diff's two sides, one line each: a warning both toolkits give
/// (`CUDA 12.9: X` and `CUDA 13.0: X`) is said once, with both versions (`CUDA 12.9, 13.0: X`),
/// where the first of them stood.
pub fn merge_toolkit_warnings(warnings: &[Warning]) -> Vec<String> {
    let mut merged: Vec<(Vec<ToolkitVersion>, &str)> = Vec::new();
    for w in warnings {
        let Some(version) = w.toolkit else {
            merged.push((Vec::new(), &w.text));
            continue;
        };
        match merged.iter_mut().find(|(vs, text)| !vs.is_empty() && *text == w.text) {
            Some((vs, _)) if !vs.contains(&version) => vs.push(version),
            Some(_) => {}
            None => merged.push((vec![version], &w.text)),
        }
    }
    merged
        .into_iter()
        .map(|(vs, text)| match vs.as_slice() {
            [] => text.to_owned(),
            _ => {
                let vs: Vec<String> = vs.iter().map(ToString::to_string).collect();
                format!("CUDA {}: {text}", vs.join(", "))
            }
        })
        .collect()
}
