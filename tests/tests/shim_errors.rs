//! Every failure of loading and lookup comes out as its own typed error, whose text names
//! the symbol and the version and says what to do; the 4-argument fallback of drivers
//! 11.3 to 11.8; a missing library; a driver without cuGetProcAddress.

use cuda_driver_pfn::{entries, Driver, Error, LibraryKind, Lookup, QueryApi, StreamFlags};
use cuda_sys_gen_tests::fake::answers::{INVALID_VALUE, NOT_FOUND, STATUS_SYMBOL_NOT_FOUND, SUCCESS, UNWRITTEN};
use cuda_sys_gen_tests::fake::{Api, Fake, Flavour, Request};

fn driver(fake: &Fake) -> Driver {
    Driver::from_path(fake.path()).unwrap_or_else(|e| panic!("{e}"))
}

/// The checks every lookup error must pass: it carries the request as made, and its text
/// names the symbol and the version and says what to do.
fn check_text(e: &Error, symbol: &str, version: u32, advice: &str) {
    let lookup: &Lookup = e.lookup().unwrap_or_else(|| panic!("no lookup in {e:?}"));
    assert_eq!((lookup.symbol.as_str(), lookup.version), (symbol, version), "{e:?}");
    let text = e.to_string();
    assert!(text.contains(symbol), "the text does not name {symbol}: {text}");
    assert!(text.contains(&version.to_string()), "the text does not name version {version}: {text}");
    assert!(text.contains(advice), "the text does not say `{advice}`: {text}");
}

#[test]
fn symbol_not_found() {
    let fake = Fake::new(Flavour::Full);
    let e = driver(&fake).get::<entries::cuCtxCreate_v12050>().unwrap_err();
    let Error::SymbolNotFound { lookup, driver_version } = &e else { panic!("{e:?}") };
    assert_eq!(lookup.flags, StreamFlags::LEGACY_STREAM);
    assert_eq!(lookup.via, "cuGetProcAddress_v2");
    assert_eq!(*driver_version, 13050);
    // The driver (13.5) is newer than the ABI (12.5), and the entry is for this platform.
    check_text(&e, "cuCtxCreate", 12050, "This driver should have it");
    assert!(e.to_string().contains("since CUDA 2.0") && e.to_string().contains("report it"), "{e}");
}

/// What the registry knows picks the advice: the platform, the symbol's first ABI against
/// the driver's version, and for a name it lacks, a misspelling or a newer name.
#[test]
fn symbol_not_found_says_what_is_true() {
    // A symbol whose first ABI (12.8) is newer than the driver (12.4).
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version(12040);
    fake.answer("cuCheckpointProcessGetRestoreThreadId", 0, NOT_FOUND, STATUS_SYMBOL_NOT_FOUND, 0);
    // The entry is refused before asking; a raw request at the driver's own version is asked.
    let e = driver(&fake).get::<entries::cuCheckpointProcessGetRestoreThreadId_v12080>().unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::DriverTooOld { .. }), "{e:?}");
    assert!(
        text.contains("Update the NVIDIA driver to one for CUDA 12.8 or newer") && text.contains("no ABI of"),
        "{text}"
    );
    let e = unsafe {
        driver(&fake).get_raw::<unsafe extern "C" fn()>(
            c"cuCheckpointProcessGetRestoreThreadId",
            12040,
            StreamFlags::LEGACY_STREAM,
        )
    }
    .unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::SymbolNotFound { .. }), "{e:?}");
    assert!(text.contains("needs a driver of CUDA 12.8 or newer") && text.contains("this one is CUDA 12.4"), "{text}");

    // A Windows-only entry point asked for on Linux.
    #[cfg(target_os = "linux")]
    {
        let e = driver(&fake).get::<cuda_driver_pfn::entries::cuD3D10CtxCreate_v3020>().unwrap_err();
        let text = e.to_string();
        assert!(text.contains("It is not on this platform") && text.contains("Windows driver only"), "{text}");
        assert!(!text.contains("Update the NVIDIA driver"), "{text}");
    }

    // A name the registry lacks, at a version above the driver's: newer, or misspelt.
    fake.answer("cuNoSuchThing", 0, NOT_FOUND, STATUS_SYMBOL_NOT_FOUND, 0);
    let raw =
        unsafe { driver(&fake).get_raw::<unsafe extern "C" fn()>(c"cuNoSuchThing", 13060, StreamFlags::LEGACY_STREAM) };
    let text = raw.unwrap_err().to_string();
    assert!(text.contains("newer than the driver") && text.contains("check the spelling"), "{text}");
    let raw =
        unsafe { driver(&fake).get_raw::<unsafe extern "C" fn()>(c"cuNoSuchThing", 12000, StreamFlags::LEGACY_STREAM) };
    let text = raw.unwrap_err().to_string();
    assert!(text.contains("does not know the name either"), "{text}");
}

