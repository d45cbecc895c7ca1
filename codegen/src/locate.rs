//! Toolkits on this machine: finding a toolkit's include folder from what a user gives
//! (`/usr/local/cuda`, its `include/`, a pip layout), reading its version off cuda.h, and the
//! folders tried when no `--toolkit` is given.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use crate::version::ToolkitVersion;
use crate::Error;

/// Finds the include folder of a toolkit on this machine.
///
/// Accepts a toolkit root (`/usr/local/cuda`), its `include/` folder, a
/// `targets/<triple>/include` folder, or a pip/conda layout (`.../nvidia/cu13/include` or
/// `.../nvidia/cu13`). Returns the folder that holds `cuda.h`.
///
/// What cannot be read is said as it is (a folder without permission, a symbolic link loop),
/// not taken for a folder without cuda.h.
pub fn locate_toolkit(path: &Path) -> Result<PathBuf, Error> {
    let unreadable = |at: &Path, e: std::io::Error| {
        let what = match e.raw_os_error() {
            #[cfg(unix)]
            Some(libc::ELOOP) => "a symbolic link loop".to_owned(),
            _ => e.to_string(),
        };
        let detail = if at == path {
            format!("it cannot be read: {what}")
        } else {
            format!("{} cannot be read: {what}", at.display())
        };
        Error::ToolkitNotFound { path: path.to_owned(), detail }
    };
    match fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::ToolkitNotFound { path: path.to_owned(), detail: "no such file or directory".into() })
        }
        Err(e) => return Err(unreadable(path, e)),
        Ok(m) if !m.is_dir() => {
            return Err(Error::ToolkitNotFound {
                path: path.to_owned(),
                detail: "it is a file, not a folder: give the toolkit's folder".into(),
            })
        }
        Ok(_) => {}
    }
    // Listing it tells a folder without read permission from one without cuda.h.
    fs::read_dir(path).map_err(|e| unreadable(path, e))?;
    let candidates = [
        path.to_owned(),
        path.join("include"),
        path.join("targets/x86_64-linux/include"),
        path.join("targets/sbsa-linux/include"),
        path.join("cuda_runtime/include"),
    ];
    for c in &candidates {
        let header = c.join("cuda.h");
        match fs::metadata(&header) {
            Ok(m) if m.is_file() => return Ok(c.clone()),
            // A FIFO or a device by that name is no header, and would block or never end.
            Ok(m) if !m.is_dir() => {
                return Err(Error::Input {
                    path: header,
                    reason: format!("cuda.h must be a regular file, and this is {}", crate::input::kind_of(&m)),
                })
            }
            Ok(_) => {}
            // A missing folder on the way (ENOTDIR: `include` is a file) is no toolkit here.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.kind() == std::io::ErrorKind::NotADirectory => {}
            Err(e) => return Err(unreadable(&header, e)),
        }
    }
    Err(Error::ToolkitNotFound {
        path: path.to_owned(),
        detail: "no cuda.h in it, nor in its include/ folder: give a toolkit root, its include/ folder, or a pip layout such as .../nvidia/cu13/include".into(),
    })
}

/// Reads `#define CUDA_VERSION nnnnn` off a cuda.h: the toolkit it is.
pub fn read_cuda_version(include_dir: &Path) -> Result<ToolkitVersion, Error> {
    cuda_version_define(include_dir).map(ToolkitVersion::from_cuda_version)
}

/// The number of `#define CUDA_VERSION nnnnn` in a cuda.h (`12040`).
pub fn cuda_version_define(include_dir: &Path) -> Result<u32, Error> {
    let path = include_dir.join("cuda.h");
    let bytes = crate::input::read_bytes(&path, "cuda.h")?;
    let text = String::from_utf8_lossy(&bytes);
    // `\r` too: clang ends a line at a lone carriage return, and so does a cuda.h saved so.
    for line in text.split(['\n', '\r']) {
        let mut words = line.split_whitespace();
        if words.next() == Some("#define") && words.next() == Some("CUDA_VERSION") {
            if let Some(v) = words.next().and_then(|w| w.parse::<u32>().ok()) {
                if v >= 1000 {
                    return Ok(v);
                }
            }
        }
    }
    Err(Error::ToolkitNotFound {
        path,
        detail: "it has no `#define CUDA_VERSION <number>` line: is it a real cuda.h?".into(),
    })
}

/// The toolkit to use when `--toolkit` is not given: the first of `$CUDA_PATH`,
/// `$CUDA_HOME` and `/usr/local/cuda` that holds a cuda.h, if any.
pub fn discover_local_toolkit() -> Option<PathBuf> {
    let mut v: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(std::env::var_os)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect();
    v.push(PathBuf::from("/usr/local/cuda"));
    v.into_iter().find(|p| locate_toolkit(p).is_ok())
}

/// A toolkit as the command line names it: `12.9` (pinned in the manifest) or a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolkitSpec {
    Version(ToolkitVersion),
    /// `latest`: for `--add-toolkit` and `init`, the newest CUDA minor PyPI has (offline: the
    /// cache); for `diff`, the newest pinned toolkit.
    Latest,
    /// A toolkit root, its include/ folder or a pip layout.
    Path(PathBuf),
}

impl std::str::FromStr for ToolkitSpec {
    type Err = String;
    /// `major.minor` is a version; anything else is a path. Digits and dots alone (`13.05`,
    /// `13`, `13.5.1`) are taken for a version written wrong, not for a path.
    fn from_str(s: &str) -> Result<Self, String> {
        if s.is_empty() {
            return Err("give a toolkit version such as 12.9 or a path".into());
        }
        if s == "latest" {
            return Ok(ToolkitSpec::Latest);
        }
        match s.parse() {
            Ok(v) => Ok(ToolkitSpec::Version(v)),
            Err(e) if s.bytes().all(|b| b.is_ascii_digit() || b == b'.') => {
                Err(format!("{e}; a folder of that name is given as ./{s}"))
            }
            Err(_) => Ok(ToolkitSpec::Path(PathBuf::from(s))),
        }
    }
}

impl fmt::Display for ToolkitSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolkitSpec::Version(v) => write!(f, "{v}"),
            ToolkitSpec::Latest => f.write_str("latest"),
            ToolkitSpec::Path(p) => write!(f, "{}", p.display()),
        }
    }
}
