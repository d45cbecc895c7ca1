//! `types/src/registry.rs`: the static table of every entry and one marker type per entry, and
//! `registry.json`: the model as data, for reviewers and tools.
//!
//! **Markers carry no code.** Entry and symbol markers are empty enums with no derives, and each
//! entry's record (the crate's `EntryRecord`, read by min-driver) is one named static
//! that only the marker's `RECORD` points at: per-entry items are what the crate's compile time is
//! made of (docs/performance.md), and a table pointing at the records would keep every one of
//! them in every binary. Each record is a literal of the bytes `record.rs` computes.

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
        let Some((ty, cfg)) = ctx.pfn_path(&e.pfn) else { continue };
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
                const RECORD: &'static super::EntryRecord = &super::records::#marker;
                #min_driver
            }
        });
    }
    let n = infos.len();
    let record_type = record_type();
    Ok(quote! {
        //! The registry: every entry point ABI the crate knows, as a static table
        //! ([`ENTRIES`]) and as one marker type per entry ([`entries`]: types only, with no
        //! values) whose constants are all a lookup needs.
        use core::ffi::CStr;

        /// The pinned toolkits this crate was generated from, oldest first.
        pub static TOOLKITS: [&str; #n_toolkits] = [#(#toolkits),*];

        /// Which per-thread default stream variant an entry is.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Variant {
            /// `_ptds`: per-thread default stream, synchronous calls.
            Ptds,
            /// `_ptsz`: per-thread default stream, calls that take a stream.
            Ptsz,
        }

        /// The `flags` argument of `cuGetProcAddress` (`CUdriverProcAddress_flags`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(transparent)]
        pub struct StreamFlags(pub u64);

        impl StreamFlags {
            /// `CU_GET_PROC_ADDRESS_DEFAULT`.
            pub const DEFAULT: StreamFlags = StreamFlags(0);
            /// `CU_GET_PROC_ADDRESS_LEGACY_STREAM`: the default (legacy stream) variant.
            /// Every default-variant entry is looked up with this flag.
            pub const LEGACY_STREAM: StreamFlags = StreamFlags(1);
            /// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`: the `_ptds`/`_ptsz` variant.
            /// Every per-thread entry is looked up with this flag.
            pub const PER_THREAD_DEFAULT_STREAM: StreamFlags = StreamFlags(2);
        }

        /// The flag's C name and value (`CU_GET_PROC_ADDRESS_LEGACY_STREAM (1)`), as the
        /// crate's errors quote it.
        impl core::fmt::Display for StreamFlags {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                match self.0 {
                    0 => f.write_str("CU_GET_PROC_ADDRESS_DEFAULT (0)"),
                    1 => f.write_str("CU_GET_PROC_ADDRESS_LEGACY_STREAM (1)"),
                    2 => f.write_str("CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (2)"),
                    n => write!(f, "flags {n:#x}"),
                }
            }
        }

        /// The operating systems whose driver has an entry.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct Platforms {
            pub linux: bool,
            pub windows: bool,
            /// The one processor architecture whose drivers have it (`"aarch64"`, as
            /// `std::env::consts::ARCH` says it), where NVIDIA's drivers of the others lack it
            /// although the headers declare it; `None`: every architecture.
            pub arch: Option<&'static str>,
        }

        impl Platforms {
            /// Whether the driver of the platform this is compiled for has the entry.
            pub const fn here(self) -> bool {
                let os = if cfg!(windows) { self.windows } else { self.linux };
                let arch = match self.arch {
                    Some(a) => same(a.as_bytes(), std::env::consts::ARCH.as_bytes()),
                    None => true,
                };
                os && arch
            }
        }

        /// `a == b`, in a `const fn`.
        const fn same(a: &[u8], b: &[u8]) -> bool {
            if a.len() != b.len() {
                return false;
            }
            let mut i = 0;
            while i < a.len() {
                if a[i] != b[i] {
                    return false;
                }
                i += 1;
            }
            true
        }

        /// One row of the registry.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct EntryInfo {
            /// The name passed to `cuGetProcAddress` (`cuMemAlloc`).
            pub symbol: &'static str,
            /// The same, NUL-terminated.
            pub c_symbol: &'static CStr,
            /// The exact version passed to `cuGetProcAddress`: the one in the typedef's name.
            pub version: u32,
            pub variant: Option<Variant>,
            /// The flags passed to `cuGetProcAddress`.
            pub flags: StreamFlags,
            /// The typedef name (`PFN_cuMemAlloc_v3020`).
            pub pfn: &'static str,
            /// The name the driver library exports this ABI under (`cuMemAlloc_v2`).
            pub exported: &'static str,
            /// The typedef header that declares it.
            pub header: &'static str,
            /// The manifest header it belongs to (`cuda`, `gl`, `d3d9`), which names its module
            /// (`pfn` for `cuda`) and feature.
            pub module: &'static str,
            /// Where the driver has it.
            pub platforms: Platforms,
            /// Declared only under `__CUDA_API_VERSION_INTERNAL`.
            pub legacy: bool,
            /// Bit `i` set when [`TOOLKITS`]`[i]` declares it.
            pub toolkit_mask: u64,
        }

        impl EntryInfo {
            /// The toolkits that declare this entry.
            pub fn toolkits(&self) -> impl Iterator<Item = &'static str> + '_ {
                TOOLKITS.iter().enumerate().filter(|(i, _)| self.toolkit_mask >> i & 1 == 1).map(|(_, t)| *t)
            }
        }

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

        impl EntryInfo {
            /// Every ABI of `symbol` this crate knows, oldest first, default and per-thread
            /// variants: a slice of [`ENTRIES`] (empty for a symbol it does not know).
            pub fn of_symbol(symbol: &str) -> &'static [EntryInfo] {
                let start = ENTRIES.partition_point(|e| e.symbol < symbol);
                let end = start + ENTRIES[start..].partition_point(|e| e.symbol == symbol);
                &ENTRIES[start..end]
            }

            /// This row's index in [`ENTRIES`], if it is one of its rows.
            pub fn index(&self) -> Option<usize> {
                let offset = (self as *const EntryInfo as usize).checked_sub(ENTRIES.as_ptr() as usize)?;
                let index = offset / core::mem::size_of::<EntryInfo>();
                (offset % core::mem::size_of::<EntryInfo>() == 0 && index < ENTRY_COUNT).then_some(index)
            }
        }

        mod sealed {
            pub trait Sealed {}
        }

        /// A registry entry, as a type: implemented only by the markers in [`entries`], each
        /// of which sets only its index; the rest is the entry's row.
        ///
        /// # Safety
        /// `Fn` is the ABI the driver returns for (`SYMBOL`, `VERSION`, `FLAGS`). The trait is
        /// sealed; for symbols this crate does not know, use a raw lookup.
        #[diagnostic::on_unimplemented(
            message = "`{Self}` is not a registry entry: name its marker in `entries`",
            label = "not an entry marker",
            note = "`entry_table!`, `Driver::get` and `Driver::call` take the markers of `entries` \
                    (`entries::cuInit_v2000`), not the function types of `pfn` (`pfn::PFN_cuInit_v2000`): \
                    drop the `PFN_` and write `entries::` for `pfn::`"
        )]
        pub unsafe trait Entry: sealed::Sealed + 'static {
            /// The function pointer type (`PFN_..._vNNNN`).
            type Fn: Copy + 'static;
            /// This entry's index in [`ENTRIES`].
            const INDEX: usize;
            /// This entry's row.
            const INFO: &'static EntryInfo = &ENTRIES[Self::INDEX];
            /// This entry's [`EntryRecord`]: a static of its own, which every lookup of the
            /// entry reaches (its name is the one passed to the driver), so that the program
            /// holds it exactly where it holds code that looks the entry up.
            const RECORD: &'static EntryRecord;
            /// The name passed to `cuGetProcAddress`: the bytes of [`Self::RECORD`].
            const SYMBOL: &'static CStr = Self::RECORD.c_symbol();
            /// The exact version passed to `cuGetProcAddress`.
            const VERSION: u32 = Self::INFO.version;
            /// The flags passed to `cuGetProcAddress`.
            const FLAGS: StreamFlags = Self::INFO.flags;
            /// The oldest driver that has it (`major * 1000 + minor * 10`): [`Self::VERSION`],
            /// or a later release where NVIDIA's drivers were measured to lack it at its own
            /// version (the marker's page says so).
            const MIN_DRIVER: u32 = Self::VERSION;
        }

        /// One marker type per entry, named like its typedef without `PFN_`: a type only, with
        /// no values (an empty enum), used as `driver.get::<entries::cuMemAlloc_v3020>()`.
        /// Each marker's page says what a caller needs to pick it: the signature, the name the
        /// driver exports it under, the flag, the oldest driver that has it, and its siblings.
        #[allow(non_camel_case_types)]
        pub mod entries {
            #(#markers)*
        }

        #record_type

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

