//! A `libcuda.so.1` built on the generated crate's `standin` module, with no hook: every call
//! forwards to the real driver, and `cuGetProcAddress` answers with this library's own
//! functions. The tests copy `libcuda_standin.so` as `libcuda.so.1` in front of a real driver
//! (tests/tests/standin.rs).

cuda_driver_pfn::export_libcuda!(init = init);

/// For the tests: `$CUDA_SYS_GEN_TEST_ANSWER_AS` (a driver version) answers for a driver of it
/// where no real one is found (`standin::answer_as_driver`), set before any call is answered.
fn init() {
    if std::env::var_os("CUDA_SYS_GEN_TEST_SYMBOL_HOOKS").is_some() {
        use cuda_driver_pfn::newest::{symbols, MemAlloc};
        let left =
            cuda_driver_pfn::standin::set_symbol_hooks::<symbols::cuMemAlloc>(&[MemAlloc::V3020(alloc_v2)]).len();
        eprintln!("symbol hooks: cuMemAlloc, {left} ABI left out");
        let left = cuda_driver_pfn::standin::set_symbol_hooks::<symbols::cuMemAlloc>(&[
            MemAlloc::V3020(alloc_v2),
            MemAlloc::V2000(alloc_v1),
        ])
        .len();
        eprintln!("symbol hooks: cuMemAlloc, {left} ABIs left out");
    }
    if let Some(v) = std::env::var("CUDA_SYS_GEN_TEST_ANSWER_AS").ok().and_then(|v| v.parse().ok()) {
        cuda_driver_pfn::standin::answer_as_driver(v);
    }
}

/// For the tests: where the function of registry entry `index` forwards (the real driver's
/// export of its name), or NULL.
#[unsafe(no_mangle)]
pub extern "C" fn cuda_standin_forward(index: usize) -> *mut core::ffi::c_void {
    cuda_driver_pfn::standin::forward_pointer(index).map_or(core::ptr::null_mut(), |p| p.as_ptr())
}

/// For the tests: how many answers of the real driver differed from the registry's rule.
#[unsafe(no_mangle)]
pub extern "C" fn cuda_standin_rule_differences() -> usize {
    cuda_driver_pfn::standin::rule_differences()
}

/// A hook that adds 1 to the version the real driver reports, through `standin::forward`.
unsafe extern "system" fn version_plus_one(v: *mut core::ffi::c_int) -> cuda_driver_pfn::types::CUresult {
    use cuda_driver_pfn::{entries, standin};
    let r = match standin::forward::<entries::cuDriverGetVersion_v2020>() {
        // SAFETY: the real driver's cuDriverGetVersion, with the caller's pointer.
        Some(real) => unsafe { real(v) },
        None => standin::MISSING,
    };
    if r.0 == 0 && !v.is_null() {
        // SAFETY: the driver just wrote it.
        unsafe { *v += 1 };
    }
    r
}

/// For the tests: installs (`on` non-zero) or removes the hook of `cuDriverGetVersion`.
#[unsafe(no_mangle)]
pub extern "C" fn cuda_standin_test_hook(on: core::ffi::c_int) {
    use cuda_driver_pfn::{entries, standin};
    if on != 0 {
        standin::set_hook::<entries::cuDriverGetVersion_v2020>(version_plus_one);
    } else {
        standin::clear_hook::<entries::cuDriverGetVersion_v2020>();
    }
}

/// For the tests: the hook of `cuMemAlloc_v2` (the 3020 ABI), writing its version.
unsafe extern "system" fn alloc_v2(
    dptr: *mut cuda_driver_pfn::types::CUdeviceptr_v2,
    _size: usize,
) -> cuda_driver_pfn::types::CUresult {
    if !dptr.is_null() {
        // SAFETY: the caller's pointer, checked for NULL.
        unsafe { *dptr = 3020 };
    }
    cuda_driver_pfn::types::cudaError_enum(0)
}

/// For the tests: the hook of `cuMemAlloc` (the 2000 ABI, a 32-bit pointer), writing its
/// version.
unsafe extern "system" fn alloc_v1(
    dptr: *mut cuda_driver_pfn::types::CUdeviceptr_v1,
    _size: core::ffi::c_uint,
) -> cuda_driver_pfn::types::CUresult {
    if !dptr.is_null() {
        // SAFETY: the caller's pointer, checked for NULL.
        unsafe { *dptr = 2000 };
    }
    cuda_driver_pfn::types::cudaError_enum(0)
}
