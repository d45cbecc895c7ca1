//! The lookup bench against the fake libcuda (tests/fake-libcuda), built in release by
//! `cargo xtask bench` as a scratch crate (xtask/src/bench/lookup.rs writes its Cargo.toml).
//!
//! `lookup-bench FAKE ROUNDS` prints one line per metric: `name<TAB>ours,...<TAB>base,...`,
//! one pair of samples per round, the two sides alternating within a round. Three metrics:
//! - `first`: `Driver::get` of one entry on many fresh drivers (one code path, warm caches)
//!   against the bare `cuGetProcAddress_v2` call with the same (symbol, version, flags), ns;
//! - `cached`: `Driver::get` on a warm cache plus the call, against calling the pointer, ns;
//! - `all`: every registry entry on a fresh driver, against the bare call per entry, ms.

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::hint::black_box;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::time::Instant;

use cuda_driver_pfn::{entries, visit_entries, Driver, Entry, EntryVisitor, StreamFlags, ENTRIES};

type GetProcAddressV2 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> c_uint;

/// The fake's configuration functions (tests/fake-client has the same for the tests).
struct Fake {
    lib: libloading::Library,
}

impl Fake {
    fn sym<T: Copy>(&self, name: &str) -> T {
        let name = CString::new(name).expect("no NUL");
        // SAFETY: the callers name the fake's exports with their prototypes.
        *unsafe { self.lib.get::<T>(name.as_bytes_with_nul()) }
            .unwrap_or_else(|e| panic!("the fake has no {name:?}: {e}"))
    }
    fn reset(&self) {
        unsafe { self.sym::<unsafe extern "C" fn()>("fake_reset")() }
    }
    fn clear_log(&self) {
        unsafe { self.sym::<unsafe extern "C" fn()>("fake_log_clear")() }
    }
    fn set_driver_version(&self, v: u32) {
        unsafe { self.sym::<unsafe extern "C" fn(c_int)>("fake_set_driver_version")(v as c_int) }
    }
    fn add_abi(&self, symbol: &str, version: u32, per_thread: bool, ptr: usize) {
        let s = CString::new(symbol).expect("no NUL");
        let f = self.sym::<unsafe extern "C" fn(*const c_char, c_int, c_int, usize)>("fake_add_abi");
        unsafe { f(s.as_ptr(), version as c_int, per_thread as c_int, ptr) }
    }
}

/// What the fake hands out for cuDriverGetVersion in the `cached` metric: a real function,
/// the same for both sides.
#[inline(never)]
unsafe extern "system" fn version_stub(out: *mut c_int) -> c_uint {
    *out = 13050;
    0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(rounds)) = (args.get(1), args.get(2).and_then(|r| r.parse::<usize>().ok())) else {
        eprintln!("usage: lookup-bench FAKE_LIBCUDA ROUNDS");
        std::process::exit(1);
    };
    // SAFETY: the fake has no constructors.
    let fake = Fake { lib: unsafe { libloading::Library::new(path) }.unwrap_or_else(|e| panic!("load {path}: {e}")) };
    let raw: GetProcAddressV2 = fake.sym("cuGetProcAddress_v2");
    println!("entries\t{}", ENTRIES.len());
    first(&fake, raw, path, rounds);
    cached(&fake, path, rounds);
    api_call(&fake, path, rounds);
    all(&fake, raw, path, rounds);
}

/// One sample of each side into `ours` and `base`, taking turns at going first.
fn take_turns(
    round: usize,
    ours: &mut Vec<f64>,
    base: &mut Vec<f64>,
    mut run_ours: impl FnMut() -> f64,
    mut run_base: impl FnMut() -> f64,
) {
    if round % 2 == 0 {
        ours.push(run_ours());
        base.push(run_base());
    } else {
        base.push(run_base());
        ours.push(run_ours());
    }
}

/// `k` bare `cuGetProcAddress_v2` calls for `E`, ns each.
fn bare_lookups<E: Entry>(fake: &Fake, raw: GetProcAddressV2, k: usize) -> f64 {
    fake.clear_log();
    let t = Instant::now();
    for _ in 0..k {
        let (mut p, mut status) = (std::ptr::null_mut(), 0);
        // SAFETY: a plain lookup with valid out-pointers.
        unsafe { raw(black_box(E::INFO.c_symbol.as_ptr()), &mut p, E::VERSION as c_int, E::FLAGS.0, &mut status) };
        black_box(p);
    }
    t.elapsed().as_secs_f64() * 1e9 / k as f64
}

fn print(name: &str, ours: &[f64], base: &[f64]) {
    let join = |v: &[f64]| v.iter().map(|x| format!("{x:.4}")).collect::<Vec<_>>().join(",");
    println!("{name}\t{}\t{}", join(ours), join(base));
}

