//! Against the real CUDA driver, on a machine that has one:
//!
//! ```text
//! cargo test -p cuda-sys-gen-tests --test gpu_machine -- --ignored --nocapture --test-threads 1
//! cargo run -p cuda-driver-pfn --example roundtrip
//! cargo run -p cuda-driver-pfn --example doctor --features doctor
//! ```
//!
//! Ignored by default: without a driver they fail (they must not pass by finding nothing).
//! They are where the stream flags are confirmed: that `CU_GET_PROC_ADDRESS_LEGACY_STREAM`
//! returns the default variant (the same as `CU_GET_PROC_ADDRESS_DEFAULT` in a program that
//! does not ask for per-thread semantics) and `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`
//! the `_ptds`/`_ptsz` one, and that each pointer is the function the driver exports under
//! the entry's `exported` name.

use std::collections::BTreeMap;
use std::ffi::{c_void, CString};

use cuda_driver_pfn::{
    visit_symbols, Driver, Entry, EntryInfo, Error, NewestAbi, StreamFlags, Symbol, SymbolVisitor, ENTRIES,
};
use cuda_sys_gen_tests::conformance::resolve_all;

fn load() -> Driver {
    let d = Driver::load().unwrap_or_else(|e| panic!("no usable CUDA driver here: {e}"));
    eprintln!("driver: {} (version {}), {}", d.library(), d.version(), d.query_api().name());
    d
}

fn kind(e: &Error) -> String {
    format!("{e:?}").split([' ', '{', '(']).next().unwrap_or("?").to_owned()
}

/// The library's own export of that name, through the loader (the same instance
/// `Driver::load` opened).
fn dlsym(driver: &Driver, name: &str) -> Option<usize> {
    // SAFETY: the library is already loaded; only an address is taken.
    let lib = unsafe { libloading::Library::new(driver.library()) }.ok()?;
    let name = CString::new(name).ok()?;
    let p = unsafe { lib.get::<*mut c_void>(name.as_bytes_with_nul()) }.ok()?;
    Some(*p as usize).filter(|&p| p != 0)
}

/// The default ABI a per-thread entry pairs with: the highest default of its symbol at or
/// below its version.
fn paired_default(p: &EntryInfo) -> Option<usize> {
    ENTRIES
        .iter()
        .enumerate()
        .filter(|(_, d)| d.symbol == p.symbol && d.variant.is_none() && d.version <= p.version)
        .max_by_key(|(_, d)| d.version)
        .map(|(i, _)| i)
}

#[test]
#[ignore = "needs a CUDA driver"]
fn every_entry_resolves_or_says_why() {
    let driver = load();
    let results = resolve_all(&driver);
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut usage_errors = Vec::new();
    for (info, r) in ENTRIES.iter().zip(&results) {
        match r {
            Ok(_) => *kinds.entry("resolved".into()).or_default() += 1,
            // D3D and WGL entries on Linux, say: no driver of this platform has them.
            Err(e) if !info.platforms.here() => {
                *kinds.entry(format!("{} (not on this platform)", kind(e))).or_default() += 1
            }
            Err(e) => {
                *kinds.entry(kind(e)).or_default() += 1;
                if info.version <= driver.version() {
                    eprintln!("  {}: {e}", info.pfn);
                }
                // A usage error means the shim asked wrongly (a flag, a version).
                if matches!(e, Error::Driver { .. } | Error::UnknownStatus { .. } | Error::InvalidArgument { .. }) {
                    usage_errors.push(format!("{}: {e}", info.pfn));
                }
            }
        }
    }
    eprintln!("{} entries: {kinds:?}", ENTRIES.len());
    assert!(usage_errors.is_empty(), "the driver refused requests:\n{}", usage_errors.join("\n"));
    assert!(kinds.get("resolved").copied().unwrap_or(0) > 0, "nothing resolved");
}

