//! `src/api.rs` (feature `api`): cuda.h's own function names (`cuCtxCreate`), each calling
//! the ABI that cuda.h's macros make of the name in the newest toolkit: `api::legacy` and
//! `api::ptds` in each stream mode, `api` itself in the one the crate's
//! `per-thread-default-stream` feature chooses.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::ctx::{marker_ident, Ctx};
use super::docs::{Context, Docs};
use crate::model::CNameTarget;
use crate::version::format_cuda_version;

pub const API_RS: &str = "src/api.rs";

/// The functions that take a module image (PTX text, a cubin or a fatbin) through a
/// `void*` parameter, with that parameter's name: their docs say that text needs a NUL.
/// C names whose newest meaning is a trap for a port of older C code: (C name, the older ABI's
/// typedef the lead names, the lead), put before everything else in the function's docs, where
/// the registry has that older ABI.
const PORTING_LEADS: [(&str, &str, &str); 1] = [(
    "cuCtxCreate",
    "PFN_cuCtxCreate_v3020",
    "**Porting `cuCtxCreate(&ctx, flags, dev)`, the 3-argument call?** Its Rust spelling is \
     [`api::cuCtxCreate_v2`](crate::api::cuCtxCreate_v2): `cu!(cuCtxCreate_v2(&mut ctx, flags, dev))`, \
     the ABI that call means. This function is another ABI, with a 4th parameter, `ctxCreateParams`: \
     do not pass a NULL one (`std::ptr::null_mut()`), whatever the documentation below says. \
     NVIDIA's 12.5 driver (555) crashed on a NULL `ctxCreateParams`, and cuda.h 12.5 to 13.1 \
     document one of its two pointers as required (the 13.0 driver, 580, accepted NULL: one \
     driver's answer, not a promise). The porting guide (docs/porting.md) has the measurements.",
)];

const IMAGE_LOADERS: [(&str, &str); 4] = [
    ("cuModuleLoadData", "image"),
    ("cuModuleLoadDataEx", "image"),
    ("cuLibraryLoadData", "code"),
    ("cuLinkAddData", "data"),
];

/// What older pinned cuda.h meant by `c_name` where that is another ABI than `newest_pfn`
/// (`cuCtxCreate`: `cuCtxCreate_v2` up to 12.4), as a doc paragraph: a program written
/// against an older cuda.h calls that form, and this function's signature is not it.
fn older_meanings(ctx: &Ctx<'_>, c_name: &str, mode: Mode, newest_pfn: &str) -> Option<String> {
    let newest = ctx.all_toolkits.last()?;
    let mut by_pfn: std::collections::BTreeMap<&str, Vec<crate::version::ToolkitVersion>> = Default::default();
    for (toolkit, names) in &ctx.model.c_names {
        if toolkit == newest {
            continue;
        }
        let Some(target) = names.get(c_name) else { continue };
        let pfn = match mode {
            Mode::PerThread => target.per_thread.as_deref(),
            Mode::Both | Mode::Legacy => target.default.as_deref(),
        };
        if let Some(pfn) = pfn.filter(|p| *p != newest_pfn) {
            by_pfn.entry(pfn).or_default().push(*toolkit);
        }
    }
    let mut forms: Vec<(crate::version::ToolkitVersion, String)> = Vec::new();
    for (pfn, toolkits) in by_pfn {
        let Some(e) = ctx.by_pfn.get(pfn) else { continue };
        let (first, last) = (toolkits.first()?, toolkits.last()?);
        // A range where every pinned toolkit between the two meant it, else the list.
        let between = ctx.all_toolkits.iter().filter(|t| *t >= first && *t <= last).count();
        let when = if toolkits.len() == 1 {
            format!("CUDA {first}")
        } else if between == toolkits.len() {
            format!("CUDA {first} to {last}")
        } else {
            format!("CUDA {}", toolkits.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", "))
        };
        // The function by its exported name, where it has one (not a newest C name; `CUresult`).
        let callable = e.returns.as_str() == "CUresult" && newest_c_names(ctx).all(|(c, _)| c != e.exported);
        let call =
            if callable { format!("[`api::{0}`](crate::api::legacy::{0}), ", e.exported) } else { String::new() };
        forms.push((*first, format!("`{}` in {when} ({call}`entries::{}`)", e.exported, marker_ident(e))));
    }
    if forms.is_empty() {
        return None;
    }
    forms.sort();
    let forms: Vec<String> = forms.into_iter().map(|(_, f)| f).collect();
    Some(format!(
        " Older cuda.h meant another ABI by `{c_name}`: {}. A program written against one of \
         those calls that form, with its own arguments; this function is not it (filling its new \
         arguments with null is not the old call). Call the older form by its exported name where \
         `api` has it, through [`Driver::get`](crate::Driver::get) with its marker, or as that \
         toolkit's cuda.h named it, `aliases::cuda_X_Y::{c_name}` (feature `aliases`).{}",
        forms.join(", "),
        MEASURED_NULLS.iter().find(|(c, _, _)| *c == c_name).map_or_else(String::new, |(_, param, what)| format!(
            "\n\n A null `{param}`, measured: {what}. That is one driver's answer, not cuda.h's \
             promise."
        ))
    ))
}

