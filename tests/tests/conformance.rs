//! The real-driver conformance checker (src/conformance.rs), kept honest against the fake
//! libcuda: right answers pass, a wrong function for one entry is caught, the flag rule and
//! the typed errors for entries newer than the driver are checked.

use cuda_driver_pfn::{entries, Driver, Entry};
use cuda_sys_gen_tests::conformance::{judge, summary, Loader, Row, Verdict};
use cuda_sys_gen_tests::fake::{Fake, Flavour};

fn row<E: Entry>(driver: &Driver, loader: &Loader) -> Row {
    // SAFETY: a function pointer read as its address.
    let r = driver.get::<E>().map(|f| unsafe { std::mem::transmute_copy::<E::Fn, usize>(&f) });
    judge(driver, loader, E::INFO, r)
}

/// A fake driver of `version` whose table maps each ABI to the export a real libcuda has
/// for it, except where `wrong` says otherwise.
fn fake(version: u32, wrong: &[(&str, u32, bool, &str)]) -> Fake {
    let f = Fake::new(Flavour::Full);
    f.set_driver_version(version);
    let right = [
        ("cuMemAlloc", 2000, false, "cuMemAlloc"),
        ("cuMemAlloc", 3020, false, "cuMemAlloc_v2"),
        ("cuMemcpy", 4000, false, "cuMemcpy"),
        ("cuMemcpy", 7000, true, "cuMemcpy_ptds"),
        ("cuStreamBeginCapture", 10000, false, "cuStreamBeginCapture"),
        ("cuStreamBeginCapture", 10010, false, "cuStreamBeginCapture_v2"),
        ("cuStreamBeginCapture", 10010, true, "cuStreamBeginCapture_v2_ptsz"),
        ("cuCtxCreate", 12050, false, "cuCtxCreate_v4"),
    ];
    for (symbol, v, per_thread, export) in right {
        let export = wrong.iter().find(|w| (w.0, w.1, w.2) == (symbol, v, per_thread)).map_or(export, |w| w.3);
        f.add_abi(symbol, v, per_thread, f.export(export));
    }
    f
}

fn open(f: &Fake) -> (Driver, Loader) {
    (Driver::from_path(f.path()).unwrap(), Loader::open(f.path()).unwrap())
}

#[test]
fn right_answers_match() {
    let f = fake(13000, &[]);
    let (d, l) = open(&f);
    let rows = vec![
        row::<entries::cuMemAlloc_v2000>(&d, &l),
        row::<entries::cuMemAlloc_v3020>(&d, &l),
        row::<entries::cuMemcpy_v4000>(&d, &l),
        row::<entries::cuMemcpy_v7000_ptds>(&d, &l),
        row::<entries::cuStreamBeginCapture_v10000>(&d, &l),
        row::<entries::cuStreamBeginCapture_v10010>(&d, &l),
        row::<entries::cuStreamBeginCapture_v10010_ptsz>(&d, &l),
        row::<entries::cuCtxCreate_v12050>(&d, &l),
    ];
    for r in &rows {
        assert_eq!(r.verdict, Verdict::Matched, "{r:?}");
        assert_eq!(r.named.as_deref(), Some(r.exported));
    }
    let table = summary(&d, &rows);
    assert!(table.contains("| 8 | 8 | 0 | 0 | 0 | 0 |"), "{table}");
}

#[test]
fn a_wrong_function_is_caught() {
    // The driver hands out the legacy cuMemAlloc for v3020: our type says otherwise.
    let f = fake(13000, &[("cuMemAlloc", 3020, false, "cuMemAlloc")]);
    let (d, l) = open(&f);
    let r = row::<entries::cuMemAlloc_v3020>(&d, &l);
    let Verdict::Mismatched(why) = &r.verdict else { panic!("not caught: {r:?}") };
    assert!(why.contains("the export of cuMemAlloc_v2 is"), "{why}");
    assert_eq!(r.named.as_deref(), Some("cuMemAlloc"));
    let table = summary(&d, std::slice::from_ref(&r));
    assert!(
        table.contains("| 1 | 0 | 1 | 0 | 0 | 0 |") && table.contains("mismatched PFN_cuMemAlloc_v3020"),
        "{table}"
    );
}

#[test]
fn a_per_thread_entry_given_the_default_function_is_caught() {
    // A per-thread entry answered with the default function (as a wrong flag would get).
    let f = fake(13000, &[("cuMemcpy", 7000, true, "cuMemcpy")]);
    let (d, l) = open(&f);
    let r = row::<entries::cuMemcpy_v7000_ptds>(&d, &l);
    assert!(matches!(&r.verdict, Verdict::Mismatched(w) if w.contains("the export of cuMemcpy_ptds is")), "{r:?}");
}

#[test]
fn the_flag_rule_is_checked() {
    // The export check cannot see a model that names the default function for a per-thread
    // entry (pointer, export and dladdr all agree): the flag rule does.
    let f = fake(13000, &[("cuMemcpy", 7000, true, "cuMemcpy")]);
    let (d, l) = open(&f);
    let info: &'static _ =
        Box::leak(Box::new(cuda_driver_pfn::EntryInfo { exported: "cuMemcpy", ..*entries::cuMemcpy_v7000_ptds::INFO }));
    let r = judge(&d, &l, info, d.get::<entries::cuMemcpy_v7000_ptds>().map(|f| f as usize));
    assert!(
        matches!(&r.verdict, Verdict::Mismatched(w) if w.starts_with("flag rule: a per-thread entry came back as Some(\"cuMemcpy\")")),
        "{r:?}"
    );
}

#[test]
fn newer_than_the_driver_needs_the_typed_error() {
    let f = fake(12000, &[]);
    let (d, l) = open(&f);
    let r = row::<entries::cuCheckpointOperationComplete_v13040>(&d, &l);
    assert_eq!(r.verdict, Verdict::NotInDriver, "{r:?}");
    // A function handed out for a version above the driver's is a mismatch, whatever it is.
    let info = <entries::cuCtxCreate_v12050 as Entry>::INFO;
    let r = judge(&d, &l, info, Ok(f.export("cuCtxCreate_v4")));
    assert!(matches!(&r.verdict, Verdict::Mismatched(w) if w.starts_with("returned a function for 12050")), "{r:?}");
    // Refused while the library exports the entry's name: the crate would lose an entry the
    // driver serves (this fake exports cuCtxCreate_v4 though it says it is 12.0).
    let r = row::<entries::cuCtxCreate_v12050>(&d, &l);
    assert!(matches!(&r.verdict, Verdict::Lost(w) if w.contains("exports cuCtxCreate_v4")), "{r:?}");
}

#[test]
fn an_unknown_symbol_at_or_below_the_driver_version_is_missing() {
    let f = fake(13000, &[]);
    let (d, l) = open(&f);
    let r = row::<entries::cuMemFree_v3020>(&d, &l);
    assert!(matches!(&r.verdict, Verdict::Missing(_)), "{r:?}");
}
