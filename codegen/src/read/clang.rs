//! Running bindgen (and through it libclang) over one translation unit of a toolkit's headers.
//!
//! Two units per toolkit: the Linux one (a wrapper that includes every Linux manifest header,
//! parsed for x86-64 Linux whatever the host) and the Windows one (the D3D and WGL rows, parsed
//! for x86-64 MSVC). Both parse against stand-in headers of our own alone (`-nostdinc`, see
//! [`crate::standins`]), so that neither the host's libc, its compiler nor its packages can
//! change the output. Only declarations from the manifest's headers are kept. Functions are
//! declared only for their comments (the generated crate links nothing and reaches every
//! function through cuGetProcAddress), which [`super::doc_comments`] takes off at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::fetch::Fetcher;
use crate::manifest::{HeaderSpec, Manifest};
use crate::platform::Platform;
use crate::Error;

/// What bindgen produced for one toolkit.
#[derive(Debug, Clone)]
pub struct BindgenOutput {
    /// bindgen's Rust output, unformatted.
    pub rust: String,
    /// Where each typedef, struct, union and enum was declared: its final (preprocessed)
    /// name to file and line.
    pub locations: BTreeMap<String, SourceLine>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    pub file: PathBuf,
    pub line: usize,
}

/// The clang arguments of every run; `__CUDA_API_VERSION_INTERNAL` makes the legacy
/// typedefs and their `_v1` types visible (without it the exported-name numbering shifts).
const CLANG_ARGS: &[&str] = &["-x", "c", "-std=c11", "-nostdinc", "-D__CUDA_API_VERSION_INTERNAL", "-Wno-everything"];

fn target_triple(target: Platform) -> &'static str {
    match target {
        Platform::Linux => "--target=x86_64-unknown-linux-gnu",
        Platform::Windows => "--target=x86_64-pc-windows-msvc",
    }
}

/// Makes sure a libclang is loaded in this thread, fetching the pinned wheel if the machine
/// has none. Returns a description of the library, for the summary.
pub fn ensure_libclang(manifest: &Manifest, fetcher: &Fetcher) -> Result<String, Error> {
    static FOUND: Mutex<Option<String>> = Mutex::new(None);
    let mut found = FOUND.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(desc) = found.as_ref() {
        return Ok(desc.clone());
    }
    // A libclang named by LIBCLANG_PATH that would block or kill the process in the loader is
    // refused with the reason first.
    crate::input::check_libclang_path().map_err(|detail| Error::NoLibclang { detail })?;
    crate::input::probe_libclang().map_err(|detail| Error::NoLibclang { detail })?;
    let first = clang_sys::load();
    let desc = match first {
        Ok(()) if std::env::var_os("LIBCLANG_PATH").is_some() => describe_loaded("found through LIBCLANG_PATH"),
        Ok(()) => describe_loaded("system"),
        Err(system_err) => {
            let hint = "point LIBCLANG_PATH at the folder holding a libclang.so, or let the pinned wheel be fetched (a network and `python3 -m pip`)";
            let Some(pin) = &manifest.libclang else {
                return Err(Error::NoLibclang { detail: format!("{system_err}; {hint}") });
            };
            let dir = fetcher.libclang(pin).map_err(|e| Error::NoLibclang {
                detail: format!(
                    "{system_err}; fetching the {} {} wheel as a fallback failed too: {e}; {hint}",
                    pin.name, pin.version
                ),
            })?;
            // A cached library cut short (its stamp intact) would fault in the loader.
            for file in crate::input::libclang_files(&dir) {
                if let Some(why) = crate::input::unloadable_library(&file) {
                    return Err(Error::NoLibclang {
                        detail: format!(
                            "{system_err}; the cached {} {} wheel's {}, which {why}: remove {} and run again (it is \
                             fetched anew)",
                            pin.name,
                            pin.version,
                            file.display(),
                            dir.display()
                        ),
                    });
                }
            }
            // clang-sys reads LIBCLANG_PATH when it loads; nothing else in this process reads it.
            std::env::set_var("LIBCLANG_PATH", &dir);
            crate::input::probe_libclang().map_err(|detail| Error::NoLibclang {
                detail: format!("{system_err}; the {} wheel's library: {detail}", pin.name),
            })?;
            clang_sys::load().map_err(|e| Error::NoLibclang {
                detail: format!("{system_err}; the {} wheel's library would not load either: {e}; {hint}", pin.name),
            })?;
            describe_loaded(&format!("{} {} wheel", pin.name, pin.version))
        }
    };
    *found = Some(desc.clone());
    Ok(desc)
}

