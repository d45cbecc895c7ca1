//! `cargo run --example device_query_drv --features api`: NVIDIA's deviceQueryDrv sample
//! (cuda-samples, `Samples/1_Utilities/deviceQueryDrv`), ported in part: the driver's version,
//! then per device its name, compute capability, memory, multiprocessors and a few limits.

use std::ffi::{c_char, CStr};
use std::process::ExitCode;

use cuda_driver_pfn::types::*;
use cuda_driver_pfn::{cu, CudaVersion, Error};

fn main() -> ExitCode {
    // The error's text names the function, the library or the lookup, and says what to do.
    run().map_or_else(|e| (eprintln!("device_query_drv: {e}"), ExitCode::FAILURE).1, |()| ExitCode::SUCCESS)
}

fn run() -> Result<(), Error> {
    let (mut version, mut count) = (0, 0);
    // SAFETY: each call gets what cuda.h documents for it.
    unsafe {
        cu!(cuInit(0))?;
        cu!(cuDriverGetVersion(&mut version))?;
        cu!(cuDeviceGetCount(&mut count))?;
    }
    println!("CUDA driver version: {}", CudaVersion(version as u32));
    println!("Detected {count} CUDA capable device(s)");
    for ordinal in 0..count {
        let (mut dev, mut name, mut memory) = (0, [0 as c_char; 256], 0);
        // SAFETY: as above; the name buffer holds 256 bytes.
        unsafe {
            cu!(cuDeviceGet(&mut dev, ordinal))?;
            cu!(cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, dev))?;
            cu!(cuDeviceTotalMem(&mut memory, dev))?;
        }
        let attribute = |a: CUdevice_attribute| -> Result<i32, Error> {
            let mut v = 0;
            // SAFETY: as above.
            unsafe { cu!(cuDeviceGetAttribute(&mut v, a, dev)) }.map(|()| v)
        };
        // SAFETY: cuDeviceGetName wrote a NUL-terminated name.
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy();
        println!("\nDevice {ordinal}: \"{name}\"");
        let major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        println!("  CUDA capability:              {major}.{minor}");
        println!("  Global memory:                {} MiB", memory >> 20);
        for (label, a) in [
            ("Multiprocessors", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            ("Max threads per block", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
            ("Warp size", CU_DEVICE_ATTRIBUTE_WARP_SIZE),
            ("Shared memory per block (B)", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
            ("L2 cache (B)", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
            ("Clock rate (kHz)", CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
            ("Unified addressing", CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING),
        ] {
            println!("  {:<29} {}", format!("{label}:"), attribute(a)?);
        }
    }
    println!("Result = PASS");
    Ok(())
}
