//! `src/newest.rs`: per symbol, an enum with one case per ABI, declared in the order
//! `Driver::newest` tries them, and a marker type that names it; and `src/visit.rs`: generic dispatch
//! over every entry and every symbol, for programs (the doctor, the tests) that must call
//! `Driver::get::<E>()` for each marker without naming every marker.

use std::collections::BTreeSet;

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

use super::ctx::Ctx;
use super::record::{self, Abi, Record};
use crate::model::Entry;
use crate::names::Variant;
use crate::version::format_cuda_version;
use crate::Error;

pub const NEWEST_RS: &str = "src/newest.rs";
pub const VISIT_RS: &str = "src/visit.rs";

fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

fn marker(e: &Entry) -> Ident {
    ident(e.pfn.strip_prefix("PFN_").unwrap_or(&e.pfn))
}

/// `V12050`, `V7000Ptds`.
fn case_name(e: &Entry) -> Ident {
    match e.variant {
        None => format_ident!("V{}", e.version),
        Some(Variant::Ptds) => format_ident!("V{}Ptds", e.version),
        Some(Variant::Ptsz) => format_ident!("V{}Ptsz", e.version),
    }
}

/// Names the module defines or imports itself, which no enum may take; `Candidate` and `Variant`
/// it no longer does, but they stay here so that no enum's name changes with that.
const RESERVED: &[&str] = &["Candidate", "Symbol", "NewestAbi", "Sealed", "NonNull", "EntryInfo", "Variant", "ENTRIES"];

/// `cuCtxCreate` -> `CtxCreate`: the symbol without its `cu` prefix, capitalised.
fn enum_name(symbol: &str, taken: &BTreeSet<String>) -> Result<String, Error> {
    let rest = symbol.strip_prefix("cu").filter(|r| !r.is_empty()).unwrap_or(symbol);
    let mut chars = rest.chars();
    let first: String = chars.next().map(|c| c.to_ascii_uppercase()).into_iter().collect();
    let mut name = format!("{first}{}", chars.as_str());
    // `cuSelf` would be `Self`, a keyword: then, as for a clash, the prefix stays (`CuSelf`).
    let usable = |n: &str| syn::parse_str::<Ident>(n).is_ok();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic())
        || RESERVED.contains(&name.as_str())
        || taken.contains(&name)
        || !usable(&name)
    {
        name = format!("Cu{name}");
    }
    if taken.contains(&name) || !usable(&name) {
        return Err(Error::Emit {
            file: NEWEST_RS.into(),
            message: format!("no enum name for symbol `{symbol}` (tried `{name}`)"),
        });
    }
    Ok(name)
}

/// What `newest` tries with legacy-stream semantics: the default ABIs, highest version first.
pub(crate) fn legacy_order<'a>(entries: &[&'a Entry]) -> Vec<&'a Entry> {
    let mut out: Vec<&Entry> = entries.iter().copied().filter(|e| e.variant.is_none()).collect();
    out.sort_by_key(|e| std::cmp::Reverse(e.version));
    out
}

/// With per-thread semantics: for each default ABI, highest first, the per-thread variants
/// that pair with it (its version is the highest default one at or below theirs: the
/// driver's own pairing, as in the exported names), highest first, then the ABI itself.
/// Per-thread variants older than every default ABI (none in any toolkit so far) come last.
pub(crate) fn per_thread_order<'a>(entries: &[&'a Entry]) -> Vec<&'a Entry> {
    let defaults = legacy_order(entries);
    let mut threads: Vec<&Entry> = entries.iter().copied().filter(|e| e.variant.is_some()).collect();
    threads.sort_by_key(|e| std::cmp::Reverse((e.version, e.variant)));
    let paired = |p: &Entry| defaults.iter().map(|d| d.version).filter(|&v| v <= p.version).max();
    let mut out = Vec::new();
    for d in &defaults {
        out.extend(threads.iter().copied().filter(|p| paired(p) == Some(d.version)));
        out.push(*d);
    }
    out.extend(threads.iter().copied().filter(|p| paired(p).is_none()));
    out
}