fn first(fake: &Fake, raw: GetProcAddressV2, path: &str, rounds: usize) {
    type E = entries::cuMemAlloc_v3020;
    fake.reset();
    fake.add_abi(E::INFO.symbol, E::VERSION, false, 0x1000_0000);
    let k = 1000;
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let drivers: Vec<Driver> = (0..k).map(|_| Driver::from_path(path).expect("the fake loads")).collect();
        let run_ours = || {
            fake.clear_log();
            let t = Instant::now();
            for d in &drivers {
                black_box(d.get::<E>().expect("the fake has it"));
            }
            t.elapsed().as_secs_f64() * 1e9 / k as f64
        };
        take_turns(round, &mut ours, &mut base, run_ours, || bare_lookups::<E>(fake, raw, k));
    }
    print("first", &ours, &base);

    // Where the difference goes: the bare call plus only the cache's own memory traffic (a
    // fresh slot table per driver, as large as the Driver's: the slot loaded, then stored),
    // against the bare call. What this leaves of the difference is the shim's logic.
    let (mut model, mut bare) = (Vec::new(), Vec::new());
    let index = E::INDEX;
    for round in 0..rounds {
        let tables: Vec<Box<[AtomicPtr<c_void>]>> =
            (0..k).map(|_| ENTRIES.iter().map(|_| AtomicPtr::new(std::ptr::null_mut())).collect()).collect();
        let run_model = || {
            fake.clear_log();
            let t = Instant::now();
            for table in &tables {
                let slot = &table[black_box(index)];
                if slot.load(Ordering::Acquire).is_null() {
                    let (mut p, mut status) = (std::ptr::null_mut(), 0);
                    // SAFETY: as below.
                    unsafe {
                        raw(black_box(E::INFO.c_symbol.as_ptr()), &mut p, E::VERSION as c_int, E::FLAGS.0, &mut status)
                    };
                    slot.store(p, Ordering::Release);
                }
            }
            t.elapsed().as_secs_f64() * 1e9 / k as f64
        };
        take_turns(round, &mut model, &mut bare, run_model, || bare_lookups::<E>(fake, raw, k));
    }
    print("first-model", &model, &bare);
}

fn cached(fake: &Fake, path: &str, rounds: usize) {
    type E = entries::cuDriverGetVersion_v2020;
    fake.reset();
    fake.add_abi(E::INFO.symbol, E::VERSION, false, version_stub as usize);
    let d = Driver::from_path(path).expect("the fake loads");
    let f = d.get::<E>().expect("the fake has it");
    let n = 2_000_000;
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let run_ours = || {
            // SAFETY: a valid out-pointer.
            ns_per_call(n, |v| unsafe { black_box(&d).get::<E>().expect("cached")(v) })
        };
        // SAFETY: as above.
        let run_base = || ns_per_call(n, |v| unsafe { black_box(f)(v) });
        take_turns(round, &mut ours, &mut base, run_ours, run_base);
    }
    print("cached", &ours, &base);
}

/// Nanoseconds per call of `call` (a cuDriverGetVersion), over `n` calls.
fn ns_per_call<R>(n: usize, mut call: impl FnMut(*mut c_int) -> R) -> f64 {
    let mut v = 0;
    let t = Instant::now();
    for _ in 0..n {
        black_box(call(black_box(&mut v)));
    }
    t.elapsed().as_secs_f64() * 1e9 / n as f64
}

/// One call through the C-name module (its process-wide driver is the fake, found as
/// `libcuda.so.1` on LD_LIBRARY_PATH) against the same call through a resolved pointer.
fn api_call(fake: &Fake, path: &str, rounds: usize) {
    type E = entries::cuDriverGetVersion_v2020;
    fake.reset();
    fake.add_abi(E::INFO.symbol, E::VERSION, false, version_stub as usize);
    let d = Driver::from_path(path).expect("the fake loads");
    let f = d.get::<E>().expect("the fake has it");
    let mut v = 0;
    // SAFETY: a valid out-pointer.
    let first = unsafe { cuda_driver_pfn::api::cuDriverGetVersion(&mut v) };
    assert_eq!(first.0, 0, "api::cuDriverGetVersion: {:?}", cuda_driver_pfn::api::error_of("cuDriverGetVersion"));
    let n = 2_000_000;
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // SAFETY: a valid out-pointer.
        let run_ours = || ns_per_call(n, |v| unsafe { cuda_driver_pfn::api::cuDriverGetVersion(v) });
        // SAFETY: as above.
        let run_base = || ns_per_call(n, |v| unsafe { black_box(f)(v) });
        take_turns(round, &mut ours, &mut base, run_ours, run_base);
    }
    print("api", &ours, &base);
}

fn all(fake: &Fake, raw: GetProcAddressV2, path: &str, rounds: usize) {
    fake.reset();
    fake.set_driver_version(ENTRIES.iter().map(|e| e.version).max().unwrap_or(0));
    for (i, e) in ENTRIES.iter().enumerate() {
        fake.add_abi(e.symbol, e.version, e.flags == StreamFlags::PER_THREAD_DEFAULT_STREAM, 0x1000_0000 + 0x10 * i);
    }
    struct All<'a>(&'a Driver, usize);
    impl EntryVisitor for All<'_> {
        fn visit<E: Entry>(&mut self) {
            if self.0.get::<E>().is_ok() {
                self.1 += 1;
            }
        }
    }
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let d = Driver::from_path(path).expect("the fake loads");
        let run_ours = || {
            fake.clear_log();
            let t = Instant::now();
            let mut v = All(&d, 0);
            visit_entries(&mut v);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            assert_eq!(v.1, ENTRIES.len(), "every entry resolves on the fake");
            ms
        };
        let run_base = || {
            fake.clear_log();
            let t = Instant::now();
            for e in ENTRIES.iter() {
                let (mut p, mut status) = (std::ptr::null_mut(), 0);
                // SAFETY: a plain lookup with valid out-pointers.
                unsafe { raw(e.c_symbol.as_ptr(), &mut p, e.version as c_int, e.flags.0, &mut status) };
                black_box(p);
            }
            t.elapsed().as_secs_f64() * 1e3
        };
        take_turns(round, &mut ours, &mut base, run_ours, run_base);
    }
    print("all", &ours, &base);
}
