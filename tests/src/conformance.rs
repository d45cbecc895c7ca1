//! The real-driver conformance check: for every registry entry, is the function the driver
//! hands out for (symbol, version, flags) the one our type names?
//!
//! A resolved pointer must be the driver library's export of the entry's `exported` name
//! (`dlsym`), and the loader's reverse lookup (`dladdr`) must name it; a default-variant entry
//! must never come back as a `_ptds`/`_ptsz` function, a per-thread one always. An entry newer
//! than the driver must fail with the typed "version not sufficient" or "not found" error.
//! The binary `conformance` runs this on a machine with a driver; the tests run it against
//! the fake libcuda, including a fake that returns the wrong function for one entry.

use std::collections::BTreeMap;
use std::ffi::{c_void, CStr, CString};
use std::fmt::Write as _;
use std::path::Path;

use cuda_driver_pfn::{visit_entries, Driver, Entry, EntryInfo, EntryVisitor, Error, ENTRIES};

/// Every registry entry fetched through the typed `Driver::get`, as its address or the
/// error, in registry order (the markers of the features compiled in).
pub fn resolve_all(driver: &Driver) -> Vec<Result<usize, Error>> {
    struct Collect<'a>(&'a Driver, Vec<Result<usize, Error>>);
    impl EntryVisitor for Collect<'_> {
        fn visit<E: Entry>(&mut self) {
            // SAFETY: a function pointer read as its address.
            let r = self.0.get::<E>().map(|f| unsafe { std::mem::transmute_copy::<E::Fn, usize>(&f) });
            self.1.push(r);
        }
    }
    let mut c = Collect(driver, Vec::new());
    visit_entries(&mut c);
    c.1
}

/// What one entry came to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// The pointer is the export of the entry's name and `dladdr` names it.
    Matched,
    /// Our type and the driver's ABI disagree: a bug in the model.
    Mismatched(String),
    /// Newer than the driver, and refused with a typed error as it should be.
    NotInDriver,
    /// Not on this platform (a D3D entry on Linux), and refused.
    NotOnPlatform,
    /// Not newer than the driver, yet the driver does not have it.
    Missing(String),
    /// Refused, although the library exports the entry's name: an entry the driver serves
    /// that the crate loses.
    Lost(String),
}

impl Verdict {
    pub fn column(&self) -> &'static str {
        match self {
            Verdict::Matched => "matched",
            Verdict::Mismatched(_) => "mismatched",
            Verdict::NotInDriver => "not in this driver",
            Verdict::NotOnPlatform => "not on this platform",
            Verdict::Missing(_) => "missing",
            Verdict::Lost(_) => "lost",
        }
    }
}

/// One entry's result.
#[derive(Debug, Clone)]
pub struct Row {
    pub pfn: &'static str,
    pub exported: &'static str,
    pub version: u32,
    pub per_thread: bool,
    pub pointer: Option<usize>,
    pub export: Option<usize>,
    pub named: Option<String>,
    pub error: Option<String>,
    pub verdict: Verdict,
}

/// `dlsym` and `dladdr` over the library the driver was loaded from.
pub struct Loader {
    lib: libloading::Library,
}

impl Loader {
    pub fn open(path: &Path) -> Result<Loader, String> {
        // SAFETY: the library is already loaded by the Driver; this takes another reference.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Loader { lib })
    }

    /// The address the library exports under `name`.
    pub fn dlsym(&self, name: &str) -> Option<usize> {
        let c = CString::new(name).ok()?;
        // SAFETY: only the address is read.
        let p = unsafe { self.lib.get::<*mut c_void>(c.as_bytes_with_nul()) }.ok()?;
        Some(*p as usize).filter(|&p| p != 0)
    }

    /// The exported name the loader gives an address, if it lies exactly at a symbol.
    pub fn dladdr(&self, addr: usize) -> Option<String> {
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr only reads the loader's tables.
        let found = unsafe { libc::dladdr(addr as *const c_void, &mut info) };
        if found == 0 || info.dli_sname.is_null() || info.dli_saddr as usize != addr {
            return None;
        }
        // SAFETY: the loader returns a NUL-terminated name from the library's string table.
        Some(unsafe { CStr::from_ptr(info.dli_sname) }.to_string_lossy().into_owned())
    }
}