/// The entry's index in `ENTRIES`, written as a number, as the registry and api.rs write it:
/// `<entries::X as Entry>::INDEX` read the same, but rustc resolved an impl and evaluated a
/// constant for each of the crate's cases, 5% of a `newest` build (docs/performance.md).
fn entry_index(ctx: &Ctx<'_>, e: &Entry) -> Result<TokenStream, Error> {
    let Some(&index) = ctx.index_of.get(e.pfn.as_str()) else {
        return Err(Error::Emit { file: NEWEST_RS.into(), message: format!("`{}` is not in the registry", e.pfn) });
    };
    let index = Literal::usize_unsuffixed(index);
    Ok(quote!(#index))
}

pub fn newest_rs(ctx: &Ctx<'_>) -> Result<TokenStream, Error> {
    let mut taken = BTreeSet::new();
    let mut enums = Vec::new();
    let mut markers = Vec::new();
    let mut records = Vec::new();
    for symbol in ctx.model.symbols() {
        // Only entries whose module is generated; a symbol's entries share one module (and so
        // one `cfg`): every typedef header row declares whole symbols.
        let entries: Vec<&Entry> =
            ctx.model.symbol_entries(symbol).filter(|e| ctx.pfn_path(&e.pfn).is_some()).collect();
        let Some(first) = entries.first() else { continue };
        if let Some(other) = entries.iter().find(|e| e.module != first.module) {
            return Err(Error::Emit {
                file: NEWEST_RS.into(),
                message: format!("`{symbol}` has entries in two modules ({} and {})", first.module, other.module),
            });
        }
        let cfg = ctx.pfn_path(&first.pfn).map(|(_, cfg)| cfg).unwrap_or_default();
        let name = enum_name(symbol, &taken)?;
        taken.insert(name.clone());
        let enum_ident = ident(&name);
        // Declared in the order `newest` tries them with per-thread variants preferred; the
        // legacy order is the same without the per-thread cases (`newest::order`).
        let cases = per_thread_order(&entries);
        let has_per_thread = cases.iter().any(|e| e.variant.is_some());
        let variants = cases.iter().map(|e| {
            let case = case_name(e);
            let path = ctx.pfn_path(&e.pfn).map(|(path, _)| path).unwrap_or_default();
            let doc = format!(
                " [`{pfn}`]({path}): `{symbol}` of CUDA {} ({}){}.",
                format_cuda_version(e.version),
                e.version,
                if e.variant.is_some() { ", the per-thread default stream variant" } else { "" },
                pfn = e.pfn,
                path = path.to_string().replace(' ', "")
            );
            quote!(#[doc = #doc] #case(#path),)
        });
        // Per case, in declaration order (its discriminant), the entry it holds.
        let indices = cases.iter().map(|e| entry_index(ctx, e)).collect::<Result<Vec<_>, Error>>()?;
        let mut doc = format!(
            " The ABIs of `{symbol}` this crate knows, newest first: what \
             [`Driver::newest`](crate::Driver::newest)`::<`[`symbols::{symbol}`]`>()` returns. Match it to call \
             each case with its own signature."
        );
        if has_per_thread {
            doc.push_str(
                "\n\n The `Ptds`/`Ptsz` cases come back only when per-thread variants are preferred (the \
                 `per-thread-default-stream` feature, or [`DefaultStream::PerThread`](crate::DefaultStream::PerThread)).",
            );
        }
        enums.push(quote! {
            #[doc = #doc]
            #cfg
            #[derive(Copy)]
            #[repr(usize)]
            pub enum #enum_ident {
                #(#variants)*
            }
            #cfg
            impl sealed::Sealed for #enum_ident {}
            // By hand: the derive would check that every case's function type is `Clone`.
            #cfg
            impl Clone for #enum_ident {
                #[inline]
                fn clone(&self) -> Self {
                    *self
                }
            }
            #cfg
            impl core::fmt::Debug for #enum_ident {
                #[inline]
                fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    debug_abi(self, f)
                }
            }
            #cfg
            impl NewestAbi for #enum_ident {
                const CASES: &'static [usize] = &[#(#indices),*];
            }
        });
        let m = ident(symbol);
        // Read as the oldest ABI it accepts (`Record::newest`).
        let abis: Vec<Abi<'_>> = entries.iter().map(|e| Abi::of(e)).collect();
        let bytes = Record::newest(symbol, &abis)
            .ok_or_else(|| "no ABIs".to_owned())
            .and_then(|r| r.bytes())
            .map_err(|message| Error::Emit { file: NEWEST_RS.into(), message: format!("{symbol}: {message}") })?;
        let record = record::literal(&quote!(crate::registry::EntryRecord), &bytes);
        records.push(quote! {
            #cfg
            pub static #m: crate::registry::EntryRecord = #record;
        });
        let mdoc = format!(
            " The symbol `{symbol}`, for [`Driver::newest`](crate::Driver::newest): see [`{name}`](super::{name})."
        );
        markers.push(quote! {
            #[doc = #mdoc]
            #cfg
            pub enum #m {}
            #cfg
            impl super::sealed::Sealed for #m {}
            #cfg
            impl super::Symbol for #m {
                type Newest = super::#enum_ident;
                const RECORD: &'static crate::registry::EntryRecord = &super::records::#m;
            }
        });
    }
    // The example matches every ABI of cuCtxCreate: only where the registry has exactly those.
    let ctx_create: Vec<u32> = ctx.model.symbol_entries("cuCtxCreate").map(|e| e.version).collect();
    let fence = if ctx_create == [2000, 3020, 11040, 12050] { "no_run" } else { "ignore" };
    let crate_ident = ctx.opts.crate_name.replace('-', "_");
    let example = format!(
        "\n ```{fence}\n use {crate_ident}::newest::CtxCreate;\n use {crate_ident}::types::CUcontext;\n use {crate_ident}::{{symbols, Driver, Error}};\n\n \
         fn create(driver: &Driver) -> Result<CUcontext, Error> {{\n     let mut ctx: CUcontext = std::ptr::null_mut();\n     \
         // One case per ABI, each with its own signature: a new ABI in a later version of the\n     \
         // crate is a new case, and this match stops compiling until it is handled.\n     \
         let r = match driver.newest::<symbols::cuCtxCreate>()? {{\n         \
         CtxCreate::V12050(f) => unsafe {{ f(&mut ctx, std::ptr::null_mut(), 0, 0) }},\n         \
         CtxCreate::V11040(f) => unsafe {{ f(&mut ctx, std::ptr::null_mut(), 0, 0, 0) }},\n         \
         CtxCreate::V3020(f) | CtxCreate::V2000(f) => unsafe {{ f(&mut ctx, 0, 0) }},\n     }};\n     \
         driver.check(\"cuCtxCreate\", r)?;\n     Ok(ctx)\n }}\n ```\n"
    );
    Ok(quote! {
        //! The newest ABI of a symbol (feature `newest`): per symbol, an enum with one case per
        //! ABI this crate knows (`CtxCreate::V12050(PFN_cuCtxCreate_v12050)`, ...), declared in
        //! the order they are tried, and a marker in [`symbols`] for
        //! [`Driver::newest`](crate::Driver::newest), which tries the ABIs from the highest
        //! version at or below the driver's down, each at exactly its own version.
        #![doc = #example]
        #![allow(non_camel_case_types)]
        pub use crate::newest_abi::{NewestAbi, Symbol};
        // The enums' and markers' seal, and every enum's `Debug`.
        use crate::newest_abi::{debug_abi, sealed};
        pub(crate) use crate::newest_abi::order;

        #(#enums)*

        /// One marker type per symbol, named like the symbol: a type only, with no values (an
        /// empty enum), used as `driver.newest::<symbols::cuCtxCreate>()`.
        pub mod symbols {
            #(#markers)*
        }

        /// One [`EntryRecord`](crate::EntryRecord) per symbol, named like its marker: what
        /// [`Symbol::RECORD`] points at.
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        pub mod records {
            #(#records)*
        }
    })
}

