//! Rendering the model as the generated crate: one emitter per output file, and one table of
//! the outputs (`OUTPUTS`), each path beside the function that renders it; the names an output
//! folder may hold are derived from that table. Emitters take one typed [`Input`] (the model, the crate's types with
//! cuda.h's result-code docs as data, the modules, the options) and import neither the
//! readers nor the manifest: they never see C text.

/// The paths of a table of files, each row holding its path at field `$field`, as a constant
/// array in the table's order (what [`Paths::Each`] lists).
macro_rules! paths_of {
    ($table:expr, $field:tt) => {{
        let mut out = [""; $table.len()];
        let mut i = 0;
        while i < $table.len() {
            out[i] = $table[i].$field;
            i += 1;
        }
        out
    }};
}

mod api;
mod c_header;
mod ctx;
mod docs;
pub mod doxygen;
mod examples;
mod krate;
mod newest;
mod pfn;
pub mod record;
mod registry;
mod shim;
mod standin;
mod types;

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{CrateTypes, Model};
use crate::Error;

pub use c_header::C_HEADER;
use ctx::{rust_file, Ctx};
pub use ctx::{EmitOptions, ModuleSpec, ENTRY_FIELDS};
pub use krate::LICENSES;
pub use types::CAST_CONSTANTS;

/// Where an output's files go.
enum Paths {
    /// One file.
    One(&'static str),
    /// A file at each of these paths, whatever the model (the shim, the licences, the samples).
    Each(&'static [&'static str]),
    /// A file per header row of the manifest ([`pfn::module_path`]).
    PerRow,
}

/// One output of the crate: where its files go, beside the function that renders each. `render`
/// gets the file's index among its output's paths (a row's index for [`Paths::PerRow`]) and its
/// path, and says `None` where the crate has no such file (a sample whose C names the newest
/// toolkit lacks).
struct Output {
    paths: Paths,
    render: Render,
    /// Written the same into every crate but for the crate's name (and only its name): the
    /// golden tests leave these out of the goldens and compare them with the real crate's.
    same_in_every_crate: bool,
}

/// Every output of the crate, in the order they are rendered. The names an output folder's files
/// may have ([`file_names`]) and the files written the same into every crate
/// ([`same_in_every_crate`]) are derived from it, and [`emit`] writes exactly what it renders, so
/// no list of names can drift from what is written.
const OUTPUTS: &[Output] = &[
    Output::rendered(Paths::One(krate::CARGO_TOML), |p, _, _| text(krate::cargo_toml(p.ctx))),
    Output::same(Paths::One(krate::README_MD), |p, _, _| text(krate::readme_md(p.ctx))),
    Output::same(Paths::Each(&krate::LICENSE_PATHS), |_, i, _| {
        Ok(krate::LICENSES.get(i).map(|(_, text)| text.as_bytes().to_vec()))
    }),
    Output::rendered(Paths::One(krate::LIB_RS), |p, _, path| rust(p, path, krate::lib_rs(p.ctx))),
    Output::rendered(Paths::One(krate::TYPES_CARGO_TOML), |p, _, _| text(krate::types_cargo_toml(p.ctx))),
    Output::rendered(Paths::One(krate::TYPES_LIB_RS), |p, _, path| rust(p, path, krate::types_lib_rs(p.ctx))),
    Output::rendered(Paths::One(types::TYPES_RS), |p, _, path| rust(p, path, types::types_rs(p.types, p.params))),
    Output::rendered(Paths::PerRow, |p, i, path| {
        let Some(m) = p.ctx.modules.get(i) else { return Ok(None) };
        let own = p.module_types.get(&m.name).map(Vec::as_slice).unwrap_or(&[]);
        rust(p, path, pfn::module_rs(p.ctx, m, own, p.types, p.params, p.docs)?)
    }),
    Output::rendered(Paths::One(pfn::ALIASES_RS), |p, _, path| rust(p, path, pfn::aliases_rs(p.ctx))),
    Output::rendered(Paths::One(registry::REGISTRY_RS), |p, _, path| {
        rust(p, path, registry::registry_rs(p.ctx, p.docs)?)
    }),
    Output::rendered(Paths::One(registry::REGISTRY_JSON), |p, _, _| registry::registry_json(p.ctx).map(Some)),
    Output::same(Paths::Each(&shim::PATHS), |p, i, _| {
        Ok(shim::SOURCES.get(i).map(|(_, source)| ctx::crate_file(p.ctx, source)))
    }),
    Output::rendered(Paths::One(shim::CODES_RS), |p, _, path| rust(p, path, shim::codes_rs(p.types, p.result_docs))),
    Output::rendered(Paths::One(newest::NEWEST_RS), |p, _, path| rust(p, path, newest::newest_rs(p.ctx)?)),
    Output::rendered(Paths::One(api::API_RS), |p, _, path| rust(p, path, api::api_rs(p.ctx, p.docs))),
    Output::rendered(Paths::One(newest::VISIT_RS), |p, _, path| rust(p, path, newest::visit_rs(p.ctx))),
    Output::rendered(Paths::One(standin::STANDIN_EXPORTS_RS), |p, _, path| {
        rust(p, path, standin::standin_exports_rs(p.ctx, p.types))
    }),
    Output::same(Paths::One(examples::DOCTOR_RS), |p, _, _| text(examples::doctor_rs(p.ctx))),
    Output::same(Paths::Each(&examples::SAMPLE_PATHS), |p, i, _| Ok(examples::sample_rs(p.ctx, i))),
    Output::same(Paths::One(examples::ROUNDTRIP_RS), |p, _, _| Ok(examples::roundtrip_rs(p.ctx))),
    Output::rendered(Paths::One(c_header::C_HEADER), |p, _, _| text(c_header::c_header(p.ctx))),
];

