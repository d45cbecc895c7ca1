//! A `libcuda.so.1` built on the generated crate's `standin` module, with no hook: every call
//! forwards to the real driver, and `cuGetProcAddress` answers with this library's own
//! functions. The tests copy `libcuda_standin.so` as `libcuda.so.1` in front of a real driver
//! (tests/tests/standin.rs).

cuda_driver_pfn::export_libcuda!();

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
