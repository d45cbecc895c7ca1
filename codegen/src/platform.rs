//! The operating systems the driver runs on, each also a translation unit of the headers.
//! A leaf: it imports nothing of the pipeline.

use std::fmt;

use serde::Deserialize;

/// An operating system the driver runs on, and the translation unit for its headers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    #[default]
    Linux,
    Windows,
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Platform::Linux => "linux",
            Platform::Windows => "windows",
        })
    }
}
