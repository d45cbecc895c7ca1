//! Writes `$OUT_DIR/lib.rs`, this repository's generated `lib.rs` as the body of this crate:
//! each `mod x;` gets `#[path]` to the shim's source, `codegen/src/shim/x.rs`, where there is
//! one, else to the generated module, `generated/src/x.rs`; the inner attributes (the crate
//! docs) are left out, as `include!` takes items only. Every feature of `generated/Cargo.toml`
//! is turned on, and every feature of its types crate (`generated/types/`) through this crate's
//! Cargo.toml, which build.rs checks lists them all.

use std::path::{Path, PathBuf};

fn main() {
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let codegen = here.parent().expect("codegen/shim-check is inside codegen/");
    let root = codegen.parent().expect("codegen/ is inside the repository");
    let shim = codegen.join("src").join("shim");
    let generated = root.join("generated");
    let lib = generated.join("src").join("lib.rs");
    let manifest = generated.join("Cargo.toml");
    // What this script reads. The modules themselves are rustc's to track (its dep-info lists
    // every `#[path]` file); a shim file added or removed changes where a `mod` points.
    for read in [&lib, &manifest, &shim] {
        println!("cargo::rerun-if-changed={}", read.display());
    }

    let text = read(&lib);
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
        let name = m.ident.to_string();
        let source = shim.join(format!("{name}.rs"));
        let path = if source.is_file() { source } else { generated.join("src").join(format!("{name}.rs")) };
        let path = path.to_str().unwrap_or_else(|| fail(&format!("{}: not UTF-8", path.display())));
        m.attrs.push(syn::parse_quote!(#[path = #path]));
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("lib.rs");
    let body = format!(
        "// Written by codegen/shim-check/build.rs from {}: the shim's modules are codegen/src/shim/.\n\n{}",
        lib.display(),
        prettyplease::unparse(&file)
    );
    if std::fs::read_to_string(&out).ok().as_deref() != Some(body.as_str()) {
        std::fs::write(&out, body).unwrap_or_else(|e| fail(&format!("{}: {e}", out.display())));
    }

    let features = self::features(&read(&manifest));
    if features.is_empty() {
        fail(&format!("{}: no [features] found", manifest.display()));
    }
    // The types crate's features are Cargo's to turn on: this crate's Cargo.toml lists them
    // all, and a module added to the manifest must be added there too.
    let types_manifest = generated.join("types").join("Cargo.toml");
    println!("cargo::rerun-if-changed={}", types_manifest.display());
    let own_manifest = here.join("Cargo.toml");
    let own = read(&own_manifest);
    let listed = own.lines().find(|l| l.starts_with("cuda-driver-pfn-types")).unwrap_or("");
    for f in self::features(&read(&types_manifest)).iter().filter(|f| *f != "default") {
        if !listed.contains(&format!("{f:?}")) {
            fail(&format!(
                "{} has feature `{f}`, which {} does not turn on: add it to the `features` of its cuda-driver-pfn-types dependency",
                types_manifest.display(),
                own_manifest.display()
            ));
        }
    }
    let values: Vec<String> = features.iter().map(|f| format!("{f:?}")).collect();
    println!("cargo::rustc-check-cfg=cfg(feature, values({}))", values.join(", "));
    for f in &features {
        println!("cargo::rustc-cfg=feature={f:?}");
    }
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