/// A library that loads but exports nothing of a CUDA driver (zlib, renamed) is said to be
/// that, not a driver older than 11.3.
#[test]
#[cfg(target_os = "linux")]
fn a_library_that_is_not_a_driver() {
    let Some(libz) = [
        "/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib64/libz.so.1",
        "/lib/aarch64-linux-gnu/libz.so.1",
    ]
    .iter()
    .map(std::path::Path::new)
    .find(|p| p.exists()) else {
        eprintln!("skipped: no libz.so.1 in the usual places to stand in for a library that is not libcuda");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("libcuda.so.1");
    std::fs::copy(libz, &renamed).unwrap();
    let e = Driver::from_path(&renamed).unwrap_err();
    let Error::NotADriver { library } = &e else { panic!("{e:?}") };
    assert_eq!(library, &renamed.display().to_string());
    let text = e.to_string();
    assert!(text.contains("not a CUDA driver") && !text.contains("11.3"), "{text}");
}

#[test]
fn version_not_sufficient_as_a_status() {
    let fake = Fake::new(Flavour::Full);
    fake.add_abi("cuCtxCreate", 12050, false, 0x1);
    let e = driver(&fake).get::<entries::cuCtxCreate_v3020>().unwrap_err();
    let Error::VersionNotSufficient { reported, .. } = &e else { panic!("{e:?}") };
    assert_eq!(*reported, "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT");
    check_text(&e, "cuCtxCreate", 3020, "Ask for a version at or above the one that introduced it");
}

#[test]
fn version_not_sufficient_as_cuda_error_not_found() {
    let fake = Fake::new(Flavour::Full);
    fake.add_abi("cuCtxCreate", 12050, false, 0x1);
    fake.set_not_sufficient_as_not_found(true);
    let e = driver(&fake).get::<entries::cuCtxCreate_v3020>().unwrap_err();
    let Error::VersionNotSufficient { reported, .. } = &e else { panic!("{e:?}") };
    assert_eq!(*reported, "CUDA_ERROR_NOT_FOUND");
    check_text(&e, "cuCtxCreate", 3020, "CUDA_ERROR_NOT_FOUND");
    // Also when the driver leaves the status unwritten.
    let fake = Fake::new(Flavour::Full);
    fake.answer("cuCtxCreate", 0, NOT_FOUND, UNWRITTEN, 0);
    let e = driver(&fake).get::<entries::cuCtxCreate_v3020>().unwrap_err();
    assert!(matches!(e, Error::VersionNotSufficient { reported: "CUDA_ERROR_NOT_FOUND", .. }), "{e:?}");
}

#[test]
fn a_version_newer_than_the_driver() {
    // As NVIDIA's 12.0 driver does: asked for 12050, it would hand out its newest ABI, v11040.
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version(12000);
    fake.add_abi("cuCtxCreate", 3020, false, 0x3020);
    fake.add_abi("cuCtxCreate", 11040, false, 0x11040);
    let d = driver(&fake);
    let e = d.get::<entries::cuCtxCreate_v12050>().unwrap_err();
    let Error::DriverTooOld { driver_version, .. } = &e else { panic!("{e:?}") };
    assert_eq!(*driver_version, 12000);
    check_text(&e, "cuCtxCreate", 12050, "Update the NVIDIA driver to one for CUDA 12.5 or newer");
    // What the driver would have handed out, and what to use instead.
    assert_eq!(e.served_instead().map(|i| i.pfn), Some("PFN_cuCtxCreate_v11040"));
    for words in [
        "`cuCtxCreate_v3`",
        "CUDA 11.4 (11040)",
        "entries::cuCtxCreate_v11040",
        "Driver::newest",
        "aliases::cuda_12_0::cuCtxCreate",
        "undefined behaviour",
    ] {
        assert!(e.to_string().contains(words), "no `{words}` in: {e}");
    }
    // Decided before asking: the driver never saw the request, so it could not answer v11040.
    assert_eq!(fake.log(), vec![]);
    // The same for a raw request, the resolve of a row, and the newest ABI still resolves.
    let raw = unsafe {
        d.get_raw::<cuda_driver_pfn::pfn::PFN_cuCtxCreate_v12050>(c"cuCtxCreate", 12050, StreamFlags::LEGACY_STREAM)
    };
    assert!(matches!(raw, Err(Error::DriverTooOld { .. })), "{:?}", raw.map(|f| f as usize));
    let info = <entries::cuCtxCreate_v12050 as cuda_driver_pfn::Entry>::INFO;
    assert!(matches!(d.resolve(info), Err(Error::DriverTooOld { .. })));
    assert_eq!(fake.log(), vec![]);
    assert_eq!(d.get::<entries::cuCtxCreate_v11040>().unwrap() as usize, 0x11040);
    // A driver of 13.0 or later refuses such a request itself; the text says so.
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version(13000);
    let e = driver(&fake).get::<entries::cuCheckpointOperationComplete_v13040>().map(|_| ()).unwrap_err();
    assert!(e.to_string().contains("would refuse the request"), "{e}");
    assert_eq!(fake.log(), vec![]);
}

#[test]
fn other_results_carry_the_drivers_name_for_them() {
    let fake = Fake::new(Flavour::Full);
    fake.answer("cuMemAlloc", 0, 9999, UNWRITTEN, 0);
    fake.answer("cuMemFree", 0, INVALID_VALUE, UNWRITTEN, 0);
    let d = driver(&fake);
    let e = d.get::<entries::cuMemAlloc_v3020>().unwrap_err();
    // Only the fake's cuGetErrorName knows 9999: the name proves it was asked.
    assert_eq!(
        e,
        Error::Driver { lookup: e.lookup().unwrap().clone(), code: 9999, name: Some("CUDA_ERROR_FAKE_9999".into()) }
    );
    check_text(&e, "cuMemAlloc", 3020, "check the flags and the version");
    assert!(e.to_string().contains("CUDA_ERROR_FAKE_9999 (9999)"), "{e}");
    let e = d.get::<entries::cuMemFree_v3020>().unwrap_err();
    assert!(matches!(&e, Error::Driver { code: 1, name: Some(n), .. } if n == "CUDA_ERROR_INVALID_VALUE"), "{e:?}");
    // An unknown flag is a usage error the driver reports.
    let e = unsafe { d.get_raw::<usize>(c"cuMemAlloc2", 3020, StreamFlags(8)) }.unwrap_err();
    assert!(matches!(&e, Error::Driver { code: 1, .. }), "{e:?}");
    assert!(e.to_string().contains("flags 0x8"), "{e}");
}

#[test]
fn without_cu_get_error_name_the_crate_names_the_code() {
    let fake = Fake::new(Flavour::Bare);
    fake.add_abi("cuDriverGetVersion", 2020, false, fake.export("fake_cuDriverGetVersion"));
    fake.answer("cuMemAlloc", 0, 801, UNWRITTEN, 0);
    fake.answer("cuMemFree", 0, 9999, UNWRITTEN, 0);
    let d = driver(&fake);
    let e = d.get::<entries::cuMemAlloc_v3020>().unwrap_err();
    // From the table of the newest toolkit's cuda.h.
    assert!(matches!(&e, Error::Driver { code: 801, name: Some(n), .. } if n == "CUDA_ERROR_NOT_SUPPORTED"), "{e:?}");
    let e = d.get::<entries::cuMemFree_v3020>().unwrap_err();
    assert!(matches!(&e, Error::Driver { code: 9999, name: None, .. }), "{e:?}");
    assert!(e.to_string().contains("error 9999"), "{e}");
    assert_eq!(d.error_name(0).as_deref(), Some("CUDA_SUCCESS"));
    assert_eq!(d.error_name(100).as_deref(), Some("CUDA_ERROR_NO_DEVICE"));
}

#[test]
fn null_with_success() {
    let fake = Fake::new(Flavour::Full);
    fake.answer("cuMemAlloc", 3020, SUCCESS, 0, 0);
    let e = driver(&fake).get::<entries::cuMemAlloc_v3020>().unwrap_err();
    assert!(matches!(e, Error::NullPointer { .. }), "{e:?}");
    check_text(&e, "cuMemAlloc", 3020, "Treat the function as unavailable");
}

#[test]
fn an_unknown_status_is_not_used() {
    let fake = Fake::new(Flavour::Full);
    fake.answer("cuMemAlloc", 3020, SUCCESS, 7, 0x1234);
    let e = driver(&fake).get::<entries::cuMemAlloc_v3020>().unwrap_err();
    assert!(matches!(e, Error::UnknownStatus { status: 7, .. }), "{e:?}");
    check_text(&e, "cuMemAlloc", 3020, "regenerate or update");
}

#[test]
fn the_status_is_more_specific_than_the_result() {
    let fake = Fake::new(Flavour::Full);
    fake.answer("cuMemAlloc", 3020, INVALID_VALUE, 1, 0);
    let e = driver(&fake).get::<entries::cuMemAlloc_v3020>().unwrap_err();
    assert!(matches!(e, Error::SymbolNotFound { .. }), "{e:?}");
    // Success with a pointer and no status written: the pointer is good.
    let fake = Fake::new(Flavour::Full);
    fake.answer("cuMemAlloc", 3020, SUCCESS, UNWRITTEN, 0x5000);
    let f = driver(&fake).get::<entries::cuMemAlloc_v3020>().unwrap();
    assert_eq!(f as usize, 0x5000);
}

#[test]
fn the_four_argument_fallback() {
    let fake = Fake::new(Flavour::V1Only);
    fake.set_driver_version(11080);
    fake.add_abi("cuMemAlloc", 3020, false, 0x3020);
    fake.add_abi("cuMemcpyHtoD", 3020, false, 0x3021);
    fake.add_abi("cuMemcpyHtoD", 7000, true, 0x7000);
    fake.add_abi("cuCtxCreate", 11040, false, 0x11040);
    let d = driver(&fake);
    assert_eq!(d.query_api(), QueryApi::GetProcAddress);
    assert_eq!(d.version(), 11080);
    assert_eq!(d.get::<entries::cuMemAlloc_v3020>().unwrap() as usize, 0x3020);
    assert_eq!(d.get::<entries::cuMemcpyHtoD_v3020>().unwrap() as usize, 0x3021);
    assert_eq!(d.get::<entries::cuMemcpyHtoD_v7000_ptds>().unwrap() as usize, 0x7000);
    assert_eq!(
        fake.log(),
        vec![
            Request { symbol: "cuMemAlloc".into(), version: 3020, flags: 1, api: Api::V1 },
            Request { symbol: "cuMemcpyHtoD".into(), version: 3020, flags: 1, api: Api::V1 },
            Request { symbol: "cuMemcpyHtoD".into(), version: 7000, flags: 2, api: Api::V1 },
        ]
    );
    // No status: an unknown name and a version below the first ABI look the same.
    for e in [
        d.get::<entries::cuMemFree_v3020>().map(|_| ()).unwrap_err(),
        d.get::<entries::cuCtxCreate_v3020>().map(|_| ()).unwrap_err(),
    ] {
        assert!(matches!(e, Error::NotFound { driver_version: 11080, .. }), "{e:?}");
        let text = e.to_string();
        // The registry has both at 3020, so the driver lacks the name: no "one of two".
        assert!(
            text.contains("11.3 to 11.8") && text.contains("It does not know") && !text.contains("one of two"),
            "{text}"
        );
    }
    check_text(&d.get::<entries::cuCtxCreate_v3020>().unwrap_err(), "cuCtxCreate", 3020, "This driver should have it");
    // A Windows-only entry is said to be one, not "update the driver".
    let e = d.get::<entries::cuD3D11GetDevice_v3000>().unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e:?}");
    check_text(&e, "cuD3D11GetDevice", 3000, "It is not on this platform");
    assert!(!e.to_string().contains("Update the NVIDIA driver"), "{e}");
    // A raw request below a symbol's first ABI says so.
    let e = unsafe {
        d.get_raw::<cuda_driver_pfn::pfn::PFN_cuCtxCreate_v3020>(c"cuCtxCreate", 1000, StreamFlags::LEGACY_STREAM)
    }
    .map(|_| ())
    .unwrap_err();
    check_text(&e, "cuCtxCreate", 1000, "its first is from CUDA 2.0");
    // Newer than the driver, and NULL with success, as with the 5-argument form.
    let e = d.get::<entries::cuCtxCreate_v12050>().unwrap_err();
    assert!(matches!(e, Error::DriverTooOld { .. }), "{e:?}");
    fake.answer("cuMemGetInfo", 0, SUCCESS, UNWRITTEN, 0);
    let e = d.get::<entries::cuMemGetInfo_v3020>().unwrap_err();
    assert!(matches!(e, Error::NullPointer { .. }), "{e:?}");
    assert_eq!(e.lookup().unwrap().via, "cuGetProcAddress");
}

