//! What every emitter shares: the options, the module specs, the context ([`Ctx`]) that the
//! emitters read the model through, and the helpers that turn tokens and hand-written files into
//! files. The emitters of `emit/` import this and nothing of each other's, but
//! [`super::types`]'s ABI rewrite.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;

use crate::model::Model;
use crate::{Error, ToolkitVersion};

/// What the generated files say about themselves.
#[derive(Debug, Clone)]
pub struct EmitOptions {
    /// The package name of the generated crate.
    pub crate_name: String,
    /// The command that regenerates it, quoted in every file's header.
    pub command: String,
}

pub use crate::model::ModuleSpec;

/// `#[cfg(feature = "..")]` for a module's items, or nothing.
pub fn module_cfg(m: &ModuleSpec) -> TokenStream {
    match &m.feature {
        Some(f) => quote::quote!(#[cfg(feature = #f)]),
        None => TokenStream::new(),
    }
}

pub(crate) struct Ctx<'a> {
    pub model: &'a Model,
    pub opts: &'a EmitOptions,
    pub modules: &'a [ModuleSpec],
    pub by_pfn: BTreeMap<&'a str, &'a crate::model::Entry>,
    /// An entry's index in the registry's `ENTRIES` (the model's order).
    pub index_of: BTreeMap<&'a str, usize>,
    pub all_toolkits: Vec<ToolkitVersion>,
}