#[test]
#[ignore = "needs a CUDA driver"]
fn the_flags_select_the_variants() {
    let driver = load();
    let results = resolve_all(&driver);
    let ptr = |i: usize| results[i].as_ref().ok().copied();
    // Flag 2 returns another function than flag 1 for every per-thread entry.
    let mut pairs = 0;
    let mut same = Vec::new();
    for (i, p) in ENTRIES.iter().enumerate().filter(|(_, e)| e.variant.is_some()) {
        let Some(d) = paired_default(p) else { continue };
        if let (Some(pp), Some(dp)) = (ptr(i), ptr(d)) {
            pairs += 1;
            if pp == dp {
                same.push(format!("{} and {} are both {pp:#x}", p.pfn, ENTRIES[d].pfn));
            }
        }
    }
    eprintln!("{pairs} per-thread/default pairs resolve");
    assert!(pairs > 0, "no per-thread entry resolved");
    assert!(same.is_empty(), "the per-thread flag returned the default variant:\n{}", same.join("\n"));
    // Flag 0 (DEFAULT) is flag 1 (LEGACY_STREAM) for a program that did not ask for
    // per-thread semantics: the default entries would get the same pointer either way.
    let mut differ = Vec::new();
    for (i, d) in ENTRIES.iter().enumerate().filter(|(_, e)| e.variant.is_none()) {
        let Some(p1) = ptr(i) else { continue };
        // SAFETY: only the value is compared.
        let p0 = unsafe { driver.get_raw::<usize>(d.c_symbol, d.version, StreamFlags::DEFAULT) };
        if p0.as_ref().ok() != Some(&p1) {
            differ.push(format!("{}: flag 1 {p1:#x}, flag 0 {p0:?}", d.pfn));
        }
    }
    assert!(differ.is_empty(), "flag 0 and flag 1 differ:\n{}", differ.join("\n"));
}

#[test]
#[ignore = "needs a CUDA driver"]
fn pointers_are_the_exported_functions() {
    let driver = load();
    let results = resolve_all(&driver);
    let (mut equal, mut unexported, mut differ) = (0, 0, Vec::new());
    for (info, r) in ENTRIES.iter().zip(&results) {
        let Ok(p) = r else { continue };
        match dlsym(&driver, info.exported) {
            Some(x) if x == *p => equal += 1,
            Some(x) => differ.push(format!("{} ({}): cuGetProcAddress {p:#x}, export {x:#x}", info.pfn, info.exported)),
            None => unexported += 1,
        }
    }
    eprintln!(
        "{equal} pointers are the export of the entry's name, {unexported} names are not exported, {} differ",
        differ.len()
    );
    assert!(equal > 0, "no pointer matched an export");
    assert!(differ.is_empty(), "pointers that are not the export of their name:\n{}", differ.join("\n"));
}

#[test]
#[ignore = "needs a CUDA driver"]
fn newest_for_every_symbol() {
    struct Newest<'a>(&'a Driver, BTreeMap<String, usize>);
    impl SymbolVisitor for Newest<'_> {
        fn visit<S: Symbol>(&mut self) {
            let k = match self.0.newest::<S>() {
                Ok(abi) => {
                    assert!(abi.info().version <= self.0.version(), "{}: {}", S::NAME, abi.info().pfn);
                    assert_eq!(abi.info().symbol, S::NAME);
                    "found".to_owned()
                }
                Err(e) => {
                    assert!(!matches!(e, Error::Driver { .. } | Error::UnknownStatus { .. }), "{}: {e}", S::NAME);
                    kind(&e)
                }
            };
            *self.1.entry(k).or_default() += 1;
        }
    }
    let driver = load();
    let mut v = Newest(&driver, BTreeMap::new());
    visit_symbols(&mut v);
    eprintln!("newest: {:?}", v.1);
    assert!(v.1.get("found").is_some_and(|&n| n > 0), "newest found nothing: {:?}", v.1);
}

#[test]
#[ignore = "needs a CUDA driver and the CUDA runtime"]
fn the_runtime_agrees_with_the_driver() {
    use cuda_driver_pfn::{entries, Runtime};
    let driver = load();
    let rt = Runtime::load().unwrap_or_else(|e| panic!("this test needs the CUDA runtime: {e}"));
    eprintln!("runtime: {} (version {}), by version: {}", rt.library(), rt.version(), rt.has_by_version());
    fn both<E: Entry>(d: &Driver, rt: &Runtime) {
        let a = d.get::<E>().map(|f| unsafe { std::mem::transmute_copy::<E::Fn, usize>(&f) });
        let b = rt.get::<E>().map(|f| unsafe { std::mem::transmute_copy::<E::Fn, usize>(&f) });
        eprintln!("  {}: driver {a:x?}, runtime {b:x?}", E::INFO.pfn);
        // Every entry compared is at or below CUDA 12.5: a driver of 12.5 or newer has it.
        assert!(E::VERSION > d.version() || a.is_ok(), "{}: the driver has it: {a:x?}", E::INFO.pfn);
        if let (Ok(a), Ok(b)) = (&a, &b) {
            assert_eq!(a, b, "{}", E::INFO.pfn);
        }
    }
    both::<entries::cuMemAlloc_v3020>(&driver, &rt);
    both::<entries::cuCtxCreate_v3020>(&driver, &rt);
    both::<entries::cuCtxCreate_v12050>(&driver, &rt);
    both::<entries::cuMemcpyHtoD_v3020>(&driver, &rt);
    both::<entries::cuMemcpyHtoD_v7000_ptds>(&driver, &rt);
}
