//! `types/src/registry.rs`: the static table of every entry and one marker type per entry, and
//! `registry.json`: the model as data, for reviewers and tools.
//!
//! **Markers carry no code.** Entry and symbol markers are empty enums with no derives, and each
//! entry's record (the crate's `EntryRecord`, read by min-driver) is one named static
//! that only the marker's `RECORD` points at: per-entry items are what the crate's compile time is
//! made of (docs/performance.md), and a `static` table pointing at the records would keep every
//! one of them in every binary. `RECORD` comes from a `const` table indexed by the marker's
//! `INDEX`, which the compiler reads and the program never holds. Each record is a literal of the
//! bytes `record.rs` computes.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::ctx::Ctx;
use super::docs::{Context, Docs};
use super::record::{self, Abi, Record};
use crate::names::Variant;
use crate::Error;

pub const REGISTRY_RS: &str = "types/src/registry.rs";
pub const REGISTRY_JSON: &str = "registry.json";

/// The header and module of `COMMON`, the row the registry's rows differ from.
const COMMON_HEADER: &str = "cudaTypedefs.h";
const COMMON_MODULE: &str = "cuda";

pub fn registry_rs(ctx: &Ctx<'_>, docs: &Docs<'_>) -> Result<TokenStream, Error> {
    let toolkits: Vec<String> = ctx.all_toolkits.iter().map(|t| t.to_string()).collect();
    let n_toolkits = toolkits.len();
    let mut infos = Vec::new();
    let mut markers = Vec::new();
    let mut records = Vec::new();
    let mut record_rows = Vec::new();
    // `emit` refuses more than `model::MAX_TOOLKITS` (64) toolkits: a bit each, `i < 64`.
    let all_toolkits: u64 = (0..n_toolkits).fold(0, |m, i| m | (1u64 << i));
    for (index, e) in ctx.model.entries.values().enumerate() {
        let symbol = &e.symbol;
        let c_symbol = Literal::c_string(&std::ffi::CString::new(e.symbol.as_bytes()).unwrap_or_default());
        let version = e.version;
        let (variant, flags) = match e.variant {
            None => (quote!(None), quote!(StreamFlags::LEGACY_STREAM)),
            Some(Variant::Ptds) => (quote!(Some(Variant::Ptds)), quote!(StreamFlags::PER_THREAD_DEFAULT_STREAM)),
            Some(Variant::Ptsz) => (quote!(Some(Variant::Ptsz)), quote!(StreamFlags::PER_THREAD_DEFAULT_STREAM)),
        };
        let (pfn, exported, header, legacy, module) = (&e.pfn, &e.exported, &e.header, e.legacy, &e.module);
        let linux = e.platforms.contains(&crate::platform::Platform::Linux);
        let windows = e.platforms.contains(&crate::platform::Platform::Windows);
        let arch = match &e.arch {
            Some(a) => quote!(Some(#a)),
            None => quote!(None),
        };
        let mask: u64 = ctx
            .all_toolkits
            .iter()
            .enumerate()
            .filter(|(_, t)| e.toolkits.contains(t))
            .fold(0, |m, (i, _)| m | (1u64 << i));
        // Only the fields where the row differs from `COMMON` (a default-variant entry of
        // cudaTypedefs.h on Linux and Windows, in every toolkit): rustc checks a struct
        // literal field by field, and the full 780-row table was a fourteenth of a default
        // build (`cargo xtask bench --only compile`, docs/performance.md).
        let mut differs = Vec::new();
        if e.variant.is_some() {
            differs.push(quote!(variant: #variant, flags: #flags,));
        }
        if header != COMMON_HEADER || module != COMMON_MODULE {
            differs.push(quote!(header: #header, module: #module,));
        }
        if !(linux && windows && e.arch.is_none()) {
            differs.push(quote!(platforms: Platforms { linux: #linux, windows: #windows, arch: #arch },));
        }
        if legacy {
            differs.push(quote!(legacy: true,));
        }
        if mask != all_toolkits {
            differs.push(quote!(toolkit_mask: #mask,));
        }
        infos.push(quote! {
            EntryInfo {
                symbol: #symbol, c_symbol: #c_symbol, version: #version, pfn: #pfn, exported: #exported,
                #(#differs)*
                ..COMMON
            },
        });
        let marker = super::ctx::marker_ident(e);
        let Some((ty, cfg)) = ctx.pfn_path(&e.pfn) else {
            record_rows.push(quote!(&NO_RECORD,));
            continue;
        };
        // A row for every index: where the marker's feature is off, the row points at
        // `NO_RECORD`, which no marker then reads.
        record_rows.push(match ctx.module_of(&e.module).and_then(|m| m.feature.as_deref()) {
            Some(f) => quote!(#[cfg(feature = #f)] &records::#marker, #[cfg(not(feature = #f))] &NO_RECORD,),
            None => quote!(&records::#marker,),
        });
        let doc = match docs.function_brief(e, &Context::module(ctx.module_of(&e.module))) {
            Some(brief) => format!("{brief}\n\n{}", marker_doc(ctx, e)),
            None => marker_doc(ctx, e),
        };
        let min_driver = e.min_driver.map(|v| {
            quote! {
                const MIN_DRIVER: u32 = #v;
            }
        });
        let bytes = Record::entry(symbol, Abi::of(e))
            .bytes()
            .map_err(|message| Error::Emit { file: REGISTRY_RS.into(), message: format!("{}: {message}", e.pfn) })?;
        let record = record::literal(&quote!(super::EntryRecord), &bytes);
        records.push(quote! {
            #cfg
            pub static #marker: super::EntryRecord = #record;
        });
        markers.push(quote! {
            #[doc = #doc]
            #cfg
            pub enum #marker {}
            #cfg
            impl super::sealed::Sealed for #marker {}
            #cfg
            unsafe impl super::Entry for #marker {
                type Fn = #ty;
                const INDEX: usize = #index;
                #min_driver
            }
        });
    }
    let n = infos.len();
    Ok(quote! {
        //! The registry: every entry point ABI the crate knows, as a static table
        //! ([`ENTRIES`]) and as one marker type per entry ([`entries`]: types only, with no
        //! values) whose constants are all a lookup needs.
        pub use super::entry::{Entry, EntryInfo, Platforms, StreamFlags, Variant};
        pub use super::record::{EntryRecord, RecordKind};
        // The markers' seal: `entries` implements it as `super::sealed::Sealed`.
        use super::entry::sealed;

        /// The pinned toolkits this crate was generated from, oldest first.
        pub static TOOLKITS: [&str; #n_toolkits] = [#(#toolkits),*];

        /// How many entries the registry has.
        pub const ENTRY_COUNT: usize = #n;

        /// What a row of [`ENTRIES`] is where it does not say otherwise: a default-variant
        /// entry of cudaTypedefs.h, on Linux and Windows, declared in every pinned toolkit.
        const COMMON: EntryInfo = EntryInfo {
            symbol: "",
            c_symbol: c"",
            version: 0,
            variant: None,
            flags: StreamFlags::LEGACY_STREAM,
            pfn: "",
            exported: "",
            header: #COMMON_HEADER,
            module: #COMMON_MODULE,
            platforms: Platforms { linux: true, windows: true, arch: None },
            legacy: false,
            toolkit_mask: #all_toolkits,
        };

        /// Every entry, sorted by (symbol, version, variant).
        pub static ENTRIES: [EntryInfo; ENTRY_COUNT] = [#(#infos)*];

        /// Each entry's record, by index: where [`Entry::RECORD`] comes from. A `const`, not a
        /// `static`: evaluated at compile time, `RECORDS[i]` is a pointer to one record's
        /// static, so a program holds the records of the entries it looks up and no others.
        /// One table instead of a `const RECORD` in each marker's impl: 780 constants fewer
        /// for rustc to check (docs/performance.md).
        pub(crate) const RECORDS: [&EntryRecord; ENTRY_COUNT] = [#(#record_rows)*];

        /// What `RECORDS` holds for an entry whose feature is off: no marker reads it, and it
        /// is all zeros, not a record (no magic). Unused where every feature is on.
        #[allow(dead_code)]
        static NO_RECORD: EntryRecord = EntryRecord {
            magic: [0; 8],
            layout: 0,
            how: 0,
            flags: 0,
            abis: 0,
            version: 0,
            floor: 0,
            high: 0,
            symbol: [0; 64],
            exported: [0; 64],
            check: 0,
            reserved: 0,
        };

        /// One marker type per entry, named like its typedef without `PFN_`: a type only, with
        /// no values (an empty enum), used as `driver.get::<entries::cuMemAlloc_v3020>()`.
        /// Each marker's page says what a caller needs to pick it: the signature, the name the
        /// driver exports it under, the flag, the oldest driver that has it, and its siblings.
        #[allow(non_camel_case_types)]
        pub mod entries {
            #(#markers)*
        }

        /// One [`EntryRecord`] per entry, named like its marker: what [`Entry::RECORD`] points
        /// at. A static each, so that the linker keeps exactly those of the entries the
        /// program's kept code looks up.
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        pub mod records {
            #(#records)*
        }
    })
}

/// `registry.json`: the model as [`crate::registry_json::Registry`].
pub fn registry_json(ctx: &Ctx<'_>) -> Result<Vec<u8>, Error> {
    use crate::registry_json as json;
    let m = ctx.model;
    let marker = ctx.marker("").lines().map(str::trim).collect::<Vec<_>>().join(" ");
    let registry = json::Registry {
        generated: marker,
        generator: crate::write::generator(),
        schema: json::SCHEMA,
        toolkits: ctx.all_toolkits.clone(),
        toolkit_details: m
            .toolkits
            .iter()
            .map(|t| json::ToolkitDetails {
                version: t.version,
                source: t.source.clone(),
                headers: t
                    .headers
                    .iter()
                    .map(|(h, c)| {
                        let count = json::HeaderCount {
                            typedefs: c.typedefs,
                            unversioned: c.unversioned,
                            aliases: c.aliases,
                            broken_aliases: c.broken_aliases,
                        };
                        (h.clone(), count)
                    })
                    .collect(),
                has_alias_macros: t.has_alias_macros,
            })
            .collect(),
        entries: m
            .entries
            .values()
            .map(|e| json::Entry {
                symbol: e.symbol.clone(),
                version: e.version,
                variant: e.variant,
                pfn: e.pfn.clone(),
                header: e.header.clone(),
                module: e.module.clone(),
                platforms: e.platforms.iter().copied().collect(),
                arch: e.arch.clone(),
                min_driver: e.min_driver,
                exported: e.exported.clone(),
                legacy: e.legacy,
                toolkits: e.toolkits.iter().copied().collect(),
                params: e.params.iter().map(|p| json::Param { name: p.name.clone(), ty: p.ty.to_string() }).collect(),
                returns: e.returns.to_string(),
            })
            .collect(),
        header_aliases: m
            .header_aliases
            .iter()
            .map(|(t, aliases)| {
                let aliases = aliases
                    .iter()
                    .map(|(n, a)| {
                        (n.clone(), json::Modes { default: a.default.clone(), per_thread: a.per_thread.clone() })
                    })
                    .collect();
                (*t, aliases)
            })
            .collect(),
        drift: m
            .drift
            .iter()
            .map(|d| json::Drift {
                pfn: d.pfn.clone(),
                from: d.from,
                to: d.to,
                param: d.param.clone(),
                before: d.before.clone(),
                after: d.after.clone(),
            })
            .collect(),
        c_names: m
            .c_names
            .iter()
            .map(|(t, names)| {
                let names = names
                    .iter()
                    .map(|(n, c)| {
                        (n.clone(), json::Modes { default: c.default.clone(), per_thread: c.per_thread.clone() })
                    })
                    .collect();
                (*t, names)
            })
            .collect(),
    };
    registry.to_json().map_err(|message| Error::Emit { file: REGISTRY_JSON.into(), message })
}

/// A marker's rustdoc: what a caller needs to choose it, from docs.rs alone.
fn marker_doc(ctx: &Ctx<'_>, e: &crate::model::Entry) -> String {
    use crate::version::format_cuda_version;
    let module = ctx.module_of(&e.module).map_or("pfn", |m| m.module());
    let (pfn, symbol, version) = (&e.pfn, &e.symbol, e.version);
    let params: Vec<String> = e.params.iter().map(|p| format!("{}: {}", p.name, p.ty)).collect();
    let returns = if e.returns.is_unit() { String::new() } else { format!(" -> {}", e.returns) };
    let flag = match e.variant {
        None => "`CU_GET_PROC_ADDRESS_LEGACY_STREAM` (the default variant)".to_owned(),
        Some(v) => format!("`CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM` (the `{}` variant)", &v.suffix()[1..]),
    };
    let siblings: Vec<&crate::model::Entry> = ctx.model.symbol_entries(symbol).filter(|s| s.pfn != e.pfn).collect();
    let same_kind = |x: &crate::model::Entry| x.variant.is_some() == e.variant.is_some();
    let newest = ctx.model.symbol_entries(symbol).filter(|x| same_kind(x)).map(|x| x.version).max() == Some(version);
    let standing = match (e.legacy, newest) {
        (true, _) => "A legacy ABI: the headers declare it only under `__CUDA_API_VERSION_INTERNAL`.".to_owned(),
        (false, true) => format!(
            "The newest ABI of `{symbol}` this crate knows{}.",
            if e.variant.is_some() { " of its per-thread variants" } else { "" }
        ),
        (false, false) => format!("An older ABI of `{symbol}`: newer ones follow below."),
    };
    let mut doc = format!(
        " `{symbol}` at exactly version {version} (CUDA {}): [`{pfn}`](crate::{module}::{pfn}).\n\n ```text\n fn({}){returns}\n ```\n\n",
        format_cuda_version(version),
        params.join(", ")
    );
    doc.push_str(&format!(" - Exported by the driver as `{}`; asked for with {flag}.\n", e.exported));
    match (e.min_driver, &e.min_driver_evidence) {
        (Some(floor), evidence) => doc.push_str(&format!(
            " - Needs a driver of CUDA {} or newer (`MIN_DRIVER`), although its typedef says {}: NVIDIA's drivers \
             were measured to lack it before ({}).\n",
            format_cuda_version(floor),
            format_cuda_version(version),
            evidence.as_deref().unwrap_or("the generator's headers-manifest.toml, [[driver_floor]]")
        )),
        (None, _) => doc.push_str(&format!(" - Needs a driver of CUDA {} or newer.\n", format_cuda_version(version))),
    }
    doc.push_str(&format!(" - {standing}\n"));
    if let Some(f) = ctx.module_of(&e.module).and_then(|m| m.feature.as_ref()) {
        doc.push_str(&format!(" - Needs the crate's `{f}` feature.\n"));
    }
    if !siblings.is_empty() {
        let list: Vec<String> =
            siblings.iter().map(|s| format!("[`{}`]", s.pfn.strip_prefix("PFN_").unwrap_or(&s.pfn))).collect();
        doc.push_str(&format!("\n Every ABI of `{symbol}`: {} (and this one).\n", list.join(", ")));
    }
    doc
}