/// What drivers were measured to do with a null new argument of a C name whose older form
/// lacked it (the NULL a port of the older call is tempted to pass): `(C name, parameter,
/// what happened)`. Each from a GPU machine run (docs/gpu-machine-runs.md,
/// `conformance ctx-create-null`).
const MEASURED_NULLS: [(&str, &str, &str); 1] = [(
    "cuCtxCreate",
    "ctxCreateParams",
    "NVIDIA's driver 580.159.04 (CUDA 13.0, an H200) returned `CUDA_SUCCESS` and a context \
     (docs/gpu-machine-runs.md, run 13)",
)];

/// The newest toolkit's C names, with the entry each means in each stream mode.
fn newest_c_names<'a>(ctx: &'a Ctx<'a>) -> impl Iterator<Item = (&'a str, &'a CNameTarget)> + 'a {
    let newest = ctx.all_toolkits.last();
    newest.and_then(|t| ctx.model.c_names.get(t)).into_iter().flatten().map(|(c, t)| (c.as_str(), t))
}

/// Where a C name's function goes: the same entry in both stream modes, or one mode's.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Mode {
    Both,
    Legacy,
    PerThread,
}

impl Mode {
    /// The module of `api` that has a function of this mode.
    pub(super) fn module(self) -> &'static str {
        match self {
            Mode::Both | Mode::Legacy => "legacy",
            Mode::PerThread => "ptds",
        }
    }
}

/// The functions of one mode's module, per header module (which names its own types, the D3D
/// interfaces, unqualified), and its table rows.
#[derive(Default)]
struct Bucket {
    fns: std::collections::BTreeMap<String, Vec<TokenStream>>,
}

impl Bucket {
    /// The functions as items: cuda.h's at the top, each interop header's in a module of its
    /// own behind its feature, glob-re-exported.
    fn items(self, ctx: &Ctx<'_>) -> Vec<TokenStream> {
        let mut out = Vec::new();
        for (row, items) in self.fns {
            let Some(spec) = ctx.module_of(&row) else { continue };
            if spec.module() == "pfn" {
                out.extend(items);
                continue;
            }
            let (cfg, module) = (super::ctx::module_cfg(spec), Ident::new(spec.module(), Span::call_site()));
            out.push(quote! {
                #cfg
                mod #module {
                    use super::*;
                    use crate::#module::*;
                    #(#items)*
                }
                #cfg
                pub use self::#module::*;
            });
        }
        out
    }
}

/// The imports every function module of `api.rs` starts with.
fn imports() -> TokenStream {
    quote! {
        use core::ffi::{c_char, c_int, c_uint, c_void, c_longlong, c_ulonglong, c_short, c_ushort, c_uchar, c_float, c_double};
        use crate::types::*;
    }
}