/// How an output's file is rendered: from the parts, its index among the output's paths and its
/// path.
type Render = fn(&Parts<'_>, usize, &str) -> Result<Option<Vec<u8>>, Error>;

impl Output {
    /// An output rendered from the model and the options.
    const fn rendered(paths: Paths, render: Render) -> Output {
        Output { paths, render, same_in_every_crate: false }
    }

    /// An output written the same into every crate but for the crate's name.
    const fn same(paths: Paths, render: Render) -> Output {
        Output { paths, render, same_in_every_crate: true }
    }
}

impl Paths {
    /// The paths, for a manifest of these rows.
    fn list(&self, modules: &[ModuleSpec]) -> Vec<String> {
        match self {
            Paths::One(path) => vec![path.to_string()],
            Paths::Each(paths) => paths.iter().map(|p| p.to_string()).collect(),
            Paths::PerRow => modules.iter().map(pfn::module_path).collect(),
        }
    }
}

/// What the outputs are rendered from: the model and options ([`Ctx`]), bindgen's types with the
/// headers' comments attached, and what several outputs share.
struct Parts<'a> {
    ctx: &'a Ctx<'a>,
    /// The newest toolkit's Linux unit: `types.rs`.
    types: &'a syn::File,
    /// Each header row's own types (the newest Windows unit's).
    module_types: &'a BTreeMap<String, Vec<syn::Item>>,
    /// cuda.h's description of each result code, by name.
    result_docs: &'a BTreeMap<String, String>,
    docs: &'a docs::Docs<'a>,
    /// Every parameter (and return type) the entries use, by its owner.
    params: &'a [types::ParamUse<'a>],
}

/// A file of the crate, as it is.
fn text(bytes: impl Into<Vec<u8>>) -> Result<Option<Vec<u8>>, Error> {
    Ok(Some(bytes.into()))
}

/// A Rust file of the crate: the marker, then the tokens as prettyplease prints them.
fn rust(p: &Parts<'_>, path: &str, tokens: proc_macro2::TokenStream) -> Result<Option<Vec<u8>>, Error> {
    rust_file(p.ctx, path, tokens).map(Some)
}

