//! `headers-manifest.toml`: which typedef headers are read, from which pinned toolkits.
//!
//! Everything is checked on load: unknown keys, malformed versions, malformed digests and
//! duplicates are errors that name the file, line and column.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use crate::platform::Platform;
use crate::version::ToolkitVersion;
use crate::Error;

/// The parsed manifest.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Format version of this file; only 1 exists.
    pub schema: u32,
    pub fetch: FetchConfig,
    #[serde(rename = "header")]
    pub headers: Vec<HeaderSpec>,
    #[serde(rename = "toolkit", default)]
    pub toolkits: Vec<ToolkitPin>,
    /// The libclang wheel used when the machine has no libclang of its own.
    pub libclang: Option<PackagePin>,
    /// Entry points that NVIDIA's drivers have on one processor architecture only, although
    /// the headers declare them for every build of their platform.
    #[serde(rename = "arch_only", default)]
    pub arch_only: Vec<ArchOnly>,
    /// Entry points that NVIDIA's drivers were measured to lack before a later CUDA release
    /// than the one their typedef names: the oldest driver that has them.
    #[serde(rename = "driver_floor", default)]
    pub driver_floors: Vec<DriverFloor>,
    /// Where it was read from, as given: what messages about it name.
    #[serde(skip)]
    pub path: PathBuf,
    /// Where each pin's `version = ...` is (line, column), for messages about a pin.
    #[serde(skip)]
    pub pin_at: BTreeMap<ToolkitVersion, (usize, usize)>,
    /// The text it was parsed from: what `--add-toolkit` inserts its pin into (comments kept),
    /// so that a run reads the file once.
    #[serde(skip)]
    pub text: String,
}

/// One `[[driver_floor]]`: the typedef `pfn` needs a driver of CUDA `cuda` or newer, although
/// its name says an older version.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverFloor {
    pub pfn: String,
    /// The oldest CUDA release whose drivers were measured to have it (`"11.2"`).
    pub cuda: String,
    /// How that was found out: what a reader needs to check it again.
    pub evidence: String,
}

impl DriverFloor {
    /// `cuda` as `major * 1000 + minor * 10`.
    pub fn version(&self) -> Option<u32> {
        self.cuda.parse::<crate::version::ToolkitVersion>().ok().map(|v| v.cuda_version())
    }
}

/// The API header whose row every manifest needs, and its typedef header: the driver API
/// itself, whose types every other header builds on and whose entries the lookups are.
pub const CUDA_H: (&str, &str) = ("cuda.h", "cudaTypedefs.h");

/// One `[[arch_only]]`: a symbol whose every ABI exists only in the drivers of `arch`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchOnly {
    pub symbol: String,
    /// Rust's name of the architecture, as `std::env::consts::ARCH` says it.
    pub arch: String,
    /// How that was found out: what a reader needs to check it again.
    pub evidence: String,
}

/// The architectures an `[[arch_only]]` may name.
pub const ARCHES: &[&str] = &["aarch64", "x86_64"];

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchConfig {
    /// The pip `--platform` tag the pinned wheel files were built for.
    pub platform: String,
}

/// One API header and its typedef header.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderSpec {
    /// Short name, used as module name in the generated crate.
    pub name: String,
    /// The header that declares the functions (`cuda.h`).
    pub api: String,
    /// The header that declares their `PFN_` types (`cudaTypedefs.h`).
    pub typedefs: String,
    /// The cargo feature that enables its module; none: always compiled.
    #[serde(default)]
    pub feature: Option<String>,
    /// Whether that feature is one of the generated crate's default features.
    #[serde(default)]
    pub default: bool,
    /// Which translation unit parses it: the Linux one (x86-64 Linux, the packages whose
    /// `target` is linux) or the Windows one (x86-64 MSVC, the win_amd64 packages).
    #[serde(default)]
    pub target: Platform,
    /// Where the driver has its entries; default: the target only. An entry found by both
    /// translation units is on both platforms whatever this says.
    #[serde(default)]
    pub platforms: Vec<Platform>,
    /// Third-party headers its API header includes (`GL/gl.h`, `vdpau/vdpau.h`), included
    /// before it. Nothing is read from the host: each is a stand-in of this project's
    /// (`codegen/standins/<target>/`), and its types reach the crate only as far as the CUDA
    /// headers use them.
    #[serde(default, deserialize_with = "system_headers")]
    pub system: Vec<String>,
    /// Stand-in headers of this project's (`codegen/standins/<target>/`) whose declarations
    /// belong to this row's module (the D3D interfaces): included like `system`, and all
    /// their types emitted.
    #[serde(default)]
    pub standins: Vec<String>,
    /// Extra `-D` definitions for its translation unit (`EGL_NO_X11`).
    #[serde(default)]
    pub defines: Vec<String>,
}

