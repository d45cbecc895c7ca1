//! The lookup shim against the fake libcuda: every registry entry is asked for with exactly
//! its own version and flag, whatever the driver's version; the cache; racing threads; two
//! drivers in one process; raw lookups; reading the driver version.

use std::mem::{size_of, transmute_copy};
use std::sync::{Arc, Barrier};

use cuda_driver_pfn::{entries, visit_entries, Driver, Entry, EntryVisitor, Error, QueryApi, StreamFlags, ENTRIES};
use cuda_sys_gen_tests::fake::{pointer_for, Api, Fake, Flavour, Request};

/// The fake with every registry entry in its table, each at its own pointer.
fn fake_with_every_entry(flavour: Flavour, driver_version: u32) -> Fake {
    let fake = cuda_sys_gen_tests::fake_with_every_entry(flavour);
    fake.set_driver_version(driver_version);
    fake
}

fn newest_entry_version() -> u32 {
    ENTRIES.iter().map(|e| e.version).max().unwrap()
}

fn as_usize<F: Copy>(f: F) -> usize {
    assert_eq!(size_of::<F>(), size_of::<usize>());
    // SAFETY: F is a function pointer type (asserted pointer-sized); only its value is read.
    unsafe { transmute_copy::<F, usize>(&f) }
}

/// The flag an entry must be asked with, from its variant alone (not from the registry's
/// own `flags` column, which is what is under test).
fn expected_flag(variant: Option<cuda_driver_pfn::Variant>) -> u64 {
    if variant.is_some() {
        2
    } else {
        1
    }
}

/// Calls `driver.get::<E>()` for every marker and checks the one request each makes.
struct GetEvery<'a> {
    driver: &'a Driver,
    fake: &'a Fake,
    api: Api,
    visited: usize,
}

impl EntryVisitor for GetEvery<'_> {
    fn visit<E: Entry>(&mut self) {
        let info = E::INFO;
        assert!(std::ptr::eq(info, &ENTRIES[E::INDEX]), "{}: INFO is not ENTRIES[INDEX]", info.pfn);
        let before = self.fake.log_len();
        let got = self.driver.get::<E>();
        let log = self.fake.log();
        if info.version > self.driver.version() {
            // Never asked for: a driver older than 13.0 would answer with an older ABI.
            assert_eq!(log.len(), before, "{}: newer than the driver, yet asked for", info.pfn);
            match got {
                Err(Error::DriverTooOld { lookup, driver_version }) => {
                    assert_eq!((lookup.symbol.as_str(), lookup.version), (info.symbol, info.version));
                    assert_eq!(driver_version, self.driver.version());
                }
                other => panic!("{}: newer than the driver, got {:?}", info.pfn, other.map(as_usize)),
            }
            self.visited += 1;
            return;
        }
        assert_eq!(log.len(), before + 1, "{}: expected exactly one request", info.pfn);
        let expected = Request {
            symbol: info.symbol.to_owned(),
            version: i32::try_from(info.version).unwrap(),
            flags: expected_flag(info.variant),
            api: self.api,
        };
        assert_eq!(log[before], expected, "{}: not asked for with its own version and flag", info.pfn);
        // The version in the typedef's name is the version asked for.
        assert!(info.pfn.contains(&format!("_v{}", log[before].version)), "{}", info.pfn);
        let f = got.unwrap_or_else(|e| panic!("{}: {e}", info.pfn));
        // The fake answers "the newest ABI at or below the version asked": any other
        // version or flag would have returned another entry's pointer.
        assert_eq!(as_usize(f), pointer_for(E::INDEX), "{}: got another ABI", info.pfn);
        self.visited += 1;
    }
}

#[test]
fn every_entry_is_asked_for_with_its_own_version_and_flag() {
    let fake = fake_with_every_entry(Flavour::Full, newest_entry_version());
    let driver = Driver::from_path(fake.path()).unwrap();
    assert_eq!(driver.query_api(), QueryApi::GetProcAddressV2);
    let mut v = GetEvery { driver: &driver, fake: &fake, api: Api::V2, visited: 0 };
    visit_entries(&mut v);
    assert_eq!(v.visited, ENTRIES.len());
    // Each entry was asked for once: the requests are the registry, one to one.
    let requests: std::collections::BTreeSet<(String, i32, u64)> =
        fake.log().into_iter().map(|r| (r.symbol, r.version, r.flags)).collect();
    assert_eq!(requests.len(), ENTRIES.len());
}

