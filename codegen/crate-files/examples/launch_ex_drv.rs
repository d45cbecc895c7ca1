//! `cargo run --example launch_ex_drv --features api`: `cuLaunchKernelEx` with a launch
//! configuration and a launch attribute, ported line for line from its C original
//! (cuda-sys-gen's `tests/ports/launch_ex_drv.c`): the device's UUID (cuDeviceGetUuid), the
//! kernel's attributes (cuFuncGetAttribute), then a launch at the context's greatest stream
//! priority, its result checked on the host.

use std::ffi::c_void;
use std::process::ExitCode;
use std::ptr::null_mut;

use cuda_driver_pfn::types::*;
use cuda_driver_pfn::{cu, Error};

/// `out[i] = i * i` for `i < n`.
const PTX: &str = "
.version 7.0
.target sm_75
.address_size 64
.visible .entry square(.param .u64 out, .param .u32 n)
{
    .reg .pred p;
    .reg .b32 r<6>;
    .reg .b64 rd<4>;
    ld.param.u64 rd1, [out];
    ld.param.u32 r1, [n];
    mov.u32 r2, %ctaid.x;
    mov.u32 r3, %ntid.x;
    mov.u32 r4, %tid.x;
    mad.lo.s32 r2, r2, r3, r4;
    setp.ge.u32 p, r2, r1;
    @p bra DONE;
    cvta.to.global.u64 rd2, rd1;
    mul.wide.u32 rd3, r2, 4;
    add.s64 rd3, rd2, rd3;
    mul.lo.s32 r5, r2, r2;
    st.global.u32 [rd3], r5;
DONE:
    ret;
}
\0";

fn main() -> ExitCode {
    // The error's text names the function, the library or the lookup, and says what to do.
    run().map_or_else(|e| (eprintln!("launch_ex_drv: {e}"), ExitCode::FAILURE).1, |()| ExitCode::SUCCESS)
}

fn run() -> Result<(), Error> {
    let mut n = 50_000u32;
    let bytes = n as usize * size_of::<u32>();
    let mut out = vec![0u32; n as usize];
    let (mut dev, mut ctx, mut module, mut square, mut d_out) = (0, null_mut(), null_mut(), null_mut(), 0);
    let (mut uuid, mut max_threads, mut regs, mut least, mut greatest) = (CUuuid::default(), 0, 0, 0, 0);
    // SAFETY: each call gets what cuda.h documents for it; `out` and the arguments outlive the
    // launch, which is synchronized before `out` is read.
    unsafe {
        cu!(cuInit(0))?;
        cu!(cuDeviceGet(&mut dev, 0))?;
        cu!(cuDeviceGetUuid(&mut uuid, dev))?;
        let hex: Vec<String> = uuid.bytes.iter().map(|b| format!("{:02x}", *b as u8)).collect();
        let [a, b, c, d, e] = [0..4, 4..6, 6..8, 8..10, 10..16].map(|r| hex[r].concat());
        println!("Device 0: GPU-{a}-{b}-{c}-{d}-{e}");
        cu!(cuDevicePrimaryCtxRetain(&mut ctx, dev))?;
        cu!(cuCtxSetCurrent(ctx))?;
        cu!(cuModuleLoadData(&mut module, PTX.as_ptr().cast()))?;
        cu!(cuModuleGetFunction(&mut square, module, c"square".as_ptr()))?;
        cu!(cuFuncGetAttribute(&mut max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, square))?;
        cu!(cuFuncGetAttribute(&mut regs, CU_FUNC_ATTRIBUTE_NUM_REGS, square))?;
        println!("square: at most {max_threads} threads per block, {regs} registers per thread");
        cu!(cuCtxGetStreamPriorityRange(&mut least, &mut greatest))?;
        cu!(cuMemAlloc(&mut d_out, bytes))?;

        let block = max_threads.min(256) as u32;
        let mut attr = CUlaunchAttribute { id: CU_LAUNCH_ATTRIBUTE_PRIORITY, ..Default::default() };
        attr.value.priority = greatest;
        let mut config = CUlaunchConfig { attrs: &mut attr, numAttrs: 1, ..Default::default() };
        (config.gridDimX, config.gridDimY, config.gridDimZ) = (n.div_ceil(block), 1, 1);
        (config.blockDimX, config.blockDimY, config.blockDimZ) = (block, 1, 1);
        let mut args = [&raw mut d_out as *mut c_void, &raw mut n as _];
        cu!(cuLaunchKernelEx(&config, square, args.as_mut_ptr(), null_mut()))?;
        cu!(cuCtxSynchronize())?;
        cu!(cuMemcpyDtoH(out.as_mut_ptr().cast(), d_out, bytes))?;

        cu!(cuMemFree(d_out))?;
        cu!(cuModuleUnload(module))?;
        cu!(cuDevicePrimaryCtxRelease(dev))?;
    }
    let wrong = (0..n).filter(|&i| out[i as usize] != i * i).count();
    println!("launch_ex_drv: {n} squares, {wrong} wrong: Result = {}", if wrong == 0 { "PASS" } else { "FAIL" });
    if wrong > 0 {
        std::process::exit(1);
    }
    Ok(())
}
