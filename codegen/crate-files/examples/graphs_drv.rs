//! `cargo run --example graphs_drv --features api`: CUDA graphs with the driver API, ported line
//! for line from its C original (cuda-sys-gen's `tests/ports/graphs_drv.c`): one graph recorded
//! by stream capture (copy in, a kernel, copy out), one built by hand from two kernel nodes, and
//! each one's result checked on the host.

use std::ffi::c_void;
use std::process::ExitCode;
use std::ptr::null_mut;

use cuda_driver_pfn::types::*;
use cuda_driver_pfn::{cu, Error};

/// `x[i] = a * x[i] + b` for `i < n`.
const PTX: &str = "
.version 7.0
.target sm_75
.address_size 64
.visible .entry affine(.param .u64 x, .param .f32 a, .param .f32 b, .param .u32 n)
{
    .reg .pred p;
    .reg .b32 r<5>;
    .reg .f32 f<5>;
    .reg .b64 rd<5>;
    ld.param.u64 rd1, [x];
    ld.param.f32 f1, [a];
    ld.param.f32 f2, [b];
    ld.param.u32 r1, [n];
    mov.u32 r2, %ctaid.x;
    mov.u32 r3, %ntid.x;
    mov.u32 r4, %tid.x;
    mad.lo.s32 r2, r2, r3, r4;
    setp.ge.u32 p, r2, r1;
    @p bra DONE;
    cvta.to.global.u64 rd2, rd1;
    mul.wide.u32 rd3, r2, 4;
    add.s64 rd4, rd2, rd3;
    ld.global.f32 f3, [rd4];
    fma.rn.f32 f4, f3, f1, f2;
    st.global.f32 [rd4], f4;
DONE:
    ret;
}
\0";

fn main() -> ExitCode {
    // The error's text names the function, the library or the lookup, and says what to do.
    run().map_or_else(|e| (eprintln!("graphs_drv: {e}"), ExitCode::FAILURE).1, |()| ExitCode::SUCCESS)
}

fn run() -> Result<(), Error> {
    let mut n = 50_000u32;
    let bytes = n as usize * size_of::<f32>();
    let mut h: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (mut dev, mut ctx, mut module, mut affine, mut d) = (0, null_mut(), null_mut(), null_mut(), 0);
    let (mut stream, mut captured, mut built, mut captured_exec, mut built_exec) =
        (null_mut(), null_mut(), null_mut(), null_mut(), null_mut());
    let (mut first, mut second, mut wrong) = (null_mut(), null_mut(), 0);
    // SAFETY: each call gets what cuda.h documents for it; `h` and the arguments outlive the
    // graphs' launches, which are synchronized before they are read.
    unsafe {
        cu!(cuInit(0))?;
        cu!(cuDeviceGet(&mut dev, 0))?;
        cu!(cuDevicePrimaryCtxRetain(&mut ctx, dev))?;
        cu!(cuCtxSetCurrent(ctx))?;
        cu!(cuModuleLoadData(&mut module, PTX.as_ptr().cast()))?;
        cu!(cuModuleGetFunction(&mut affine, module, c"affine".as_ptr()))?;
        cu!(cuMemAlloc(&mut d, bytes))?;
        cu!(cuStreamCreate(&mut stream, CU_STREAM_NON_BLOCKING))?;
        let blocks = n.div_ceil(256);

        // Captured: copy in, x = 2x + 1, copy out.
        let (mut a, mut b) = (2f32, 1f32);
        let mut args = [&raw mut d as *mut c_void, &raw mut a as _, &raw mut b as _, &raw mut n as _];
        cu!(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL))?;
        cu!(cuMemcpyHtoDAsync(d, h.as_ptr().cast(), bytes, stream))?;
        cu!(cuLaunchKernel(affine, blocks, 1, 1, 256, 1, 1, 0, stream, args.as_mut_ptr(), null_mut()))?;
        cu!(cuMemcpyDtoHAsync(h.as_mut_ptr().cast(), d, bytes, stream))?;
        cu!(cuStreamEndCapture(stream, &mut captured))?;
        cu!(cuGraphInstantiate(&mut captured_exec, captured, 0))?;
        cu!(cuGraphLaunch(captured_exec, stream))?;
        cu!(cuStreamSynchronize(stream))?;
        wrong += (0..n).filter(|&i| h[i as usize] != 2.0 * i as f32 + 1.0).count();

        // Built by hand: x = x - 1, then x = 0.5x: back to i.
        let (mut one, mut minus_one, mut half, mut zero) = (1f32, -1f32, 0.5f32, 0f32);
        let mut sub_args = [&raw mut d as *mut c_void, &raw mut one as _, &raw mut minus_one as _, &raw mut n as _];
        let mut half_args = [&raw mut d as *mut c_void, &raw mut half as _, &raw mut zero as _, &raw mut n as _];
        let mut node = CUDA_KERNEL_NODE_PARAMS { func: affine, ..Default::default() };
        (node.gridDimX, node.gridDimY, node.gridDimZ) = (blocks, 1, 1);
        (node.blockDimX, node.blockDimY, node.blockDimZ) = (256, 1, 1);
        cu!(cuGraphCreate(&mut built, 0))?;
        node.kernelParams = sub_args.as_mut_ptr();
        cu!(cuGraphAddKernelNode(&mut first, built, null_mut(), 0, &node))?;
        node.kernelParams = half_args.as_mut_ptr();
        cu!(cuGraphAddKernelNode(&mut second, built, &first, 1, &node))?;
        cu!(cuGraphInstantiate(&mut built_exec, built, CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))?;
        cu!(cuGraphLaunch(built_exec, stream))?;
        cu!(cuStreamSynchronize(stream))?;
        cu!(cuMemcpyDtoH(h.as_mut_ptr().cast(), d, bytes))?;
        wrong += (0..n).filter(|&i| h[i as usize] != i as f32).count();

        cu!(cuGraphExecDestroy(built_exec))?;
        cu!(cuGraphExecDestroy(captured_exec))?;
        cu!(cuGraphDestroy(built))?;
        cu!(cuGraphDestroy(captured))?;
        cu!(cuStreamDestroy(stream))?;
        cu!(cuMemFree(d))?;
        cu!(cuModuleUnload(module))?;
        cu!(cuDevicePrimaryCtxRelease(dev))?;
    }
    println!("graphs_drv: {n} values, {wrong} wrong: Result = {}", if wrong == 0 { "PASS" } else { "FAIL" });
    if wrong > 0 {
        std::process::exit(1);
    }
    Ok(())
}
