//! Rendering the model as the generated crate: one emitter per output file, each with its
//! path beside it. Emitters take one typed [`Input`] (the model, the crate's types with
//! cuda.h's result-code docs as data, the modules, the options) and import neither the
//! readers nor the manifest: they never see C text.

mod api;
mod ctx;
mod docs;
pub mod doxygen;
mod examples;
mod krate;
mod newest;
mod pfn;
mod registry;
mod shim;
mod standin;
mod types;

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{CrateTypes, Model};
use crate::Error;

use ctx::{rust_file, Ctx};
pub use ctx::{EmitOptions, ModuleSpec, ENTRY_FIELDS};
pub use krate::LICENSES;
pub use types::CAST_CONSTANTS;

/// The lookup shim's files: hand-written Rust in `codegen/src/shim/`, compiled where it stands
/// by `codegen/shim-check/` and written into every crate as it is but for the crate's name.
pub const SHIM_FILES: &[&str] = &shim::PATHS;

/// The example programs: hand-written in `codegen/crate-files/examples/`, written as they are
/// but for the crate's name (all but `doctor` only where the registry has what they call).
pub const EXAMPLE_FILES: &[&str] = &[
    examples::DOCTOR_RS,
    examples::ROUNDTRIP_RS,
    examples::SAMPLES[0].1,
    examples::SAMPLES[1].1,
    examples::SAMPLES[2].1,
    examples::SAMPLES[3].1,
    examples::SAMPLES[4].1,
];

/// The README (`codegen/crate-files/README.md`, the marker and the crate's name put in) and the
/// licences (this repository's own).
pub const README_AND_LICENCES: &[&str] = &[
    krate::README_MD,
    krate::LICENSE_MIT,
    krate::LICENSE_APACHE,
    krate::TYPES_LICENSE_MIT,
    krate::TYPES_LICENSE_APACHE,
];

/// Every file written the same into every crate but for its name (and only its name): the
/// shim, the examples, the README and the licences. A golden test compares everything else,
/// what generation decided, and checks these against the real crate's.
pub fn same_in_every_crate() -> impl Iterator<Item = &'static str> {
    SHIM_FILES.iter().chain(EXAMPLE_FILES).chain(README_AND_LICENCES).copied()
}

/// The generated crate, as relative path to file contents.
pub type Files = BTreeMap<String, Vec<u8>>;

/// Every path [`emit`] may write for a manifest of these rows, whatever the model: the names
/// an output folder's files must have to be the generator's (`output_folder::check_output_folder`).
/// `emit` refuses to write any other, so the two cannot drift apart.
pub fn file_names(modules: &[ModuleSpec]) -> BTreeSet<String> {
    let fixed = [
        krate::CARGO_TOML,
        krate::README_MD,
        krate::LIB_RS,
        krate::TYPES_CARGO_TOML,
        krate::TYPES_LIB_RS,
        types::TYPES_RS,
        pfn::ALIASES_RS,
        registry::REGISTRY_RS,
        registry::REGISTRY_JSON,
        shim::CODES_RS,
        newest::NEWEST_RS,
        api::API_RS,
        newest::VISIT_RS,
        examples::DOCTOR_RS,
        examples::ROUNDTRIP_RS,
        standin::STANDIN_EXPORTS_RS,
    ];
    let licences = krate::LICENSES.iter().map(|(path, _)| *path);
    let samples = examples::SAMPLES.iter().map(|s| s.1);
    let mut names: BTreeSet<String> =
        fixed.into_iter().chain(SHIM_FILES.iter().copied()).chain(licences).chain(samples).map(str::to_owned).collect();
    names.extend(modules.iter().map(pfn::module_path));
    names
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
    let (types, module_types) = (&types, &module_types);
    let mut files = Files::new();
    files.insert(krate::CARGO_TOML.into(), krate::cargo_toml(&ctx).into_bytes());
    files.insert(krate::README_MD.into(), krate::readme_md(&ctx).into_bytes());
    for (path, text) in krate::LICENSES {
        files.insert(path.to_string(), text.as_bytes().to_vec());
    }
    files.insert(krate::LIB_RS.into(), rust_file(&ctx, krate::LIB_RS, krate::lib_rs(&ctx))?);
    files.insert(krate::TYPES_CARGO_TOML.into(), krate::types_cargo_toml(&ctx).into_bytes());
    files.insert(krate::TYPES_LIB_RS.into(), rust_file(&ctx, krate::TYPES_LIB_RS, krate::types_lib_rs(&ctx))?);
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
    files.insert(types::TYPES_RS.into(), rust_file(&ctx, types::TYPES_RS, types::types_rs(types, &params))?);
    for m in modules {
        let path = pfn::module_path(m);
        let own = module_types.get(&m.name).map(Vec::as_slice).unwrap_or(&[]);
        files.insert(path.clone(), rust_file(&ctx, &path, pfn::module_rs(&ctx, m, own, types, &params, &docs)?)?);
    }
    files.insert(pfn::ALIASES_RS.into(), rust_file(&ctx, pfn::ALIASES_RS, pfn::aliases_rs(&ctx))?);
    files.insert(
        registry::REGISTRY_RS.into(),
        rust_file(&ctx, registry::REGISTRY_RS, registry::registry_rs(&ctx, &docs))?,
    );
    files.insert(registry::REGISTRY_JSON.into(), registry::registry_json(&ctx)?);
    for (path, source) in shim::SOURCES {
        files.insert(path.into(), ctx::crate_file(&ctx, source));
    }
    let codes = shim::codes_rs(types, &result_docs);
    files.insert(shim::CODES_RS.into(), rust_file(&ctx, shim::CODES_RS, codes)?);
    files.insert(newest::NEWEST_RS.into(), rust_file(&ctx, newest::NEWEST_RS, newest::newest_rs(&ctx)?)?);
    files.insert(api::API_RS.into(), rust_file(&ctx, api::API_RS, api::api_rs(&ctx, &docs))?);
    files.insert(newest::VISIT_RS.into(), rust_file(&ctx, newest::VISIT_RS, newest::visit_rs(&ctx))?);
    let exports = standin::standin_exports_rs(&ctx, types);
    files.insert(standin::STANDIN_EXPORTS_RS.into(), rust_file(&ctx, standin::STANDIN_EXPORTS_RS, exports)?);
    files.insert(examples::DOCTOR_RS.into(), examples::doctor_rs(&ctx));
    for (_, path, file) in examples::samples(&ctx) {
        files.insert(path.into(), file);
    }
    if let Some(roundtrip) = examples::roundtrip_rs(&ctx) {
        files.insert(examples::ROUNDTRIP_RS.into(), roundtrip);
    }
    let names = file_names(modules);
    if let Some(other) = files.keys().find(|f| !names.contains(*f)) {
        return Err(Error::Emit {
            file: other.clone(),
            message: "a file emit::file_names does not list: an output folder holding it would be refused".into(),
        });
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