/// Every file written the same into every crate but for its name (and only its name): the
/// shim, the examples, the README and the licences. A golden test compares everything else,
/// what generation decided, and checks these against the real crate's.
pub fn same_in_every_crate() -> impl Iterator<Item = &'static str> {
    OUTPUTS
        .iter()
        .filter(|o| o.same_in_every_crate)
        .flat_map(|o| match &o.paths {
            Paths::One(path) => std::slice::from_ref(path),
            Paths::Each(paths) => paths,
            Paths::PerRow => &[],
        })
        .copied()
}

/// The generated crate, as relative path to file contents.
pub type Files = BTreeMap<String, Vec<u8>>;

/// Every path [`emit`] may write for a manifest of these rows, whatever the model: the names
/// an output folder's files must have to be the generator's (`output_folder::check_output_folder`).
/// Both come from `OUTPUTS`, so the two cannot drift apart.
pub fn file_names(modules: &[ModuleSpec]) -> BTreeSet<String> {
    OUTPUTS.iter().flat_map(|o| o.paths.list(modules)).collect()
}

/// The names a crate of an earlier cuda-sys-gen held that this one no longer writes, given
/// the names this one writes: each module the types crate holds (`types/src/x.rs`) stood in
/// the one package's `src/` before the crate was two. A crate of then without a record
/// (`write::RECORD`) is still known as the generator's by them.
pub fn earlier_file_names<'a>(names: impl IntoIterator<Item = &'a String>) -> BTreeSet<String> {
    names.into_iter().filter_map(|n| Some(format!("src/{}", n.strip_prefix("types/src/")?))).collect()
}

/// Everything the crate is rendered from.
pub struct Input<'a> {
    pub model: &'a Model,
    /// bindgen's types of the newest toolkit, less the `PFN_` typedefs, with the result
    /// codes' documentation.
    pub types: CrateTypes,
    pub modules: &'a [ModuleSpec],
    pub opts: &'a EmitOptions,
}

/// Renders every file of the crate.
pub fn emit(input: Input<'_>) -> Result<Files, Error> {
    let Input { model, types: crate_types, modules, opts } = input;
    // The registry's toolkit masks are u64s: `1u64 << i` holds for i < 64 only.
    crate::model::check_toolkit_count(model.toolkits.iter().map(|t| t.version))?;
    let CrateTypes { linux: mut types, windows: mut module_types, result_docs, docs: c_docs } = crate_types;
    types::document_result_codes(&mut types, &result_docs);
    check_types_resolve(model, &types, &module_types)?;
    let by_pfn = model.entries.values().map(|e| (e.pfn.as_str(), e)).collect();
    let index_of = model.entries.values().enumerate().map(|(i, e)| (e.pfn.as_str(), i)).collect();
    let ctx = Ctx {
        model,
        opts,
        modules,
        by_pfn,
        index_of,
        all_toolkits: model.toolkits.iter().map(|t| t.version).collect(),
    };
    // The headers' comments, on the types here and on the functions as each file is rendered.
    let api_functions: Vec<(&str, &str, &crate::model::Entry)> =
        api::functions(&ctx).into_iter().map(|(c, mode, e)| (c, mode.module(), e)).collect();
    let skip = result_docs.keys().cloned().collect();
    let docs = docs::Docs::new(&c_docs, model, modules, &types, &module_types, &api_functions, skip);
    docs.attach(&mut types.items, &docs::Context::module(None));
    for (row, items) in &mut module_types {
        docs.attach(items, &docs::Context::module(modules.iter().find(|m| &m.name == row)));
    }
    // Each entry's parameters, owned by the C name that means the entry in the newest toolkit
    // (`cuGraphInstantiate` for `cuGraphInstantiateWithFlags`), else by its symbol.
    let c_name_of: BTreeMap<&str, &str> = ctx
        .all_toolkits
        .last()
        .and_then(|t| model.c_names.get(t))
        .into_iter()
        .flatten()
        .filter_map(|(c, t)| Some((t.default.as_deref()?, c.as_str())))
        .collect();
    let params: Vec<types::ParamUse<'_>> = model
        .entries
        .values()
        .flat_map(|e| {
            let owner = c_name_of.get(e.pfn.as_str()).copied().unwrap_or(e.symbol.as_str());
            // The return type too, as a nameless parameter: `CUresult` is taken as itself.
            e.params.iter().map(move |p| (owner, p.name.as_str(), p.ty.as_str())).chain([(
                owner,
                "",
                e.returns.as_str(),
            )])
        })
        .collect();
    let parts = Parts {
        ctx: &ctx,
        types: &types,
        module_types: &module_types,
        result_docs: &result_docs,
        docs: &docs,
        params: &params,
    };
    let mut files = Files::new();
    for output in OUTPUTS {
        for (i, path) in output.paths.list(modules).into_iter().enumerate() {
            if let Some(bytes) = (output.render)(&parts, i, &path)? {
                files.insert(path, bytes);
            }
        }
    }
    Ok(files)
}

