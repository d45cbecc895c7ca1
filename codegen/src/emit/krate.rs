//! `Cargo.toml` and `src/lib.rs` of the generated crate, and of its types crate in `types/`.
//!
//! The crate is two packages. `types/` (`<name>-types`) holds everything that is only
//! declarations and data: `types`, the fn-type modules, the registry, the result codes. It has
//! no dependency, so Cargo starts it at once, beside libloading; the crate itself holds the
//! shim (and `api`, `newest`, ...) and re-exports every module of `types/` where it stood.
//! Users name only the crate: one dependency, the same paths.
//!
//! What goes in `types/` is what the shim does not need to run; a trait impl on one of its types
//! goes there too (the orphan rule: `impl Display for StreamFlags` is the registry's). Features
//! that change what `types/` declares (each module's, `bare-enumerators`,
//! `per-thread-default-stream`) are features of both, the crate's turning on the types crate's.
//! Measured (docs/performance.md): a clean build takes 0.85x (default features) and 0.91x (every
//! feature) of the single crate's, peak memory a sixth less.
//!
//! **Compile time is paid once, not per item**: what a user's clean build compiles is measured
//! (`cargo xtask bench --only compile`, against cudarc), and per-item code is data or generic
//! where it can be (newest's `CASES`; markers are empty enums with no derives; the aliases chain,
//! `emit::pfn`). The shim is compiled into every build, so it writes messages into the
//! `Formatter` and walks `ENTRIES` with plain loops: no `format!`ed `String`s, `join`, `replace`,
//! iterator adaptor chains or `char` patterns, each of which instantiates std's generic code in
//! the crate.

use proc_macro2::TokenStream;
use quote::quote;

use super::ctx::Ctx;
use crate::crate_name::TYPES_SUFFIX;

pub const CARGO_TOML: &str = "Cargo.toml";

/// What the crate docs' examples call.
const EXAMPLE_NEEDS: &[&str] = &["PFN_cuInit_v2000", "PFN_cuMemAlloc_v3020", "PFN_cuStreamBeginCapture_v10010_ptsz"];

/// Whether this crate's registry has what the crate docs' examples name, so that they compile:
/// the entries, and `cuMemAlloc` among the newest toolkit's C names (`cu!(cuMemAlloc(..))`).
fn examples_fit(ctx: &Ctx<'_>) -> bool {
    let c_names = ctx.all_toolkits.last().and_then(|t| ctx.model.c_names.get(t));
    EXAMPLE_NEEDS.iter().all(|p| ctx.by_pfn.contains_key(p))
        && c_names.and_then(|n| n.get("cuMemAlloc")).is_some_and(|t| t.default.is_some())
}

pub const LIB_RS: &str = "src/lib.rs";
pub const README_MD: &str = "README.md";
pub const LICENSE_MIT: &str = "LICENSE-MIT";
pub const LICENSE_APACHE: &str = "LICENSE-APACHE";
pub const TYPES_CARGO_TOML: &str = "types/Cargo.toml";
pub const TYPES_LIB_RS: &str = "types/src/lib.rs";
pub const TYPES_LICENSE_MIT: &str = "types/LICENSE-MIT";
pub const TYPES_LICENSE_APACHE: &str = "types/LICENSE-APACHE";

const MIT: &str = include_str!("../../LICENSE-MIT");
const APACHE: &str = include_str!("../../LICENSE-APACHE");

/// The licenses of both packages: this repository's, verbatim (the manifests say
/// `MIT OR Apache-2.0`).
pub const LICENSES: [(&str, &str); 4] =
    [(LICENSE_MIT, MIT), (LICENSE_APACHE, APACHE), (TYPES_LICENSE_MIT, MIT), (TYPES_LICENSE_APACHE, APACHE)];

/// The paths of [`LICENSES`], in its order.
pub const LICENSE_PATHS: [&str; LICENSES.len()] = paths_of!(LICENSES, 0);

/// The types crate's package name.
fn types_name(ctx: &Ctx<'_>) -> String {
    format!("{}{TYPES_SUFFIX}", ctx.opts.crate_name)
}

