//! What porting NVIDIA's driver-API samples tripped over, each as the port wrote it.

use cuda_driver_pfn::types::*;
use cuda_driver_pfn::Driver;
use cuda_sys_gen_tests::repo_root;

/// Item 2: `let mut options = [CUjit_option::default(); 6];`, as the JIT-linker port writes
/// it: an enum whose zero is an enumerator is `Default`, that enumerator.
#[test]
fn enums_with_a_zero_enumerator_are_default() {
    let options = [CUjit_option::default(); 6];
    assert!(options == [CU_JIT_MAX_REGISTERS; 6]);
    assert!(CUcomputemode::default() == CUcomputemode::CU_COMPUTEMODE_DEFAULT);
    assert_eq!(CUresult::default(), cudaError_enum::CUDA_SUCCESS);

    // Every enum of types.rs with an enumerator of value zero has `Default`, read from the
    // file's text (not from the generator's list): `impl X { pub const A: X = X(0); ... }`.
    let text = std::fs::read_to_string(repo_root().join("generated/types/src/types.rs")).unwrap();
    let file: syn::File = syn::parse_str(&text).unwrap();
    let mut with_zero = std::collections::BTreeSet::new();
    let mut defaults = std::collections::BTreeSet::new();
    for item in &file.items {
        let syn::Item::Impl(imp) = item else { continue };
        let syn::Type::Path(ty) = &*imp.self_ty else { continue };
        let name = ty.path.segments.last().unwrap().ident.to_string();
        match &imp.trait_ {
            Some((_, path, _)) if path.is_ident("Default") => {
                defaults.insert(name);
            }
            None => {
                let zero =
                    imp.items.iter().any(|i| matches!(i, syn::ImplItem::Const(c) if tokens(&c.expr).ends_with("(0)")));
                if zero {
                    with_zero.insert(name);
                }
            }
            _ => {}
        }
    }
    assert!(with_zero.len() > 80, "{} enums found: {with_zero:?}", with_zero.len());
    let missing: Vec<_> = with_zero.difference(&defaults).collect();
    assert!(missing.is_empty(), "enums with a zero enumerator and no Default: {missing:?}");
}

/// An expression's tokens without spaces or a trailing comma: `X(0)` however it is wrapped.
fn tokens(e: &syn::Expr) -> String {
    quote::ToTokens::to_token_stream(e).to_string().replace(' ', "").replace(",)", ")")
}

/// Item 9: `fn main() -> Result<(), Error>`, as docs/porting.md writes it, prints the error's
/// `Debug`: that must say what to do, as `Display` does, not only the fields.
#[test]
fn debug_says_what_to_do() {
    let Err(e) = Driver::from_path("/nonexistent/libcuda.so.1") else { panic!("no such file loads") };
    let debug = format!("{e:?}");
    assert!(debug.starts_with("LibraryNotFound: could not load"), "{debug}");
    assert!(debug.contains("Check the path"), "{debug}");
    assert!(debug.ends_with(&e.to_string()), "{debug}");
}

/// Item 6: `include_ptx!` embeds a PTX file with the NUL the driver reads up to, by a path
/// relative to the calling file, as `include_str!`.
#[test]
fn include_ptx_ends_with_a_nul() {
    let image: *const core::ffi::c_void = cuda_driver_pfn::include_ptx!("../kernels/sm90_ptx95.ptx");
    let text = include_str!("../kernels/sm90_ptx95.ptx");
    // SAFETY: the macro's bytes are a static string of the file's length plus the NUL.
    let bytes = unsafe { std::slice::from_raw_parts(image.cast::<u8>(), text.len() + 1) };
    assert_eq!(&bytes[..text.len()], text.as_bytes());
    assert_eq!(bytes[text.len()], 0);
    assert!(!text.contains('\0'), "the fixture itself has no NUL");
}

/// Item 6: the functions that take a module image say that text needs its NUL, and where the
/// helper is.
#[test]
fn image_loaders_say_that_text_needs_a_nul() {
    let api = std::fs::read_to_string(repo_root().join("generated/src/api.rs")).unwrap();
    for name in ["cuModuleLoadData", "cuModuleLoadDataEx", "cuLibraryLoadData", "cuLinkAddData"] {
        let at = api.find(&format!("pub unsafe fn {name}(")).unwrap_or_else(|| panic!("api::{name}"));
        let doc_start = api[..at].rfind("/**").unwrap_or_else(|| panic!("api::{name} has no doc"));
        let doc = &api[doc_start..at];
        assert!(doc.contains("must end with a NUL byte") && doc.contains("include_ptx!"), "{name}:\n{doc}");
    }
}

