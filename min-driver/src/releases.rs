//! NVIDIA's published tables, kept as data in `cuda-releases.toml` (beside the headers
//! manifest, each table with its source): which CUDA release first JIT-compiles each PTX ISA
//! version, first supports each GPU architecture, and which driver each CUDA release needs.

use anyhow::{bail, Context, Result};
use codegen::ToolkitVersion;
use serde::Deserialize;

/// The file, compiled in: min-driver runs in other repositories without this one.
pub const TEXT: &str = include_str!("../cuda-releases.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Releases {
    #[serde(default)]
    pub ptx: Vec<Ptx>,
    #[serde(default)]
    pub arch: Vec<Arch>,
    #[serde(default)]
    pub driver: Vec<Driver>,
    #[serde(default)]
    pub compat: Vec<Compat>,
}

/// NVIDIA's minimum driver for minor version compatibility: a runtime of major `major` (11.x,
/// 12.x, 13.x) runs, with the features of that major's first release, on these drivers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compat {
    pub major: u32,
    #[serde(default)]
    pub linux: Option<String>,
    #[serde(default)]
    pub windows: Option<String>,
}

/// PTX ISA `isa` is JIT-compiled by drivers of CUDA `cuda` and newer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ptx {
    pub isa: String,
    pub cuda: String,
}

/// GPU architecture `name` (`sm_90a`) is first supported by CUDA `cuda`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arch {
    pub name: String,
    pub cuda: String,
    /// The first CUDA release without it, where it was dropped.
    #[serde(default)]
    pub removed: Option<String>,
}

/// The oldest driver of each platform for CUDA `cuda` (`None`: not known).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Driver {
    pub cuda: String,
    #[serde(default)]
    pub linux: Option<String>,
    #[serde(default)]
    pub windows: Option<String>,
    /// The driver branch (`r565`).
    #[serde(default)]
    pub branch: Option<String>,
    /// `false` for a driver branch's CUDA version that was never a toolkit (12.7, r565).
    #[serde(default = "yes")]
    pub toolkit: bool,
}

fn yes() -> bool {
    true
}

/// A platform of NVIDIA's driver table: the generator's own.
pub use codegen::platform::Platform;

/// `12.5` as 12050 (cuDriverGetVersion's form), by the generator's one reader of CUDA
/// versions ([`ToolkitVersion`]'s): `None` for what is no version as CUDA writes one (`12.05`,
/// `12.x`); its error, which says what to write, is [`parse_cuda`]'s.
pub fn cuda_number(text: &str) -> Option<u32> {
    parse_cuda(text).ok()
}

/// `12.5` as 12050, or why the text is no CUDA version and what to write instead.
pub fn parse_cuda(text: &str) -> Result<u32, String> {
    text.parse::<ToolkitVersion>().map(ToolkitVersion::cuda_version)
}

/// 12050 as `12.5`: the generator's one writer of CUDA versions.
pub use codegen::version::format_cuda_version as cuda_text;

/// A driver version (`535.104.05`) as numbers to compare.
pub fn driver_number(text: &str) -> Option<Vec<u32>> {
    let parts: Option<Vec<u32>> = text.split('.').map(|p| p.parse().ok()).collect();
    parts.filter(|p| (2..=3).contains(&p.len()))
}

impl Driver {
    /// The oldest driver of `platform` for this row's release (`None`: not known).
    pub fn minimum(&self, platform: Platform) -> Option<&str> {
        match platform {
            Platform::Linux => self.linux.as_deref(),
            Platform::Windows => self.windows.as_deref(),
        }
    }
}

impl Releases {
    pub fn load() -> Result<Self> {
        Self::parse(TEXT).context("cuda-releases.toml, compiled into cuda-sys-gen")
    }

    pub fn parse(text: &str) -> Result<Self> {
        let r: Releases = toml::from_str(text)?;
        for p in &r.ptx {
            if cuda_number(&p.cuda).is_none() || cuda_number(&p.isa).is_none() {
                bail!("[[ptx]] isa = {:?}, cuda = {:?}: not versions of the form 12.5", p.isa, p.cuda);
            }
        }
        for a in &r.arch {
            if cuda_number(&a.cuda).is_none() || a.removed.as_deref().is_some_and(|x| cuda_number(x).is_none()) {
                bail!("[[arch]] {}: cuda = {:?} is not a version of the form 12.5", a.name, a.cuda);
            }
        }
        for d in &r.driver {
            let bad = cuda_number(&d.cuda).is_none()
                || [&d.linux, &d.windows].into_iter().flatten().any(|v| driver_number(v).is_none());
            if bad {
                bail!("[[driver]] cuda = {:?}: a CUDA version and driver versions such as 555.42.02", d.cuda);
            }
        }
        for c in &r.compat {
            if [&c.linux, &c.windows].into_iter().flatten().any(|v| driver_number(v).is_none()) {
                bail!("[[compat]] major = {}: driver versions such as 525.60.13", c.major);
            }
        }
        Ok(r)
    }

    /// NVIDIA's minimum driver of `platform` for minor version compatibility of a runtime of
    /// `major` (`None`: before CUDA 11, or not known).
    pub fn compat_for(&self, major: u32, platform: Platform) -> Option<&str> {
        let c = self.compat.iter().find(|c| c.major == major)?;
        match platform {
            Platform::Linux => c.linux.as_deref(),
            Platform::Windows => c.windows.as_deref(),
        }
    }

    /// The CUDA release that first JIT-compiles PTX ISA `isa` (`8.5`).
    pub fn ptx(&self, isa: &str) -> Option<u32> {
        let want = cuda_number(isa)?;
        self.ptx.iter().find(|p| cuda_number(&p.isa) == Some(want)).and_then(|p| cuda_number(&p.cuda))
    }

    /// The newest PTX ISA the table knows, and its CUDA release.
    pub fn newest_ptx(&self) -> Option<&Ptx> {
        self.ptx.iter().max_by_key(|p| cuda_number(&p.isa))
    }

    /// The first CUDA release that supports architecture `name` (`sm_90a`).
    pub fn arch(&self, name: &str) -> Option<&Arch> {
        self.arch.iter().find(|a| a.name == name)
    }

    /// The oldest driver of `platform` for CUDA `cuda` (12050): the row of the lowest release
    /// at or above it that the table has a value for, and that release.
    pub fn driver_for(&self, cuda: u32, platform: Platform) -> Option<(&str, u32)> {
        self.driver
            .iter()
            .filter_map(|d| {
                let v = cuda_number(&d.cuda)?;
                let driver = d.minimum(platform)?;
                (v >= cuda).then_some((driver, v))
            })
            .min_by_key(|(_, v)| *v)
    }

    /// The newest CUDA release a driver of `platform` at version `driver` runs: the highest
    /// row whose minimum it meets. `None`: older than every row.
    pub fn cuda_of_driver(&self, driver: &[u32], platform: Platform) -> Option<u32> {
        self.driver
            .iter()
            .filter_map(|d| {
                let need = d.minimum(platform)?;
                (driver_number(need)?.as_slice() <= driver).then(|| cuda_number(&d.cuda)).flatten()
            })
            .max()
    }
}
