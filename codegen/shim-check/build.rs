//! Writes `$OUT_DIR/lib.rs`, this repository's generated `lib.rs` as the body of this crate:
//! each `mod x;` gets `#[path]` to the shim's source, `codegen/src/shim/x.rs`, where there is
//! one, else to the generated module, `generated/src/x.rs`. The types crate (`generated/types/`,
//! which the generated crate depends on) is a module of this crate of the same name, its
//! `mod x;` pointed at the shim's source where there is one (`answer`), else at
//! `generated/types/src/x.rs`: no dependency, so the features below are
//! this crate's own `cfg`s and a workspace build never turns on a feature of the types crate
//! (`per-thread-default-stream` would change its `pfn` aliases for every test). The inner
//! attributes (the crate docs) are left out, as `include!` takes items only. Every feature of
//! `generated/Cargo.toml` is turned on.

use std::path::{Path, PathBuf};

fn main() {
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let codegen = here.parent().expect("codegen/shim-check is inside codegen/");
    let root = codegen.parent().expect("codegen/ is inside the repository");
    let shim = codegen.join("src").join("shim");
    let generated = root.join("generated");
    let types = generated.join("types");
    let lib = generated.join("src").join("lib.rs");
    let types_lib = types.join("src").join("lib.rs");
    let manifest = generated.join("Cargo.toml");
    let types_manifest = types.join("Cargo.toml");
    // What this script reads. The modules themselves are rustc's to track (its dep-info lists
    // every `#[path]` file); a shim file added or removed changes where a `mod` points.
    for read in [&lib, &types_lib, &manifest, &types_manifest, &shim] {
        println!("cargo::rerun-if-changed={}", read.display());
    }

    let mut file = crate_root(&lib, |name| {
        let source = shim.join(format!("{name}.rs"));
        if source.is_file() {
            source
        } else {
            generated.join("src").join(format!("{name}.rs"))
        }
    });
    let types_root = crate_root(&types_lib, |name| {
        let source = shim.join(format!("{name}.rs"));
        if source.is_file() {
            source
        } else {
            types.join("src").join(format!("{name}.rs"))
        }
    });
    let types_name = package_name(&read(&types_manifest))
        .unwrap_or_else(|| fail(&format!("{}: no package name", types_manifest.display())))
        .replace('-', "_");
    let types_ident: syn::Ident = syn::parse_str(&types_name)
        .unwrap_or_else(|e| fail(&format!("{}: `{types_name}` is no identifier: {e}", types_manifest.display())));
    // A file of the crate's folder included by a constant (`REGISTRY_JSON`) is named relative
    // to generated/src/, which this crate's lib.rs is not in: the path is made whole.
    for item in &mut file.items {
        let syn::Item::Const(c) = item else { continue };
        let syn::Expr::Macro(m) = &*c.expr else { continue };
        let Ok(lit) = m.mac.parse_body::<syn::LitStr>() else { continue };
        if m.mac.path.is_ident("include_str") {
            let whole = generated.join("src").join(lit.value());
            let whole = whole.to_str().unwrap_or_else(|| fail(&format!("{}: not UTF-8", whole.display())));
            *c.expr = syn::parse_quote!(include_str!(#whole));
        }
    }
    let types_items = types_root.items;
    // Public, as the crate is: its re-exports of the registry are then no unused imports.
    file.items.push(syn::parse_quote!(pub mod #types_ident { #(#types_items)* }));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("lib.rs");
    let body = format!(
        "// Written by codegen/shim-check/build.rs from {} and {}: the shim's modules are codegen/src/shim/.\n\n{}",
        lib.display(),
        types_lib.display(),
        prettyplease::unparse(&file)
    );
    if std::fs::read_to_string(&out).ok().as_deref() != Some(body.as_str()) {
        std::fs::write(&out, body).unwrap_or_else(|e| fail(&format!("{}: {e}", out.display())));
    }

    let features = self::features(&read(&manifest));
    if features.is_empty() {
        fail(&format!("{}: no [features] found", manifest.display()));
    }
    // The generated crate forwards each feature of its types crate under the same name, so
    // its features are the cfgs the types crate's modules read too.
    for f in self::features(&read(&types_manifest)).iter().filter(|f| *f != "default") {
        if !features.contains(f) {
            fail(&format!(
                "{} has feature `{f}`, which {} lacks: the generated crate forwards every feature of its types crate",
                types_manifest.display(),
                manifest.display()
            ));
        }
    }
    let values: Vec<String> = features.iter().map(|f| format!("{f:?}")).collect();
    println!("cargo::rustc-check-cfg=cfg(feature, values({}))", values.join(", "));
    for f in &features {
        println!("cargo::rustc-cfg=feature={f:?}");
    }
}

/// A generated `lib.rs` as items: its inner attributes (docs, rustdoc's lint levels) and its
/// doctest items left out, each `mod x;` given `#[path]` to `source(x)`.
fn crate_root(lib: &Path, source: impl Fn(&str) -> PathBuf) -> syn::File {
    let text = read(lib);
    let mut file = match syn::parse_file(&text) {
        Ok(file) => file,
        Err(e) => fail(&format!("{}: {e}", lib.display())),
    };
    // `include!` takes items, not a crate's inner attributes: the docs go, and so do the
    // lint levels of rustdoc's own lints (`allow(rustdoc::...)`), which only the docs read and
    // this crate's lib.rs repeats; anything else would be lost silently, so it stops the build
    // instead.
    for attr in file.attrs.drain(..) {
        let rustdoc_lint = attr.path().is_ident("allow")
            && attr.meta.require_list().is_ok_and(|l| l.tokens.to_string().starts_with("rustdoc ::"));
        if !attr.path().is_ident("doc") && !rustdoc_lint {
            fail(&format!(
                "{} has an inner attribute other than docs (`#![{}]`): put it in codegen/shim-check/src/lib.rs",
                lib.display(),
                attr.path().get_ident().map_or_else(|| "...".to_owned(), ToString::to_string)
            ));
        }
    }
    // The doctest items include files relative to `generated/src/`, and doctests are not run here.
    file.items.retain(|item| !item_attrs(item).iter().any(is_cfg_doctest));
    for item in &mut file.items {
        let syn::Item::Mod(m) = item else { continue };
        if m.content.is_some() {
            continue;
        }
        let path = source(&m.ident.to_string());
        let path = path.to_str().unwrap_or_else(|| fail(&format!("{}: not UTF-8", path.display())));
        m.attrs.push(syn::parse_quote!(#[path = #path]));
    }
    file
}

/// `name = "..."` of a generated Cargo.toml's `[package]` (one key a line, as the generator
/// writes it).
fn package_name(manifest: &str) -> Option<String> {
    let mut inside = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[package]";
        } else if let Some(value) = line.strip_prefix("name").filter(|_| inside) {
            return Some(value.trim_start().strip_prefix('=')?.trim().trim_matches('"').to_owned());
        }
    }
    None
}

/// The names of the `[features]` table of the generated Cargo.toml (one `name = [...]` a line,
/// as the generator writes it).
fn features(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[features]";
        } else if inside && !line.starts_with('#') {
            if let Some((name, _)) = line.split_once('=') {
                out.push(name.trim().trim_matches('"').to_owned());
            }
        }
    }
    out
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Struct(s) => &s.attrs,
        syn::Item::Mod(m) => &m.attrs,
        syn::Item::Use(u) => &u.attrs,
        syn::Item::Const(c) => &c.attrs,
        syn::Item::Fn(f) => &f.attrs,
        _ => &[],
    }
}

fn is_cfg_doctest(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("cfg") && attr.parse_args::<syn::Ident>().is_ok_and(|i| i == "doctest")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())))
}

fn fail(message: &str) -> ! {
    println!("cargo::error={message}");
    std::process::exit(1)
}
