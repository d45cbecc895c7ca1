//! `Driver::load` never loads a library from the working directory. Alone in its own test
//! binary: it changes the process's working directory.

use cuda_driver_pfn::{Driver, Error, StreamFlags};
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
    match &loaded {
        Ok(d) => eprintln!("loaded: {d:?}"),
        Err(Error::LibraryNotFound { tried, .. }) => assert!(!tried.is_empty()),
        Err(e) => eprintln!("a driver that failed: {e}"),
    }
    let Ok(driver) = loaded else { return };
    // Something loaded: prove it is none of the copies. Opening a copy by its full path
    // gives the instance already loaded from that file, if there is one; a request through
    // the driver would then show in that copy's log.
    let _ = unsafe { driver.get_raw::<usize>(c"cuProbe", 1000, StreamFlags::LEGACY_STREAM) };
    for name in NAMES {
        // SAFETY: the fake, by path; its log functions with their prototypes.
        let lib = unsafe { libloading::Library::new(dir.path().join(name)) }.unwrap();
        let log_len = unsafe { lib.get::<unsafe extern "C" fn() -> usize>(b"fake_log_len\0") }.unwrap();
        assert_eq!(unsafe { log_len() }, 0, "Driver::load loaded {name} from the working directory");
    }
}
