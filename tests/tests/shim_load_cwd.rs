//! `Driver::load` never loads a library from the working directory. Alone in its own test
//! binary: it changes the process's working directory.

use cuda_driver_pfn::Driver;
use cuda_sys_gen_tests::fake::{build, Flavour};

const NAMES: [&str; 3] = ["libcuda.so.1", "libcuda.so", "nvcuda.dll"];

#[test]
fn a_libcuda_in_the_working_directory_is_not_loaded() {
    // An empty entry in LD_LIBRARY_PATH means the working directory to the loader: that is
    // the environment asking for it, not the shim.
    let path = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    if !path.is_empty() && path.split(':').any(|p| p.is_empty() || p == ".") {
        eprintln!("LD_LIBRARY_PATH names the working directory; nothing to test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fake = build(Flavour::Full);
    for name in NAMES {
        std::fs::copy(&fake, dir.path().join(name)).unwrap();
    }
    std::env::set_current_dir(dir.path()).unwrap();
    let loaded = Driver::load();
    eprintln!("Driver::load: {:?}", loaded.as_ref().map(|_| "a driver").map_err(|e| e.to_string()));
    // Whatever it found (a real driver, or nothing): none of the copies is in the process.
    // dlopen with RTLD_NOLOAD gives a handle only for a file that is already loaded.
    for name in NAMES {
        let path = std::ffi::CString::new(dir.path().join(name).into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; RTLD_NOLOAD loads nothing.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        assert!(handle.is_null(), "Driver::load loaded {name} from the working directory");
    }
    // The check itself: a copy loaded by its path is seen.
    let probe = dir.path().join(NAMES[0]);
    // SAFETY: the fake library, which runs nothing when loaded.
    let lib = unsafe { libloading::Library::new(&probe) }.unwrap();
    let path = std::ffi::CString::new(probe.into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: as above.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    assert!(!handle.is_null(), "RTLD_NOLOAD does not see a loaded copy: this test checks nothing");
    // SAFETY: the handle from the dlopen above.
    unsafe { libc::dlclose(handle) };
    drop(lib);
    drop(loaded);
}
