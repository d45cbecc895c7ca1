//! `Driver::newest`: for every symbol and several driver versions it returns the highest ABI
//! at or below the driver's version, asking only for versions the crate has a type for; it
//! steps down on "version not sufficient" and "not found", and stops on anything else.

use cuda_driver_pfn::newest::{CtxCreate, MemcpyHtoD};
use cuda_driver_pfn::{
    entries, symbols, visit_symbols, DefaultStream, Driver, EntryInfo, Error, NewestAbi, Symbol, SymbolVisitor, ENTRIES,
};
use cuda_sys_gen_tests::fake::answers::{
    INVALID_VALUE, NOT_FOUND, STATUS_SYMBOL_NOT_FOUND, STATUS_VERSION_NOT_SUFFICIENT, UNWRITTEN,
};
use cuda_sys_gen_tests::fake::{pointer_for, Api, Fake, Flavour, Request};

fn index_of(info: &EntryInfo) -> usize {
    ENTRIES.iter().position(|e| std::ptr::eq(e, info)).unwrap()
}

/// The order `newest` must try a symbol's ABIs in, computed here from the table alone.
/// Legacy: the default ABIs, highest first. Per-thread: grouped by the default ABI each
/// belongs to (a per-thread variant belongs to the highest default at or below it), highest
/// group first, and in a group the per-thread variants (highest first) before the default.
fn expected_order(symbol: &str, per_thread: bool) -> Vec<&'static EntryInfo> {
    let all: Vec<&'static EntryInfo> = ENTRIES.iter().filter(|e| e.symbol == symbol).collect();
    let group = |e: &EntryInfo| -> u32 {
        if e.variant.is_none() {
            e.version
        } else {
            all.iter().filter(|d| d.variant.is_none() && d.version <= e.version).map(|d| d.version).max().unwrap_or(0)
        }
    };
    let mut order: Vec<&'static EntryInfo> =
        all.iter().copied().filter(|e| per_thread || e.variant.is_none()).collect();
    order.sort_by_key(|e| std::cmp::Reverse((group(e), e.variant.is_some(), e.version, e.variant)));
    order
}

struct NewestEvery<'a> {
    driver: &'a Driver,
    fake: &'a Fake,
    stream: DefaultStream,
    found: usize,
    none: usize,
}

impl SymbolVisitor for NewestEvery<'_> {
    fn visit<S: Symbol>(&mut self) {
        let per_thread = self.stream == DefaultStream::PerThread;
        let order = expected_order(S::NAME, per_thread);
        let generated: Vec<&str> = S::order(self.stream).map(|info| info.pfn).collect();
        assert_eq!(generated, order.iter().map(|e| e.pfn).collect::<Vec<_>>(), "{}: the order to try", S::NAME);
        let dv = self.driver.version();
        self.fake.clear_log();
        let got = self.driver.newest_with::<S>(self.stream);
        let log = self.fake.log();
        match order.iter().find(|e| e.version <= dv) {
            Some(want) => {
                let abi = got.unwrap_or_else(|e| panic!("{} at driver {dv}: {e}", S::NAME));
                assert_eq!(abi.info().pfn, want.pfn, "{} at driver {dv}", S::NAME);
                assert_eq!(abi.as_ptr() as usize, pointer_for(index_of(want)), "{}", S::NAME);
                // Nothing higher was asked for: each ABI above `want` is newer than the
                // driver and skipped, and the fake has `want` itself.
                let flags = if want.variant.is_some() { 2 } else { 1 };
                let request = Request { symbol: S::NAME.to_owned(), version: want.version as i32, flags, api: Api::V2 };
                assert_eq!(log, vec![request], "{} at driver {dv}", S::NAME);
                self.found += 1;
            }
            None => {
                let Err(Error::NoKnownAbi { symbol, known, tried, last, .. }) = got else {
                    panic!("{} at driver {dv}: {:?}", S::NAME, got.map(|a| a.info().pfn))
                };
                assert_eq!(symbol, S::NAME);
                assert_eq!(known, order.iter().map(|e| e.version).collect::<Vec<_>>());
                assert!(tried.is_empty() && last.is_none());
                assert!(log.is_empty(), "{}: asked for a version newer than the driver: {log:?}", S::NAME);
                self.none += 1;
            }
        }
    }
}