/// Names a signature may use without the crate defining them: what each module imports
/// from `core::ffi` (see [`pfn::module_rs`]), `Option`, and Rust's primitives.
const PRELUDE_TYPES: &[&str] = &[
    "c_char",
    "c_int",
    "c_uint",
    "c_void",
    "c_longlong",
    "c_ulonglong",
    "c_short",
    "c_ushort",
    "c_uchar",
    "c_float",
    "c_double",
    "c_long",
    "c_ulong",
    "c_schar",
    "Option",
    "bool",
    "char",
    "f32",
    "f64",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
];

/// The crate builds with every feature only if every type a signature names is defined where
/// its module can see it: in `types.rs` (the newest toolkit's Linux unit) or among the
/// module's own types (the newest Windows unit's). Checked before anything is rendered, so a
/// crate that would not build is an error naming the entry and the type, never written.
fn check_types_resolve(
    model: &Model,
    types: &syn::File,
    module_types: &BTreeMap<String, Vec<syn::Item>>,
) -> Result<(), Error> {
    use syn::visit_mut::VisitMut;
    struct Names(Vec<String>);
    impl VisitMut for Names {
        fn visit_type_path_mut(&mut self, p: &mut syn::TypePath) {
            if p.qself.is_none() && p.path.leading_colon.is_none() && p.path.segments.len() == 1 {
                self.0.push(p.path.segments[0].ident.to_string());
            }
            syn::visit_mut::visit_type_path_mut(self, p);
        }
    }
    let shared: BTreeSet<String> = types
        .items
        .iter()
        .filter_map(crate::syntax::item_name)
        .chain(PRELUDE_TYPES.iter().map(|s| s.to_string()))
        .collect();
    for e in model.entries.values() {
        let own: BTreeSet<String> =
            module_types.get(&e.module).into_iter().flatten().filter_map(crate::syntax::item_name).collect();
        for ty in e.params.iter().map(|p| &p.ty).chain([&e.returns]) {
            let mut ty = ty.syntax().clone();
            let mut names = Names(Vec::new());
            names.visit_type_mut(&mut ty);
            if let Some(missing) = names.0.into_iter().find(|n| !shared.contains(n) && !own.contains(n)) {
                let newest = e.toolkits.last().map_or_else(String::new, |t| t.to_string());
                return Err(Error::UndefinedType {
                    pfn: e.pfn.clone(),
                    module: e.module.clone(),
                    ty: missing,
                    toolkit: newest,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No two outputs name one path (`emit` would keep only the last one rendered), and every
    /// file the goldens leave out is one the crate has.
    #[test]
    fn outputs_name_distinct_paths() {
        let all: Vec<String> = OUTPUTS.iter().flat_map(|o| o.paths.list(&[])).collect();
        let distinct: BTreeSet<&String> = all.iter().collect();
        assert_eq!(all.len(), distinct.len(), "a path named twice in OUTPUTS: {all:?}");
        let names = file_names(&[]);
        for same in same_in_every_crate() {
            assert!(names.contains(same), "{same}");
        }
    }
}
