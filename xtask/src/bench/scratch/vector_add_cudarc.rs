//! vectorAddDrv with cudarc's safe API: the comparison for the line counts of a port
//! (`tests/tests/ports.rs` counts both), written as a cudarc user would, with the same kernel,
//! sizes and check as `examples/vector_add_drv.rs` of the generated crate.

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

/// The same PTX as the generated crate's example.
const PTX: &str = include_str!("vector_add.ptx");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 50_000;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let module = ctx.load_module(Ptx::from_src(PTX))?;
    let kernel = module.load_function("vecAdd")?;
    let d_a = stream.clone_htod(&a)?;
    let d_b = stream.clone_htod(&b)?;
    let mut d_c = stream.alloc_zeros::<f32>(n)?;
    let count = n as u32;
    let mut launch = stream.launch_builder(&kernel);
    launch.arg(&d_a).arg(&d_b).arg(&mut d_c).arg(&count);
    // SAFETY: the kernel takes three f32 buffers of `count` elements and `count`.
    unsafe { launch.launch(LaunchConfig::for_num_elems(count)) }?;
    let c = stream.clone_dtoh(&d_c)?;
    let bad = |i: usize| (c[i] - (a[i] + b[i])).abs() > 1e-5 * c[i].abs() || c[i].is_nan();
    let wrong = (0..n).filter(|&i| bad(i)).count();
    println!("vectorAddDrv: {n} sums, {wrong} wrong: {}", if wrong == 0 { "Result = PASS" } else { "Result = FAIL" });
    if wrong > 0 {
        std::process::exit(1);
    }
    Ok(())
}
