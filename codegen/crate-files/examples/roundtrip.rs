//! `cargo run --example roundtrip --features newest`: on a machine with an NVIDIA GPU, creates a context with
//! the newest `cuCtxCreate` ABI that both this crate and the driver have, allocates device
//! memory with `cuMemAlloc_v3020`, copies bytes to the device and back with the resolved
//! `cuMemcpyHtoD_v3020` and `cuMemcpyDtoH_v3020`, and checks them.
//!
//! Without a driver or a GPU it prints what is missing and what to do, and exits with 1.

use core::ffi::c_void;
use core::ptr::null_mut;
use std::process::ExitCode;

use cuda_driver_pfn::newest::{CtxCreate, NewestAbi};
use cuda_driver_pfn::pfn::{PFN_cuCtxDestroy_v4000, PFN_cuMemFree_v3020};
use cuda_driver_pfn::types::{CUcontext, CUdevice, CUdeviceptr_v2};
use cuda_driver_pfn::{entries, symbols, Driver};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("roundtrip: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Destroys the context when the example ends, on every path.
struct Context<'a> {
    driver: &'a Driver,
    ctx: CUcontext,
    destroy: PFN_cuCtxDestroy_v4000,
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        // SAFETY: `ctx` was created by cuCtxCreate and is destroyed once.
        if let Err(e) = self.driver.check("cuCtxDestroy", unsafe { (self.destroy)(self.ctx) }) {
            eprintln!("roundtrip: {e}");
        }
    }
}

/// Frees the device memory on every path.
struct Allocation<'a> {
    driver: &'a Driver,
    ptr: CUdeviceptr_v2,
    free: PFN_cuMemFree_v3020,
}

impl Drop for Allocation<'_> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from cuMemAlloc_v2 in the current context and is freed once.
        if let Err(e) = self.driver.check("cuMemFree", unsafe { (self.free)(self.ptr) }) {
            eprintln!("roundtrip: {e}");
        }
    }
}

fn run() -> Result<()> {
    let driver = Driver::load()?;
    let v = driver.version();
    println!(
        "driver: {} (CUDA {}.{}), lookups through {}",
        driver.library(),
        v / 1000,
        v % 1000 / 10,
        driver.query_api().name()
    );

    let init = driver.get::<entries::cuInit_v2000>()?;
    // SAFETY: every call below goes through a pointer fetched for exactly its typedef, with
    // arguments that match the CUDA documentation of that ABI.
    driver.check("cuInit", unsafe { init(0) })?;
    let device_get = driver.get::<entries::cuDeviceGet_v2000>()?;
    let mut dev: CUdevice = 0;
    driver.check("cuDeviceGet", unsafe { device_get(&mut dev, 0) })?;

    // Fetched before the context exists, so that it can always be destroyed.
    let destroy = driver.get::<entries::cuCtxDestroy_v4000>()?;
    let create = driver.newest::<symbols::cuCtxCreate>()?;
    println!("cuCtxCreate: {} (the newest ABI this crate and this driver share)", create.info().pfn);
    let mut ctx: CUcontext = null_mut();
    let r = unsafe {
        match create {
            // NULL parameters: a regular context (cuda.h, cuCtxCreate_v4).
            CtxCreate::V12050(f) => f(&mut ctx, null_mut(), 0, dev),
            // No execution affinity parameters.
            CtxCreate::V11040(f) => f(&mut ctx, null_mut(), 0, 0, dev),
            CtxCreate::V3020(f) => f(&mut ctx, 0, dev),
            CtxCreate::V2000(f) => f(&mut ctx, 0, dev),
            // Every ABI the crate knows is a case: an ABI added in a later version of the
            // crate makes this match fail to compile until it is handled, never a wrong call.
        }
    };
    driver.check("cuCtxCreate", r)?;
    let _context = Context { driver: &driver, ctx, destroy };

    let alloc = driver.get::<entries::cuMemAlloc_v3020>()?;
    let free = driver.get::<entries::cuMemFree_v3020>()?;
    let to_device = driver.get::<entries::cuMemcpyHtoD_v3020>()?;
    let to_host = driver.get::<entries::cuMemcpyDtoH_v3020>()?;

    let sent: Vec<u8> = (0..1usize << 20).map(|i| (i.wrapping_mul(7) ^ (i >> 8)) as u8).collect();
    let mut dptr: CUdeviceptr_v2 = 0;
    driver.check("cuMemAlloc", unsafe { alloc(&mut dptr, sent.len()) })?;
    let memory = Allocation { driver: &driver, ptr: dptr, free };
    driver.check("cuMemcpyHtoD", unsafe { to_device(memory.ptr, sent.as_ptr().cast::<c_void>(), sent.len()) })?;
    let mut back = vec![0u8; sent.len()];
    driver.check("cuMemcpyDtoH", unsafe { to_host(back.as_mut_ptr().cast::<c_void>(), memory.ptr, back.len()) })?;

    if let Some(i) = sent.iter().zip(&back).position(|(a, b)| a != b) {
        return Err(format!("byte {i} came back as {:#04x}, sent {:#04x}", back[i], sent[i]).into());
    }
    println!("{} bytes copied to device memory at {:#x} and back: identical", sent.len(), memory.ptr);
    Ok(())
}