impl HeaderSpec {
    /// A row of the Linux unit with no feature, stand-ins or defines: `cuda` (`cuda.h`,
    /// `cudaTypedefs.h`) as tests and fuzz targets build their models.
    pub fn linux(name: &str, api: &str, typedefs: &str) -> HeaderSpec {
        HeaderSpec {
            name: name.into(),
            api: api.into(),
            typedefs: typedefs.into(),
            feature: None,
            default: false,
            target: Platform::Linux,
            platforms: Vec::new(),
            system: Vec::new(),
            standins: Vec::new(),
            defines: Vec::new(),
        }
    }

    /// The crate module this row becomes.
    pub fn module_spec(&self) -> crate::model::ModuleSpec {
        crate::model::ModuleSpec {
            name: self.name.clone(),
            feature: self.feature.clone(),
            default: self.default,
            api: self.api.clone(),
            typedefs: self.typedefs.clone(),
        }
    }

    /// The platforms its entries exist on.
    pub fn platforms(&self) -> Vec<Platform> {
        if self.platforms.is_empty() {
            vec![self.target]
        } else {
            self.platforms.clone()
        }
    }
}

/// `system = ["GL/gl.h"]`. The earlier form named a Debian package beside each header
/// (`{ header = "GL/gl.h", package = "libgl-dev" }`); nothing is installed any more, so that
/// form is refused with the new spelling.
fn system_headers<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Item {
        Name(String),
        Table(toml::Table),
    }
    let items = Vec::<Item>::deserialize(d)?;
    items
        .into_iter()
        .map(|item| match item {
            Item::Name(n) => Ok(n),
            Item::Table(t) => {
                let header = t.get("header").and_then(|h| h.as_str()).unwrap_or("GL/gl.h");
                Err(serde::de::Error::custom(format!(
                    "system headers are names alone now (write `\"{header}\"`): generation reads no header of the host, \
                     each one is a stand-in in codegen/standins/, so no package needs installing"
                )))
            }
        })
        .collect()
}

/// A pinned toolkit: one CUDA minor release and the wheels its headers come from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolkitPin {
    pub version: ToolkitVersion,
    #[serde(rename = "package")]
    pub packages: Vec<PackagePin>,
}

/// One wheel, pinned by exact version, file name and sha256.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackagePin {
    pub name: String,
    pub version: String,
    pub file: String,
    pub sha256: Sha256,
    /// The folder inside the wheel that holds the files we use (headers, or libclang.so).
    pub include: String,
    /// The pip `--platform` of this wheel, if not [`crate::fetch`]'s (`win_amd64`).
    #[serde(default)]
    pub platform: Option<String>,
    /// Which translation unit its headers feed.
    #[serde(default)]
    pub target: Platform,
}

impl ToolkitPin {
    /// Its packages in a few words, as registry.json and messages name a pin:
    /// `nvidia-cuda-runtime 13.5.37, nvidia-cuda-runtime 13.5.37 (win_amd64)`.
    pub fn describe(&self) -> String {
        let label = |p: &PackagePin| {
            format!("{} {}{}", p.name, p.version, p.platform.as_ref().map(|x| format!(" ({x})")).unwrap_or_default())
        };
        self.packages.iter().map(label).collect::<Vec<_>>().join(", ")
    }
}

/// A lower-case hex sha256 digest.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Sha256(pub String);

impl<'de> Deserialize<'de> for Sha256 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            Ok(Sha256(s))
        } else {
            Err(serde::de::Error::custom(format!("`{s}` is not a sha256 digest (64 lower-case hex digits)")))
        }
    }
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A byte range of the manifest's text.
type Span = std::ops::Range<usize>;

