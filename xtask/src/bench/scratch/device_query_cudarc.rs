//! deviceQueryDrv with cudarc's safe API (its `sys` where the safe API has no call): the
//! comparison for the line counts of a port (`tests/tests/ports.rs` counts both), printing
//! what `examples/device_query_drv.rs` of the generated crate prints.

use cudarc::driver::sys::{self, CUdevice_attribute as Attr};
use cudarc::driver::CudaContext;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut version = 0;
    // SAFETY: cuDriverGetVersion writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version) }.result()?;
    let count = CudaContext::device_count()?;
    println!("CUDA driver version: CUDA {}.{}", version / 1000, version % 1000 / 10);
    println!("Detected {count} CUDA capable device(s)");
    for ordinal in 0..count {
        let ctx = CudaContext::new(ordinal as usize)?;
        println!("\nDevice {ordinal}: \"{}\"", ctx.name()?);
        let (major, minor) = ctx.compute_capability()?;
        println!("  CUDA capability:              {major}.{minor}");
        println!("  Global memory:                {} MiB", ctx.total_mem()? >> 20);
        for (label, a) in [
            ("Multiprocessors", Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            ("Max threads per block", Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
            ("Warp size", Attr::CU_DEVICE_ATTRIBUTE_WARP_SIZE),
            ("Shared memory per block (B)", Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
            ("L2 cache (B)", Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
            ("Clock rate (kHz)", Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
            ("Unified addressing", Attr::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING),
        ] {
            println!("  {:<29} {}", format!("{label}:"), ctx.attribute(a)?);
        }
    }
    println!("Result = PASS");
    Ok(())
}