/// The load a libclang probe makes in its child ([`crate::input::set_libclang_probe`]): the
/// same `clang_sys::load` this process makes, with the same environment.
pub fn load_libclang_here() -> Result<(), String> {
    clang_sys::load()
}

fn describe_loaded(origin: &str) -> String {
    let path = clang_sys::get_library().map(|l| l.path().display().to_string()).unwrap_or_default();
    format!("libclang: {path} ({origin})")
}

#[derive(Debug, Default)]
struct Locations(Arc<Mutex<BTreeMap<String, SourceLine>>>, Arc<Mutex<Deps>>);

/// What a bindgen run read besides its wrapper: every file clang included (as bindgen's own
/// dependency tracking reports them) and every environment variable bindgen looked at.
#[derive(Debug, Default, Clone)]
pub struct Deps {
    pub files: Vec<PathBuf>,
    pub env: Vec<String>,
}

impl bindgen::callbacks::ParseCallbacks for Locations {
    fn new_item_found(
        &self,
        _id: bindgen::callbacks::DiscoveredItemId,
        item: bindgen::callbacks::DiscoveredItem,
        loc: Option<&bindgen::callbacks::SourceLocation>,
    ) {
        use bindgen::callbacks::DiscoveredItem as D;
        let name = match item {
            D::Alias { alias_name, .. } => alias_name,
            D::Struct { final_name, .. } | D::Union { final_name, .. } | D::Enum { final_name } => final_name,
            _ => return,
        };
        if let Some(file) = loc.and_then(|l| l.file_name.as_ref().map(|f| (f, l.line))) {
            let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(name).or_insert(SourceLine { file: PathBuf::from(file.0), line: file.1 });
        }
    }

    fn include_file(&self, filename: &str) {
        self.1.lock().unwrap_or_else(|e| e.into_inner()).files.push(PathBuf::from(filename));
    }

    fn read_env_var(&self, key: &str) {
        self.1.lock().unwrap_or_else(|e| e.into_inner()).env.push(key.to_owned());
    }
}

/// The wrapper translation unit: cuda.h first, then per header its system and stand-in
/// headers, the API header and the typedef header. cudaVDPAU.h uses `CUresult` and the `Vdp`
/// types without including cuda.h or vdpau.h, and cudaD3D9.h the D3D types without d3d9.h
/// (only their typedef headers include them), hence the order.
pub fn wrapper_source(first_api: &str, headers: &[&HeaderSpec]) -> String {
    let mut s = String::from("/* cuda-sys-gen: one translation unit per toolkit and target */\n");
    s.push_str(&format!("#include <{first_api}>\n"));
    for h in headers {
        for prelude in h.system.iter().chain(&h.standins) {
            s.push_str(&format!("#include <{prelude}>\n"));
        }
        s.push_str(&format!("#include <{}>\n#include <{}>\n", h.api, h.typedefs));
    }
    s
}

/// One translation unit: which headers, for which target, from where.
pub struct Unit<'a> {
    pub toolkit: crate::ToolkitVersion,
    pub target: Platform,
    /// The first manifest header's API header (cuda.h), included before everything.
    pub first_api: &'a str,
    pub headers: Vec<&'a HeaderSpec>,
    pub include_dirs: &'a [PathBuf],
}