#[test]
fn entries_newer_than_the_driver_are_never_asked_for() {
    // Drivers before 13.0 answer a version above their own with an older ABI (the fake does as
    // they were measured to): only the shim's own rule keeps those pointers out.
    for driver_version in [11030, 11080, 12000, 12050, 12090, 13000] {
        let fake = fake_with_every_entry(Flavour::Full, driver_version);
        let driver = Driver::from_path(fake.path()).unwrap();
        assert_eq!(driver.version(), driver_version);
        let mut v = GetEvery { driver: &driver, fake: &fake, api: Api::V2, visited: 0 };
        visit_entries(&mut v);
        assert_eq!(v.visited, ENTRIES.len());
    }
}

/// A second pass costs no request: the cache answers.
struct GetAgain<'a> {
    driver: &'a Driver,
}

impl EntryVisitor for GetAgain<'_> {
    fn visit<E: Entry>(&mut self) {
        let f = self.driver.get::<E>().unwrap_or_else(|e| panic!("{}: {e}", E::INFO.pfn));
        assert_eq!(as_usize(f), pointer_for(E::INDEX));
    }
}

#[test]
fn lookups_are_cached_per_entry_and_failures_are_not() {
    let fake = fake_with_every_entry(Flavour::Full, newest_entry_version());
    let driver = Driver::from_path(fake.path()).unwrap();
    visit_entries(&mut GetEvery { driver: &driver, fake: &fake, api: Api::V2, visited: 0 });
    let after_first = fake.log_len();
    visit_entries(&mut GetAgain { driver: &driver });
    assert_eq!(fake.log_len(), after_first, "the second pass asked the driver again");

    // A failure is asked again next time (the driver might have been wrong once; a
    // cached error would hide that).
    let fake = Fake::new(Flavour::Full);
    let driver = Driver::from_path(fake.path()).unwrap();
    for _ in 0..2 {
        let e = driver.get::<entries::cuMemAlloc_v3020>().unwrap_err();
        assert!(matches!(e, Error::SymbolNotFound { .. }), "{e:?}");
    }
    assert_eq!(fake.log_len(), 2);
}

#[test]
fn racing_threads_get_one_pointer() {
    let fake = fake_with_every_entry(Flavour::Full, 13050);
    // A slow driver, so that the threads really are inside the miss together.
    fake.set_delay_us(20_000);
    let driver = Arc::new(Driver::from_path(fake.path()).unwrap());
    let threads = 64;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (driver, barrier) = (Arc::clone(&driver), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                as_usize(driver.get::<entries::cuMemAlloc_v3020>().unwrap())
            })
        })
        .collect();
    let got: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let index = <entries::cuMemAlloc_v3020 as Entry>::INDEX;
    assert!(got.iter().all(|&p| p == pointer_for(index)), "threads got different pointers: {got:x?}");
    // The documented number: at most one lookup per thread that missed before the first
    // answer was stored; and once stored, no more.
    let lookups = fake.log().iter().filter(|r| r.symbol == "cuMemAlloc").count();
    assert!((1..=threads).contains(&lookups), "64 racing threads made {lookups} lookups");
    fake.clear_log();
    assert_eq!(as_usize(driver.get::<entries::cuMemAlloc_v3020>().unwrap()), pointer_for(index));
    assert_eq!(fake.log_len(), 0, "a filled slot asked the driver again");
}

#[test]
fn two_drivers_in_one_process_are_independent() {
    let a = Fake::new(Flavour::Full);
    let b = Fake::new(Flavour::Full);
    let index = <entries::cuMemAlloc_v3020 as Entry>::INDEX;
    a.add_abi("cuMemAlloc", 3020, false, 0xA000);
    b.add_abi("cuMemAlloc", 3020, false, 0xB000);
    b.set_driver_version(12040);
    let da = Driver::from_path(a.path()).unwrap();
    let db = Driver::from_path(b.path()).unwrap();
    assert_eq!((da.version(), db.version()), (13050, 12040));
    assert_eq!(as_usize(da.get::<entries::cuMemAlloc_v3020>().unwrap()), 0xA000);
    assert_eq!(as_usize(db.get::<entries::cuMemAlloc_v3020>().unwrap()), 0xB000);
    assert_eq!((a.log_len(), b.log_len()), (1, 1));
    // A second Driver on the same library has its own cache: it asks again.
    let da2 = Driver::from_path(a.path()).unwrap();
    assert_eq!(as_usize(da2.get::<entries::cuMemAlloc_v3020>().unwrap()), 0xA000);
    assert_eq!(a.log_len(), 2);
    let _ = index;
}

