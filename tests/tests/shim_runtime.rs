//! The runtime path (feature `runtime`) against the fake, which also exports the runtime's
//! entry point functions: `cudaGetDriverEntryPointByVersion` with the exact version when
//! there is one; otherwise `cudaGetDriverEntryPoint` only where the registry proves the ABI
//! of the runtime's own version is the entry's, and a typed refusal where it does not.

use cuda_driver_pfn::{entries, visit_entries, Entry, EntryVisitor, Error, LibraryKind, Runtime, ENTRIES};
use cuda_sys_gen_tests::fake::{answers, pointer_for, Api, Fake, Flavour, Request};

fn full(flavour: Flavour, runtime_version: u32) -> Fake {
    let fake = cuda_sys_gen_tests::fake_with_every_entry(flavour);
    fake.set_runtime_version(runtime_version);
    fake
}

struct ByVersionEvery<'a> {
    runtime: &'a Runtime,
    fake: &'a Fake,
    visited: usize,
}

impl EntryVisitor for ByVersionEvery<'_> {
    fn visit<E: Entry>(&mut self) {
        self.fake.clear_log();
        let f = self.runtime.get::<E>().unwrap_or_else(|e| panic!("{}: {e}", E::INFO.pfn));
        assert_eq!(std::mem::size_of_val(&f), std::mem::size_of::<usize>());
        // SAFETY: a pointer-sized function pointer, read as its value.
        let p: usize = unsafe { std::mem::transmute_copy(&f) };
        assert_eq!(p, pointer_for(E::INDEX), "{}", E::INFO.pfn);
        let flags = if E::INFO.variant.is_some() { 2 } else { 1 };
        let want =
            Request { symbol: E::INFO.symbol.into(), version: E::VERSION as i32, flags, api: Api::RuntimeByVersion };
        assert_eq!(self.fake.log(), vec![want], "{}", E::INFO.pfn);
        self.visited += 1;
    }
}

#[test]
fn by_version_asks_for_every_entry_at_its_own_version() {
    let fake = full(Flavour::Full, 12050);
    let rt = Runtime::from_path(fake.path()).unwrap();
    assert!(rt.has_by_version());
    assert_eq!(rt.version(), 12050);
    let mut every = ByVersionEvery { runtime: &rt, fake: &fake, visited: 0 };
    visit_entries(&mut every);
    assert_eq!(every.visited, ENTRIES.len());
}

#[test]
fn the_old_entry_point_only_where_the_registry_proves_the_abi() {
    let fake = full(Flavour::OldRuntime, 11030);
    let rt = Runtime::from_path(fake.path()).unwrap();
    assert!(!rt.has_by_version());
    // A runtime of 11.3 picks cuCtxCreate_v3020 (the next ABI is 11040): proven.
    let f = rt.get::<entries::cuCtxCreate_v3020>().unwrap();
    assert_eq!(f as usize, pointer_for(<entries::cuCtxCreate_v3020 as Entry>::INDEX));
    // The per-thread flag picks the per-thread variant of cuMemcpyHtoD (7000 <= 11030).
    let f = rt.get::<entries::cuMemcpyHtoD_v7000_ptds>().unwrap();
    assert_eq!(f as usize, pointer_for(<entries::cuMemcpyHtoD_v7000_ptds as Entry>::INDEX));
    assert_eq!(
        fake.log(),
        vec![
            Request { symbol: "cuCtxCreate".into(), version: 11030, flags: 1, api: Api::RuntimeEntryPoint },
            Request { symbol: "cuMemcpyHtoD".into(), version: 11030, flags: 2, api: Api::RuntimeEntryPoint },
        ]
    );

    // cuCtxCreate_v11040 exists, so 11.3's pick is not the v2000 ABI: refused, not asked.
    fake.clear_log();
    let e = rt.get::<entries::cuCtxCreate_v2000>().unwrap_err();
    let Error::RuntimeAbiMismatch { lookup, runtime_version, picks, .. } = &e else { panic!("{e:?}") };
    assert_eq!(
        (lookup.symbol.as_str(), lookup.version, *runtime_version, *picks),
        ("cuCtxCreate", 2000, 11030, Some(3020))
    );
    let text = e.to_string();
    assert!(
        text.contains("which for `cuCtxCreate` is version 3020, not 2000") && text.contains("Driver::load"),
        "{text}"
    );
    // An ABI newer than the runtime cannot be what it picks.
    let e = rt.get::<entries::cuCtxCreate_v12050>().unwrap_err();
    assert!(matches!(e, Error::RuntimeAbiMismatch { picks: Some(3020), .. }), "{e:?}");
    assert_eq!(fake.log_len(), 0);
}