/// The `allowlist_file` expression of a unit of these rows: types from the first API
/// header, the rows' API, typedef and stand-in headers.
pub fn allowlist(first_api: &str, rows: &[&HeaderSpec]) -> String {
    let mut names: Vec<String> = std::iter::once(first_api.to_owned())
        .chain(rows.iter().flat_map(|h| [h.api.clone(), h.typedefs.clone()]))
        .chain(rows.iter().flat_map(|h| h.standins.clone()))
        .map(|f| f.replace('.', "\\.").replace('/', "[/\\\\]"))
        .collect();
    names.sort();
    names.dedup();
    format!(".*[/\\\\]({})", names.join("|"))
}

/// The clang arguments of a unit of these rows, in order, less the input: the fixed ones,
/// the target, the stand-ins (`standins` is the folder [`crate::standins::write_standins`] filled), the
/// toolkit's include folders, the rows' defines.
pub fn clang_args(target: Platform, rows: &[&HeaderSpec], include_dirs: &[PathBuf], standins: &Path) -> Vec<String> {
    let mut args: Vec<String> = CLANG_ARGS.iter().map(|a| a.to_string()).collect();
    args.push(target_triple(target).to_owned());
    args.push(format!("-isystem{}", standins.join(target.to_string()).display()));
    args.extend(include_dirs.iter().map(|d| format!("-I{}", d.display())));
    args.extend(rows.iter().flat_map(|h| &h.defines).map(|d| format!("-D{d}")));
    args
}

/// Runs bindgen over one unit. `standins` is the folder [`crate::standins::write_standins`] filled.
pub fn run_bindgen(unit: &Unit<'_>, standins: &Path) -> Result<BindgenOutput, Error> {
    run_bindgen_tracked(unit, standins).map(|(out, _)| out)
}

/// [`run_bindgen`], also saying what the run read (for [`crate::read::unit_cache`]).
pub fn run_bindgen_tracked(unit: &Unit<'_>, standins: &Path) -> Result<(BindgenOutput, Deps), Error> {
    let toolkit = unit.toolkit;
    for h in &unit.headers {
        for file in [&h.api, &h.typedefs] {
            let found = unit.include_dirs.iter().map(|d| d.join(file)).find(|p| p.is_file());
            let Some(path) = found else {
                return Err(Error::MissingHeader {
                    toolkit,
                    header: file.clone(),
                    searched: unit.include_dirs.to_vec(),
                });
            };
            // clang accepts an empty file silently; an empty typedef header is a broken input.
            if std::fs::metadata(&path).map(|m| m.len() == 0).unwrap_or(false) {
                return Err(Error::HeaderContents { path, line: 1, message: "the file is empty".into() });
            }
        }
    }
    let locations = Locations::default();
    let map = Arc::clone(&locations.0);
    let deps = Arc::clone(&locations.1);
    let mut builder = bindgen::Builder::default()
        .header_contents("cuda-sys-gen-wrapper.h", &wrapper_source(unit.first_api, &unit.headers))
        .clang_args(clang_args(unit.target, &unit.headers, unit.include_dirs, standins))
        .detect_include_paths(false)
        .allowlist_file(allowlist(unit.first_api, &unit.headers))
        .ignore_methods()
        // The headers' comments and their functions' declarations, for the docs alone:
        // `doc_comments::take_docs` takes both off the output before anything reads it.
        .generate_comments(true)
        .layout_tests(true)
        .derive_default(false)
        .derive_debug(false)
        .use_core()
        .ctypes_prefix("::core::ffi")
        .default_enum_style(bindgen::EnumVariation::NewType { is_bitfield: false, is_global: false })
        .prepend_enum_name(false)
        .formatter(bindgen::Formatter::None)
        .rust_target(
            bindgen::RustTarget::stable(82, 0).map_err(|e| Error::Bindgen { toolkit, message: e.to_string() })?,
        )
        .parse_callbacks(Box::new(locations));
    if unit.target == Platform::Windows {
        // The CUDA types come from the Linux unit; only the Windows headers' own are wanted.
        builder = builder.allowlist_recursively(false);
    }
    // bindgen panics on a few malformed inputs instead of returning an error; a header is
    // outside input, so a panic here becomes an error naming the toolkit.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || builder.generate()));
    let bindings = match result {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return Err(Error::Bindgen { toolkit, message: e.to_string() }),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "bindgen panicked".into());
            return Err(Error::Bindgen { toolkit, message: format!("bindgen failed: {message}") });
        }
    };
    let locations = map.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let deps = deps.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok((BindgenOutput { rust: bindings.to_string(), locations }, deps))
}