/// An error at a span of the manifest (its start where there is none).
type ErrAt<'a> = &'a dyn Fn(Option<Span>, String) -> Error;

/// Where each value `validate` may refuse stands in the text: the text read again with
/// `toml::Spanned` (it parsed as a [`Manifest`], so it parses as this), so that an error
/// points at the value itself, not at the first mention of its text (a comment, or the first of
/// two duplicates). Keys it does not name are skipped.
#[derive(Default, Deserialize)]
struct Spans {
    schema: Option<toml::Spanned<toml::Value>>,
    #[serde(default)]
    header: Vec<HeaderSpans>,
    #[serde(default)]
    toolkit: Vec<ToolkitSpans>,
    libclang: Option<PackageSpans>,
    #[serde(default)]
    arch_only: Vec<ArchOnlySpans>,
    #[serde(default)]
    driver_floor: Vec<DriverFloorSpans>,
}

#[derive(Deserialize)]
struct HeaderSpans {
    name: toml::Spanned<String>,
    api: toml::Spanned<String>,
    typedefs: toml::Spanned<String>,
    feature: Option<toml::Spanned<String>>,
    #[serde(default)]
    system: Vec<toml::Spanned<String>>,
    #[serde(default)]
    standins: Vec<toml::Spanned<String>>,
    #[serde(default)]
    defines: Vec<toml::Spanned<String>>,
}

#[derive(Deserialize)]
struct ToolkitSpans {
    version: toml::Spanned<toml::Value>,
    #[serde(default)]
    package: Vec<PackageSpans>,
}

#[derive(Deserialize)]
struct PackageSpans {
    file: toml::Spanned<String>,
    include: toml::Spanned<String>,
    platform: Option<toml::Spanned<String>>,
}

#[derive(Deserialize)]
struct ArchOnlySpans {
    symbol: toml::Spanned<String>,
    arch: toml::Spanned<String>,
}

#[derive(Deserialize)]
struct DriverFloorSpans {
    pfn: toml::Spanned<String>,
    cuda: toml::Spanned<String>,
}

impl Manifest {
    /// Reads and checks the manifest at `path`.
    pub fn load(path: &Path) -> Result<Manifest, Error> {
        let text = crate::input::read_text(path, "the headers manifest")?;
        Manifest::parse(path, &text)
    }