#[test]
fn a_runtime_newer_than_the_crate_proves_nothing() {
    let fake = full(Flavour::OldRuntime, 99_000);
    let rt = Runtime::from_path(fake.path()).unwrap();
    let e = rt.get::<entries::cuCtxCreate_v12050>().unwrap_err();
    let Error::RuntimeAbiMismatch { picks: None, reason, .. } = &e else { panic!("{e:?}") };
    assert!(reason.contains("newer than CUDA"), "{reason}");
    assert_eq!(fake.log_len(), 0);
}

#[test]
fn runtime_failures_are_typed() {
    let fake = Fake::new(Flavour::Full);
    fake.answer("cuMemAlloc", 0, answers::INVALID_VALUE, answers::UNWRITTEN, 0);
    fake.set_driver_version(12080);
    let rt = Runtime::from_path(fake.path()).unwrap();
    assert_eq!(rt.driver_version(), 12080);
    let e = rt.get::<entries::cuCtxCreate_v3020>().unwrap_err();
    assert!(
        matches!(&e, Error::SymbolNotFound { lookup, driver_version: 12080 } if lookup.via == "cudaGetDriverEntryPointByVersion"),
        "{e:?}"
    );
    assert!(e.to_string().contains("the driver of CUDA 12.8 (12080)"), "{e}");
    let e = rt.get::<entries::cuMemAlloc_v3020>().unwrap_err();
    assert!(matches!(&e, Error::Runtime { code: 1, name: Some(n), .. } if n == "cudaErrorInvalidValue"), "{e:?}");
    assert!(e.to_string().contains("cuMemAlloc") && e.to_string().contains("3020"), "{e}");

    let fake = Fake::new(Flavour::AncientRuntime);
    fake.set_runtime_version(11020);
    let e = Runtime::from_path(fake.path()).unwrap_err();
    assert!(matches!(e, Error::RuntimeTooOld { runtime_version: 11020, .. }), "{e:?}");
    assert!(e.to_string().contains("older than CUDA 11.3"), "{e}");
}

#[test]
fn a_missing_runtime() {
    let e = Runtime::from_path("/no/such/folder/libcudart.so.12").unwrap_err();
    assert!(matches!(&e, Error::LibraryNotFound { library: LibraryKind::Runtime, tried } if tried.len() == 1), "{e:?}");
    assert!(e.to_string().contains("Runtime::from_path"), "{e}");
    match Runtime::load() {
        Err(Error::LibraryNotFound { tried, .. }) if !cfg!(windows) => {
            let names: Vec<&str> = tried.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(&names[..3], ["libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"]);
            let text = Error::LibraryNotFound { library: LibraryKind::Runtime, tried: tried.clone() }.to_string();
            assert!(text.contains("CUDA_HOME") && text.contains("nvidia-cuda-runtime"), "{text}");
        }
        other => eprintln!("a runtime is installed here: {other:?}"),
    }
}