fn is_per_thread_name(name: &str) -> bool {
    name.ends_with("_ptds") || name.ends_with("_ptsz")
}

/// Judges one entry's lookup.
pub fn judge(driver: &Driver, loader: &Loader, info: &'static EntryInfo, result: Result<usize, Error>) -> Row {
    let per_thread = info.variant.is_some();
    let mut row = Row {
        pfn: info.pfn,
        exported: info.exported,
        version: info.version,
        per_thread,
        pointer: None,
        export: loader.dlsym(info.exported),
        named: None,
        error: None,
        verdict: Verdict::Matched,
    };
    match result {
        Ok(p) => {
            row.pointer = Some(p);
            row.named = loader.dladdr(p);
            row.verdict = if info.version > driver.version() {
                Verdict::Mismatched(format!(
                    "returned a function for {}, newer than the driver ({})",
                    info.version,
                    driver.version()
                ))
            } else if row.export != Some(p) {
                match row.export {
                    Some(x) => Verdict::Mismatched(format!(
                        "the export of {} is {x:#x}, not {p:#x} ({:?})",
                        info.exported, row.named
                    )),
                    None => Verdict::Mismatched(format!(
                        "{} is not exported; the pointer is {:?}",
                        info.exported, row.named
                    )),
                }
            } else if row.named.as_deref() != Some(info.exported) {
                Verdict::Mismatched(format!("dladdr names {:?}, not {}", row.named, info.exported))
            } else if row.named.as_deref().is_some_and(is_per_thread_name) != per_thread {
                Verdict::Mismatched(format!(
                    "flag rule: a {} entry came back as {:?}",
                    if per_thread { "per-thread" } else { "default" },
                    row.named
                ))
            } else {
                Verdict::Matched
            };
        }
        Err(e) => {
            row.error = Some(e.to_string());
            let typed = matches!(
                e,
                Error::VersionNotSufficient { .. }
                    | Error::SymbolNotFound { .. }
                    | Error::NotFound { .. }
                    | Error::NotExported { .. }
                    | Error::DriverTooOld { .. }
            );
            row.verdict = if let Some(x) = row.export {
                Verdict::Lost(format!("refused ({e}), but the library exports {} at {x:#x}", info.exported))
            } else if !info.platforms.here() && typed {
                Verdict::NotOnPlatform
            } else if info.version > driver.version() && typed {
                Verdict::NotInDriver
            } else if info.version > driver.version() {
                Verdict::Mismatched(format!("newer than the driver, but the error is not the typed one: {e}"))
            } else {
                Verdict::Missing(e.to_string())
            };
        }
    }
    row
}

/// The summary table, markdown.
pub fn summary(driver: &Driver, rows: &[Row]) -> String {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows {
        *by.entry(r.verdict.column()).or_default() += 1;
    }
    let get = |k: &str| by.get(k).copied().unwrap_or(0);
    let mut s =
        format!("driver {} (version {}), {}\n\n", driver.library(), driver.version(), driver.query_api().name());
    s.push_str("| entries | matched | mismatched | not in this driver | not on this platform | missing | lost |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    let _ = writeln!(
        s,
        "| {} | {} | {} | {} | {} | {} | {} |",
        rows.len(),
        get("matched"),
        get("mismatched"),
        get("not in this driver"),
        get("not on this platform"),
        get("missing"),
        get("lost")
    );
    for r in rows {
        if let Verdict::Mismatched(why) | Verdict::Missing(why) | Verdict::Lost(why) = &r.verdict {
            let _ = writeln!(s, "- {} {} ({}): {why}", r.verdict.column(), r.pfn, r.exported);
        }
    }
    s
}

