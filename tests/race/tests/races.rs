//! Many threads resolving every registry entry through one `Driver` (one cached table) while
//! another thread keeps loading, using and dropping a second driver.
//!
//! What must hold: each entry ends with exactly one pointer, the same for every thread, and
//! that of the driver it was asked of; once filled, a slot is never asked for again; the
//! second driver never sees the first one's answers. What is looked for besides: data races.
//! The cache is `AtomicPtr`s, so a plain run can only show wrong pointers; `cargo xtask tsan`
//! runs this file with ThreadSanitizer over an instrumented std, which reports any
//! unsynchronised access (ARCHITECTURE.md, "Bad input and faults, tried").

use std::mem::{size_of, transmute_copy};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

use cuda_driver_pfn::{visit_entries, Driver, Entry, EntryVisitor, Error, ENTRIES};
use fake_libcuda_client::{pointer_for, Fake, Flavour};

/// What the second driver hands out for entry `i`: never one of the first driver's values.
fn second_pointer_for(i: usize) -> usize {
    pointer_for(i) + 0x8
}

fn as_usize<F: Copy>(f: F) -> usize {
    assert_eq!(size_of::<F>(), size_of::<usize>());
    // SAFETY: F is a function pointer type (asserted pointer-sized); only its value is read.
    unsafe { transmute_copy::<F, usize>(&f) }
}

type Resolve = fn(&Driver) -> Result<usize, Error>;

/// One `Driver::get::<E>()` per registry entry, as plain function pointers, so that each
/// thread can walk the entries in its own order.
fn resolvers() -> Vec<(usize, Resolve)> {
    struct Collect(Vec<(usize, Resolve)>);
    impl EntryVisitor for Collect {
        fn visit<E: Entry>(&mut self) {
            self.0.push((E::INDEX, |d: &Driver| d.get::<E>().map(as_usize)));
        }
    }
    let mut c = Collect(Vec::new());
    visit_entries(&mut c);
    c.0
}

/// A fake that knows every entry, at a driver version that has all of them.
fn fake_with_every_entry(pointer: fn(usize) -> usize) -> Fake {
    let fake = Fake::new(Flavour::Full);
    let newest = ENTRIES.iter().map(|e| e.version).max().expect("a registry with entries");
    fake.set_driver_version(newest);
    for (i, e) in ENTRIES.iter().enumerate() {
        fake.add_abi(e.symbol, e.version, e.variant.is_some(), pointer(i));
    }
    fake
}

/// Threads in the race. TSan runs are several times slower; 2 cores here.
const THREADS: usize = 8;

#[test]
fn many_threads_one_table_while_a_second_driver_loads() {
    let first = fake_with_every_entry(pointer_for);
    // A short stall inside every lookup, so that threads really are inside a miss together.
    first.set_delay_us(20);
    let second = fake_with_every_entry(second_pointer_for);
    let driver = Arc::new(Driver::from_path(first.path()).expect("load the first fake"));
    let resolvers = Arc::new(resolvers());
    assert_eq!(resolvers.len(), ENTRIES.len());
    assert!(resolvers.iter().enumerate().all(|(i, (index, _))| i == *index), "visit_entries is in registry order");

    let barrier = Arc::new(Barrier::new(THREADS + 1));
    let done = Arc::new(AtomicBool::new(false));

    // The loader: a second driver, loaded, used and dropped over and over during the race.
    let loader = {
        let (barrier, done, resolvers) = (Arc::clone(&barrier), Arc::clone(&done), Arc::clone(&resolvers));
        let path = second.path().to_owned();
        std::thread::spawn(move || {
            barrier.wait();
            let mut round = 0;
            while !done.load(Ordering::Acquire) || round == 0 {
                let d = Driver::from_path(&path).expect("load the second fake");
                // A different slice of entries each round.
                for (index, resolve) in resolvers.iter().skip(round * 37 % resolvers.len()).take(50) {
                    assert_eq!(
                        resolve(&d).expect("the second fake knows every entry"),
                        second_pointer_for(*index),
                        "second driver, entry {index}"
                    );
                }
                drop(d);
                round += 1;
            }
            round
        })
    };

    // The resolvers: every entry, each thread starting at its own place and half of them
    // walking backwards, so that every slot is filled by racing threads.
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (barrier, driver, resolvers) = (Arc::clone(&barrier), Arc::clone(&driver), Arc::clone(&resolvers));
            std::thread::spawn(move || {
                let n = resolvers.len();
                let mut got = vec![0usize; n];
                barrier.wait();
                for pass in 0..2 {
                    for k in 0..n {
                        let k = if t % 2 == 0 { k } else { n - 1 - k };
                        let (index, resolve) = resolvers[(k + t * n / THREADS) % n];
                        let p = resolve(&driver).unwrap_or_else(|e| panic!("thread {t}, entry {index}: {e}"));
                        assert!(
                            pass == 0 || got[index] == p,
                            "thread {t}: entry {index} changed from {:#x} to {p:#x}",
                            got[index]
                        );
                        got[index] = p;
                    }
                }
                got
            })
        })
        .collect();
    let results: Vec<Vec<usize>> = workers.into_iter().map(|h| h.join().expect("a resolver thread panicked")).collect();
    done.store(true, Ordering::Release);
    let loads = loader.join().expect("the loader thread panicked");
    eprintln!("the second driver was loaded {loads} times during the race");

    for (i, _) in ENTRIES.iter().enumerate() {
        for (t, got) in results.iter().enumerate() {
            assert_eq!(
                got[i],
                pointer_for(i),
                "thread {t}, entry {i} ({}): not the first driver's pointer",
                ENTRIES[i].pfn
            );
        }
    }
    // At most one lookup per racing thread and entry, at least one; none once filled.
    let log = first.log();
    let mut asked = vec![0usize; ENTRIES.len()];
    for r in &log {
        let i = ENTRIES
            .iter()
            .position(|e| e.symbol == r.symbol && e.version as i32 == r.version && e.flags.0 == r.flags)
            .unwrap_or_else(|| panic!("the first driver was asked for something no entry is: {r:?}"));
        asked[i] += 1;
    }
    for (i, n) in asked.iter().enumerate() {
        assert!(
            (1..=THREADS).contains(n),
            "entry {i} ({}) was asked for {n} times by {THREADS} threads",
            ENTRIES[i].pfn
        );
    }
    first.clear_log();
    for (index, resolve) in resolvers.iter() {
        assert_eq!(resolve(&driver).unwrap(), pointer_for(*index));
    }
    assert_eq!(first.log_len(), 0, "a filled slot asked the driver again");
}

/// The same entry from threads that each load their own driver from one library: one
/// process, many tables, no sharing between them.
#[test]
fn threads_with_their_own_drivers_share_nothing() {
    let fake = fake_with_every_entry(pointer_for);
    let barrier = Arc::new(Barrier::new(THREADS));
    let path = Arc::new(fake.path().to_owned());
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let (barrier, path) = (Arc::clone(&barrier), Arc::clone(&path));
            std::thread::spawn(move || {
                barrier.wait();
                let d = Driver::from_path(&*path).expect("load the fake");
                let r = resolvers();
                for (index, resolve) in r.iter().take(100) {
                    assert_eq!(resolve(&d).unwrap(), pointer_for(*index));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a thread panicked");
    }
    // Each driver has its own table, so each asked once per entry.
    assert_eq!(fake.log_len(), THREADS * 100);
}