impl Ctx<'_> {
    /// The module spec of an entry's row (the first module if the row is unknown).
    pub fn module_of(&self, row: &str) -> Option<&ModuleSpec> {
        self.modules.iter().find(|m| m.name == row)
    }

    /// Path of an entry's fn type, and the cfg that guards it.
    pub fn pfn_path(&self, pfn: &str) -> Option<(TokenStream, TokenStream)> {
        let e = self.by_pfn.get(pfn)?;
        let m = self.module_of(&e.module)?;
        let module = proc_macro2::Ident::new(m.module(), proc_macro2::Span::call_site());
        let name = proc_macro2::Ident::new(pfn, proc_macro2::Span::call_site());
        Some((quote::quote!(crate::#module::#name), module_cfg(m)))
    }

    /// The `@generated` marker, as comment lines with the given prefix.
    pub fn marker(&self, comment: &str) -> String {
        let list: Vec<String> = self.all_toolkits.iter().map(|t| t.to_string()).collect();
        format!(
            "{comment} {}\n{comment} Inputs: headers-manifest.toml; CUDA toolkits {} ({} in all).\n",
            crate::write::marker_line(&self.opts.command),
            list.join(", "),
            list.len()
        )
    }

    /// `11.7 to 13.5 (every toolkit)`, `12.5 to 13.5`, `11.7 to 12.3, 13.0`.
    pub fn toolkit_ranges(&self, have: &BTreeSet<ToolkitVersion>) -> String {
        let mut runs: Vec<(ToolkitVersion, ToolkitVersion)> = Vec::new();
        let mut prev_in = false;
        for t in &self.all_toolkits {
            let inside = have.contains(t);
            if inside {
                match runs.last_mut() {
                    Some(run) if prev_in => run.1 = *t,
                    _ => runs.push((*t, *t)),
                }
            }
            prev_in = inside;
        }
        let text: Vec<String> =
            runs.iter().map(|(a, b)| if a == b { a.to_string() } else { format!("{a} to {b}") }).collect();
        if have.len() == self.all_toolkits.len() && have.len() > 1 {
            format!("{} (every pinned toolkit)", text.join(", "))
        } else {
            text.join(", ")
        }
    }
}

/// An entry's marker type in `entries`: its typedef's name less one `PFN_` (`PFN_PFN_1x_v1`
/// is the entry of symbol `PFN_1x`).
pub(crate) fn marker_ident(e: &crate::model::Entry) -> proc_macro2::Ident {
    proc_macro2::Ident::new(e.pfn.strip_prefix("PFN_").unwrap_or(&e.pfn), proc_macro2::Span::call_site())
}

/// The entries a C name means, as `(cfg, entry)`: one row without a cfg where both stream
/// modes mean the same entry, else one row per mode that has a function, under
/// `per-thread-default-stream` or its negation.
pub(crate) fn c_name_rows<'a>(
    ctx: &Ctx<'a>,
    target: &crate::model::CNameTarget,
) -> Vec<(TokenStream, &'a crate::model::Entry)> {
    const PER_THREAD: &str = "per-thread-default-stream";
    let entry = |pfn: &Option<String>| pfn.as_deref().and_then(|p| ctx.by_pfn.get(p).copied());
    match (entry(&target.default), entry(&target.per_thread)) {
        (Some(d), Some(p)) if d.pfn == p.pfn => vec![(TokenStream::new(), d)],
        (d, p) => {
            let mut out = Vec::new();
            if let Some(d) = d {
                out.push((quote::quote!(#[cfg(not(feature = #PER_THREAD))]), d));
            }
            if let Some(p) = p {
                out.push((quote::quote!(#[cfg(feature = #PER_THREAD)]), p));
            }
            out
        }
    }
}

/// Formats tokens as a Rust file with the marker on top.
pub(crate) fn rust_file(ctx: &Ctx<'_>, path: &str, tokens: TokenStream) -> Result<Vec<u8>, Error> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| Error::Emit { file: path.into(), message: e.to_string() })?;
    let mut out = ctx.marker("//");
    out.push('\n');
    out.push_str(&crate::syntax::unparse(&file).map_err(|message| Error::Emit { file: path.into(), message })?);
    Ok(out.into_bytes())
}

/// A hand-written file as a file of the crate: the marker, then the file, with the crate's name
/// where the file says `cuda_driver_pfn` (code) or `cuda-driver-pfn` (prose).
pub fn crate_file(ctx: &Ctx<'_>, source: &str) -> Vec<u8> {
    let mut out = ctx.marker("//");
    out.push('\n');
    out.push_str(&with_crate_name(ctx, source));
    out.into_bytes()
}

pub(crate) fn with_crate_name(ctx: &Ctx<'_>, text: &str) -> String {
    let ident = ctx.opts.crate_name.replace('-', "_");
    text.replace("cuda_driver_pfn", &ident).replace("cuda-driver-pfn", &ctx.opts.crate_name)
}

pub use crate::registry_json::ENTRY_FIELDS;

/// The crate docs' description of `registry.json`, one line per doc line.
pub fn registry_json_docs() -> String {
    let mut s = String::from(concat!(
        "# `registry.json`\n",
        "The crate's folder also holds `registry.json`, the same registry as data (schema 1):\n",
        "- `toolkits`: the pinned toolkits, `\"12.9\"`-style strings, oldest first;\n",
        "  `toolkit_details`: per toolkit its `source` (packages or path), per typedef\n",
        "  header the counts (`typedefs`, `unversioned`, `aliases`, `broken_aliases`), and\n",
        "  `has_alias_macros`.\n",
        "- `entries`: sorted by (`symbol`, `version`, `variant`), each with:\n",
    ));
    for (field, what) in ENTRY_FIELDS {
        s.push_str(&format!("  - `{field}`: {what}\n"));
    }
    s.push_str(concat!(
        "- `header_aliases`: per toolkit whose headers define them, alias name to\n",
        "  `{default, per_thread}`: the typedef `PFN_x` names in a default build and with\n",
        "  `CUDA_API_PER_THREAD_DEFAULT_STREAM`.\n",
        "- `drift`: typedefs that kept their name while their ABI changed: `pfn`, `from`,\n",
        "  `to`, `param` (`null` when the parameter list itself changed), `before`, `after`.\n",
        "- `c_names`: per toolkit, each C function name of its headers (`cuCtxCreate`) to\n",
        "  `{default, per_thread}`: the typedef `PFN_x_vN` of the entry the name calls in a\n",
        "  default build and with `CUDA_API_PER_THREAD_DEFAULT_STREAM` (`null`: no function\n",
        "  of that name in that mode), as the C preprocessor expands cuda.h's macros.\n",
    ));
    s
}
