//! Compiles `enumerator_uses/uses.rs`, which `tests/enumerators.rs` writes from the generated
//! crate: every bare enumerator where the `api::` functions or a field take it, so a constant of
//! the wrong type fails this build. Then what a C program leans on, by hand: C's `= {0}` and
//! fields of anonymous unions.

// Written by tests/enumerators.rs, one use a line: not rustfmt's to reflow.
#[rustfmt::skip]
#[path = "enumerator_uses/uses.rs"]
mod uses;

use cuda_driver_pfn::api;
use cuda_driver_pfn::types::*;

/// The bare enumerator constants, where the functions a C program passes them to take them.
#[allow(dead_code, clippy::all)]
unsafe fn as_c_writes_them() {
    let (mut graph_exec, graph, stream) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    let _ = api::cuGraphInstantiate(&mut graph_exec, graph, CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
    let _ = api::cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL);
    let _ = api::ptds::cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    let _ = api::legacy::cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED);
    let mut value = 0u64;
    let _ = api::cuMemPoolGetAttribute(std::ptr::null_mut(), CU_MEMPOOL_ATTR_USED_MEM_CURRENT, (&raw mut value).cast());
    let mut regs = 0;
    let _ = api::cuFuncGetAttribute(&mut regs, CU_FUNC_ATTRIBUTE_NUM_REGS, std::ptr::null_mut());
    let _ = api::cuStreamCreate(std::ptr::null_mut(), CU_STREAM_NON_BLOCKING);
    let _ = api::cuCtxCreate(std::ptr::null_mut(), std::ptr::null_mut(), CU_CTX_SCHED_SPIN | CU_CTX_MAP_HOST, 0);
}

#[test]
fn the_uses_compile() {
    // Referenced so that the never-called functions are type-checked, not only parsed.
    let _ = (uses::enumerators as unsafe fn(), uses::defaults as fn(), as_c_writes_them as unsafe fn());
}

#[test]
fn default_is_c_s_zero_and_anonymous_members_read_as_in_c() {
    let mut prop = CUmemAllocationProp { type_: CU_MEM_ALLOCATION_TYPE_PINNED, ..Default::default() };
    assert_eq!(prop.location.type_.0, 0);
    assert!(prop.win32HandleMetaData.is_null());
    // C: `prop.location.id = dev;`
    prop.location.id = 7;
    assert_eq!(unsafe { prop.location.id }, 7);
    assert_eq!(unsafe { prop.location.__bindgen_anon_1.id }, 7, "the same field as bindgen's");
    let config = CUlaunchConfig::default();
    assert_eq!((config.gridDimX, config.numAttrs), (0, 0));
    assert!(config.attrs.is_null() && config.hStream.is_null());
    let uuid = CUuuid::default();
    assert_eq!(uuid.bytes, [0; 16]);
    let mut node = CUgraphNodeParams::default();
    node.kernel.gridDimX = 3;
    assert_eq!(unsafe { node.kernel.gridDimX }, 3);
}