/// `Runtime::load` finds libcudart where toolkits and pip put it: here `$CUDA_HOME/lib64`.
#[test]
#[cfg(target_os = "linux")]
fn the_runtime_is_found_under_cuda_home() {
    if Runtime::load().is_ok() {
        eprintln!("skipped: a runtime is installed on the loader's path, so $CUDA_HOME is never reached");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("lib64")).unwrap();
    let placed = home.path().join("lib64/libcudart.so.12");
    std::fs::copy(cuda_sys_gen_tests::fake::build(Flavour::Full), &placed).unwrap();
    // Configured where it lies: `Runtime::load` opens this same file, so the same copy.
    let fake = Fake::open(&placed);
    fake.reset();
    fake.set_runtime_version(12090);
    // The only test here that sets the environment, and it reads it back at once.
    std::env::set_var("CUDA_HOME", home.path());
    let found = Runtime::load();
    std::env::remove_var("CUDA_HOME");
    let runtime = found.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(runtime.version(), 12090);
    assert!(format!("{runtime:?}").contains(&placed.display().to_string()), "{runtime:?}");
}

/// A request above the driver's version is `DriverTooOld`, as through the driver, not the
/// runtime's generic code.
#[test]
fn a_version_above_the_driver_is_driver_too_old() {
    let fake = full(Flavour::Full, 13050);
    fake.set_driver_version(12000);
    fake.answer("cuCtxCreate", 12050, answers::INVALID_VALUE, 0, 0);
    let runtime = Runtime::from_path(fake.path()).unwrap();
    let e = runtime.get::<entries::cuCtxCreate_v12050>().unwrap_err();
    let Error::DriverTooOld { driver_version, .. } = &e else { panic!("{e:?}") };
    assert_eq!(*driver_version, 12000);
    let text = e.to_string();
    assert!(text.contains("CUDA 12.5") && text.contains("Update the NVIDIA driver"), "{text}");
}

/// What a port from the runtime API meets without a usable driver. Measured (docs/cudart-measurements.md: NVIDIA's libcudart 11.7 to 13.5
/// with the Debian drivers 418 to 555 and none, no GPU): a CUDA 11 runtime's
/// `cudaRuntimeGetVersion` fails with `cudaErrorNoDevice` (100) when a driver of CUDA 11 or later
/// is there, with `cudaErrorInsufficientDriver` (35) when none is, the version unwritten; every
/// runtime's entry point lookup fails with one of the two. The fake answers so; the errors say
/// what the code means and what to do, not "reinstall" and not "a usage error".
#[test]
fn a_runtime_without_a_device_or_driver_says_which() {
    let fake = full(Flavour::OldRuntime, 11080);
    for (code, name, meaning) in [
        (100, "cudaErrorNoDevice (100)", "sees no CUDA device"),
        (35, "cudaErrorInsufficientDriver (35)", "no NVIDIA driver"),
    ] {
        fake.set_runtime_failures(code, code);
        let e = Runtime::from_path(fake.path()).unwrap_err();
        assert!(matches!(&e, Error::RuntimeUnready { code: c, .. } if *c == code), "{e:?}");
        let text = e.to_string();
        assert!(text.contains(name) && text.contains(meaning), "{text}");
        assert!(!text.contains("reinstall") && !text.contains("usage error"), "{text}");
    }
    // A 12.x runtime says its version, and its lookups fail instead.
    let fake = full(Flavour::Full, 12040);
    fake.set_runtime_failures(0, 100);
    let rt = Runtime::from_path(fake.path()).unwrap();
    let e = rt.get::<entries::cuInit_v2000>().unwrap_err();
    assert!(matches!(&e, Error::Runtime { code: 100, .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("cudaErrorNoDevice (100)") && text.contains("Driver::load"), "{text}");
    assert!(!text.contains("usage error"), "{text}");
    // A code nothing was measured for keeps the general reading.
    fake.set_runtime_failures(0, 1);
    let text = rt.get::<entries::cuCtxCreate_v3020>().unwrap_err().to_string();
    assert!(text.contains("usage error"), "{text}");
}