/// Every row as a tab-separated line, for the full results file.
pub fn tsv(rows: &[Row]) -> String {
    let mut s = String::from("pfn\texported\tversion\tper_thread\tverdict\tpointer\texport\tdladdr\terror\n");
    for r in rows {
        let hex = |p: Option<usize>| p.map(|p| format!("{p:#x}")).unwrap_or_default();
        let detail = match &r.verdict {
            Verdict::Mismatched(w) | Verdict::Missing(w) | Verdict::Lost(w) => w.clone(),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "{}\t{}\t{}\t{}\t{}{}\t{}\t{}\t{}\t{}",
            r.pfn,
            r.exported,
            r.version,
            r.per_thread,
            r.verdict.column(),
            if detail.is_empty() { String::new() } else { format!(": {detail}") },
            hex(r.pointer),
            hex(r.export),
            r.named.as_deref().unwrap_or(""),
            r.error.as_deref().unwrap_or("").replace(['\t', '\n'], " ")
        );
    }
    s
}

/// One raw request of the probe that compares a driver's answers with the fake's.
struct Probe {
    symbol: &'static CStr,
    version: i32,
    flags: u64,
    null_status: bool,
}

/// The requests whose answers the fake must give as the real drivers do: a version above the
/// driver's own (just above, and far above), one below the symbol's first ABI, an unknown
/// name, the per-thread flag, `CU_GET_PROC_ADDRESS_DEFAULT`, an undefined flag bit, and a
/// NULL `symbolStatus`.
fn probes(driver_version: u32) -> Vec<Probe> {
    let above = i32::try_from(driver_version + 10).unwrap_or(i32::MAX);
    let p = |symbol, version, flags, null_status| Probe { symbol, version, flags, null_status };
    vec![
        p(c"cuCtxCreate", above, 1, false),
        p(c"cuCtxCreate", 99990, 1, false),
        p(c"cuCtxCreate", 12050, 1, false),
        p(c"cuCtxCreate", 11040, 1, false),
        p(c"cuCtxCreate", 1000, 1, false),
        p(c"cuCtxCreate", 99990, 1, true),
        p(c"cuMemAllocAsync", 11000, 1, false),
        p(c"cuMemAllocAsync", 11000, 1, true),
        p(c"cuGraphAddNode", 13040, 1, false),
        p(c"cuMemcpy", 7000, 2, false),
        p(c"cuMemcpy", 7000, 0, false),
        p(c"cuStreamGetCaptureInfo", 12030, 2, false),
        p(c"cuStreamGetCaptureInfo", above, 2, false),
        p(c"cuNoSuchThing", 12000, 1, false),
        p(c"cuNoSuchThing", 12000, 1, true),
        p(c"cuCtxCreate", 11040, 8, false),
    ]
}

pub type GetProcAddressV2 = unsafe extern "C" fn(*const std::ffi::c_char, *mut *mut c_void, i32, u64, *mut i32) -> u32;
type GetProcAddressV1 = unsafe extern "C" fn(*const std::ffi::c_char, *mut *mut c_void, i32, u64) -> u32;

/// The driver's answers to [`probes`], one line each, through `cuGetProcAddress_v2` where
/// `lib` exports it and through the 4-argument `cuGetProcAddress` where it exports that;
/// `name_of` names a returned pointer (by the registry entry it is). Empty for a library with
/// neither.
pub fn probe(lib: &libloading::Library, driver_version: u32, name_of: &dyn Fn(usize) -> String) -> Vec<String> {
    let mut lines = Vec::new();
    // SAFETY: the driver's documented lookup functions with their C prototypes; every pointer
    // passed is valid, and only the NULL `symbolStatus` the drivers accept is ever NULL.
    let v2 = unsafe { lib.get::<GetProcAddressV2>(b"cuGetProcAddress_v2\0") }.ok().map(|f| *f);
    let v1 = unsafe { lib.get::<GetProcAddressV1>(b"cuGetProcAddress\0") }.ok().map(|f| *f);
    for r in probes(driver_version) {
        let shown = format!(
            "{:?} {} flags {}{}",
            r.symbol,
            r.version,
            r.flags,
            if r.null_status { " status NULL" } else { "" }
        );
        let answer = |result: u32, status: Option<i32>, p: *mut c_void| {
            let status = match status {
                None => "-".to_owned(),
                Some(-7) => "unwritten".to_owned(),
                Some(s) => s.to_string(),
            };
            let to = if p.is_null() { "NULL".to_owned() } else { name_of(p as usize) };
            format!("result {result} status {status} -> {to}")
        };
        if let Some(f) = v2 {
            let (mut p, mut status) = (std::ptr::null_mut(), -7);
            let status_ptr = if r.null_status { std::ptr::null_mut() } else { &mut status as *mut i32 };
            let result = unsafe { f(r.symbol.as_ptr(), &mut p, r.version, r.flags, status_ptr) };
            lines.push(format!("v2 {shown}: {}", answer(result, Some(status), p)));
        }
        if let Some(f) = v1 {
            if !r.null_status {
                let mut p = std::ptr::null_mut();
                let result = unsafe { f(r.symbol.as_ptr(), &mut p, r.version, r.flags) };
                lines.push(format!("v1 {shown}: {}", answer(result, None, p)));
            }
        }
    }
    lines
}