/// Every function of `api.rs`: its C name, its stream mode and the entry it calls, by C name.
/// Entries that return no `CUresult` are left out: the function could not report a missing
/// driver.
pub(super) fn functions<'a>(ctx: &'a Ctx<'a>) -> Vec<(&'a str, Mode, &'a crate::model::Entry)> {
    let mut out = Vec::new();
    for (c_name, target) in newest_c_names(ctx) {
        let entry = |pfn: &Option<String>| pfn.as_deref().and_then(|p| ctx.by_pfn.get(p).copied());
        let rows = match (entry(&target.default), entry(&target.per_thread)) {
            (Some(d), Some(p)) if d.pfn == p.pfn => vec![(Mode::Both, d)],
            (d, p) => d.map(|d| (Mode::Legacy, d)).into_iter().chain(p.map(|p| (Mode::PerThread, p))).collect(),
        };
        out.extend(rows.into_iter().filter(|(_, e)| e.returns.as_str() == "CUresult").map(|(m, e)| (c_name, m, e)));
    }
    out
}

/// One function of `api.rs`: `name` calling entry `e` through the process-wide driver.
fn function_item(e: &crate::model::Entry, name: &Ident, doc: &str, module_cfg: &TokenStream) -> TokenStream {
    let marker = marker_ident(e);
    let args: Vec<Ident> = e
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            // The header's name where it is an identifier used once and not
            // SCREAMING_CASE (that could be a constant of `types` in scope, which a
            // parameter pattern would match instead of binding), else `arg<i>`.
            let ok = p.name.contains(|c: char| c.is_ascii_lowercase())
                && !p.name.starts_with("__")
                && e.params.iter().filter(|q| q.name == p.name).count() == 1
                && !p.name.starts_with("arg");
            ok.then(|| syn::parse_str::<Ident>(&p.name).ok())
                .flatten()
                .unwrap_or_else(|| Ident::new(&format!("arg{i}"), Span::call_site()))
        })
        .collect();
    let tys = e.params.iter().map(|p| p.ty.syntax());
    quote! {
        #[doc = #doc]
        #module_cfg
        #[inline]
        pub unsafe fn #name(#(#args: #tys),*) -> CUresult {
            match crate::api_shim::resolve::<crate::entries::#marker>() {
                Some(__entry_point) => __entry_point(#(#args),*),
                None => crate::api_shim::unavailable(),
            }
        }
    }
}