/// Refusing a per-thread entry, the alias suggested is the per-thread one, which
/// `aliases` gives only with the `per-thread-default-stream` feature: the text says so (as
/// NVIDIA's 535, CUDA 12.2, refusing `cuStreamGetCaptureInfo_v12030_ptsz`).
#[test]
fn a_per_thread_entry_s_alias_names_its_feature() {
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version(12020);
    let d = driver(&fake);
    let e = d.get::<entries::cuStreamGetCaptureInfo_v12030_ptsz>().map(|_| ()).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::DriverTooOld { .. }), "{e:?}");
    assert!(
        text.contains("under CUDA_API_PER_THREAD_DEFAULT_STREAM (`aliases::cuda_12_2::cuStreamGetCaptureInfo`, features `aliases` and `per-thread-default-stream`)"),
        "{text}"
    );
    // The default-stream entry's suggestion needs no such feature.
    let e = d.get::<entries::cuStreamGetCaptureInfo_v12030>().map(|_| ()).unwrap_err();
    assert!(e.to_string().contains("(`aliases::cuda_12_2::cuStreamGetCaptureInfo`, feature `aliases`)"), "{e}");
}

/// Drivers older than CUDA 11.3 have no cuGetProcAddress: each entry is the library's export
/// of the entry's name, as NVIDIA's 418, 450 and 460 serve them (tests/tests/real_drivers.rs).
#[test]
fn a_driver_without_cu_get_proc_address() {
    let fake = Fake::new(Flavour::NoProcAddress);
    fake.set_driver_version(11020);
    let d = driver(&fake);
    assert_eq!(d.query_api(), QueryApi::Exports);
    assert_eq!(d.version(), 11020);
    let export = |name: &str| {
        // SAFETY: the fake, already loaded; only addresses are compared.
        let lib = unsafe { libloading::Library::new(fake.path()) }.unwrap();
        let p = unsafe { lib.get::<*mut std::ffi::c_void>(name.as_bytes()) }.unwrap();
        *p as usize
    };
    assert_eq!(d.get::<entries::cuMemAlloc_v2000>().unwrap() as usize, export("cuMemAlloc"));
    assert_eq!(d.get::<entries::cuMemAlloc_v3020>().unwrap() as usize, export("cuMemAlloc_v2"));
    assert_eq!(d.get::<entries::cuMemcpy_v7000_ptds>().unwrap() as usize, export("cuMemcpy_ptds"));
    assert_eq!(
        d.get::<entries::cuStreamBeginCapture_v10010_ptsz>().unwrap() as usize,
        export("cuStreamBeginCapture_v2_ptsz")
    );
    // Nothing went through a lookup function.
    assert_eq!(fake.log(), vec![]);
    // Newer than the driver: refused, although the library exports cuCtxCreate_v4.
    let e = d.get::<entries::cuCtxCreate_v12050>().map(|_| ()).unwrap_err();
    assert!(matches!(e, Error::DriverTooOld { driver_version: 11020, .. }), "{e:?}");
    // Said as what happened here, with no request that takes a version or a flag,
    // and no answer "with success" that such a driver never gives.
    let text = e.to_string();
    check_text(&e, "cuCtxCreate", 12050, "This driver has no cuGetProcAddress");
    assert!(text.contains("`cuCtxCreate_v4` (`cuCtxCreate`, version 12050) among the driver's exports"), "{text}");
    assert!(!text.contains("dlsym(") && !text.contains("with success"), "{text}");
    // Not exported.
    let e = d.get::<entries::cuMemFree_v3020>().map(|_| ()).unwrap_err();
    let Error::NotExported { lookup, driver_version } = &e else { panic!("{e:?}") };
    assert_eq!((lookup.via, *driver_version), ("dlsym", 11020));
    check_text(&e, "cuMemFree", 3020, "does not export `cuMemFree_v2`");
    // A raw request for a name the registry lacks cannot be made without cuGetProcAddress.
    let e = unsafe {
        d.get_raw::<cuda_driver_pfn::pfn::PFN_cuMemAlloc_v3020>(c"cuNoSuchThing", 3020, StreamFlags::LEGACY_STREAM)
    }
    .map(|_| ())
    .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }) && e.to_string().contains("older than CUDA 11.3"), "{e}");
}