/// The registry entry a library's export is, by its name (`cuCtxCreate_v3` is
/// `PFN_cuCtxCreate_v11040`), or the name itself with a `?`.
pub fn entry_named(exported: Option<String>) -> String {
    match exported {
        Some(name) => {
            ENTRIES.iter().find(|e| e.exported == name).map_or_else(|| format!("?{name}"), |e| e.pfn.to_owned())
        }
        None => "?unnamed".to_owned(),
    }
}

/// The requests of the answer check for a driver of `driver_version`: every symbol of the
/// registry (and one no driver knows), at every version where one of its ABIs begins, one
/// below it (and the release before it), the driver's own version and 99999, each with flags
/// 0, 1 and 2.
pub fn answer_requests(driver_version: u32) -> Vec<(&'static str, i32, u64)> {
    let mut symbols: Vec<&'static str> = ENTRIES.iter().map(|e| e.symbol).collect();
    symbols.push("cuNoSuchThing");
    symbols.dedup();
    let own = i32::try_from(driver_version).unwrap_or(i32::MAX);
    let mut out = Vec::new();
    for symbol in symbols {
        let mut versions: Vec<i32> = vec![own, 99999];
        for e in ENTRIES.iter().filter(|e| e.symbol == symbol) {
            let v = e.version as i32;
            versions.extend([v, v - 1, v - 10]);
        }
        versions.sort_unstable();
        versions.dedup();
        for v in versions {
            for flags in [0, 1, 2] {
                out.push((symbol, v, flags));
            }
        }
    }
    out
}

/// Which of its lookup functions [`check_answers`] asks (where the library exports them).
#[derive(Debug, Clone, Copy)]
pub struct Lookups {
    /// `cuGetProcAddress_v2`.
    pub v2: bool,
    /// The 4-argument `cuGetProcAddress`.
    pub v1: bool,
}

/// What [`check_answers`] found: how many requests it made, and each difference from the
/// registry's answer rule (`cuda_driver_pfn::answer::driver_answer`).
#[derive(Debug, Default)]
pub struct AnswerCheck {
    /// Requests made of the library (each through every lookup function it exports), or, for
    /// a library without one, requests whose answer was checked by its exports.
    pub requests: usize,
    /// Of them, through `cuGetProcAddress_v2`, the 4-argument `cuGetProcAddress`, and by export.
    pub by_api: [usize; 3],
    pub differences: Vec<String>,
}

