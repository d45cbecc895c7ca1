//! The C-name module (`api`) on the fake driver. Its driver is process-wide and
//! found by soname, so each case runs in a child process of this test binary whose
//! `LD_LIBRARY_PATH` names the folder with the fake as `libcuda.so.1` (or an empty one).

#![cfg(target_os = "linux")]

use std::path::Path;

use cuda_driver_pfn::types::{cudaError_enum, CUcontext, CUdevice};
use cuda_driver_pfn::{api, Entry, Error, ENTRIES};
use cuda_sys_gen_tests::fake::{self, Fake, Flavour};
use cuda_sys_gen_tests::text;

const CHILD: &str = "CUDA_SYS_GEN_API_CHILD";

/// Runs `case` of this binary in a child with `LD_LIBRARY_PATH=dir`; returns its output.
fn in_child(case: &str, dir: &Path) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([case, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, dir)
        .env("LD_LIBRARY_PATH", dir)
        .output()
        .unwrap();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{case} failed in its child:\n{all}");
    assert!(all.contains("1 passed"), "{case} did not run in its child:\n{all}");
    all
}

/// The folder of the child's driver, in the child; `None` in the parent.
fn child_dir() -> Option<std::path::PathBuf> {
    std::env::var_os(CHILD).map(Into::into)
}

#[test]
fn c_names_call_the_entry_cuda_h_means_through_one_driver() {
    let Some(dir) = child_dir() else {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(fake::build(Flavour::Full), dir.path().join("libcuda.so.1")).unwrap();
        in_child("c_names_call_the_entry_cuda_h_means_through_one_driver", dir.path());
        return;
    };
    let fake = Fake::open(&dir.join("libcuda.so.1"));
    fake.reset();
    fake.set_driver_version(13050);
    fake.add_abi("cuDriverGetVersion", 2020, false, fake.export("fake_cuDriverGetVersion"));

    let mut version = 0;
    // SAFETY: the fake's cuDriverGetVersion writes one int.
    let r = unsafe { api::cuDriverGetVersion(&mut version) };
    assert_eq!((r, version), (cudaError_enum::CUDA_SUCCESS, 13050));
    // SAFETY: as above.
    let r = unsafe { api::cuDriverGetVersion(&mut version) };
    assert_eq!(r, cudaError_enum::CUDA_SUCCESS);
    let asked: Vec<_> = fake.log().into_iter().filter(|q| q.symbol == "cuDriverGetVersion").collect();
    assert_eq!(asked.len(), 1, "one lookup, then the cached pointer: {asked:?}");
    assert_eq!((asked[0].version, asked[0].flags), (2020, 1));
    assert_eq!(api::error_of("cuDriverGetVersion").map(|e| e.to_string()), None);

    // cuda.h 13.5's cuCtxCreate is cuCtxCreate_v4, the 12050 ABI; the fake lacks it.
    let mut ctx: CUcontext = std::ptr::null_mut();
    // SAFETY: never called: the fake has no cuCtxCreate.
    let r = unsafe { api::cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0 as CUdevice) };
    assert_eq!(r, api::NOT_IN_THIS_DRIVER);
    let asked: Vec<_> = fake.log().into_iter().filter(|q| q.symbol == "cuCtxCreate").collect();
    assert_eq!(asked.iter().map(|q| q.version).collect::<Vec<_>>(), [12050]);
    let err = api::error_of("cuCtxCreate").expect("cuCtxCreate is unavailable");
    assert!(matches!(err, Error::SymbolNotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("cuCtxCreate"), "{err}");

    // The table names what each function calls.
    let of = |c: &str| api::C_NAMES.iter().find(|(n, _)| *n == c).map(|&(_, i)| ENTRIES[i].pfn);
    assert_eq!(of("cuCtxCreate"), Some(<cuda_driver_pfn::entries::cuCtxCreate_v12050 as Entry>::INFO.pfn));
    assert_eq!(of("cuGraphInstantiate"), Some("PFN_cuGraphInstantiateWithFlags_v11040"));
    let memcpy = if cfg!(feature = "per-thread") { "PFN_cuMemcpy_v7000_ptds" } else { "PFN_cuMemcpy_v4000" };
    assert_eq!(of("cuMemcpy"), Some(memcpy));
    assert!(api::C_NAMES.windows(2).all(|w| w[0].0 < w[1].0), "C_NAMES is sorted and has each name once");
    assert_eq!(api::error_of("cuNoSuchName"), None);
}

