//! The operating systems the driver runs on, each also a translation unit of the headers: one
//! type for the manifest's `target`, the readers' units and min-driver's driver tables and
//! `--platform`. A leaf: it imports nothing of the pipeline.

use std::fmt;

use serde::Deserialize;

/// An operating system the driver runs on (x86-64), and the translation unit for its headers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    #[default]
    Linux,
    Windows,
}

impl Platform {
    /// Every platform, in order.
    pub const ALL: [Platform; 2] = [Platform::Linux, Platform::Windows];

    /// As the manifest and the command line write it: `linux`, `windows`.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Linux => "linux",
            Platform::Windows => "windows",
        }
    }

    /// As NVIDIA's driver tables name the driver's platform: `Linux x86-64`.
    pub fn driver_name(self) -> &'static str {
        match self {
            Platform::Linux => "Linux x86-64",
            Platform::Windows => "Windows x86-64",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Platform {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Platform::ALL.into_iter().find(|p| p.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = Platform::ALL.iter().map(|p| p.as_str()).collect();
            format!("`{s}` is no platform: write {}", names.join(" or "))
        })
    }
}