/// Item 7: what the crate docs say of threads: a `Driver` and a `Runtime` are shared by
/// reference across threads, and a handle goes over in a wrapper the program declares `Send`
/// (the docs' example, run as a doctest of the crate, is the same).
#[test]
fn drivers_are_shared_and_handles_cross_in_a_wrapper() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Driver>();
    send_sync::<cuda_driver_pfn::Runtime>();
    let docs = std::fs::read_to_string(repo_root().join("generated/src/lib.rs")).unwrap();
    assert!(docs.contains("# Handles across threads") && docs.contains("unsafe impl Send for Ctx {}"));

    struct Ctx(CUcontext);
    // SAFETY: as the crate docs say: the handle is only carried, never used, by the thread.
    unsafe impl Send for Ctx {}
    let ctx = Ctx(std::ptr::null_mut());
    let back = std::thread::spawn(move || ctx).join().unwrap();
    assert!(back.0.is_null());
}

/// Item 9: the casts the crate docs show for `cuGetProcAddress` are the ones rustc asks for,
/// and a host callback written `extern "system"` is a `CUhostFn`.
#[test]
fn c_s_silent_conversions_spelled_as_the_docs_say() {
    use core::ffi::{c_int, c_void};
    use cuda_driver_pfn::api;
    let mut p: *mut c_void = std::ptr::null_mut();
    let mut status = CUdriverProcAddressQueryResult::default();
    // SAFETY: valid out-pointers; without a driver nothing is called.
    let r = unsafe {
        api::cuGetProcAddress(
            c"cuInit".as_ptr(),
            &mut p,
            CUDA_VERSION as c_int,
            CU_GET_PROC_ADDRESS_DEFAULT as cuuint64_t,
            &mut status,
        )
    };
    assert!(r == api::NO_DRIVER || r == cudaError_enum::CUDA_SUCCESS, "{r:?}");

    extern "system" fn done(_user: *mut c_void) {}
    let callback: CUhostFn = Some(done);
    assert!(callback.is_some());
    let docs = std::fs::read_to_string(repo_root().join("generated/src/lib.rs")).unwrap();
    assert!(docs.contains("CUDA_VERSION as c_int, CU_GET_PROC_ADDRESS_DEFAULT as"), "the docs show the casts");
}

/// Item 3: a program written against an older cuda.h calls the older form of a name
/// (`cuCtxCreate(&ctx, 0, dev)`, 3 arguments); the doc of `api::cuCtxCreate` says which forms
/// older toolkits meant and how to call them. Checked for every C name against registry.json's
/// own per-toolkit map.
#[test]
fn api_docs_name_the_forms_older_cuda_h_meant() {
    let reg = codegen::registry_json::Registry::parse(
        &std::fs::read_to_string(repo_root().join("generated/registry.json")).unwrap(),
    )
    .unwrap();
    let api = std::fs::read_to_string(repo_root().join("generated/src/api.rs")).unwrap();
    let exported: std::collections::BTreeMap<&str, &str> =
        reg.entries.iter().map(|e| (e.pfn.as_str(), e.exported.as_str())).collect();
    let newest = reg.toolkits.last().unwrap();
    let mut checked = 0;
    for (c_name, now) in &reg.c_names[newest] {
        let Some(now) = now.default.as_deref() else { continue };
        let older: std::collections::BTreeSet<&str> = reg
            .c_names
            .iter()
            .filter(|(t, _)| *t != newest)
            .filter_map(|(_, names)| names.get(c_name)?.default.as_deref())
            .filter(|p| *p != now)
            .collect();
        if older.is_empty() {
            continue;
        }
        // The doc before the default-stream (or shared) function of that name.
        let Some(at) = api.find(&format!("pub unsafe fn {c_name}(")) else { continue };
        let doc = &api[api[..at].rfind("/**").unwrap()..at];
        for pfn in older {
            assert!(doc.contains(&format!("`{}` in CUDA", exported[pfn])), "api::{c_name} does not name {pfn}:\n{doc}");
        }
        checked += 1;
    }
    assert!(checked >= 20, "{checked}");
    let at = api.find("pub unsafe fn cuCtxCreate(").unwrap();
    let doc = &api[api[..at].rfind("/**").unwrap()..at];
    assert!(doc.contains(
        "`cuCtxCreate_v2` in CUDA 11.7 to 12.9 ([`api::cuCtxCreate_v2`](crate::api::legacy::cuCtxCreate_v2), \
         `entries::cuCtxCreate_v3020`)"
    ));
    // What a null `ctxCreateParams` did, as measured on the GPU machine (docs/gpu-machine-runs.md).
    assert!(doc.contains("A null `ctxCreateParams`, measured: NVIDIA's driver 580.159.04"), "{doc}");
}