/// The record type, its layout and its constructor. The entries' and symbols' records are
/// written as literals (`record.rs` computes their bytes, check included): a `const fn` per
/// record cost rustc a const evaluation each, 1,341 of them, about 40% of the types crate's
/// build (docs/performance.md).
/// The constructor stays for the few records built in the shim (`get_raw`, `resolve`) and by
/// `get_raw!` in a user's crate, which the generator cannot know.
fn record_type() -> TokenStream {
    quote! {
            /// What a lookup leaves in the compiled program, for `cuda-sys-gen min-driver`:
            /// 160 bytes of fixed layout and no pointers (so no relocations), found by
            /// [`EntryRecord::MAGIC`] and checked by [`EntryRecord::check`].
            ///
            /// Every way of looking an entry up reaches its record (the name the driver is
            /// given is read from it), and nothing else does: no table points at the records,
            /// and each is a static of its own (in a section of its own), so the linker keeps
            /// exactly the records of the lookups in the code it keeps, after inlining, LTO,
            /// `cfg`, features and generics. A binary's records are therefore what it can ask
            /// the driver for.
            ///
            /// | offset | field | |
            /// | --- | --- | --- |
            /// | 0 | `magic` | [`EntryRecord::MAGIC`] |
            /// | 8 | `layout` | 1 |
            /// | 9 | `how` | [`EntryRecord::ENTRY`], [`EntryRecord::NEWEST`], [`EntryRecord::RUNTIME`] or [`EntryRecord::FIXED`] |
            /// | 10 | `flags` | the `cuGetProcAddress` flags |
            /// | 11 | `abis` | how many ABIs it accepts (`NEWEST`), else 1 |
            /// | 12 | `version` | the version asked for (`NEWEST`: its oldest ABI's) |
            /// | 16 | `floor` | the oldest driver that has it (`major * 1000 + minor * 10`) |
            /// | 20 | `high` | the highest version it asks for |
            /// | 24 | `symbol` | the symbol, NUL-padded (64 bytes) |
            /// | 88 | `exported` | the exported name (`ENTRY`), or what asked (`RUNTIME`), NUL-padded |
            /// | 152 | `check` | FNV-1a (32 bits) of bytes 0 to 151, the integers little-endian |
            /// | 156 | `reserved` | 0 |
            #[derive(Clone, Copy, Debug, PartialEq, Eq)]
            #[repr(C, align(8))]
            pub struct EntryRecord {
                pub magic: [u8; 8],
                pub layout: u8,
                pub how: u8,
                pub flags: u8,
                pub abis: u8,
                pub version: u32,
                pub floor: u32,
                pub high: u32,
                pub symbol: [u8; 64],
                pub exported: [u8; 64],
                pub check: u32,
                pub reserved: u32,
            }

            impl EntryRecord {
                /// The first 8 bytes of every record.
                pub const MAGIC: [u8; 8] = *b"\xc3cuRec\x1a\n";
                /// An exact entry: `get`, `api::`, `cu!`, `entry_table!`, `call`.
                pub const ENTRY: u8 = 1;
                /// `newest::<symbols::X>`: any of `abis` ABIs, from `version` to `high`.
                pub const NEWEST: u8 = 2;
                /// A lookup whose name or version is known only at run time (`get_raw`,
                /// `resolve`): the program may need more than its records say.
                pub const RUNTIME: u8 = 3;
                /// A lookup by a name and version fixed at compile time
                /// (the `get_raw!` macro of the crate that looks entries up).
                pub const FIXED: u8 = 4;

                /// A record; refused at compile time where a name does not fit.
                #[allow(clippy::too_many_arguments)]
                pub const fn new(
                    how: u8,
                    symbol: &str,
                    exported: &str,
                    version: u32,
                    floor: u32,
                    high: u32,
                    flags: u8,
                    abis: u8,
                ) -> EntryRecord {
                    let mut r = EntryRecord {
                        magic: Self::MAGIC,
                        layout: 1,
                        how,
                        flags,
                        abis,
                        version,
                        floor,
                        high,
                        symbol: padded(symbol),
                        exported: padded(exported),
                        check: 0,
                        reserved: 0,
                    };
                    r.check = r.checksum();
                    r
                }

                /// FNV-1a of bytes 0 to 151, as [`EntryRecord::check`] holds it.
                pub const fn checksum(&self) -> u32 {
                    let mut h: u32 = 0x811c_9dc5;
                    let head = [self.layout, self.how, self.flags, self.abis];
                    let mut i = 0;
                    while i < 152 {
                        let b = if i < 8 {
                            self.magic[i]
                        } else if i < 12 {
                            head[i - 8]
                        } else if i < 24 {
                            let v = [self.version, self.floor, self.high][(i - 12) / 4];
                            v.to_le_bytes()[(i - 12) % 4]
                        } else if i < 88 {
                            self.symbol[i - 24]
                        } else {
                            self.exported[i - 88]
                        };
                        h = (h ^ b as u32).wrapping_mul(0x0100_0193);
                        i += 1;
                    }
                    h
                }

                /// The symbol, as the driver is given it.
                pub const fn c_symbol(&self) -> &CStr {
                    match CStr::from_bytes_until_nul(&self.symbol) {
                        Ok(s) => s,
                        Err(_) => c"",
                    }
                }
            }

            /// `s` in 64 bytes, NUL-padded: at most 63 bytes of it, and no NUL.
            const fn padded(s: &str) -> [u8; 64] {
                let b = s.as_bytes();
                assert!(b.len() < 64, "a record's name is at most 63 bytes");
                let mut out = [0u8; 64];
                let mut i = 0;
                while i < b.len() {
                    assert!(b[i] != 0, "a record's name holds no NUL");
                    out[i] = b[i];
                    i += 1;
                }
                out
            }
    }
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