pub fn visit_rs(ctx: &Ctx<'_>) -> TokenStream {
    // Each call under its module's `cfg`, as the markers are.
    let entries = ctx.model.entries.values().filter_map(|e| {
        let (_, cfg) = ctx.pfn_path(&e.pfn)?;
        let m = marker(e);
        Some(quote!(#cfg visitor.visit::<crate::entries::#m>();))
    });
    let symbols = ctx.model.symbols().into_iter().filter_map(|s| {
        let (_, cfg) = ctx.model.symbol_entries(s).find_map(|e| ctx.pfn_path(&e.pfn))?;
        let m = ident(s);
        Some(quote!(#cfg visitor.visit::<crate::symbols::#m>();))
    });
    quote! {
        //! Generic dispatch over the registry (feature `visit`): [`visit_entries`] calls a
        //! visitor once per entry marker, `visit_symbols` (with the `newest` feature too) once
        //! per symbol marker, in registry order, so that code generic over [`Entry`](crate::Entry) or
        //! `Symbol` can run for all of them.
        //!
        //! Each such call is a generic function compiled once per entry: about 700 of them for
        //! a visitor that calls `Driver::get`. Code that only needs every entry's pointer
        //! walks [`ENTRIES`](crate::ENTRIES) with [`Driver::resolve`](crate::Driver::resolve)
        //! instead, which is one function.
        pub use crate::visitor::EntryVisitor;
        #[cfg(feature = "newest")]
        pub use crate::visitor::SymbolVisitor;

        /// Calls `visitor.visit::<E>()` for every marker in [`entries`](crate::entries), in
        /// the order of [`ENTRIES`](crate::ENTRIES): those of the modules the crate's features
        /// compile.
        pub fn visit_entries<V: EntryVisitor>(visitor: &mut V) {
            #(#entries)*
        }

        /// Calls `visitor.visit::<S>()` for every marker in [`symbols`](crate::symbols), in
        /// symbol order.
        #[cfg(feature = "newest")]
        pub fn visit_symbols<V: SymbolVisitor>(visitor: &mut V) {
            #(#symbols)*
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    fn entry(version: u32, variant: Option<Variant>) -> Entry {
        Entry {
            symbol: "cuX".into(),
            version,
            variant,
            pfn: format!("PFN_cuX_v{version}{}", variant.map_or("", |v| v.suffix())),
            header: "cudaTypedefs.h".into(),
            module: "cuda".into(),
            platforms: BTreeSet::new(),
            arch: None,
            min_driver: None,
            min_driver_evidence: None,
            exported: String::new(),
            legacy: false,
            toolkits: BTreeSet::new(),
            params: vec![],
            returns: "CUresult".parse().unwrap(),
            declared: BTreeMap::new(),
        }
    }

    fn names(order: &[&Entry]) -> Vec<String> {
        order.iter().map(|e| e.pfn.trim_start_matches("PFN_cuX_").to_owned()).collect()
    }

    #[test]
    fn orders() {
        let all = [
            entry(3020, None),
            entry(7000, Some(Variant::Ptds)),
            entry(10000, None),
            entry(10010, Some(Variant::Ptsz)),
            entry(12000, None),
            entry(2000, None),
        ];
        let refs: Vec<&Entry> = all.iter().collect();
        assert_eq!(names(&legacy_order(&refs)), ["v12000", "v10000", "v3020", "v2000"]);
        assert_eq!(
            names(&per_thread_order(&refs)),
            ["v12000", "v10010_ptsz", "v10000", "v7000_ptds", "v3020", "v2000"]
        );
        // The emitted enums declare the per-thread order, and `newest::order` takes the legacy
        // one from it by dropping the per-thread cases: the two must agree.
        let defaults: Vec<&Entry> = per_thread_order(&refs).into_iter().filter(|e| e.variant.is_none()).collect();
        assert_eq!(names(&defaults), names(&legacy_order(&refs)));
    }

    #[test]
    fn enum_names() {
        let mut taken = BTreeSet::new();
        assert_eq!(enum_name("cuCtxCreate", &taken).unwrap(), "CtxCreate");
        assert_eq!(enum_name("cuvdpauX", &taken).unwrap(), "VdpauX");
        assert_eq!(enum_name("cu", &taken).unwrap(), "Cu");
        assert_eq!(enum_name("cuSymbol", &taken).unwrap(), "CuSymbol");
        taken.insert("Init".to_owned());
        assert_eq!(enum_name("cuInit", &taken).unwrap(), "CuInit");
        taken.insert("CuInit".to_owned());
        assert!(enum_name("cuInit", &taken).is_err());
    }
}