/// A program gets a compute mode (and the RDMA ordering, flush options and
/// NUMA config) only from `cuDeviceGetAttribute`, which writes an `int`; C compares that with
/// the bare enumerator, and so does the port (E0308 while the constant was a `c_uint`).
#[test]
fn attribute_values_compare_with_the_int_the_attribute_returns() {
    use core::ffi::c_int;
    let (compute_mode, ordering, flush, numa): (c_int, c_int, c_int, c_int) = (0, 200, 1, 0);
    assert!(compute_mode != CU_COMPUTEMODE_PROHIBITED);
    assert!(ordering >= CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER);
    assert!(flush & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST != 0);
    assert_eq!(numa, CU_DEVICE_NUMA_CONFIG_NONE);
    // Every enum that a `CU_DEVICE_ATTRIBUTE_*` value's doc names (cuda.h: "See
    // ::CUcomputemode for details") and that no function takes has `c_int` bare constants.
    let text = std::fs::read_to_string(repo_root().join("generated/types/src/types.rs")).unwrap();
    let file: syn::File = syn::parse_str(&text).unwrap();
    let doc_of = |attrs: &[syn::Attribute]| -> String {
        attrs
            .iter()
            .filter_map(|a| match &a.meta {
                syn::Meta::NameValue(nv) => match &nv.value {
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    };
    let mut named = std::collections::BTreeSet::new();
    for item in &file.items {
        let syn::Item::Impl(imp) = item else { continue };
        if tokens_of(&imp.self_ty) != "CUdevice_attribute_enum" {
            continue;
        }
        for ii in &imp.items {
            if let syn::ImplItem::Const(c) = ii {
                let doc = doc_of(&c.attrs);
                for enum_name in [
                    "CUcomputemode",
                    "CUGPUDirectRDMAWritesOrdering",
                    "CUflushGPUDirectRDMAWritesOptions",
                    "CUdeviceNumaConfig",
                ] {
                    if doc.contains(&format!("`{enum_name}`")) {
                        named.insert(enum_name);
                    }
                }
            }
        }
    }
    assert_eq!(named.len(), 4, "the device attributes' docs name these enums: {named:?}");
    let mut checked = 0;
    for item in &file.items {
        let syn::Item::Const(c) = item else { continue };
        let value = tokens_of(&c.expr);
        if named.iter().any(|e| value.starts_with(&format!("{e}_enum ::"))) {
            assert_eq!(tokens_of(&c.ty), ":: core :: ffi :: c_int", "{}", c.ident);
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} bare constants of those enums");
}

fn tokens_of(t: &impl quote::ToTokens) -> String {
    quote::quote!(#t).to_string()
}

/// Every ABI has an `api::` function by the name libcuda exports it under,
/// so a program written against an older cuda.h (whose `cuCtxCreate` was `cuCtxCreate_v2`,
/// three arguments) keeps its call; and `check`/`cu!` know each name.
#[test]
fn every_abi_has_an_api_function_by_its_exported_name() {
    use core::ffi::c_uint;
    use cuda_driver_pfn::api;
    let _: unsafe fn(*mut CUcontext, c_uint, CUdevice) -> CUresult = api::cuCtxCreate_v2;
    let _ = (api::cuMemAlloc_v2, api::cuLinkCreate_v2, api::cuMemcpy_ptds, api::legacy::cuMemcpy_ptds);
    let json = std::fs::read_to_string(repo_root().join("generated/registry.json")).unwrap();
    let registry: serde_json::Value = serde_json::from_str(&json).unwrap();
    let names: std::collections::BTreeMap<&str, usize> = api::legacy::C_NAMES.iter().copied().collect();
    let (mut by_export, mut c_names) = (0, 0);
    for (index, e) in registry["entries"].as_array().unwrap().iter().enumerate() {
        if e["returns"] != "CUresult" {
            continue;
        }
        let exported = e["exported"].as_str().unwrap();
        let at = names.get(exported).unwrap_or_else(|| panic!("{exported} has no api:: function"));
        // Its own function, or a C name of the newest cuda.h that means another ABI
        // (`cuMemAlloc`: `cuMemAlloc_v2`; `cuGraphInstantiate`: `cuGraphInstantiateWithFlags`).
        if *at == index {
            by_export += 1;
        } else {
            c_names += 1;
        }
    }
    assert!(by_export > 600 && c_names > 50, "{by_export} by their exported name, {c_names} behind a C name");
    // `check`, `error_of` and `cu!` look names up in both modes' tables.
    assert!(api::ptds::C_NAMES.iter().any(|(n, _)| *n == "cuCtxCreate_v2"));
    assert!(api::legacy::C_NAMES.windows(2).all(|w| w[0].0 < w[1].0), "sorted, one row per name");
}