pub fn api_rs(ctx: &Ctx<'_>, docs: &Docs<'_>) -> TokenStream {
    let newest = ctx.all_toolkits.last().map_or_else(String::new, |t| t.to_string());
    let mut buckets: std::collections::BTreeMap<Mode, Bucket> = Default::default();
    // Per stream mode, its table: every C name it has, sorted.
    let (mut legacy_table, mut ptds_table) = (Vec::new(), Vec::new());
    {
        for (c_name, mode, e) in functions(ctx) {
            let Some((_, module_cfg)) = ctx.pfn_path(&e.pfn) else { continue };
            let Some(&index) = ctx.index_of.get(e.pfn.as_str()) else { continue };
            let name = Ident::new(c_name, Span::call_site());
            let marker = marker_ident(e);
            let how = if e.exported == *c_name {
                "exported under the same name".to_owned()
            } else {
                format!("`#define {c_name}` makes it `{}`", e.exported)
            };
            let own = format!(
                " `{c_name}` as cuda.h {newest} means it{}: {how}, the ABI of version {} \
                 (CUDA {}), [`entries::{marker}`](crate::entries::{marker}).\n\n \
                 Without a driver or without this entry: a code that says which, and \
                 [`api::error_of`](crate::api::error_of) why; see the [module](crate::api).",
                match mode {
                    Mode::Both => "",
                    Mode::Legacy => " without `CUDA_API_PER_THREAD_DEFAULT_STREAM`",
                    Mode::PerThread => " under `CUDA_API_PER_THREAD_DEFAULT_STREAM`",
                },
                e.version,
                format_cuda_version(e.version),
            );
            // cuda.h's own documentation first, then the crate's note.
            let doc = match docs.function(e, &Context::api(ctx.module_of(&e.module))) {
                Some(c_doc) => format!("{c_doc}\n\n{own}"),
                None => own,
            };
            let doc = match older_meanings(ctx, c_name, mode, &e.pfn) {
                Some(older) => format!("{doc}\n\n{older}"),
                None => doc,
            };
            // A port's trap first, where there is one.
            let lead = PORTING_LEADS
                .iter()
                .find(|(c, older, _)| *c == c_name && ctx.by_pfn.contains_key(older) && e.pfn != *older);
            let doc = match lead {
                Some((_, _, lead)) => format!(" {lead}\n\n{doc}"),
                None => doc,
            };
            let doc = match IMAGE_LOADERS.iter().find(|(c, _)| *c == c_name) {
                Some((_, param)) => format!(
                    "{doc}\n\n Text images (PTX) in `{param}` must end with a NUL byte: the driver reads \
                     them as C strings, up to the first zero, and a Rust `&str` has none. \
                     [`include_ptx!`](crate::include_ptx) embeds a file with its NUL."
                ),
                None => doc,
            };
            buckets.entry(mode).or_default().fns.entry(e.module.clone()).or_default().push(function_item(
                e,
                &name,
                &doc,
                &module_cfg,
            ));
            let row = (c_name.to_owned(), quote!(#module_cfg (#c_name, #index),));
            if mode != Mode::PerThread {
                legacy_table.push(row.clone());
            }
            if mode != Mode::Legacy {
                ptds_table.push(row);
            }
        }
        // Every other ABI by the name the driver exports it under (`cuCtxCreate_v2`, the
        // 3-argument ABI a program written against an older cuda.h calls as `cuCtxCreate`;
        // `cuMemcpy_ptds`), one function for both stream modes: the name says the ABI. An
        // exported name that is also a C name of the newest cuda.h (`cuMemAlloc`, whose C name
        // now means `cuMemAlloc_v2`) keeps the C name's meaning; its ABI is reached through
        // `Driver::get` and its marker.
        let c_names: std::collections::BTreeSet<&str> = newest_c_names(ctx).map(|(c, _)| c).collect();
        let mut exported: std::collections::BTreeMap<&str, &crate::model::Entry> = Default::default();
        for e in ctx.model.entries.values() {
            if e.returns.as_str() == "CUresult" && !c_names.contains(e.exported.as_str()) {
                exported.entry(e.exported.as_str()).or_insert(e);
            }
        }
        for (name, e) in exported {
            let Some((_, module_cfg)) = ctx.pfn_path(&e.pfn) else { continue };
            let Some(&index) = ctx.index_of.get(e.pfn.as_str()) else { continue };
            let Ok(ident) = syn::parse_str::<Ident>(name) else { continue };
            let marker = marker_ident(e);
            // The C name of the symbol in the newest cuda.h, and the ABI it means there.
            let now = newest_c_names(ctx).find_map(|(c, t)| {
                let means = t.default.as_deref().and_then(|p| ctx.by_pfn.get(p))?;
                (means.symbol == e.symbol && means.pfn != e.pfn).then_some((c, means))
            });
            let own = format!(
                " `{name}`, the name the driver exports the ABI of version {} (CUDA {}){} under: \
                 [`entries::{marker}`](crate::entries::{marker}).{}\n\n \
                 Without a driver or without this entry: a code that says which, and \
                 [`api::error_of`](crate::api::error_of) why; see the [module](crate::api).",
                e.version,
                format_cuda_version(e.version),
                match e.variant {
                    Some(_) => " of the per-thread default stream",
                    None => "",
                },
                match now {
                    Some((c, means)) => format!(
                        " The newest cuda.h's `{c}` means another ABI, `{}` \
                         ([`api::{c}`](crate::api::legacy::{c})): a program written against an older \
                         cuda.h, whose `{c}` meant this one, calls this function.",
                        means.exported
                    ),
                    None => String::new(),
                },
            );
            let cx = Context::api(ctx.module_of(&e.module));
            // cuda.h documents this ABI's own declaration, or only the current form's: then
            // its summary alone, as the parameters differ.
            let c_doc = docs.function_exact(e, &cx).or_else(|| {
                docs.function_brief(e, &cx).map(|brief| {
                    format!(
                        "{brief}\n\n cuda.h documents only the current form of `{}`; this ABI's \
                         parameters are the ones below.",
                        e.symbol
                    )
                })
            });
            let doc = match c_doc {
                Some(c_doc) => format!("{c_doc}\n\n{own}"),
                None => own,
            };
            buckets.entry(Mode::Both).or_default().fns.entry(e.module.clone()).or_default().push(function_item(
                e,
                &ident,
                &doc,
                &module_cfg,
            ));
            let row = (name.to_owned(), quote!(#module_cfg (#name, #index),));
            legacy_table.push(row.clone());
            ptds_table.push(row);
        }
    }
    legacy_table.sort_by(|a, b| a.0.cmp(&b.0));
    ptds_table.sort_by(|a, b| a.0.cmp(&b.0));
    let legacy_table: Vec<TokenStream> = legacy_table.into_iter().map(|(_, row)| row).collect();
    let ptds_table: Vec<TokenStream> = ptds_table.into_iter().map(|(_, row)| row).collect();
    let mut take = |mode| buckets.remove(&mode).unwrap_or_default().items(ctx);
    let (both, legacy, ptds) = (take(Mode::Both), take(Mode::Legacy), take(Mode::PerThread));
    // Examples from this crate's own map, where it has them.
    let example = ["cuCtxCreate", "cuGraphInstantiate", "cuMemAlloc"]
        .iter()
        .filter_map(|c| {
            let pfn = newest_c_names(ctx).find(|(n, _)| n == c)?.1.default.as_deref()?;
            let e = ctx.by_pfn.get(pfn)?;
            Some(format!("`{c}` is `{}`, the {} ABI", e.exported, e.version))
        })
        .collect::<Vec<_>>();
    let example = if example.is_empty() { String::new() } else { format!(" ({})", example.join("; ")) };
    let ptds_example = newest_c_names(ctx)
        .find(|(n, _)| *n == "cuMemcpy")
        .and_then(|(_, t)| ctx.by_pfn.get(t.per_thread.as_deref()?))
        .map_or_else(String::new, |e| format!(" (`cuMemcpy` is `{}`)", e.exported));
    let krate = ctx.opts.crate_name.replace('-', "_");
    let doc = format!(
        " cuda.h's own names: `api::cuX(..)` calls the ABI that a C program compiled against \
         CUDA {newest}'s cuda.h calls by `cuX`{example}. Needs the crate's `api` feature.\n\n \
         # Stream mode\n\n \
         C chooses the default stream's meaning per translation unit \
         (`CUDA_API_PER_THREAD_DEFAULT_STREAM`, `nvcc --default-stream per-thread`); here each \
         program chooses per module, and both mappings are there at once:\n\n \
         - [`api::legacy`](legacy): every name as cuda.h means it without \
         `CUDA_API_PER_THREAD_DEFAULT_STREAM` (the NULL stream is the legacy stream);\n \
         - [`api::ptds`](ptds): every name as cuda.h means it under \
         `CUDA_API_PER_THREAD_DEFAULT_STREAM`{ptds_example}; cuda.h's `cuGetProcAddress` is an \
         inline wrapper in that mode, so it has no function there (use \
         [`Driver::get`](crate::Driver::get));\n \
         - `api::cuX` (this module) and [`cu!`](crate::cu): `legacy`'s, or `ptds`'s with the \
         crate's `per-thread-default-stream` feature. Cargo unifies features: when any crate in \
         a build turns it on, every `api::cuX` and `cu!` of every crate in that build means the \
         per-thread names. A library (or a program that must not depend on its neighbours) names \
         its mode instead: `use {krate}::api::ptds as api;`, or \
         `use {krate}::cu_ptds as cu;` ([`cu_legacy!`](crate::cu_legacy) for the \
         legacy stream), and calls keep their C spelling.\n\n \
         Names whose entry is the same in both modes are one function, re-exported by all three.\n\n \
         # Older ABIs by their exported names\n\n \
         Every other ABI that returns a `CUresult` has a function by the name the driver exports \
         it under (`api::cuCtxCreate_v2`: the 3-argument `cuCtxCreate` of older cuda.h; \
         `api::cuMemcpy_ptds`), the same in every mode. A program written against an older \
         cuda.h calls the ABI its `cuX` meant by that name. Where an exported name is also a C \
         name of the newest cuda.h (`cuMemAlloc`, now `cuMemAlloc_v2`), the function keeps the \
         C name's meaning, and the older ABI is reached through \
         [`Driver::get`](crate::Driver::get) with its marker.\n\n \
         # Errors\n\n \
         Each function resolves its entry once through one process-wide [`Driver`](crate::Driver) \
         ([`driver`], loaded on first use, or the library [`use_library`] names) and then calls it. Nothing here panics. Where a function has nothing to call, it returns a code whose \
         meaning in cuda.h is what happened ([`code_of`]): [`NO_DRIVER`] \
         (`CUDA_ERROR_NOT_INITIALIZED`: no driver could be loaded), [`NEEDS_NEWER_DRIVER`] \
         (`CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER`: the driver is older than the ABI) or \
         [`NOT_IN_THIS_DRIVER`] (`CUDA_ERROR_NOT_SUPPORTED`: the driver lacks it, another \
         platform's function, say); [`check`], `cu!` and [`error_of`] give the full \
         [`Error`](crate::Error): which library, which lookup, why.\n\n \
         Each function is `unsafe` with the driver function's own contract: the pointers and \
         handles must be what CUDA's documentation of that function asks for.\n\n \
         What the C names meant in each pinned toolkit is in the module `aliases` \
         (feature `aliases`, which may be off where this is read): `aliases::cuda_X_Y::cuX` is the marker of the entry that \
         toolkit's cuda.h meant by `cuX`."
    );
    let imports = imports();
    let mode_module = |module: &str, table: &[TokenStream], fns: &[TokenStream], doc: &str| {
        let module = Ident::new(module, Span::call_site());
        quote! {
            #[doc = #doc]
            pub mod #module {
                #imports
                pub use super::both::*;
                pub use crate::api_shim::{code_of, driver, use_library, NEEDS_NEWER_DRIVER, NOT_IN_THIS_DRIVER, NO_DRIVER};
                use crate::Error;

                /// Every function of this module, by name (cuda.h's C names, and the
                /// exported names of the other ABIs), with the index in
                /// [`ENTRIES`](crate::ENTRIES) of the entry it calls, sorted by name.
                pub static C_NAMES: &[(&str, usize)] = &[#(#table)*];

                /// [`api::error_of`](crate::api::error_of) for this module's functions.
                pub fn error_of(c_name: &str) -> Option<Error> {
                    crate::api_shim::error_in(C_NAMES, c_name)
                }

                /// [`api::check`](crate::api::check) for this module's functions.
                pub fn check(c_name: &str, result: CUresult) -> Result<(), Error> {
                    crate::api_shim::check_in(C_NAMES, c_name, result)
                }

                #(#fns)*
            }
        }
    };
    let legacy = mode_module(
        "legacy",
        &legacy_table,
        &legacy,
        " cuda.h's names without `CUDA_API_PER_THREAD_DEFAULT_STREAM`: the NULL stream is the \
         legacy default stream, whatever the crate's features. See [stream mode](super#stream-mode).",
    );
    let ptds = mode_module(
        "ptds",
        &ptds_table,
        &ptds,
        " cuda.h's names under `CUDA_API_PER_THREAD_DEFAULT_STREAM`: the NULL stream is the \
         calling thread's per-thread default stream, whatever the crate's features. See \
         [stream mode](super#stream-mode).",
    );
    const PER_THREAD: &str = "per-thread-default-stream";
    quote! {
        #![doc = #doc]
        #![allow(non_snake_case, clippy::too_many_arguments, clippy::missing_safety_doc, unused_imports)]
        #imports
        pub use crate::api_shim::{
            check, code_of, driver, error_of, use_library, NEEDS_NEWER_DRIVER, NOT_IN_THIS_DRIVER, NO_DRIVER,
        };
        #[cfg(not(feature = #PER_THREAD))]
        pub use self::legacy::*;
        #[cfg(feature = #PER_THREAD)]
        pub use self::ptds::*;

        /// The functions whose entry is the same in both stream modes.
        mod both {
            #imports
            #(#both)*
        }

        #legacy
        #ptds
    }
}
