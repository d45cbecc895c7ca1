//! `types/src/pfn.rs`: one `PFN_<symbol>_v<version>` per ABI plus the unversioned aliases, and
//! `src/aliases.rs`: what each toolkit's own headers mean by the unversioned names.

use std::collections::BTreeMap;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, ToTokens};

use super::ctx::{Ctx, ModuleSpec};
use super::docs::{Context, Docs};
use crate::model::{AliasTarget, Entry};
use crate::version::format_cuda_version;
use crate::Error;

pub const ALIASES_RS: &str = "src/aliases.rs";

fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

/// The bare function pointer type of an entry: `unsafe extern "system" fn(..) -> CUresult`.
pub(crate) fn fn_type(e: &Entry) -> Result<TokenStream, Error> {
    let mut params = Vec::new();
    for p in &e.params {
        let ty = p.ty.syntax();
        let name = syn::parse_str::<Ident>(&p.name).unwrap_or_else(|_| ident("_"));
        params.push(quote!(#name: #ty));
    }
    let ret = if e.returns.is_unit() {
        quote!()
    } else {
        let ty = e.returns.syntax();
        quote!(-> #ty)
    };
    Ok(quote!(unsafe extern "system" fn(#(#params),*) #ret))
}

fn entry_doc(ctx: &Ctx<'_>, e: &Entry) -> String {
    let mut doc =
        format!(" `{}`, introduced in CUDA {} ({}).\n\n", e.symbol, format_cuda_version(e.version), e.version);
    match e.variant {
        Some(v) => doc.push_str(&format!(
            " The per-thread default stream variant (`{}`), exported by the driver as `{}`.\n",
            &v.suffix()[1..],
            e.exported
        )),
        None => doc.push_str(&format!(" Exported by the driver as `{}`.\n", e.exported)),
    }
    doc.push_str(&format!(" Declared in `{}` by CUDA {}.\n", e.header, ctx.toolkit_ranges(&e.toolkits)));
    let platforms: Vec<String> = e
        .platforms
        .iter()
        .map(|p| match p {
            crate::platform::Platform::Linux => "Linux".to_owned(),
            crate::platform::Platform::Windows => "Windows".to_owned(),
        })
        .collect();
    match &e.arch {
        Some(arch) => doc.push_str(&format!(" The driver has it on {}, on {arch} only.\n", platforms.join(" and "))),
        None => doc.push_str(&format!(" The driver has it on {}.\n", platforms.join(" and "))),
    }
    if let Some(f) = ctx.module_of(&e.module).and_then(|m| m.feature.as_ref()) {
        doc.push_str(&format!(" Needs the `{f}` feature of this crate.\n"));
    }
    if e.legacy {
        doc.push_str(" A legacy ABI: the headers declare it only under `__CUDA_API_VERSION_INTERNAL`.\n");
    }
    let siblings: Vec<String> =
        ctx.model.symbol_entries(&e.symbol).filter(|s| s.pfn != e.pfn).map(|s| format!("[`{}`]", s.pfn)).collect();
    if !siblings.is_empty() {
        doc.push_str(&format!("\n Other ABIs of `{}`: {}.\n", e.symbol, siblings.join(", ")));
    }
    doc.push_str(&format!(
        "\n Look it up with [`entries::{}`](crate::entries::{}), which asks the driver for exactly version {}.\n",
        e.pfn.strip_prefix("PFN_").unwrap_or(&e.pfn),
        e.pfn.strip_prefix("PFN_").unwrap_or(&e.pfn),
        e.version
    ));
    doc
}

/// Where a module's file goes, in the types crate: `types/src/pfn.rs` for cuda.h,
/// `types/src/<name>.rs` for the others.
pub fn module_path(m: &ModuleSpec) -> String {
    format!("types/src/{}.rs", m.module())
}

/// One module: its own types (if any), one type per entry of its header, and the unversioned
/// aliases of its symbols.
pub fn module_rs(
    ctx: &Ctx<'_>,
    m: &ModuleSpec,
    own_types: &[syn::Item],
    types: &syn::File,
    params: &[super::types::ParamUse<'_>],
    docs: &Docs<'_>,
) -> Result<TokenStream, Error> {
    let enumerators = super::types::enum_constants(own_types, &types.items, params);
    let records = super::types::record_impls(own_types);
    let own_types = super::types::system_abi(own_types);
    let mut items = Vec::new();
    let entries: Vec<&Entry> = ctx.model.entries.values().filter(|e| e.module == m.name).collect();
    for e in &entries {
        let name = ident(&e.pfn);
        let ty = fn_type(e)?;
        // The function's summary from its header first, then the crate's note.
        let doc = match docs.function_brief(e, &Context::module(Some(m))) {
            Some(brief) => format!("{brief}\n\n{}", entry_doc(ctx, e)),
            None => entry_doc(ctx, e),
        };
        items.push(quote! {
            #[doc = #doc]
            pub type #name = #ty;
        });
    }
    let symbols: std::collections::BTreeSet<&str> = entries.iter().map(|e| e.symbol.as_str()).collect();
    for symbol in symbols {
        let Some(tk) = ctx.model.newest_toolkit() else { break };
        let Some(target) = ctx.model.alias_in(tk, symbol) else { continue };
        let name = format_ident!("PFN_{}", symbol);
        let doc = |pfn: &str, how: &str| {
            format!(
                " The unversioned name: `{pfn}` as of CUDA {tk}, the newest pinned toolkit{how}.\n\n \
                 Prefer a versioned type: the driver must be asked for exactly the version a type \
                 names. What the unversioned name means per toolkit is in the `aliases` module (feature `aliases`)."
            )
        };
        items.extend(per_thread_alias(ctx, &name, &target, AliasForm::Type, &doc));
    }
    let doc = format!(
        " The entry points of `{}` (typedefs from `{}`): one function pointer type per ABI, \
         `PFN_<symbol>_v<version>` and the per-thread variants `_ptds` / `_ptsz`, then one \
         unversioned `PFN_<symbol>` per symbol. Unlike the C typedefs these are not nullable: \
         a lookup either returns a function or an error.",
        m.api, m.typedefs
    );
    Ok(quote! {
        #![doc = #doc]
        #![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code, unused_imports)]
        use crate::types::*;
        use core::ffi::{c_char, c_int, c_uint, c_void, c_longlong, c_ulonglong, c_short, c_ushort, c_uchar, c_float, c_double};
        #(#own_types)*
        #(#enumerators)*
        #records
        #(#items)*
    })
}

/// How an unversioned name is declared.
#[derive(Clone, Copy)]
enum AliasForm {
    /// `pub type PFN_x = ...;`: an item of its own, documented (the crate-level names).
    Type,
    /// `pub use ... as PFN_x;`: a re-export, which rustc only resolves: the ~10,000 per-toolkit
    /// names of `aliases` cost a build of the crate far less so than as type aliases
    /// (docs/performance.md).
    Reexport,
}

/// `PFN_x` for one target (under its module's `cfg`), in two `cfg` forms where the
/// per-thread meaning differs: the `per-thread-default-stream` feature picks the typedef
/// `CUDA_API_PER_THREAD_DEFAULT_STREAM` would. `doc` gets the typedef and how it was chosen;
/// an empty text means no doc. `None` when the default typedef is not in the registry.
fn per_thread_alias(
    ctx: &Ctx<'_>,
    name: &Ident,
    target: &AliasTarget,
    form: AliasForm,
    doc: &dyn Fn(&str, &str) -> String,
) -> Option<TokenStream> {
    let one = |pfn: &str, how: &str, stream: TokenStream| {
        let (path, cfg) = ctx.pfn_path(pfn)?;
        let text = doc(pfn, how);
        let doc = (!text.is_empty()).then(|| quote!(#[doc = #text]));
        Some(match form {
            AliasForm::Type => quote!(#doc #cfg #stream pub type #name = #path;),
            AliasForm::Reexport => quote!(#doc #cfg #stream pub use #path as #name;),
        })
    };
    if target.default != target.per_thread {
        let stream = quote!(#[cfg(feature = "per-thread-default-stream")]);
        if let Some(per_thread) = one(&target.per_thread, ", with the `per-thread-default-stream` feature", stream) {
            let default = one(&target.default, "", quote!(#[cfg(not(feature = "per-thread-default-stream"))]))?;
            return Some(quote!(#default #per_thread));
        }
    }
    one(&target.default, "", quote!())
}

/// Every declaration of one name in one `aliases` module (one per `cfg` form), with what the
/// next module's compares: its text, and the `cfg` attributes of each item (`None` where it
/// does not parse, which no module then chains over).
struct Declared {
    tokens: TokenStream,
    text: String,
    conditions: Option<Vec<Vec<String>>>,
}

impl Declared {
    fn new(tokens: TokenStream) -> Self {
        let conditions = syn::parse2::<syn::File>(tokens.clone()).ok().map(|f| {
            f.items
                .iter()
                .map(|item| match item {
                    syn::Item::Use(u) => u.attrs.iter().map(|a| a.to_token_stream().to_string()).collect(),
                    other => vec![other.to_token_stream().to_string()],
                })
                .collect()
        });
        Declared { text: tokens.to_string(), tokens, conditions }
    }
}

/// Whether two declarations of one name exist under the same `cfg` conditions: the same
/// attributes, item by item, whatever they re-export.
fn same_conditions(old: &Declared, new: &Declared) -> bool {
    old.conditions.is_some() && old.conditions == new.conditions
}

pub fn aliases_rs(ctx: &Ctx<'_>) -> TokenStream {
    let mut modules = Vec::new();
    // The previous toolkit's module and its names, each with its declarations.
    let mut previous: Option<(Ident, BTreeMap<String, Declared>)> = None;
    for t in &ctx.model.toolkits {
        let tk = t.version;
        let module = format_ident!("cuda_{}_{}", tk.major, tk.minor);
        // Per name, every declaration of it (one per `cfg` form); the names in the order declared.
        let mut names: Vec<(String, TokenStream)> = Vec::new();
        for symbol in ctx.model.symbols() {
            let Some(target) = ctx.model.alias_in(tk, symbol) else { continue };
            let name = format_ident!("PFN_{}", symbol);
            if let Some(item) = per_thread_alias(ctx, &name, &target, AliasForm::Reexport, &|_, _| String::new()) {
                names.push((name.to_string(), item));
            }
        }
        for (c_name, target) in ctx.model.c_names.get(&tk).into_iter().flatten() {
            let name = ident(c_name);
            let mut group = TokenStream::new();
            for (mode, e) in super::ctx::c_name_rows(ctx, target) {
                let Some((_, cfg)) = ctx.pfn_path(&e.pfn) else { continue };
                let marker = super::ctx::marker_ident(e);
                group.extend(quote!(#cfg #mode pub use crate::entries::#marker as #name;));
            }
            if !group.is_empty() {
                names.push((c_name.clone(), group));
            }
        }
        let order: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
        let all: BTreeMap<String, Declared> = names.into_iter().map(|(n, t)| (n, Declared::new(t))).collect();
        // Most names mean in one toolkit what they meant in the one before: such a module
        // re-exports the previous one and declares only what is new or changed (a fifth of the
        // `use` items a build compiled, measured with `cargo xtask bench --only compile`:
        // docs/performance.md). Only where that cannot leak a name: every
        // name of the previous module is declared here under the same `cfg` conditions.
        let base = previous.as_ref().filter(|(_, before)| {
            before.iter().all(|(n, old)| all.get(n).is_some_and(|new| same_conditions(old, new)))
        });
        let (glob, items): (TokenStream, Vec<&TokenStream>) = match base {
            Some((base_module, before)) => (
                // Not `#[doc(inline)]`: rustdoc would list a shadowed name's older meaning too.
                quote!(pub use super::#base_module::*;),
                order
                    .iter()
                    .map(|n| (n, &all[n]))
                    .filter(|(n, new)| before.get(*n).is_none_or(|old| old.text != new.text))
                    .map(|(_, new)| &new.tokens)
                    .collect(),
            ),
            None => (TokenStream::new(), order.iter().map(|n| &all[n].tokens).collect()),
        };
        let mut doc = if t.has_alias_macros {
            format!(" `PFN_<symbol>` as CUDA {tk}'s own headers define it (`#define PFN_x PFN_x_vN`); symbols its headers give no alias follow the 13.x rule.")
        } else {
            format!(" `PFN_<symbol>` for CUDA {tk}, whose headers define no aliases: the highest version CUDA {tk} declares.")
        };
        if let Some((base_module, _)) = base {
            doc.push_str(&format!(
                "\n\n Listed here: only the names that CUDA {tk} adds or gives another meaning. Every other name \
                 means what it means in [`{base_module}`](crate::aliases::{base_module}), which this module re-exports."
            ));
        }
        modules.push(quote! {
            #[doc = #doc]
            pub mod #module {
                #glob
                #(#items)*
            }
        });
        previous = Some((module, all));
    }
    quote! {
        //! The unversioned `PFN_<symbol>` names, per toolkit.
        //!
        //! CUDA 11.x and 12.x headers define them as macros, and not always as the highest
        //! version (12.9's `PFN_cuCtxCreate` is `PFN_cuCtxCreate_v11040` while `_v12050`
        //! exists) nor always of the same symbol (`PFN_cuGraphInstantiate` is
        //! `PFN_cuGraphInstantiateWithFlags_v11040`). Each module below reproduces one
        //! toolkit's macros exactly. From 13.0 on the headers define none, and the rule is:
        //! the highest version that toolkit declares. The crate-level `PFN_<symbol>` in
        //! [`pfn`](crate::pfn) follows the newest toolkit. With the crate's
        //! `per-thread-default-stream` feature, every name means what it means in C under
        //! `CUDA_API_PER_THREAD_DEFAULT_STREAM`: the `_ptds`/`_ptsz` typedef where there is one.
        //!
        //! Each module also names the entry marker of every C function name as that toolkit's
        //! cuda.h means it (`cuda_X_Y::cuCtxCreate` is the marker of the `cuCtxCreate` entry
        //! that cuda.h X.Y calls), so that `driver.get::<aliases::cuda_X_Y::cuCtxCreate>()`
        //! pins the ABIs of the toolkit a program was written for.
        #![allow(non_camel_case_types)]
        #(#modules)*
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_are_the_cfg_attributes_item_by_item() {
        let ptds = quote!(#[cfg(feature = "per-thread-default-stream")]);
        let legacy = quote!(#[cfg(not(feature = "per-thread-default-stream"))]);
        let pair = |a: &str, b: &str| {
            let (a, b) = (ident(a), ident(b));
            Declared::new(quote!(#legacy pub use crate::entries::#a as cuX; #ptds pub use crate::entries::#b as cuX;))
        };
        // Other targets, the same conditions: the newer module may declare it and chain.
        assert!(same_conditions(&pair("cuX_v1", "cuX_v1_ptds"), &pair("cuX_v2", "cuX_v2_ptds")));
        // Declared in one mode only where the older module had both: the glob would fill in
        // the older per-thread meaning, so no chaining.
        let one = Declared::new(quote!(#legacy pub use crate::entries::cuX_v2 as cuX;));
        assert!(!same_conditions(&pair("cuX_v1", "cuX_v1_ptds"), &one));
        // A feature's module behind its `cfg`, against none.
        let gl = Declared::new(quote!(
            #[cfg(feature = "gl")]
            pub use crate::gl::PFN_cuX_v1 as PFN_cuX;
        ));
        let plain = Declared::new(quote!(
            pub use crate::gl::PFN_cuX_v1 as PFN_cuX;
        ));
        assert!(!same_conditions(&gl, &plain));
        assert!(same_conditions(&gl, &gl));
    }
}
