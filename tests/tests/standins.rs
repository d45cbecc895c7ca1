//! The generator's stand-ins for third-party headers (GL, EGL with KHR, VDPAU) against the real
//! headers, where this machine has them: every type a stand-in declares must come out of
//! bindgen exactly as the real header's does (same primitive, so the same size and
//! signedness; the same enum values; the same function signature). Generation itself never
//! reads the real ones.
//!
//! Real headers are looked for in `$CUDA_SYS_GEN_REAL_HEADERS` (folders separated by `:`), then
//! `/usr/include` and `/usr/local/include`. A header found nowhere is skipped with a printed
//! reason (`cargo test -- --nocapture` shows it): Debian's libgl-dev, libegl-dev and
//! libvdpau-dev have them, and `apt-get download` plus `dpkg -x` unpacks them anywhere, no root
//! needed, for `CUDA_SYS_GEN_REAL_HEADERS`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use codegen::fetch::Fetcher;
use codegen::manifest::Manifest;
use codegen::platform::Platform;
use codegen::standins::STANDINS;
use cuda_sys_gen_tests::*;
use quote::ToTokens;

/// The C library stand-ins: both sides parse against them, so only the header under test differs.
const LIBC: &[&str] = &["stddef.h", "stdint.h", "stdlib.h"];

fn real_header_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var("CUDA_SYS_GEN_REAL_HEADERS").map(|v| std::env::split_paths(&v).collect()).unwrap_or_default();
    dirs.extend(["/usr/include", "/usr/local/include"].map(PathBuf::from));
    dirs
}

/// Per type name, bindgen's items for it (the type, and the `impl` that holds a newtype enum's
/// values), as token text.
fn bindgen_types(
    headers: &[String],
    include_args: &[String],
    defines: &[String],
    only: Option<&[String]>,
) -> BTreeMap<String, Vec<String>> {
    let mut args: Vec<String> =
        ["-x", "c", "-std=c11", "-nostdinc", "--target=x86_64-unknown-linux-gnu", "-Wno-everything"]
            .map(String::from)
            .to_vec();
    args.extend(include_args.iter().cloned());
    args.extend(defines.iter().map(|d| format!("-D{d}")));
    let mut b = bindgen::Builder::default()
        .header_contents("standin-check.h", &headers.iter().map(|h| format!("#include <{h}>\n")).collect::<String>())
        .clang_args(args)
        .detect_include_paths(false)
        .ignore_functions()
        .layout_tests(false)
        .derive_debug(false)
        .use_core()
        .ctypes_prefix("::core::ffi")
        .default_enum_style(bindgen::EnumVariation::NewType { is_bitfield: false, is_global: false })
        .prepend_enum_name(false)
        .formatter(bindgen::Formatter::None);
    if let Some(names) = only {
        b = b.allowlist_type(format!("^({})$", names.join("|"))).allowlist_recursively(false);
    }
    let out = b.generate().unwrap_or_else(|e| panic!("bindgen over {headers:?} ({include_args:?}): {e}")).to_string();
    let file: syn::File = syn::parse_str(&out).expect("bindgen's output parses");
    let mut types: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Types only: macros (the libc stand-ins' INT32_MAX) are not what a stand-in is for.
    let is_type = |i: &syn::Item| {
        matches!(
            i,
            syn::Item::Type(_) | syn::Item::Struct(_) | syn::Item::Union(_) | syn::Item::Enum(_) | syn::Item::Impl(_)
        )
    };
    for item in file.items.iter().filter(|i| is_type(i)) {
        if let Some(name) = codegen::syntax::item_name(item) {
            types
                .entry(name.trim_start_matches("impl ").to_owned())
                .or_default()
                .push(item.to_token_stream().to_string());
        }
    }
    types
}

#[test]
fn stand_ins_match_the_real_headers() {
    let manifest = Manifest::load(&real_manifest()).unwrap();
    codegen::read::clang::ensure_libclang(&manifest, &Fetcher::new(cache_dir(), &manifest)).expect("libclang");
    let scratch = tempfile::tempdir().unwrap();
    let all = scratch.path().join("all");
    codegen::standins::write_standins(&all).unwrap();
    let libc_only = scratch.path().join("libc");
    std::fs::create_dir_all(&libc_only).unwrap();
    for f in LIBC {
        std::fs::copy(all.join("linux").join(f), libc_only.join(f)).unwrap();
    }
    let mut compared = 0;
    let third_party = STANDINS.iter().filter(|(t, name, _)| *t == Platform::Linux && !LIBC.contains(name));
    for (_, header, _) in third_party {
        // As the rows that include it do: after the system headers before it (the real eglext.h
        // needs egl.h first), with their defines (GL_GLEXT_LEGACY, EGL_NO_X11).
        let row = manifest.headers.iter().find(|h| h.system.iter().any(|s| s == header));
        let defines: Vec<String> = row.map(|h| h.defines.clone()).unwrap_or_default();
        let includes: Vec<String> = match row {
            Some(h) => h.system.iter().take_while(|s| s != header).chain([&header.to_string()]).cloned().collect(),
            None => vec![header.to_string()],
        };
        let Some(real_dir) = real_header_dirs().into_iter().find(|d| d.join(header).is_file()) else {
            println!(
                "SKIPPED: {header}: no real one in {:?} (set CUDA_SYS_GEN_REAL_HEADERS to a folder that has it)",
                real_header_dirs()
            );
            continue;
        };
        let ours = bindgen_types(&includes, &[format!("-isystem{}", all.join("linux").display())], &defines, None);
        let names: Vec<String> = ours.keys().filter(|n| !is_libc_type(n)).cloned().collect();
        let real_args = [format!("-isystem{}", libc_only.display()), format!("-idirafter{}", real_dir.display())];
        let real = bindgen_types(&includes, &real_args, &defines, Some(&names));
        for name in &names {
            let theirs = real.get(name).unwrap_or_else(|| {
                panic!("{header}: the real {} has no `{name}`", Path::new(&real_dir).join(header).display())
            });
            assert_eq!(&ours[name], theirs, "{header}: `{name}` differs from {}", real_dir.join(header).display());
        }
        println!("{header}: {} types as in {}: {}", names.len(), real_dir.join(header).display(), names.join(", "));
        compared += 1;
    }
    println!("{compared} stand-ins compared with real headers");
}

fn is_libc_type(name: &str) -> bool {
    matches!(name, "size_t" | "ptrdiff_t" | "wchar_t" | "intptr_t" | "uintptr_t" | "intmax_t" | "uintmax_t")
        || name.strip_prefix("u").unwrap_or(name).strip_prefix("int").is_some_and(|r| r.ends_with("_t"))
}