/// The answer check: every request of [`answer_requests`] made of `lib` through each lookup
/// function it exports; the result, the status and the function it hands out (named by
/// `name_at`, the loader's `dladdr`) must be what `driver_answer` says, the function being the
/// export of the named entry's `exported` name. A library with neither lookup function (a
/// driver before CUDA 11.3) is checked by its exports: each entry the rule names is exported
/// under its name, unless its `MIN_DRIVER` (a measured floor) is above the driver.
///
/// `also` judges each function handed out further, given the entry the rule names (a stand-in
/// checks that it is its own function, forwarding to the real driver's).
pub fn check_answers(
    lib: &libloading::Library,
    driver_version: u32,
    name_at: &dyn Fn(usize) -> Option<String>,
    also: &dyn Fn(&'static EntryInfo, usize) -> Result<(), String>,
    lookups: Lookups,
) -> AnswerCheck {
    use cuda_driver_pfn::answer::driver_answer;
    let mut check = AnswerCheck::default();
    // SAFETY: the driver's documented lookup functions with their C prototypes; every pointer
    // passed is valid.
    let v2 = unsafe { lib.get::<GetProcAddressV2>(b"cuGetProcAddress_v2\0") }.ok().map(|f| *f).filter(|_| lookups.v2);
    let v1 = unsafe { lib.get::<GetProcAddressV1>(b"cuGetProcAddress\0") }.ok().map(|f| *f).filter(|_| lookups.v1);
    let floors = min_drivers();
    for (symbol, version, flags) in answer_requests(driver_version) {
        let rule = driver_answer(symbol.as_bytes(), version, flags, driver_version);
        let request = format!("{symbol:?} {version} flags {flags}");
        let c = CString::new(symbol).expect("registry names hold no NUL");
        let judge = |via: &str, result: u32, status: Option<u32>, p: *mut c_void, differences: &mut Vec<String>| {
            let expected = match via {
                "v2" => rule.result_and_status(),
                _ => (rule.result_without_status(), None),
            };
            let got_name = (!p.is_null()).then(|| name_at(p as usize).unwrap_or_else(|| format!("?{p:p}")));
            let expected_name = rule.entry().map(|e| e.exported.to_owned());
            if let (Some(e), false) = (rule.entry(), p.is_null()) {
                if let Err(why) = also(e, p as usize) {
                    differences.push(format!("{via} {request}: {why}"));
                }
            }
            if (result, status) != expected || got_name != expected_name {
                differences.push(format!(
                    "{via} {request}: the library answered result {result} status {status:?} -> {got_name:?}; the rule \
                     says result {} status {:?} -> {expected_name:?}",
                    expected.0, expected.1
                ));
            }
        };
        if let Some(f) = v2 {
            let (mut p, mut status) = (std::ptr::null_mut(), u32::MAX);
            // SAFETY: as above.
            let result = unsafe { f(c.as_ptr(), &mut p, version, flags, (&mut status as *mut u32).cast()) };
            let status = (status != u32::MAX).then_some(status);
            judge("v2", result, status, p, &mut check.differences);
            check.by_api[0] += 1;
        }
        if let Some(f) = v1 {
            let mut p = std::ptr::null_mut();
            // SAFETY: as above.
            let result = unsafe { f(c.as_ptr(), &mut p, version, flags) };
            judge("v1", result, None, p, &mut check.differences);
            check.by_api[1] += 1;
        }
        if v1.is_none() && v2.is_none() {
            if let Some(e) = rule.entry() {
                let name = CString::new(e.exported).expect("no NUL");
                // SAFETY: only the address is read.
                let exported = unsafe { lib.get::<*mut c_void>(name.as_bytes_with_nul()) }.is_ok_and(|p| !p.is_null());
                let floor = floors.get(e.pfn).copied().unwrap_or(e.version);
                if exported != (floor <= driver_version) {
                    check.differences.push(format!(
                        "exports {request}: the rule names {} (exported as {}, floor {floor}), which the library {}",
                        e.pfn,
                        e.exported,
                        if exported { "exports below its floor" } else { "does not export" }
                    ));
                }
            }
            check.by_api[2] += 1;
        }
        check.requests += 1;
    }
    check
}

/// Every marker's `Entry::MIN_DRIVER`, by typedef name.
fn min_drivers() -> BTreeMap<&'static str, u32> {
    struct V(BTreeMap<&'static str, u32>);
    impl EntryVisitor for V {
        fn visit<E: Entry>(&mut self) {
            self.0.insert(E::INFO.pfn, E::MIN_DRIVER);
        }
    }
    let mut v = V(BTreeMap::new());
    visit_entries(&mut v);
    v.0
}
