//! Running bindgen (and through it libclang) over one toolkit's headers.
//!
//! One translation unit per toolkit: a wrapper that includes every manifest header, parsed
//! for x86-64 Linux whatever the host, against stand-in C library headers of our own
//! (`-nostdinc`), so that neither the host's libc nor its compiler can change the output.
//! Only declarations from the manifest's headers are kept, and no function declarations at
//! all: the generated crate links nothing and reaches every function through cuGetProcAddress.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::fetch::{Fetcher, ToolkitHeaders};
use crate::manifest::{HeaderSpec, Manifest};
use crate::Error;

/// What bindgen produced for one toolkit.
#[derive(Debug, Clone)]
pub struct BindgenOutput {
    /// bindgen's Rust output, unformatted.
    pub rust: String,
    /// Where each `PFN_` typedef was declared: its final (preprocessed) name to file and line.
    pub locations: BTreeMap<String, SourceLine>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    pub file: PathBuf,
    pub line: usize,
}

/// The C library as far as cuda.h needs it. x86-64 Linux sizes; 64-bit integers are spelled
/// `long long` so that nothing in the output depends on the width of `long`.
const STANDIN_HEADERS: &[(&str, &str)] = &[
    (
        "stddef.h",
        "#pragma once\ntypedef unsigned long size_t;\ntypedef long ptrdiff_t;\ntypedef int wchar_t;\n#define NULL ((void *)0)\n",
    ),
    ("stdlib.h", "#pragma once\n#include <stddef.h>\n"),
    (
        "stdint.h",
        "#pragma once\n\
         typedef signed char int8_t;\ntypedef short int16_t;\ntypedef int int32_t;\ntypedef long long int64_t;\n\
         typedef unsigned char uint8_t;\ntypedef unsigned short uint16_t;\ntypedef unsigned int uint32_t;\n\
         typedef unsigned long long uint64_t;\ntypedef unsigned long uintptr_t;\ntypedef long intptr_t;\n",
    ),
];

/// The clang arguments shared by every run; `__CUDA_API_VERSION_INTERNAL` makes the legacy
/// typedefs and their `_v1` types visible (without it the exported-name numbering shifts).
const CLANG_ARGS: &[&str] = &[
    "-x",
    "c",
    "-std=c11",
    "--target=x86_64-unknown-linux-gnu",
    "-nostdinc",
    "-D__CUDA_API_VERSION_INTERNAL",
    "-Wno-everything",
];

/// Makes sure a libclang is loaded in this thread, fetching the pinned wheel if the machine
/// has none. Returns a description of the library, for the summary.
pub fn ensure_libclang(manifest: &Manifest, fetcher: &Fetcher) -> Result<String, Error> {
    static FOUND: Mutex<Option<String>> = Mutex::new(None);
    let mut found = FOUND.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(desc) = found.as_ref() {
        return Ok(desc.clone());
    }
    let first = clang_sys::load();
    let desc = match first {
        Ok(()) => describe_loaded("system"),
        Err(system_err) => {
            let hint = "install it (`apt-get install libclang-dev`) or point LIBCLANG_PATH at the folder holding libclang.so";
            let Some(pin) = &manifest.libclang else {
                return Err(Error::NoLibclang { detail: format!("{system_err}; {hint}") });
            };
            let dir = fetcher.libclang(pin).map_err(|e| Error::NoLibclang {
                detail: format!("{system_err}; fetching the {} {} wheel as a fallback failed too: {e}; {hint}", pin.name, pin.version),
            })?;
            // clang-sys reads LIBCLANG_PATH when it loads; nothing else in this process reads it.
            std::env::set_var("LIBCLANG_PATH", &dir);
            clang_sys::load().map_err(|e| Error::NoLibclang {
                detail: format!("{system_err}; the {} wheel's library would not load either: {e}; {hint}", pin.name),
            })?;
            describe_loaded(&format!("{} {} wheel", pin.name, pin.version))
        }
    };
    *found = Some(desc.clone());
    Ok(desc)
}

fn describe_loaded(origin: &str) -> String {
    let path = clang_sys::get_library().map(|l| l.path().display().to_string()).unwrap_or_default();
    format!("libclang: {path} ({origin})")
}