#[test]
fn every_symbol_at_several_driver_versions() {
    let fake = Fake::new(Flavour::Full);
    for (i, e) in ENTRIES.iter().enumerate() {
        fake.add_abi(e.symbol, e.version, e.variant.is_some(), pointer_for(i));
    }
    for dv in [11030, 11040, 11080, 12000, 12050, 12090, 13000, 13050] {
        fake.set_driver_version(dv);
        for stream in [DefaultStream::Legacy, DefaultStream::PerThread] {
            // A fresh driver per pass: each pass must see its own requests, not the cache.
            let driver = Driver::from_path(fake.path()).unwrap();
            let mut v = NewestEvery { driver: &driver, fake: &fake, stream, found: 0, none: 0 };
            visit_symbols(&mut v);
            assert_eq!(
                v.found + v.none,
                ENTRIES.iter().map(|e| e.symbol).collect::<std::collections::BTreeSet<_>>().len()
            );
            if dv == 13050 {
                assert_eq!(v.none, 0);
            }
        }
    }
}

#[test]
fn cu_ctx_create_picks_by_driver_version() {
    let fake = Fake::new(Flavour::Full);
    for (v, p) in [(2000, 0x2000), (3020, 0x3020), (11040, 0x11040), (12050, 0x12050)] {
        fake.add_abi("cuCtxCreate", v, false, p);
    }
    for (dv, want) in [(11030, 0x3020), (11040, 0x11040), (12040, 0x11040), (12050, 0x12050), (13050, 0x12050)] {
        fake.set_driver_version(dv);
        let d = Driver::from_path(fake.path()).unwrap();
        let abi = d.newest::<symbols::cuCtxCreate>().unwrap();
        // Debug names the typedef and the pointer.
        assert_eq!(format!("{abi:?}"), format!("{}({:#x})", abi.info().pfn, want), "driver {dv}");
        let got = match abi {
            CtxCreate::V12050(f) => f as usize,
            CtxCreate::V11040(f) => f as usize,
            CtxCreate::V3020(f) => f as usize,
            CtxCreate::V2000(f) => f as usize,
        };
        assert_eq!(got, want, "driver {dv}");
    }
}

fn requested_versions(fake: &Fake) -> Vec<i32> {
    fake.log().iter().map(|r| r.version).collect()
}

#[test]
fn steps_down_on_not_sufficient_and_not_found() {
    let fake = Fake::new(Flavour::Full);
    fake.add_abi("cuCtxCreate", 3020, false, 0x3020);
    fake.answer("cuCtxCreate", 12050, 0, STATUS_VERSION_NOT_SUFFICIENT, 0);
    fake.answer("cuCtxCreate", 11040, NOT_FOUND, UNWRITTEN, 0);
    let d = Driver::from_path(fake.path()).unwrap();
    let abi = d.newest::<symbols::cuCtxCreate>().unwrap();
    assert!(matches!(abi, CtxCreate::V3020(f) if f as usize == 0x3020), "{abi:?}");
    assert_eq!(requested_versions(&fake), [12050, 11040, 3020]);

    // The 4-argument driver's NOT_FOUND steps down too.
    let fake = Fake::new(Flavour::V1Only);
    fake.set_driver_version(11080);
    fake.add_abi("cuCtxCreate", 3020, false, 0x3020);
    fake.answer("cuCtxCreate", 11040, NOT_FOUND, UNWRITTEN, 0);
    let d = Driver::from_path(fake.path()).unwrap();
    assert!(matches!(d.newest::<symbols::cuCtxCreate>().unwrap(), CtxCreate::V3020(_)));
    assert_eq!(requested_versions(&fake), [11040, 3020]);
}

#[test]
fn stops_on_anything_else() {
    // The driver does not know the name: no older version can help.
    let fake = Fake::new(Flavour::Full);
    fake.answer("cuCtxCreate", 0, 0, STATUS_SYMBOL_NOT_FOUND, 0);
    let e = Driver::from_path(fake.path()).unwrap().newest::<symbols::cuCtxCreate>().unwrap_err();
    assert!(matches!(&e, Error::SymbolNotFound { lookup, .. } if lookup.version == 12050), "{e:?}");
    assert_eq!(requested_versions(&fake), [12050]);

    let fake = Fake::new(Flavour::Full);
    fake.add_abi("cuCtxCreate", 3020, false, 0x3020);
    fake.answer("cuCtxCreate", 12050, INVALID_VALUE, UNWRITTEN, 0);
    let e = Driver::from_path(fake.path()).unwrap().newest::<symbols::cuCtxCreate>().unwrap_err();
    assert!(matches!(e, Error::Driver { code: 1, .. }), "{e:?}");
    assert_eq!(requested_versions(&fake), [12050]);
}