/// A library with neither a lookup function nor cuDriverGetVersion cannot be served.
#[test]
fn a_library_without_cu_get_proc_address_or_a_version() {
    let fake = Fake::new(Flavour::NoProcAddressBare);
    let e = Driver::from_path(fake.path()).unwrap_err();
    let Error::NoGetProcAddress { library, driver_version } = &e else { panic!("{e:?}") };
    assert_eq!(library, &fake.path().display().to_string());
    assert_eq!(*driver_version, None);
    let text = e.to_string();
    assert!(text.contains("older than CUDA 11.3") && text.contains("Update the NVIDIA driver"), "{text}");
}

#[test]
fn a_missing_library() {
    let missing = std::env::temp_dir().join("no-such-folder-cuda-sys-gen").join("libcuda.so.1");
    let e = Driver::from_path(&missing).unwrap_err();
    let Error::LibraryNotFound { library, tried } = &e else { panic!("{e:?}") };
    assert_eq!(*library, LibraryKind::Driver);
    assert_eq!(tried.len(), 1);
    assert_eq!(tried[0].name, missing.display().to_string());
    assert!(!tried[0].message.is_empty());
    let text = e.to_string();
    // The path was given: the advice is about that file, not "pass the path to from_path".
    assert!(text.contains(&missing.display().to_string()) && text.contains("Check the path"), "{text}");
    assert!(!text.contains("pass the library's path to Driver::from_path"), "{text}");

    // A file that is no library at all.
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("libcuda.so.1");
    std::fs::write(&bogus, "not an ELF file").unwrap();
    let e = Driver::from_path(&bogus).map(|_| ()).unwrap_err();
    assert!(matches!(e, Error::LibraryNotFound { .. }), "{e:?}");
    assert!(e.to_string().contains("a text file, a 32-bit or a truncated library"), "{e}");
    // No path at all names nothing, and says so.
    let e = Driver::from_path("").map(|_| ()).unwrap_err();
    assert!(e.to_string().contains("an empty path (no file was named)"), "{e}");
}