#[derive(Debug, Default)]
struct Locations(Arc<Mutex<BTreeMap<String, SourceLine>>>);

impl bindgen::callbacks::ParseCallbacks for Locations {
    fn new_item_found(
        &self,
        _id: bindgen::callbacks::DiscoveredItemId,
        item: bindgen::callbacks::DiscoveredItem,
        loc: Option<&bindgen::callbacks::SourceLocation>,
    ) {
        if let (bindgen::callbacks::DiscoveredItem::Alias { alias_name, .. }, Some(loc)) = (item, loc) {
            if alias_name.starts_with("PFN_") {
                if let Some(file) = &loc.file_name {
                    let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
                    map.entry(alias_name).or_insert(SourceLine { file: PathBuf::from(file), line: loc.line });
                }
            }
        }
    }
}

/// The wrapper translation unit: every manifest header, API header before typedef header.
pub fn wrapper_source(headers: &[HeaderSpec]) -> String {
    let mut s = String::from("/* cuda-sys-gen: one translation unit per toolkit */\n");
    for h in headers {
        s.push_str(&format!("#include <{}>\n#include <{}>\n", h.api, h.typedefs));
    }
    s
}

/// Runs bindgen over one toolkit. `standins` is a folder holding [`write_standins`]' files.
pub fn run_bindgen(headers: &[HeaderSpec], toolkit: &ToolkitHeaders, standins: &Path) -> Result<BindgenOutput, Error> {
    for h in headers {
        for file in [&h.api, &h.typedefs] {
            let found = toolkit.include_dirs.iter().map(|d| d.join(file)).find(|p| p.is_file());
            let Some(path) = found else {
                return Err(Error::MissingHeader {
                    toolkit: toolkit.version,
                    header: file.clone(),
                    searched: toolkit.include_dirs.clone(),
                });
            };
            // clang accepts an empty file silently; an empty typedef header is a broken input.
            if std::fs::metadata(&path).map(|m| m.len() == 0).unwrap_or(false) {
                return Err(Error::HeaderContents { path, line: 1, message: "the file is empty".into() });
            }
        }
    }
    let names: Vec<String> = headers
        .iter()
        .flat_map(|h| [&h.api, &h.typedefs])
        .map(|f| f.replace('.', "\\."))
        .collect();
    let allow = format!(".*[/\\\\]({})", names.join("|"));
    let locations = Locations::default();
    let map = Arc::clone(&locations.0);
    let mut builder = bindgen::Builder::default()
        .header_contents("cuda-sys-gen-wrapper.h", &wrapper_source(headers))
        .clang_args(CLANG_ARGS)
        .clang_arg(format!("-isystem{}", standins.display()))
        .detect_include_paths(false)
        .allowlist_file(allow)
        .ignore_functions()
        .ignore_methods()
        .generate_comments(false)
        .layout_tests(true)
        .derive_default(false)
        .derive_debug(false)
        .use_core()
        .ctypes_prefix("::core::ffi")
        .default_enum_style(bindgen::EnumVariation::NewType { is_bitfield: false, is_global: false })
        .prepend_enum_name(false)
        .formatter(bindgen::Formatter::None)
        .rust_target(bindgen::RustTarget::stable(82, 0).map_err(|e| Error::Bindgen { toolkit: toolkit.version, message: e.to_string() })?)
        .parse_callbacks(Box::new(locations));
    for dir in &toolkit.include_dirs {
        builder = builder.clang_arg(format!("-I{}", dir.display()));
    }
    // bindgen panics on a few malformed inputs instead of returning an error; a header is
    // outside input, so a panic here becomes an error naming the toolkit.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || builder.generate()));
    let bindings = match result {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return Err(Error::Bindgen { toolkit: toolkit.version, message: e.to_string() }),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "bindgen panicked".into());
            return Err(Error::Bindgen { toolkit: toolkit.version, message: format!("bindgen failed: {message}") });
        }
    };
    let locations = map.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(BindgenOutput { rust: bindings.to_string(), locations })
}

/// Writes the stand-in C library headers into `dir`.
pub fn write_standins(dir: &Path) -> Result<(), Error> {
    for (name, text) in STANDIN_HEADERS {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| Error::Io { path, source })?;
    }
    Ok(())
}
