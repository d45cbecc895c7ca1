//! Everything that can go wrong in the pipeline, each with what a user needs to act on it:
//! the file and line, the toolkit, the package, and what to do; and what a run says without
//! failing ([`Warning`]).

use std::path::PathBuf;

use crate::version::ToolkitVersion;

/// Something a run found worth a look that does not stop it (a broken alias in a header, a
/// manifest rule that does nothing): the toolkit whose headers gave it, if one did, and what
/// it says. Shown as `CUDA 12.9: ...`; `diff` says one that both its toolkits give once.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Warning {
    pub toolkit: Option<ToolkitVersion>,
    pub text: String,
}

impl Warning {
    /// A warning about one toolkit's headers.
    pub fn of(toolkit: ToolkitVersion, text: String) -> Warning {
        Warning { toolkit: Some(toolkit), text }
    }

    /// A warning about no one toolkit (the manifest's rules, the merged model).
    pub fn general(text: String) -> Warning {
        Warning { toolkit: None, text }
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.toolkit {
            Some(v) => write!(f, "CUDA {v}: {}", self.text),
            None => f.write_str(&self.text),
        }
    }
}

impl serde::Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Everything that can go wrong, with what a user needs to act on it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },

    #[error("{}: {reason}", path.display())]
    Input { path: PathBuf, reason: String },

    #[error("refusing {what} {text:?}: {why}")]
    HeaderText { what: String, text: String, why: String },

    #[error("{message}\n  --> {}:{line}:{col}", path.display())]
    Manifest { path: PathBuf, line: usize, col: usize, message: String },

    #[error("toolkit {}: {detail}", path.display())]
    ToolkitNotFound { path: PathBuf, detail: String },

    #[error("toolkit {toolkit}: {header} not found in {}", fmt_paths(searched))]
    MissingHeader { toolkit: ToolkitVersion, header: String, searched: Vec<PathBuf> },

    #[error("{message}\n  --> {}:{line}", path.display())]
    HeaderContents { path: PathBuf, line: usize, message: String },

    #[error("toolkit {toolkit}: clang could not parse the headers: {message}")]
    Bindgen { toolkit: ToolkitVersion, message: String },

    #[error("toolkit {toolkit}: bindgen's output could not be read: {message} (this is a bug in cuda-sys-gen or an unexpected header construct; please report it with the header)")]
    BindgenOutput { toolkit: ToolkitVersion, message: String },

    #[error("no toolkit to read: {} pins none and no local toolkit was given (pin one in it with `generate --add-toolkit VERSION`, add a [[toolkit]] block to it by hand, or pass --toolkit PATH)", manifest.display())]
    NoToolkits { manifest: PathBuf },

    #[error("the [[toolkit]] labelled \"{label}\" holds the headers of CUDA {found}: its cuda.h says `#define CUDA_VERSION {number}`\n  --> {}:{line}:{col}\n  cuda.h: {}\n  ({})", manifest.display(), header.display(), mislabel_advice(*label, *found, *number))]
    MislabelledToolkit {
        manifest: PathBuf,
        line: usize,
        col: usize,
        label: ToolkitVersion,
        found: ToolkitVersion,
        number: u32,
        header: PathBuf,
    },

    #[error("`{name}` is not a valid crate name: {why} (cargo's and crates.io's rules: ASCII letters, digits, `-` and `_`, a letter first, at most 64 characters, no Rust keyword, no name of the standard library's crates or of a Windows device); pass another --crate-name")]
    BadCrateName { name: String, why: String },

    #[error("this machine lacks what generation needs (checked before any download):\n{}", missing.iter().map(|m| format!("  - {m}")).collect::<Vec<_>>().join("\n"))]
    Prerequisites { missing: Vec<String> },

    #[error("no libclang: {detail}")]
    NoLibclang { detail: String },

    #[error("`pip download {package}` failed: {detail}\n  (the headers come from PyPI; check the network or your pip configuration, or pass --toolkit with a local CUDA toolkit)")]
    Pip { package: String, detail: String },

    #[error("{package} is not in the cache at {} and downloads are off; run once with network access", cache.display())]
    NotCached { package: String, cache: PathBuf },

    #[error("{} wheel(s) are not in the cache at {} and downloads are off (--offline): run once with network access, or restore the cache there; missing:\n{}", files.len(), cache.display(), fmt_list(files, 10))]
    NotCachedOffline { files: Vec<String>, cache: PathBuf },

    #[error("{}: the cached wheel of {package} has sha256 {actual}, and the manifest pins {expected}: the hash differs (the pin was changed, or the cached file is not the wheel that was pinned); downloads are off (--offline), so the file was left as it is: check the pin, or run once with network access, which downloads the pinned wheel again and checks it", wheel.display())]
    CachedSha256Mismatch { wheel: PathBuf, package: String, expected: String, actual: String },

    #[error("sha256 mismatch for {file}: the manifest pins {expected}, the download has {actual}; if the package was legitimately re-published, update headers-manifest.toml after checking it")]
    Sha256Mismatch { file: String, expected: String, actual: String },

    #[error("refusing archive {}: {message}", archive.display())]
    UnsafeArchive { archive: PathBuf, message: String },

    #[error("{count} typedef header(s) produced no PFN_ typedefs:\n{details}")]
    NoTypedefs { count: usize, details: String },

    #[error("{pfn} (module `{module}`, declared up to CUDA {toolkit}) names the type `{ty}`, which the newest toolkit's headers do not define: the crate would not build, so nothing was written (a toolkit that lacks headers the others have? pass it with the others, or report this with the headers)")]
    UndefinedType { pfn: String, module: String, ty: String, toolkit: String },

    #[error("toolkit {toolkit}: cuda.h's C name `{c_name}` expands to `{exported}`{}, which no PFN_ typedef of that toolkit is exported as{}: the C-name module would call an ABI the registry does not know, so nothing was written (a typedef header missing from the manifest's rows? add its row; otherwise report this with the headers)", if *per_thread { " under CUDA_API_PER_THREAD_DEFAULT_STREAM" } else { "" }, if *more > 0 { format!(" ({more} more C names are unresolved)") } else { String::new() })]
    UnresolvedCName { toolkit: ToolkitVersion, c_name: String, exported: String, per_thread: bool, more: usize },

    #[error("generated code does not parse: {file}: {message} (this is a bug in cuda-sys-gen)")]
    Emit { file: String, message: String },

    #[error("refusing to replace {} with the generated crate: {reason}\n  (the output folder is replaced as a whole: give --out a folder of its own (a new one, or one only cuda-sys-gen has written{}), or move what is yours out of it)", out.display(), instead.as_ref().map(|i| format!(", such as `{i}`")).unwrap_or_default())]
    NotOurs {
        out: PathBuf,
        reason: String,
        /// A folder that would be accepted, checked with the same rules (`None`: none found).
        instead: Option<String>,
    },

    #[error("{source}\n  (nothing was replaced; what this run had staged could not all be removed and is in {}: look through it, then remove it)", kept.display())]
    StagedKept { source: Box<Error>, kept: PathBuf },

    #[error("refusing to write the generated file {}: {reason}\n  (only a file cuda-sys-gen wrote, with its `@generated by cuda-sys-gen` line on top, is replaced: give a path of its own, or move what is there away)", path.display())]
    NotOurFile { path: PathBuf, reason: String },

    #[error("{}: an interrupted `generate --add-toolkit` left its journal: {detail}", journal.display())]
    Interrupted { journal: PathBuf, detail: String },

    #[error("{}", fmt_stale(files, command, generator.as_deref()))]
    Stale {
        files: Vec<String>,
        command: String,
        /// Where the files were written by another version of the generator: both versions.
        generator: Option<String>,
    },

    #[error("CUDA {version} is not pinned in {} (pinned: {pinned}): give a pinned version or the path of a local toolkit, or pin it first with `generate --add-toolkit {version}`", manifest.display())]
    NotPinned { version: ToolkitVersion, manifest: PathBuf, pinned: String },

    #[error("both sides are CUDA {version}: {detail}")]
    SameToolkit { version: ToolkitVersion, detail: String },

    #[error("{count} toolkits ({first} to {last}) are more than one crate can be generated from: the registry records the toolkits that declare an entry as the bits of a u64, so at most {max}; nothing was written (remove [[toolkit]] pins from the manifest, pass fewer --toolkit paths, or pass --pinned-only to leave out the toolkit found on this machine)")]
    TooManyToolkits { count: usize, first: ToolkitVersion, last: ToolkitVersion, max: usize },

    #[error("CUDA {version} is not in the model (it holds {present}); build the model over both toolkits of a diff")]
    NotInModel { version: ToolkitVersion, present: String },

    #[error("CUDA {version} is not on PyPI: {detail}")]
    NotOnPyPI { version: ToolkitVersion, package: String, detail: String },

    #[error("CUDA {version} is already pinned ({pin}); nothing to add\n  --> {}:{line}:{col}", manifest.display())]
    AlreadyPinned { version: ToolkitVersion, pin: String, manifest: PathBuf, line: usize, col: usize },

    #[error("`pip index versions {package}` failed: {detail}\n  (check the network or your pip configuration)")]
    PipIndex { package: String, detail: String },

    #[error("{}: {message}", wheel.display())]
    WheelContents { wheel: PathBuf, message: String },
}

