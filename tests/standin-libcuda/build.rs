//! Names the library `libcuda.so.1` in its own header (`DT_SONAME`), as NVIDIA's is: the loader
//! then knows it by that name however it was loaded (`LD_PRELOAD` of its path too), and a
//! program's `dlopen("libcuda.so.1")` finds it, not the real driver it opened.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    }
}