    /// Parses and checks manifest text; `path` is only used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<Manifest, Error> {
        let at = |span: Option<std::ops::Range<usize>>| -> (usize, usize) {
            let offset = span.map_or(0, |s| s.start).min(text.len());
            line_col(text, offset)
        };
        let mut manifest: Manifest = toml::from_str(text).map_err(|e| {
            let (line, col) = at(e.span());
            Error::Manifest { path: path.to_owned(), line, col, message: e.message().to_owned() }
        })?;
        manifest.validate(path, text)?;
        manifest.path = path.to_owned();
        manifest.text = text.to_owned();
        // The same text again, for where each pin's version is; it parsed above, so this does.
        #[derive(Deserialize)]
        struct Pins {
            #[serde(default)]
            toolkit: Vec<PinSpan>,
        }
        #[derive(Deserialize)]
        struct PinSpan {
            version: toml::Spanned<ToolkitVersion>,
        }
        if let Ok(pins) = toml::from_str::<Pins>(text) {
            for p in pins.toolkit {
                manifest.pin_at.insert(*p.version.get_ref(), at(Some(p.version.span())));
            }
        }
        Ok(manifest)
    }

    /// Where the pin of `version` is, as an `Error::Manifest` at its `version = ...` line (the
    /// file's start if it has none).
    pub fn pin_error(&self, version: ToolkitVersion, message: String) -> Error {
        let (line, col) = self.pin_at.get(&version).copied().unwrap_or((1, 1));
        Error::Manifest { path: self.path.clone(), line, col, message }
    }

    fn validate(&self, path: &Path, text: &str) -> Result<(), Error> {
        // Semantic errors point at the offending value itself (its span, from `Spans`), the
        // file's start where it has none.
        let spans: Spans = toml::from_str(text).unwrap_or_default();
        let err = |span: Option<Span>, message: String| {
            let (line, col) = line_col(text, span.map_or(0, |s| s.start).min(text.len()));
            Error::Manifest { path: path.to_owned(), line, col, message }
        };
        let header = |i: usize| spans.header.get(i);
        if self.schema != 1 {
            return Err(err(
                spans.schema.as_ref().map(|v| v.span()),
                format!("schema {} is not known; this generator reads schema 1", self.schema),
            ));
        }
        if self.headers.is_empty() {
            return Err(err(None, "the manifest lists no [[header]]".into()));
        }
        // cuda.h's row is required, and first: the Linux unit includes the other headers after
        // cuda.h, and their types and the crate's lookups are its.
        let (api, typedefs) = CUDA_H;
        let is_cuda = |h: &HeaderSpec| h.api == api && h.typedefs == typedefs && h.target == Platform::Linux;
        let cuda_row = format!("[[header]]\nname = \"cuda\"\napi = \"{api}\"\ntypedefs = \"{typedefs}\"");
        match self.headers.iter().position(is_cuda) {
            Some(0) => {}
            Some(i) => {
                return Err(err(
                    header(i).map(|h| h.typedefs.span()),
                    format!("the row of {api} ({typedefs}) must be the first [[header]]: the others are read after it and build on its types; move it up"),
                ))
            }
            None => {
                return Err(err(
                    header(0).map(|h| h.name.span()),
                    format!("the manifest has no [[header]] row for {api}: its typedef header {typedefs} is required (the driver API itself, whose types every other header uses and whose entries the crate looks up); add it as the first row:\n{cuda_row}"),
                ))
            }
        }
        self.check_arch_only(&spans, &err)?;
        self.check_driver_floors(&spans, &err)?;
        self.check_headers(&spans, &err)?;
        self.check_pins(&spans, &err)
    }

    /// `[[arch_only]]`: a known architecture, evidence, each symbol once.
    fn check_arch_only(&self, spans: &Spans, err: ErrAt<'_>) -> Result<(), Error> {
        let mut only = BTreeSet::new();
        for (i, a) in self.arch_only.iter().enumerate() {
            let at = spans.arch_only.get(i);
            if !ARCHES.contains(&a.arch.as_str()) {
                return Err(err(
                    at.map(|a| a.arch.span()),
                    format!("arch `{}` is not one of {}", a.arch, ARCHES.join(", ")),
                ));
            }
            if a.evidence.trim().is_empty() {
                return Err(err(
                    at.map(|a| a.symbol.span()),
                    format!("[[arch_only]] `{}` needs its `evidence`: how it was found out", a.symbol),
                ));
            }
            if !only.insert(a.symbol.as_str()) {
                return Err(err(at.map(|a| a.symbol.span()), format!("[[arch_only]] names `{}` twice", a.symbol)));
            }
        }
        Ok(())
    }

    /// `[[driver_floor]]`: a CUDA version above the typedef's own, evidence, each typedef once.
    fn check_driver_floors(&self, spans: &Spans, err: ErrAt<'_>) -> Result<(), Error> {
        let mut floors = BTreeSet::new();
        for (i, f) in self.driver_floors.iter().enumerate() {
            let at = spans.driver_floor.get(i);
            let Some(version) = f.version() else {
                return Err(err(
                    at.map(|f| f.cuda.span()),
                    format!(
                        "[[driver_floor]] `{}`: cuda = \"{}\" is not a CUDA version such as \"11.2\"",
                        f.pfn, f.cuda
                    ),
                ));
            };
            let named = crate::names::split_pfn_name(&f.pfn).ok().map(|n| n.version);
            if named.is_none_or(|n| n >= version) {
                return Err(err(
                    at.map(|f| f.pfn.span()),
                    format!(
                        "[[driver_floor]] `{}`: not a typedef name whose version is below CUDA {} (a floor at or \
                         below the typedef's own version changes nothing)",
                        f.pfn, f.cuda
                    ),
                ));
            }
            if f.evidence.trim().is_empty() {
                return Err(err(
                    at.map(|f| f.pfn.span()),
                    format!("[[driver_floor]] `{}` needs its `evidence`: how it was found out", f.pfn),
                ));
            }
            if !floors.insert(f.pfn.as_str()) {
                return Err(err(at.map(|f| f.pfn.span()), format!("[[driver_floor]] names `{}` twice", f.pfn)));
            }
        }
        Ok(())
    }

    /// `[[header]]`: names, header files, features, stand-ins and defines.
    fn check_headers(&self, spans: &Spans, err: ErrAt<'_>) -> Result<(), Error> {
        let mut names = BTreeSet::new();
        let mut features = std::collections::BTreeMap::new();
        for (i, h) in self.headers.iter().enumerate() {
            let at = spans.header.get(i);
            let name_at = at.map(|h| h.name.span());
            if !is_ident(&h.name) || syn::parse_str::<syn::Ident>(&h.name).is_err() {
                return Err(err(
                    name_at.clone(),
                    format!("header name `{}` must be a lower-case Rust identifier (and not a keyword)", h.name),
                ));
            }
            if crate::reserved::RESERVED_MODULES.contains(&crate::reserved::module_name(&h.name)) && h.name != "cuda" {
                return Err(err(
                    name_at.clone(),
                    format!(
                        "header name `{}` is taken by the generated crate itself (it has {}): choose another",
                        h.name,
                        crate::reserved::RESERVED_MODULES.join(", ")
                    ),
                ));
            }
            if !names.insert(h.name.as_str()) {
                return Err(err(name_at, format!("header `{}` is listed twice", h.name)));
            }
            for (file, file_at) in [(&h.api, at.map(|h| h.api.span())), (&h.typedefs, at.map(|h| h.typedefs.span()))] {
                if !is_plain_header_name(file) {
                    return Err(err(
                        file_at,
                        format!("`{file}` must be a plain header file name such as cudaTypedefs.h"),
                    ));
                }
            }
            if let Some(f) = &h.feature {
                let f_at = at.and_then(|h| h.feature.as_ref()).map(|f| f.span());
                if !is_ident(f) {
                    return Err(err(f_at.clone(), format!("feature `{f}` must be a lower-case identifier")));
                }
                if f == "default" {
                    return Err(err(f_at.clone(), "feature `default` is Cargo's own list of default features: use `default = true` on the row instead".into()));
                }
                if crate::reserved::RESERVED_FEATURES.contains(&f.as_str()) {
                    return Err(err(
                        f_at.clone(),
                        format!("feature `{f}` is the generated crate's own: choose another"),
                    ));
                }
                if let Some(other) = features.insert(f.as_str(), h.name.as_str()) {
                    return Err(err(f_at, format!("feature `{f}` is given to both `{other}` and `{}`: each header row needs a feature of its own", h.name)));
                }
            }
            for (j, s) in h.standins.iter().enumerate() {
                if !crate::standins::standin_exists(h.target, s) {
                    return Err(err(
                        at.and_then(|h| h.standins.get(j)).map(|s| s.span()),
                        format!(
                            "there is no {} stand-in header `{s}` (codegen/standins/{}/): add it, or remove it here",
                            h.target, h.target
                        ),
                    ));
                }
            }
            for (j, s) in h.system.iter().enumerate() {
                if !crate::standins::standin_exists(h.target, s) {
                    return Err(err(at.and_then(|h| h.system.get(j)).map(|s| s.span()), format!("there is no {} stand-in for the system header `{s}` (codegen/standins/{}/): add one, or remove it here", h.target, h.target)));
                }
            }
            for (j, d) in h.defines.iter().enumerate() {
                let name = d.split_once('=').map_or(d.as_str(), |(n, _)| n);
                if !name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
                    || name.is_empty()
                    || d.contains(char::is_whitespace)
                {
                    return Err(err(
                        at.and_then(|h| h.defines.get(j)).map(|d| d.span()),
                        format!("define `{d}` must be NAME or NAME=VALUE without spaces"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `[[toolkit]]` and `libclang`: wheel names, folders and platforms; each toolkit once, with packages, and not too many.
    fn check_pins(&self, spans: &Spans, err: ErrAt<'_>) -> Result<(), Error> {
        let mut versions = BTreeSet::new();
        let pins = self.toolkits.iter().flat_map(|t| &t.packages).chain(&self.libclang);
        // The same pins' spans, in the same order.
        let mut pin_spans = spans.toolkit.iter().flat_map(|t| &t.package).chain(&spans.libclang);
        for p in pins {
            let at = pin_spans.next();
            if let Some(platform) = &p.platform {
                if platform.is_empty() || !platform.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(err(
                        at.and_then(|p| p.platform.as_ref()).map(|p| p.span()),
                        format!("`{platform}` is not a pip platform tag"),
                    ));
                }
            }
            if !p.file.ends_with(".whl") || p.file.contains(['/', '\\']) {
                return Err(err(
                    at.map(|p| p.file.span()),
                    format!("`{}` must be a wheel file name (no folders, ending in .whl)", p.file),
                ));
            }
            // The folder must be one an archive entry can be under: the extractor's own rules.
            let entry_ok =
                crate::archive::entry_path_under(&format!("{}/x.h", p.include), &p.include).is_ok_and(|r| r.is_some());
            if p.include.starts_with('/') || p.include.split('/').any(|c| c == ".." || c.is_empty()) || !entry_ok {
                return Err(err(
                    at.map(|p| p.include.span()),
                    format!("include folder `{}` must be a relative path inside the wheel", p.include.escape_debug()),
                ));
            }
            // The wheel file name carries its version: a mismatch is a copy-paste slip.
            let stem = p.name.replace('-', "_");
            if !p.file.starts_with(&format!("{stem}-{}-", p.version)) {
                return Err(err(
                    at.map(|p| p.file.span()),
                    format!("wheel `{}` is not {} {}", p.file, p.name, p.version),
                ));
            }
        }
        for (i, t) in self.toolkits.iter().enumerate() {
            let at = spans.toolkit.get(i).map(|t| t.version.span());
            if !versions.insert(t.version) {
                return Err(err(at.clone(), format!("toolkit {} is pinned twice", t.version)));
            }
            if t.packages.is_empty() {
                return Err(err(at.clone(), format!("toolkit {} names no [[toolkit.package]]", t.version)));
            }
            if versions.len() > crate::model::MAX_TOOLKITS {
                return Err(err(
                    at,
                    format!(
                        "toolkit {} is pin {} of {}: a crate is generated from at most {} toolkits (the registry records an entry's toolkits as the bits of a u64); remove pins",
                        t.version,
                        versions.len(),
                        self.toolkits.len(),
                        crate::model::MAX_TOOLKITS
                    ),
                ));
            }
        }
        Ok(())
    }

    pub fn toolkit(&self, v: ToolkitVersion) -> Option<&ToolkitPin> {
        self.toolkits.iter().find(|t| t.version == v)
    }
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z')) && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn is_plain_header_name(s: &str) -> bool {
    s.ends_with(".h") && s.len() > 2 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = offset - before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line of the error `text` gets, and its message.
    fn error_of(text: &str) -> (usize, String) {
        match Manifest::parse(Path::new("m.toml"), text) {
            Err(Error::Manifest { line, message, .. }) => (line, message),
            other => panic!("{other:?}"),
        }
    }

    /// An error points at the value refused, not at the first mention of its text: the second
    /// of two rows of one name, after a comment that names it.
    #[test]
    fn errors_point_at_the_value_itself() {
        let real = include_str!("../../headers-manifest.toml");
        let text =
            format!("# gl: the GL row\n{real}\n[[header]]\nname = \"gl\"\napi = \"cudaGL.h\"\ntypedefs = \"x.h\"\n");
        let line = text.lines().position(|l| l == "name = \"gl\"").unwrap();
        let second = text.lines().skip(line + 1).position(|l| l == "name = \"gl\"").unwrap() + line + 2;
        assert_eq!(error_of(&text), (second, "header `gl` is listed twice".to_owned()));
        // A stand-in refused on its own line, though an earlier comment holds its name.
        let text = format!("# GL/none.h\n{real}").replacen("system = [\"GL/gl.h\"]", "system = [\"GL/none.h\"]", 1);
        let line = text.lines().position(|l| l == "system = [\"GL/none.h\"]").unwrap() + 1;
        let (at, message) = error_of(&text);
        assert_eq!(at, line, "{message}");
    }
}
