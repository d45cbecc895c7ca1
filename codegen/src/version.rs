//! CUDA versions: a toolkit's `major.minor`, and the driver API's `major*1000 + minor*10`.
//! A leaf: it imports nothing of the pipeline.

use std::fmt;

use serde::{Deserialize, Deserializer};

/// A CUDA toolkit version, `major.minor` (`12.9`). Ordered numerically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolkitVersion {
    pub major: u32,
    pub minor: u32,
}

impl ToolkitVersion {
    /// The driver API's encoding: `major * 1000 + minor * 10`.
    pub fn cuda_version(self) -> u32 {
        self.major * 1000 + self.minor * 10
    }

    /// The inverse of [`Self::cuda_version`], for `CUDA_VERSION` read off a cuda.h.
    pub fn from_cuda_version(v: u32) -> Self {
        ToolkitVersion { major: v / 1000, minor: (v % 1000) / 10 }
    }
}

impl std::str::FromStr for ToolkitVersion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not a toolkit version of the form major.minor, such as 12.9");
        let (major, minor) = s.split_once('.').ok_or_else(bad)?;
        let num = |p: &str| -> Result<u32, String> {
            if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            p.parse().map_err(|_| bad())
        };
        let (major_n, minor_n) = (num(major)?, num(minor)?);
        if major_n == 0 || minor_n > 99 {
            return Err(bad());
        }
        let v = ToolkitVersion { major: major_n, minor: minor_n };
        // One spelling per version, the one CUDA and the manifest use: `13.05` is not 13.5.
        if v.to_string() != s {
            return Err(format!("`{s}` is not how a toolkit version is written: write `{v}` (no leading zeros)"));
        }
        Ok(v)
    }
}

impl fmt::Display for ToolkitVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl<'de> Deserialize<'de> for ToolkitVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for ToolkitVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// `3020` as `3.2`.
pub fn format_cuda_version(v: u32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}