/// The struct whose field names carry the C names' expansions (see [`c_names_source`]).
pub const C_NAMES_STRUCT: &str = "cuda_sys_gen_c_names";
/// Between a C name and its expansion in a field name.
pub const C_NAMES_SEPARATOR: &str = "__expands_to__";

/// A unit's wrapper, then one struct field per candidate whose name pastes the candidate, as
/// written, to what the preprocessor makes of it: `cuCtxCreate__expands_to__cuCtxCreate_v4`.
/// The argument of the inner paste is expanded first (C11 6.10.3.1), so the field name is the
/// C preprocessor's own answer.
pub fn c_names_source(first_api: &str, headers: &[&HeaderSpec], candidates: &[String]) -> String {
    let mut s = wrapper_source(first_api, headers);
    s.push_str("#define CUDA_SYS_GEN_PASTE2(a, b) a##b\n#define CUDA_SYS_GEN_PASTE(a, b) CUDA_SYS_GEN_PASTE2(a, b)\n");
    s.push_str(&format!("struct {C_NAMES_STRUCT} {{\n    int unused;\n"));
    for c in candidates {
        s.push_str(&format!("    int CUDA_SYS_GEN_PASTE({c}{C_NAMES_SEPARATOR}, {c});\n"));
    }
    s.push_str("};\n");
    s
}

/// clang's arguments for a unit read as a C program would read it: [`clang_args`] without
/// `-D__CUDA_API_VERSION_INTERNAL`, with `-DCUDA_API_PER_THREAD_DEFAULT_STREAM` when
/// `per_thread`.
pub fn c_program_args(unit: &Unit<'_>, per_thread: bool, standins: &Path) -> Vec<String> {
    let mut args: Vec<String> = clang_args(unit.target, &unit.headers, unit.include_dirs, standins)
        .into_iter()
        .filter(|a| a != "-D__CUDA_API_VERSION_INTERNAL")
        .collect();
    if per_thread {
        args.push("-DCUDA_API_PER_THREAD_DEFAULT_STREAM".into());
    }
    args
}

/// The unit as a C program sees it (no `__CUDA_API_VERSION_INTERNAL`; with
/// `CUDA_API_PER_THREAD_DEFAULT_STREAM` when `per_thread`): bindgen's declarations of the
/// driver functions (`cu*`), and [`C_NAMES_STRUCT`] with one field per candidate.
pub fn run_c_names(
    unit: &Unit<'_>,
    per_thread: bool,
    candidates: &[String],
    standins: &Path,
) -> Result<(BindgenOutput, Deps), Error> {
    let toolkit = unit.toolkit;
    let args = c_program_args(unit, per_thread, standins);
    let deps = Locations::default();
    let files = Arc::clone(&deps.1);
    let builder = bindgen::Builder::default()
        .header_contents("cuda-sys-gen-c-names.h", &c_names_source(unit.first_api, &unit.headers, candidates))
        .clang_args(args)
        .detect_include_paths(false)
        .allowlist_type(C_NAMES_STRUCT)
        .allowlist_function("cu[A-Z].*")
        .allowlist_recursively(false)
        .ignore_methods()
        .generate_comments(false)
        .layout_tests(false)
        .derive_default(false)
        .derive_debug(false)
        .derive_copy(false)
        .use_core()
        .ctypes_prefix("::core::ffi")
        .formatter(bindgen::Formatter::None)
        .parse_callbacks(Box::new(deps));
    let bindings = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || builder.generate())) {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return Err(Error::Bindgen { toolkit, message: format!("reading the C names: {e}") }),
        Err(_) => return Err(Error::Bindgen { toolkit, message: "reading the C names: bindgen panicked".into() }),
    };
    let deps = files.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok((BindgenOutput { rust: bindings.to_string(), locations: BTreeMap::new() }, deps))
}