/// One item a line, the first `show` of them, and how many more.
fn fmt_list(items: &[String], show: usize) -> String {
    let mut s: Vec<String> = items.iter().take(show).map(|i| format!("  {i}")).collect();
    if items.len() > show {
        s.push(format!("  and {} more", items.len() - show));
    }
    s.join("\n")
}

/// What to do about a pin whose cuda.h says another version.
fn mislabel_advice(label: ToolkitVersion, found: ToolkitVersion, number: u32) -> String {
    // `12.40` for `12.4`: the same digits read as a decimal number, not as CUDA numbers them.
    if label.minor >= 10 && label.minor % 10 == 0 && label.major == found.major && label.minor / 10 == found.minor {
        return format!(
            "CUDA_VERSION {number} is major * 1000 + minor * 10, so its label is \"{found}\": write version = \"{found}\""
        );
    }
    format!(
        "a pin's version is the toolkit its headers are: write version = \"{found}\" if these are the wheels you \
         mean, or pin CUDA {label}'s own wheels with `generate --add-toolkit {label}`"
    )
}

fn fmt_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

fn fmt_stale(files: &[String], command: &str, generator: Option<&str>) -> String {
    let mut s = String::from("generated files are out of date");
    match generator {
        Some(note) => s.push_str(&format!(" ({note}):\n")),
        None => s.push_str(":\n"),
    }
    for f in files {
        s.push_str(&format!("  {f}\n"));
    }
    s.push_str(&format!("run `{command}` and commit the result"));
    s
}