#[test]
fn none_left_names_what_was_tried() {
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version(12000);
    fake.answer("cuCtxCreate", 0, 0, STATUS_VERSION_NOT_SUFFICIENT, 0);
    let e = Driver::from_path(fake.path()).unwrap().newest::<symbols::cuCtxCreate>().unwrap_err();
    let Error::NoKnownAbi { symbol, driver_version, known, tried, last } = &e else { panic!("{e:?}") };
    assert_eq!((symbol.as_str(), *driver_version), ("cuCtxCreate", 12000));
    assert_eq!(known, &[12050, 11040, 3020, 2000]);
    // 12050 is newer than the driver: skipped, never asked for.
    assert_eq!(tried, &[11040, 3020, 2000]);
    assert!(matches!(last.as_deref(), Some(Error::VersionNotSufficient { lookup, .. }) if lookup.version == 2000));
    assert_eq!(requested_versions(&fake), [11040, 3020, 2000]);
    let text = e.to_string();
    assert!(
        text.contains("cuCtxCreate")
            && text.contains("12050, 11040, 3020, 2000")
            && text.contains("Update the NVIDIA driver"),
        "{text}"
    );

    // Every known ABI newer than the driver: nothing is asked for.
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version(11080);
    let e = Driver::from_path(fake.path()).unwrap().newest::<symbols::cuLibraryLoadData>().unwrap_err();
    assert!(matches!(&e, Error::NoKnownAbi { tried, .. } if tried.is_empty()), "{e:?}");
    assert!(
        e.to_string().contains("all newer than the driver. Update the NVIDIA driver to one for CUDA 12.0 or newer"),
        "{e}"
    );
    assert_eq!(fake.log_len(), 0);
}

#[test]
fn per_thread_variants_are_preferred_only_when_asked() {
    let fake = Fake::new(Flavour::Full);
    fake.add_abi("cuMemcpyHtoD", 2000, false, 0x2000);
    fake.add_abi("cuMemcpyHtoD", 3020, false, 0x3020);
    fake.add_abi("cuMemcpyHtoD", 7000, true, 0x7000);
    let d = Driver::from_path(fake.path()).unwrap();
    let legacy = d.newest_with::<symbols::cuMemcpyHtoD>(DefaultStream::Legacy).unwrap();
    assert!(matches!(legacy, MemcpyHtoD::V3020(f) if f as usize == 0x3020), "{legacy:?}");
    let per_thread = d.newest_with::<symbols::cuMemcpyHtoD>(DefaultStream::PerThread).unwrap();
    assert!(matches!(per_thread, MemcpyHtoD::V7000Ptds(f) if f as usize == 0x7000), "{per_thread:?}");
    assert_eq!(per_thread.info().pfn, "PFN_cuMemcpyHtoD_v7000_ptds");
    assert_eq!(
        fake.log(),
        vec![
            Request { symbol: "cuMemcpyHtoD".into(), version: 3020, flags: 1, api: Api::V2 },
            Request { symbol: "cuMemcpyHtoD".into(), version: 7000, flags: 2, api: Api::V2 },
        ]
    );
    // What `newest` does depends on the crate's feature.
    let configured = d.newest::<symbols::cuMemcpyHtoD>().unwrap();
    if cfg!(feature = "per-thread") {
        assert_eq!(DefaultStream::CONFIGURED, DefaultStream::PerThread);
        assert!(matches!(configured, MemcpyHtoD::V7000Ptds(_)), "{configured:?}");
    } else {
        assert_eq!(DefaultStream::CONFIGURED, DefaultStream::Legacy);
        assert!(matches!(configured, MemcpyHtoD::V3020(_)), "{configured:?}");
    }
}

/// `newest` and `get` fill and read the same cache slot: one request between them, in either
/// order, and a failed `newest` caches nothing.
#[test]
fn newest_and_get_share_the_cache() {
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version(13000);
    fake.add_abi("cuCtxCreate", 12050, false, 0x12050);
    let d = Driver::from_path(fake.path()).unwrap();
    let abi = d.newest::<symbols::cuCtxCreate>().unwrap();
    assert_eq!(abi.as_ptr() as usize, 0x12050);
    assert_eq!(d.get::<entries::cuCtxCreate_v12050>().unwrap() as usize, 0x12050);
    assert_eq!(requested_versions(&fake), [12050], "get asked again after newest");

    let d = Driver::from_path(fake.path()).unwrap();
    fake.clear_log();
    assert_eq!(d.get::<entries::cuCtxCreate_v12050>().unwrap() as usize, 0x12050);
    assert_eq!(d.newest::<symbols::cuCtxCreate>().unwrap().as_ptr() as usize, 0x12050);
    assert_eq!(requested_versions(&fake), [12050], "newest asked again after get");

    // No cuMemAlloc in this driver: the search ends at the first answer (the symbol is not
    // found, which no lower version changes), and each call asks again.
    let d = Driver::from_path(fake.path()).unwrap();
    fake.clear_log();
    for _ in 0..2 {
        fake.clear_log();
        let e = d.newest::<symbols::cuMemAlloc>().unwrap_err();
        assert!(matches!(&e, Error::SymbolNotFound { lookup, .. } if lookup.version == 3020), "{e:?}");
        assert_eq!(requested_versions(&fake), [3020], "a failure was cached");
    }
}