/// `default = [...]` of both manifests: the features of the modules that are on by default.
fn default_features(ctx: &Ctx<'_>) -> String {
    ctx.modules
        .iter()
        .filter(|m| m.default)
        .filter_map(|m| m.feature.as_ref())
        .map(|f| format!("\"{f}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

const README_SOURCE: &str = include_str!("../../crate-files/README.md");

/// The crate's README: the marker as an HTML comment (renderers hide it), then the source in `codegen/crate-files/`.
pub fn readme_md(ctx: &Ctx<'_>) -> String {
    let marker = ctx.marker("");
    let marker: Vec<&str> = marker.lines().map(str::trim).collect();
    format!("<!-- {} -->\n\n{}", marker.join(" "), super::ctx::with_crate_name(ctx, README_SOURCE))
}

/// The shim's part of the crate documentation.
const CRATE_DOCS: &str = include_str!("../../crate-files/crate-docs.md");
/// The crate docs' opening: who the reader is and where to start, each way shown once.
const CRATE_START: &str = include_str!("../../crate-files/crate-start.md");

pub fn cargo_toml(ctx: &Ctx<'_>) -> String {
    format!(
        r#"{marker}
[package]
name = "{name}"
description = "Versioned CUDA driver entry point types and exact-version lookups through cuGetProcAddress"
readme = "README.md"
{package}

[lib]
path = "src/lib.rs"
doctest = true
{examples}
[dependencies]
# Opens libcuda (and libcudart) at run time: nothing links them.
libloading = "0.8"
# The types, fn types and registry, re-exported here: a package of their own so that Cargo
# builds them while it builds libloading, not after.
{types} = {{ path = "types", version = "={VERSION}", default-features = false }}

[package.metadata.docs.rs]
all-features = true

[features]
default = [{defaults}]
{features}# Driver::newest and the symbol markers (symbols::cuCtxCreate): the newest ABI this crate and
# the driver share, as an enum with one case per ABI.
newest = []
# aliases::cuda_X_Y: what each toolkit's own headers mean by the unversioned PFN_<symbol>,
# and the entry marker of each C function name (aliases::cuda_12_9::cuCtxCreate).
aliases = []
# api::cuCtxCreate and the rest: cuda.h's own function names, each calling the ABI the newest
# toolkit's cuda.h means by it, through one process-wide driver; with bare-enumerators.
api = ["bare-enumerators"]
# cuda.h's enumerators as constants of types by their bare names, as C spells them
# (CU_STREAM_NON_BLOCKING beside CUstream_flags::CU_STREAM_NON_BLOCKING).
bare-enumerators = ["{types}/bare-enumerators"]
# visit_entries / visit_symbols: generic code run once per entry or symbol marker.
visit = []
# The unversioned PFN_<symbol> aliases, the C names of api and aliases, and Driver::newest
# prefer the _ptds/_ptsz variants, as CUDA_API_PER_THREAD_DEFAULT_STREAM does for C. Crate-global: Cargo unifies features, so
# one crate in a build that turns it on turns it on for every user of this crate there.
per-thread-default-stream = ["{types}/per-thread-default-stream"]
# Runtime: the same typed lookups through libcudart's cudaGetDriverEntryPoint(ByVersion).
runtime = []
# standin: what a cdylib that stands in for libcuda.so.1 needs (hooks, forwarding to the real
# driver, cuGetProcAddress answered with the stand-in's functions), and export_libcuda!, which
# that cdylib invokes to export them. The feature exports nothing by itself.
standin = []
# doctor::main and doctor::check (the doctor example): every entry checked against a driver.
# Compiled to machine code wherever it is on, so only programs that run it turn it on.
doctor = []
# REGISTRY_JSON: this folder's registry.json as text, for a program that reads the registry as
# data (`cuda-sys-gen min-driver` answers from the one of the crate it was built with).
registry-json = []
"#,
        marker = ctx.marker("#"),
        package = package_fields(ctx),
        examples = {
            let mut s = String::from("\n[[example]]\nname = \"doctor\"\nrequired-features = [\"doctor\"]\n");
            if ctx.model.entries.values().any(|e| e.pfn == "PFN_cuCtxCreate_v12050")
                && super::examples::has_roundtrip(ctx)
            {
                s.push_str("\n[[example]]\nname = \"roundtrip\"\nrequired-features = [\"newest\"]\n");
            }
            for name in super::examples::sample_names(ctx) {
                s.push_str(&format!("\n[[example]]\nname = \"{name}\"\nrequired-features = [\"api\"]\n"));
            }
            s
        },
        name = ctx.opts.crate_name,
        types = types_name(ctx),
        defaults = default_features(ctx),
        features = ctx
            .modules
            .iter()
            .filter_map(|m| {
                let types = types_name(ctx);
                m.feature.as_ref().map(|f| format!("# {} / {}\n{f} = [\"{types}/{f}\"]\n", m.api, m.typedefs))
            })
            .collect::<String>(),
    )
}

/// Both packages' version: the main one depends on exactly this version of the types one.
const VERSION: &str = "0.1.0";

/// The `[package]` fields both manifests share, the docs link included: the types crate's
/// items are documented where they are re-exported.
fn package_fields(ctx: &Ctx<'_>) -> String {
    format!(
        r#"version = "{VERSION}"
edition = "2021"
rust-version = "1.83"
license = "MIT OR Apache-2.0"
documentation = "https://docs.rs/{}"
keywords = ["cuda", "nvidia", "gpu", "ffi", "driver"]
categories = ["external-ffi-bindings", "hardware-support"]"#,
        ctx.opts.crate_name
    )
}

/// The types crate's manifest: no dependency; the module features, and those of the crate
/// that change what the types crate declares.
pub fn types_cargo_toml(ctx: &Ctx<'_>) -> String {
    format!(
        r#"{marker}
[package]
name = "{types}"
description = "The types, fn types and entry registry of {name}, which re-exports them: depend on {name}"
{package}

[lib]
path = "src/lib.rs"

[package.metadata.docs.rs]
all-features = true

[features]
default = [{defaults}]
{features}"#,
        marker = ctx.marker("#"),
        package = package_fields(ctx),
        name = ctx.opts.crate_name,
        types = types_name(ctx),
        defaults = default_features(ctx),
        features = {
            let mut s = String::new();
            for m in ctx.modules {
                if let Some(f) = &m.feature {
                    s.push_str(&format!("# {} / {}\n{f} = []\n", m.api, m.typedefs));
                }
            }
            s.push_str("# The feature of the same name of ");
            s.push_str(&ctx.opts.crate_name);
            s.push_str(", which turns these on.\nbare-enumerators = []\nper-thread-default-stream = []\n");
            s
        },
    )
}

pub fn lib_rs(ctx: &Ctx<'_>) -> TokenStream {
    let toolkits: Vec<String> = ctx.all_toolkits.iter().map(|t| t.to_string()).collect();
    let summary = format!(
        " Generated from {} CUDA toolkits ({} to {}): {} entry point ABIs of {} symbols.",
        toolkits.len(),
        toolkits.first().map_or("", String::as_str),
        toolkits.last().map_or("", String::as_str),
        ctx.model.entries.len(),
        ctx.model.symbols().len()
    );
    let crate_ident = ctx.opts.crate_name.replace('-', "_");
    let types_crate = types_ident(ctx);
    // The modules of the types crate, where they stood before it was one. In the order rustfmt
    // sorts a run of `use` items (by name, byte for byte), so `cargo fmt --check` passes on lib.rs.
    let mut module_names: Vec<_> = ctx.modules.iter().map(|m| (m.module(), super::ctx::module_cfg(m))).collect();
    module_names.sort_by(|a, b| a.0.cmp(b.0));
    let modules: Vec<TokenStream> = module_names
        .into_iter()
        .map(|(name, cfg)| {
            let name = proc_macro2::Ident::new(name, proc_macro2::Span::call_site());
            quote!(#cfg #[doc(inline)] pub use #types_crate::#name;)
        })
        .collect();
    // The examples name entries of the real registry. A crate whose registry lacks them (one
    // of fixture headers, or of a manifest with other rows) has them fenced `ignore`, saying why.
    let fence = if examples_fit(ctx) { "" } else { "ignore" };
    let why = if fence.is_empty() {
        ""
    } else {
        "\n The examples on this page name entry points of NVIDIA's headers that this crate's registry lacks: they are shown, not compiled.\n"
    };
    let example = format!(
        "{why}\n ```{fence}\n use {crate_ident}::{{entries, Entry, pfn::PFN_cuMemAlloc_v3020}};\n\n // The marker carries the exact lookup: name, version and stream flag.\n assert_eq!(entries::cuMemAlloc_v3020::VERSION, 3020);\n assert_eq!(entries::cuMemAlloc_v3020::INFO.exported, \"cuMemAlloc_v2\");\n let _: Option<<entries::cuMemAlloc_v3020 as Entry>::Fn> = None::<PFN_cuMemAlloc_v3020>;\n ```\n"
    );
    // The shim's documentation, one `#![doc]` line per line of its source.
    let mut docs = super::ctx::with_crate_name(ctx, CRATE_DOCS);
    if !fence.is_empty() {
        docs = docs.replace("```no_run", "```ignore");
    }
    let doc_lines = |text: &str| text.lines().map(|l| format!(" {l}").trim_end().to_owned()).collect::<Vec<_>>();
    let shim_docs = doc_lines(&docs);
    let mut start = super::ctx::with_crate_name(ctx, CRATE_START);
    if !fence.is_empty() {
        start = start.replace("```no_run", "```ignore");
    }
    let start_docs = doc_lines(&start);
    // The README's example is a doc test too, where the registry has what it calls.
    let readme_doctest = if fence.is_empty() {
        quote! {
            #[cfg(doctest)]
            #[doc = include_str!("../README.md")]
            struct ReadmeDoctests;
        }
    } else {
        TokenStream::new()
    };
    let json_docs = doc_lines(&super::ctx::registry_json_docs());
    quote! {
        //! CUDA driver entry points, one Rust type per ABI.
        //!
        #(#![doc = #start_docs])*
        //!
        //! # Why one type per ABI
        //!
        //! The driver's `cuGetProcAddress(symbol, &pfn, version, flags, &status)` returns the
        //! newest ABI of `symbol` introduced at or before `version`. A program that casts the
        //! pointer to one typedef but asks with another version can get a different ABI. Here
        //! every ABI is its own type ([`pfn`]) with a marker ([`entries`]) that carries the
        //! exact version to ask with, so the two cannot disagree.
        //!
        #![doc = #summary]
        //!
        //! Nothing here links libcuda and nothing needs a CUDA toolkit to build.
        //!
        #![doc = #example]
        //!
        #(#![doc = #shim_docs])*
        //!
        #(#![doc = #json_docs])*
        // The headers' references (`::cuLinkDestroy`) are linked by full path, so that each
        // resolves whatever its module imports; where the bare name would do, rustdoc calls
        // the path redundant.
        #![allow(rustdoc::redundant_explicit_links)]
        // The modules are prettyplease's output (and the shim's files), not rustfmt's:
        // `cargo fmt` leaves them alone.
        #[cfg(feature = "aliases")]
        #[rustfmt::skip]
        pub mod aliases;
        #[cfg(feature = "api")]
        #[rustfmt::skip]
        pub mod api;
        #[cfg(feature = "api")]
        #[rustfmt::skip]
        mod api_shim;
        #[cfg(feature = "doctor")]
        #[rustfmt::skip]
        pub mod doctor;
        #[rustfmt::skip]
        pub mod driver;
        #[rustfmt::skip]
        pub mod error;
        #[rustfmt::skip]
        mod library;
        #[rustfmt::skip]
        mod lookup;
        #[cfg(feature = "newest")]
        #[rustfmt::skip]
        pub mod newest;
        #[cfg(feature = "newest")]
        #[rustfmt::skip]
        mod newest_abi;
        #[cfg(feature = "runtime")]
        #[rustfmt::skip]
        pub mod runtime;
        #[cfg(feature = "standin")]
        #[rustfmt::skip]
        pub mod standin;
        #[cfg(feature = "standin")]
        #[rustfmt::skip]
        mod standin_exports;
        #[rustfmt::skip]
        pub mod table;
        #[cfg(feature = "visit")]
        #[rustfmt::skip]
        pub mod visit;
        #[cfg(feature = "visit")]
        #[rustfmt::skip]
        mod visitor;
        // The types crate's modules, re-exported where they stood when this was one crate.
        use #types_crate::codes;
        #(#modules)*
        #[doc(inline)]
        pub use #types_crate::{answer, registry, types};

        #readme_doctest

        /// `registry.json`, the registry as data (its schema is on this page), as the generator
        /// wrote it beside this crate's sources.
        #[cfg(feature = "registry-json")]
        pub const REGISTRY_JSON: &str = include_str!("../registry.json");

        pub use driver::{DefaultStream, Driver, QueryApi};
        pub use error::{CudaVersion, Error, LibraryKind, LoadAttempt, Lookup};
        #[cfg(feature = "newest")]
        pub use newest::{symbols, NewestAbi, Symbol};
        pub use registry::{entries, Entry, EntryInfo, EntryRecord, ENTRIES, TOOLKITS};
        pub use registry::{Platforms, StreamFlags, Variant};
        #[cfg(feature = "runtime")]
        pub use runtime::Runtime;
        pub use table::min_driver;
        #[cfg(feature = "visit")]
        pub use visit::{visit_entries, EntryVisitor};
        #[cfg(all(feature = "visit", feature = "newest"))]
        pub use visit::{visit_symbols, SymbolVisitor};
    }
}

/// The types crate's name as Rust spells it.
fn types_ident(ctx: &Ctx<'_>) -> proc_macro2::Ident {
    let name = types_name(ctx).replace('-', "_");
    proc_macro2::Ident::new(&name, proc_macro2::Span::call_site())
}

/// The types crate's `lib.rs`: its modules, declared as the crate declared them before they
/// moved, and the registry's names at the root.
pub fn types_lib_rs(ctx: &Ctx<'_>) -> TokenStream {
    let modules: Vec<TokenStream> = ctx
        .modules
        .iter()
        .map(|m| {
            let name = proc_macro2::Ident::new(m.module(), proc_macro2::Span::call_site());
            let cfg = super::ctx::module_cfg(m);
            let doc = match &m.feature {
                Some(f) => format!(" `{}` (feature `{f}`).", m.api),
                None => format!(" `{}`.", m.api),
            };
            quote!(#[doc = #doc] #cfg #[rustfmt::skip] pub mod #name;)
        })
        .collect();
    let name = &ctx.opts.crate_name;
    let docs = [
        format!(" The declarations of [`{name}`](https://docs.rs/{name}): the C types, one fn type per ABI, the"),
        " entry markers and the registry, and the result codes' names. Nothing here runs.".to_owned(),
        String::new(),
        format!(" Depend on `{name}`, not on this: it re-exports every module here at the same path"),
        format!(
            " (`{}::types`, `{}::pfn`, `{}::entries`) and turns on the",
            name.replace('-', "_"),
            name.replace('-', "_"),
            name.replace('-', "_")
        ),
        " features here with its own of the same names. This is a package of its own so that Cargo".to_owned(),
        " compiles it while the crate's dependencies compile.".to_owned(),
    ];
    quote! {
        #(#![doc = #docs])*
        // The headers' references (`::cuLinkDestroy`) are linked by full path, so that each
        // resolves whatever its module imports; where the bare name would do, rustdoc calls
        // the path redundant.
        #![allow(rustdoc::redundant_explicit_links)]
        // The modules are prettyplease's output, not rustfmt's: `cargo fmt` leaves them alone.
        /// The result codes' names and descriptions, for the crate's errors.
        #[doc(hidden)]
        #[rustfmt::skip]
        pub mod codes;
        #[rustfmt::skip]
        pub mod answer;
        #[rustfmt::skip]
        mod entry;
        #[rustfmt::skip]
        mod record;
        #[rustfmt::skip]
        mod result;
        #[rustfmt::skip]
        mod rule;
        #[rustfmt::skip]
        mod zeroed;
        #[rustfmt::skip]
        pub mod registry;
        #[rustfmt::skip]
        pub mod types;
        #(#modules)*

        pub use registry::{entries, Entry, EntryInfo, EntryRecord, ENTRIES, TOOLKITS};
        pub use registry::{Platforms, StreamFlags, Variant};
    }
}