#[test]
fn without_a_driver_c_names_return_unavailable_and_say_why() {
    let Some(_) = child_dir() else {
        let dir = tempfile::tempdir().unwrap();
        in_child("without_a_driver_c_names_return_unavailable_and_say_why", dir.path());
        return;
    };
    if api::driver().is_ok() {
        eprintln!("a CUDA driver is installed on this machine: nothing to test without one");
        return;
    }
    // SAFETY: nothing is called without a driver.
    assert_eq!(unsafe { api::cuInit(0) }, api::NO_DRIVER);
    assert_eq!(
        api::NO_DRIVER,
        cudaError_enum::CUDA_ERROR_NOT_INITIALIZED,
        "no stub-library code: without a driver, the code cuInit gives"
    );
    let err = api::error_of("cuInit").expect("no driver");
    assert!(matches!(err, Error::LibraryNotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("libcuda.so.1"), "{err}");
}

/// What `cuCtxCreate` meant in each toolkit, as markers for `Driver::get`.
#[test]
fn per_toolkit_c_names_are_markers_of_what_that_cuda_h_meant() {
    use cuda_driver_pfn::aliases;
    assert_eq!(<aliases::cuda_12_9::cuCtxCreate as Entry>::VERSION, 3020);
    assert_eq!(<aliases::cuda_12_9::cuCtxCreate as Entry>::INFO.exported, "cuCtxCreate_v2");
    assert_eq!(<aliases::cuda_13_0::cuCtxCreate as Entry>::VERSION, 12050);
    assert_eq!(<aliases::cuda_13_0::cuCtxCreate as Entry>::INFO.exported, "cuCtxCreate_v4");
    assert_eq!(<aliases::cuda_12_0::cuGraphInstantiate as Entry>::INFO.symbol, "cuGraphInstantiateWithFlags");
    assert_eq!(<aliases::cuda_11_8::cuGraphInstantiate as Entry>::INFO.exported, "cuGraphInstantiate_v2");
}

/// Both stream modes at once: `api::legacy` and `api::ptds` ask for their own
/// entries whatever the crate's features, `cu_legacy!` and `cu_ptds!` check against them, and
/// plain `api` is the one the `per-thread-default-stream` feature picks.
#[test]
fn both_stream_modes_are_there_at_once() {
    let Some(dir) = child_dir() else {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(fake::build(Flavour::Full), dir.path().join("libcuda.so.1")).unwrap();
        in_child("both_stream_modes_are_there_at_once", dir.path());
        return;
    };
    let fake = Fake::open(&dir.join("libcuda.so.1"));
    fake.reset();
    fake.set_driver_version(13050);
    // The fake has no cuMemcpy: each call asks for its entry and says it is not there.
    // SAFETY: nothing is called, the fake lacks the entries.
    unsafe {
        assert_eq!(api::legacy::cuMemcpy(0, 0, 0), api::NOT_IN_THIS_DRIVER);
        assert_eq!(api::ptds::cuMemcpy(0, 0, 0), api::NOT_IN_THIS_DRIVER);
    }
    let asked: Vec<_> =
        fake.log().into_iter().filter(|q| q.symbol == "cuMemcpy").map(|q| (q.version, q.flags)).collect();
    assert_eq!(asked, [(4000, 1), (7000, 2)], "legacy: cuMemcpy at 4000, flag 1; ptds: cuMemcpy_ptds at 7000, flag 2");

    // The macros name the function, and the error is the lookup of their mode's entry.
    // SAFETY: as above.
    let legacy = unsafe { cuda_driver_pfn::cu_legacy!(cuMemcpy(0, 0, 0)) }.unwrap_err();
    let ptds = unsafe { cuda_driver_pfn::cu_ptds!(cuMemcpy(0, 0, 0)) }.unwrap_err();
    assert!(matches!(&legacy, Error::SymbolNotFound { lookup, .. } if lookup.version == 4000), "{legacy:?}");
    assert!(matches!(&ptds, Error::SymbolNotFound { lookup, .. } if lookup.version == 7000), "{ptds:?}");

    // Each mode's table: sorted, one row per name; cuGetProcAddress is an inline wrapper of
    // cuda.h under CUDA_API_PER_THREAD_DEFAULT_STREAM, so ptds has none.
    for table in [api::legacy::C_NAMES, api::ptds::C_NAMES] {
        assert!(table.windows(2).all(|w| w[0].0 < w[1].0), "sorted, each name once");
    }
    let of = |t: &[(&str, usize)], c: &str| t.iter().find(|(n, _)| *n == c).map(|&(_, i)| ENTRIES[i].pfn);
    assert_eq!(of(api::legacy::C_NAMES, "cuMemcpy"), Some("PFN_cuMemcpy_v4000"));
    assert_eq!(of(api::ptds::C_NAMES, "cuMemcpy"), Some("PFN_cuMemcpy_v7000_ptds"));
    assert!(of(api::legacy::C_NAMES, "cuGetProcAddress").is_some());
    assert_eq!(of(api::ptds::C_NAMES, "cuGetProcAddress"), None);
    // A name both modes mean alike is one function, in both tables.
    assert_eq!(of(api::legacy::C_NAMES, "cuInit"), of(api::ptds::C_NAMES, "cuInit"));
    let default = if cfg!(feature = "per-thread") { api::ptds::C_NAMES } else { api::legacy::C_NAMES };
    assert!(std::ptr::eq(api::C_NAMES, default), "api is the mode the feature picks");
}

/// The load error's advice names a way `api` can follow, and
/// `api::use_library` points the process-wide driver at a library before the first call; after
/// it, it is refused and the driver in use stays. The child's loader path is empty: only the
/// named library can be the driver.
#[test]
fn use_library_points_api_at_a_driver_once() {
    let Some(_) = child_dir() else {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(fake::build(Flavour::Full), dir.path().join("fake-driver.so")).unwrap();
        let empty = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["use_library_points_api_at_a_driver_once", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, dir.path())
            .env("LD_LIBRARY_PATH", empty.path())
            .output()
            .unwrap();
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(out.status.success() && all.contains("1 passed"), "{all}");
        return;
    };
    let lib = child_dir().unwrap().join("fake-driver.so");
    // What the advice says when nothing is found names api's way too (where no driver is
    // installed system-wide, which the child cannot hide).
    let advice = Error::LibraryNotFound {
        library: cuda_driver_pfn::error::LibraryKind::Driver,
        tried: vec![cuda_driver_pfn::error::LoadAttempt { name: "libcuda.so.1".into(), message: "not found".into() }],
    }
    .to_string();
    assert!(advice.contains("Driver::from_path") && advice.contains("api::use_library"), "{advice}");

    let fake = Fake::open(&lib);
    fake.reset();
    fake.set_driver_version(12000);
    fake.add_abi("cuDriverGetVersion", 2020, false, fake.export("fake_cuDriverGetVersion"));
    let driver = api::use_library(&lib).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(driver.library(), lib.to_str().unwrap());
    let mut version = 0;
    // SAFETY: the fake's cuDriverGetVersion writes one int.
    let r = unsafe { api::cuDriverGetVersion(&mut version) };
    assert_eq!((r, version), (cudaError_enum::CUDA_SUCCESS, 12000));
    // An ABI newer than the driver returns the code that says so.
    let mut ctx: CUcontext = std::ptr::null_mut();
    // SAFETY: refused before any call.
    let r = unsafe { api::cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0 as CUdevice) };
    assert_eq!(r, cudaError_enum::CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER);
    assert_eq!(r, api::NEEDS_NEWER_DRIVER);
    let e = api::check("cuCtxCreate", r).unwrap_err();
    assert!(matches!(e, Error::DriverTooOld { .. }), "{e:?}");

    let again = api::use_library("/elsewhere/libcuda.so.1").unwrap_err();
    let Error::ApiDriverSet { asked, in_use } = &again else { panic!("{again:?}") };
    assert_eq!((asked.as_str(), in_use.as_deref()), ("/elsewhere/libcuda.so.1", Ok(lib.to_str().unwrap())));
    let said = again.to_string();
    assert!(said.contains("before the first function of api"), "{said}");
    assert_eq!(api::driver().unwrap().library(), lib.to_str().unwrap(), "the driver in use stays");
}