#[test]
fn raw_lookups_pass_what_they_are_given() {
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version(13060);
    fake.add_abi("cuFoo", 13060, false, 0xF00);
    let driver = Driver::from_path(fake.path()).unwrap();
    type PfnFoo = unsafe extern "system" fn(u32) -> u32;
    let f = unsafe { driver.get_raw::<PfnFoo>(c"cuFoo", 13060, StreamFlags::LEGACY_STREAM) }.unwrap();
    assert_eq!(as_usize(f), 0xF00);
    let f = unsafe { driver.get_raw::<Option<PfnFoo>>(c"cuFoo", 13060, StreamFlags::DEFAULT) }.unwrap();
    assert_eq!(f.map(as_usize), Some(0xF00));
    assert_eq!(
        fake.log(),
        vec![
            Request { symbol: "cuFoo".into(), version: 13060, flags: 1, api: Api::V2 },
            Request { symbol: "cuFoo".into(), version: 13060, flags: 0, api: Api::V2 },
        ]
    );
    // Not cached: asked again.
    let _ = unsafe { driver.get_raw::<PfnFoo>(c"cuFoo", 13060, StreamFlags::LEGACY_STREAM) }.unwrap();
    assert_eq!(fake.log_len(), 3);
}

#[test]
fn raw_lookups_refuse_non_pointers_and_versions_past_int_without_asking() {
    let fake = Fake::new(Flavour::Full);
    fake.add_abi("cuFoo", 13000, false, 0xF00);
    let driver = Driver::from_path(fake.path()).unwrap();
    for e in [
        unsafe { driver.get_raw::<u8>(c"cuFoo", 13000, StreamFlags::LEGACY_STREAM) }.map(|_| ()).unwrap_err(),
        unsafe { driver.get_raw::<[usize; 2]>(c"cuFoo", 13000, StreamFlags::LEGACY_STREAM) }.map(|_| ()).unwrap_err(),
    ] {
        let Error::InvalidArgument { lookup, reason } = &e else { panic!("{e:?}") };
        assert_eq!((lookup.symbol.as_str(), lookup.version), ("cuFoo", 13000));
        assert!(reason.contains("function pointer"), "{reason}");
        let text = e.to_string();
        assert!(text.contains("cuFoo") && text.contains("13000"), "{text}");
    }
    let e = unsafe { driver.get_raw::<usize>(c"cuFoo", u32::MAX, StreamFlags::LEGACY_STREAM) }.unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument { lookup, reason } if lookup.version == u32::MAX && reason.contains("does not fit the driver's `int`")),
        "{e:?}"
    );
    assert_eq!(fake.log_len(), 0, "a refused request reached the driver");
}

#[test]
fn the_driver_version_is_read_once_at_load() {
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version(12040);
    let driver = Driver::from_path(fake.path()).unwrap();
    fake.set_driver_version(13000);
    assert_eq!(driver.version(), 12040);
    assert_eq!(driver.library(), fake.path().display().to_string());
    // Reading it is no lookup.
    assert_eq!(fake.log_len(), 0);
}

#[test]
fn without_the_export_the_version_is_asked_of_cu_get_proc_address() {
    let fake = Fake::new(Flavour::Bare);
    fake.set_driver_version(12080);
    fake.add_abi("cuDriverGetVersion", 2020, false, fake.export("fake_cuDriverGetVersion"));
    let driver = Driver::from_path(fake.path()).unwrap();
    assert_eq!(driver.version(), 12080);
    assert_eq!(
        fake.log(),
        vec![Request { symbol: "cuDriverGetVersion".into(), version: 2020, flags: 1, api: Api::V2 }]
    );
}

#[test]
fn drivers_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Driver>();
    check::<Error>();
}