#[test]
fn loading_by_name_tries_the_sonames_in_order() {
    match Driver::load() {
        Err(Error::LibraryNotFound { library, tried }) => {
            assert_eq!(library, LibraryKind::Driver);
            let names: Vec<&str> = tried.iter().map(|t| t.name.as_str()).collect();
            if cfg!(windows) {
                assert_eq!(names, ["nvcuda.dll"]);
            } else {
                assert_eq!(names, ["libcuda.so.1", "libcuda.so"]);
            }
        }
        // A machine with a driver: nothing to check here (tests/tests/gpu_machine.rs).
        Ok(d) => eprintln!("a real driver is installed: {d:?}"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn an_unreadable_driver_version() {
    let fake = Fake::new(Flavour::Full);
    fake.set_version_result(3);
    let e = Driver::from_path(fake.path()).unwrap_err();
    assert!(matches!(&e, Error::VersionUnreadable { .. }), "{e:?}");
    assert!(e.to_string().contains("CUDA_ERROR_NOT_INITIALIZED (3)"), "{e}");

    fake.set_version_result(0);
    fake.set_driver_version(0);
    let e = Driver::from_path(fake.path()).unwrap_err();
    assert!(e.to_string().contains("returned the version 0"), "{e}");

    // Neither exported nor known to cuGetProcAddress.
    let fake = Fake::new(Flavour::Bare);
    let e = Driver::from_path(fake.path()).unwrap_err();
    let Error::VersionUnreadable { detail, .. } = &e else { panic!("{e:?}") };
    assert!(detail.contains("does not export cuDriverGetVersion") && detail.contains("SymbolNotFound"), "{detail}");
}

#[test]
fn errors_are_std_errors() {
    fn check<E: std::error::Error + Send + Sync + 'static>() {}
    check::<Error>();
}

/// Every combination of a result, a status and a pointer a faulty driver could answer with:
/// a pointer comes back only for success with a success (or unwritten) status and a non-NULL
/// value; everything else is the one typed error the mapping names, never a panic, and never
/// cached.
#[test]
fn every_answer_a_faulty_driver_could_give() {
    let results = [SUCCESS, INVALID_VALUE, 2, 3, 100, 201, NOT_FOUND, 999, 9999, u32::MAX];
    let statuses = [UNWRITTEN, 0, 1, 2, 3, 7, -2, i32::MAX, i32::MIN];
    let pointers = [0usize, 0x1234];
    let fake = Fake::new(Flavour::Full);
    let mut cases = 0;
    for &result in &results {
        for &status in &statuses {
            for &ptr in &pointers {
                fake.reset();
                fake.answer("cuMemAlloc", 3020, result, status, ptr);
                let d = driver(&fake);
                let got = d.get::<entries::cuMemAlloc_v3020>().map(|f| f as usize);
                let case = format!("result {result}, status {status}, pointer {ptr:#x}: {got:?}");
                // The status is the more specific report; then the result; then the pointer.
                match (status, result) {
                    (1, _) => assert!(matches!(got, Err(Error::SymbolNotFound { .. })), "{case}"),
                    (2, _) => assert!(matches!(got, Err(Error::VersionNotSufficient { .. })), "{case}"),
                    (_, NOT_FOUND) => assert!(matches!(got, Err(Error::VersionNotSufficient { .. })), "{case}"),
                    (_, SUCCESS) if status != 0 && status != UNWRITTEN => {
                        assert!(
                            matches!(&got, Err(Error::UnknownStatus { status: s, .. }) if *s == status as u32),
                            "{case}"
                        )
                    }
                    (_, SUCCESS) if ptr == 0 => assert!(matches!(got, Err(Error::NullPointer { .. })), "{case}"),
                    (_, SUCCESS) => assert_eq!(got.as_ref().ok(), Some(&ptr), "{case}"),
                    // A version at or below the driver's: INVALID_VALUE is an ordinary failure.
                    (_, code) => assert!(matches!(&got, Err(Error::Driver { code: c, .. }) if *c == code), "{case}"),
                }
                if let Err(e) = &got {
                    check_text(e, "cuMemAlloc", 3020, "");
                    // Not cached: the next call asks again.
                    let before = fake.log_len();
                    let _ = d.get::<entries::cuMemAlloc_v3020>();
                    assert_eq!(fake.log_len(), before + 1, "{case}: a failure was cached");
                }
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 180);
}

/// Driver versions no driver reports: 0 and negative ones are refused at load, with the
/// value in the text; anything positive is taken as it is.
#[test]
fn driver_versions_out_of_range() {
    for v in [0, -1, -13000, i32::MIN] {
        let fake = Fake::new(Flavour::Full);
        fake.set_driver_version_raw(v);
        let e = Driver::from_path(fake.path()).unwrap_err();
        assert!(matches!(&e, Error::VersionUnreadable { .. }), "{v}: {e:?}");
        assert!(e.to_string().contains(&format!("returned the version {v}")), "{e}");
    }
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version_raw(i32::MAX);
    assert_eq!(driver(&fake).version(), i32::MAX as u32);
}

/// What `DriverTooOld` says the driver would have handed out (and offers instead) is the
/// answer rule's, for every entry, flag and older driver: the error text cannot name another
/// ABI than the rule does.
#[test]
fn driver_too_old_names_the_abi_the_rule_answers() {
    use cuda_driver_pfn::answer::{driver_answer, FIRST_REFUSING_DRIVER};
    use cuda_driver_pfn::ENTRIES;
    let mut named = 0;
    for e in ENTRIES.iter().filter(|e| e.platforms.here()) {
        for driver in [e.version.saturating_sub(10), 11040, 12000, 12040] {
            if driver == 0 || driver >= e.version {
                continue;
            }
            let lookup =
                Lookup { symbol: e.symbol.to_owned(), version: e.version, flags: e.flags, via: "cuGetProcAddress_v2" };
            let err = Error::DriverTooOld { lookup, driver_version: driver };
            // A driver before 13.0 answers the request itself with it; a later one refuses the
            // request, and has it at its own version.
            let asked = if driver < FIRST_REFUSING_DRIVER { e.version } else { driver };
            let rule = driver_answer(e.symbol.as_bytes(), asked as i32, e.flags.0, driver).entry();
            assert_eq!(err.served_instead().map(|x| x.pfn), rule.map(|x| x.pfn), "{} on {driver}", e.pfn);
            if let Some(r) = rule {
                let marker = format!("`entries::{}`", r.pfn.trim_start_matches("PFN_"));
                assert!(err.to_string().contains(&marker), "{err}");
                named += 1;
            }
        }
    }
    assert!(named > 100, "only {named} errors named an ABI");
}
