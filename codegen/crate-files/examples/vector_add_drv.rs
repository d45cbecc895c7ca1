//! `cargo run --example vector_add_drv --features api`: NVIDIA's vectorAddDrv sample (cuda-samples,
//! `Samples/0_Introduction/vectorAddDrv`), ported: a kernel loaded from PTX, three device
//! buffers, two copies in, one launch, one copy out, and the sums checked on the host.
//! Every call is cuda.h's own name (`api::cuMemAlloc` is the ABI cuda.h means by it) through
//! `cu!`, which turns its `CUresult` into an `Error` that names the function. The context is
//! the device's primary context, as the CUDA runtime's: `cuCtxCreate` means `cuCtxCreate_v4` in
//! cuda.h 13.x, whose `CUctxCreateParams` cuda.h 12.5 to 13.1 documents as needing one of its
//! pointers non-NULL (driver 555 crashes on a NULL one), while cuDevicePrimaryCtxRetain takes
//! no parameters struct and runs on every driver since CUDA 7.0.

use std::ffi::c_void;
use std::process::ExitCode;
use std::ptr::null_mut;

use cuda_driver_pfn::{cu, Error};

/// `c[i] = a[i] + b[i]` for `i < n`, as nvcc would write it for sm_75 and up.
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
    run().map_or_else(|e| (eprintln!("vector_add_drv: {e}"), ExitCode::FAILURE).1, |()| ExitCode::SUCCESS)
}

fn run() -> Result<(), Error> {
    let n = 50_000;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let mut c = vec![0f32; n];
    let bytes = n * size_of::<f32>();
    let (mut dev, mut ctx, mut module, mut kernel) = (0, null_mut(), null_mut(), null_mut());
    let (mut d_a, mut d_b, mut d_c, mut count) = (0, 0, 0, n as u32);
    // SAFETY: each call gets what cuda.h documents for it; the buffers outlive the copies.
    unsafe {
        cu!(cuInit(0))?;
        cu!(cuDeviceGet(&mut dev, 0))?;
        cu!(cuDevicePrimaryCtxRetain(&mut ctx, dev))?;
        cu!(cuCtxSetCurrent(ctx))?;
        cu!(cuModuleLoadData(&mut module, PTX.as_ptr().cast()))?;
        cu!(cuModuleGetFunction(&mut kernel, module, c"vecAdd".as_ptr()))?;
        for d in [&mut d_a, &mut d_b, &mut d_c] {
            cu!(cuMemAlloc(d, bytes))?;
        }
        cu!(cuMemcpyHtoD(d_a, a.as_ptr().cast(), bytes))?;
        cu!(cuMemcpyHtoD(d_b, b.as_ptr().cast(), bytes))?;
        let mut args = [&raw mut d_a as *mut c_void, &raw mut d_b as _, &raw mut d_c as _, &raw mut count as _];
        let blocks = count.div_ceil(256);
        cu!(cuLaunchKernel(kernel, blocks, 1, 1, 256, 1, 1, 0, null_mut(), args.as_mut_ptr(), null_mut()))?;
        cu!(cuMemcpyDtoH(c.as_mut_ptr().cast(), d_c, bytes))?;
        for d in [d_a, d_b, d_c] {
            cu!(cuMemFree(d))?;
        }
        cu!(cuModuleUnload(module))?;
        cu!(cuDevicePrimaryCtxRelease(dev))?;
    }
    let bad = |i: usize| (c[i] - (a[i] + b[i])).abs() > 1e-5 * c[i].abs() || c[i].is_nan();
    let wrong = (0..n).filter(|&i| bad(i)).count();
    println!("vectorAddDrv: {n} sums, {wrong} wrong: {}", if wrong == 0 { "Result = PASS" } else { "Result = FAIL" });
    if wrong > 0 {
        std::process::exit(1);
    }
    Ok(())
}
