//! `cargo run --example vector_add_mmap_drv --features api`: NVIDIA's vectorAddMMAP sample
//! (cuda-samples, `Samples/0_Introduction/vectorAddMMAP`) with stream-ordered allocation, ported
//! line for line from its C original (cuda-sys-gen's `tests/ports/vector_add_mmap_drv.c`): the
//! inputs in memory mapped with the virtual memory management calls (cuMemCreate, cuMemMap,
//! cuMemSetAccess), the output from the device's default pool (cuMemAllocAsync), freed in stream
//! order, and the pool's high-water mark read back (cuMemPoolGetAttribute).

use std::ffi::c_void;
use std::process::ExitCode;
use std::ptr::null_mut;

use cuda_driver_pfn::types::*;
use cuda_driver_pfn::{cu, Error};

/// `c[i] = a[i] + b[i]` for `i < n`.
const PTX: &str = "
.version 7.0
.target sm_75
.address_size 64
.visible .entry vecAdd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{
    .reg .pred p;
    .reg .b32 r<5>;
    .reg .f32 f<4>;
    .reg .b64 rd<11>;
    ld.param.u64 rd1, [a];
    ld.param.u64 rd2, [b];
    ld.param.u64 rd3, [c];
    ld.param.u32 r1, [n];
    mov.u32 r2, %ctaid.x;
    mov.u32 r3, %ntid.x;
    mov.u32 r4, %tid.x;
    mad.lo.s32 r2, r2, r3, r4;
    setp.ge.u32 p, r2, r1;
    @p bra DONE;
    cvta.to.global.u64 rd4, rd1;
    cvta.to.global.u64 rd5, rd2;
    cvta.to.global.u64 rd6, rd3;
    mul.wide.u32 rd7, r2, 4;
    add.s64 rd8, rd4, rd7;
    add.s64 rd9, rd5, rd7;
    add.s64 rd10, rd6, rd7;
    ld.global.f32 f1, [rd8];
    ld.global.f32 f2, [rd9];
    add.f32 f3, f1, f2;
    st.global.f32 [rd10], f3;
DONE:
    ret;
}
\0";

fn main() -> ExitCode {
    // The error's text names the function, the library or the lookup, and says what to do.
    run().map_or_else(|e| (eprintln!("vector_add_mmap_drv: {e}"), ExitCode::FAILURE).1, |()| ExitCode::SUCCESS)
}

/// Reserves an address range of `size` bytes, backs it with memory of `prop` and lets the
/// device read and write it.
unsafe fn alloc_mapped(size: usize, prop: &CUmemAllocationProp) -> Result<CUdeviceptr, Error> {
    let (mut ptr, mut handle) = (0, 0);
    cu!(cuMemAddressReserve(&mut ptr, size, 0, 0, 0))?;
    cu!(cuMemCreate(&mut handle, size, prop, 0))?;
    cu!(cuMemMap(ptr, size, 0, handle, 0))?;
    cu!(cuMemRelease(handle))?;
    let access = CUmemAccessDesc { location: prop.location, flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
    cu!(cuMemSetAccess(ptr, size, &access, 1))?;
    Ok(ptr)
}

fn run() -> Result<(), Error> {
    let mut n = 50_000u32;
    let bytes = n as usize * size_of::<f32>();
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let mut c = vec![0f32; n as usize];
    let (mut dev, mut ctx, mut module, mut kernel, mut stream) = (0, null_mut(), null_mut(), null_mut(), null_mut());
    let (mut pool, mut d_c, mut vmm, mut granularity, mut used_high) = (null_mut(), 0, 0, 0, 0);
    // SAFETY: each call gets what cuda.h documents for it; the host buffers and the arguments
    // outlive the stream's work, which is synchronized before they are read.
    unsafe {
        cu!(cuInit(0))?;
        cu!(cuDeviceGet(&mut dev, 0))?;
        cu!(cuDeviceGetAttribute(&mut vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev))?;
        if vmm == 0 {
            println!("vector_add_mmap_drv: device 0 has no virtual memory management: Result = WAIVED");
            return Ok(());
        }
        cu!(cuDevicePrimaryCtxRetain(&mut ctx, dev))?;
        cu!(cuCtxSetCurrent(ctx))?;
        cu!(cuModuleLoadData(&mut module, PTX.as_ptr().cast()))?;
        cu!(cuModuleGetFunction(&mut kernel, module, c"vecAdd".as_ptr()))?;
        cu!(cuStreamCreate(&mut stream, CU_STREAM_NON_BLOCKING))?;

        let mut prop = CUmemAllocationProp { type_: CU_MEM_ALLOCATION_TYPE_PINNED, ..Default::default() };
        prop.location.type_ = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = dev;
        cu!(cuMemGetAllocationGranularity(&mut granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM))?;
        let size = bytes.div_ceil(granularity) * granularity;
        let mut d_a = alloc_mapped(size, &prop)?;
        let mut d_b = alloc_mapped(size, &prop)?;
        cu!(cuMemAllocAsync(&mut d_c, bytes, stream))?;

        cu!(cuMemcpyHtoDAsync(d_a, a.as_ptr().cast(), bytes, stream))?;
        cu!(cuMemcpyHtoDAsync(d_b, b.as_ptr().cast(), bytes, stream))?;
        let mut args = [&raw mut d_a as *mut c_void, &raw mut d_b as _, &raw mut d_c as _, &raw mut n as _];
        cu!(cuLaunchKernel(kernel, n.div_ceil(256), 1, 1, 256, 1, 1, 0, stream, args.as_mut_ptr(), null_mut()))?;
        cu!(cuMemcpyDtoHAsync(c.as_mut_ptr().cast(), d_c, bytes, stream))?;
        cu!(cuMemFreeAsync(d_c, stream))?;
        cu!(cuStreamSynchronize(stream))?;
        cu!(cuDeviceGetDefaultMemPool(&mut pool, dev))?;
        cu!(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, (&raw mut used_high).cast()))?;

        cu!(cuMemUnmap(d_a, size))?;
        cu!(cuMemUnmap(d_b, size))?;
        cu!(cuMemAddressFree(d_a, size))?;
        cu!(cuMemAddressFree(d_b, size))?;
        cu!(cuStreamDestroy(stream))?;
        cu!(cuModuleUnload(module))?;
        cu!(cuDevicePrimaryCtxRelease(dev))?;
    }
    let bad = |i: usize| (c[i] - (a[i] + b[i])).abs() > 1e-5 * c[i].abs() || c[i].is_nan();
    let wrong = (0..n as usize).filter(|&i| bad(i)).count();
    let ok = wrong == 0 && used_high >= bytes as u64;
    let result = if ok { "PASS" } else { "FAIL" };
    println!("vector_add_mmap_drv: {n} sums, {wrong} wrong, pool high-water mark {used_high} bytes: Result = {result}");
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
