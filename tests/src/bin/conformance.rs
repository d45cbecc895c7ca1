//! On a machine with a CUDA driver: `conformance check DIR` (every registry entry against the
//! driver's exports), `conformance launch` (a PTX kernel through resolved entry points, default
//! and `_ptsz` launches), `conformance bench` (lookup costs against bare cuGetProcAddress),
//! `conformance c-names` (every function of `api` against `dlsym` of its exported name),
//! `conformance ctx-create-null` (what the newest `cuCtxCreate` does with a null
//! `ctxCreateParams`, the argument a port of an older 3-argument call is tempted to fill so).
//! Build it here and run it there: `cargo xtask device-build` puts it in `.device-bin/`.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use cuda_driver_pfn::newest::{CtxCreate, NewestAbi};
use cuda_driver_pfn::types::{CUcontext, CUdevice, CUdeviceptr_v2, CUfunction, CUmodule, CUstream};
use cuda_driver_pfn::{entries, symbols, visit_entries, Driver, Entry, EntryVisitor, ENTRIES};
use cuda_sys_gen_tests::conformance::{entry_named, judge, resolve_all, summary, tsv, Loader, Verdict};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let r = match args.get(1).map(String::as_str) {
        Some("check") => check(args.get(2).map(PathBuf::from)),
        Some("launch") => launch(),
        Some("bench") => bench(),
        Some("c-names") => c_names(),
        Some("probe") => probe(),
        Some("answers") => answers(),
        Some("forward-bench") => forward_bench(args.get(2).map(String::as_str)),
        Some("trace-threads") => trace_threads(),
        Some("trace-outputs") => trace_outputs(),
        Some("hook-check") => hook_check(),
        Some("ctx-create-null") => ctx_create_null(),
        _ => {
            Err("usage: conformance check [DIR] | launch | bench | c-names | probe | answers | forward-bench [ROUNDS] | trace-threads | trace-outputs | hook-check | ctx-create-null".into())
        }
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(2),
        Err(e) => {
            eprintln!("conformance: {e}");
            ExitCode::FAILURE
        }
    }
}

fn check(out: Option<PathBuf>) -> Result<bool> {
    let driver = Driver::load()?;
    let loader = Loader::open(std::path::Path::new(driver.library()))?;
    let results = resolve_all(&driver);
    if results.len() != ENTRIES.len() {
        return Err(
            format!("visited {} entries of {}: build with every module feature", results.len(), ENTRIES.len()).into()
        );
    }
    let rows: Vec<_> = ENTRIES.iter().zip(results).map(|(info, r)| judge(&driver, &loader, info, r)).collect();
    let text = summary(&driver, &rows);
    print!("{text}");
    if let Some(dir) = out {
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("conformance.md"), &text)?;
        std::fs::write(dir.join("conformance.tsv"), tsv(&rows))?;
    }
    Ok(!rows.iter().any(|r| matches!(r.verdict, Verdict::Mismatched(_))))
}

/// Adds 1 to each of `n` 32-bit words.
const PTX: &str = r#".version 8.0
.target sm_90
.address_size 64
.visible .entry add_one(.param .u64 data, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [data];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r6, [%rd4];
    add.u32 %r7, %r6, 1;
    st.global.u32 [%rd4], %r7;
DONE:
    ret;
}
"#;

fn launch() -> Result<bool> {
    let d = Driver::load()?;
    println!("driver {} (version {})", d.library(), d.version());
    // SAFETY (all calls below): each pointer was fetched for exactly its typedef, and the
    // arguments follow the CUDA documentation of that ABI.
    unsafe {
        d.check("cuInit", d.get::<entries::cuInit_v2000>()?(0))?;
        let mut dev: CUdevice = 0;
        d.check("cuDeviceGet", d.get::<entries::cuDeviceGet_v2000>()?(&mut dev, 0))?;
        let mut ctx: CUcontext = std::ptr::null_mut();
        let create = d.newest::<symbols::cuCtxCreate>()?;
        println!("cuCtxCreate: {}", create.info().pfn);
        let r = match create {
            CtxCreate::V12050(f) => f(&mut ctx, std::ptr::null_mut(), 0, dev),
            CtxCreate::V11040(f) => f(&mut ctx, std::ptr::null_mut(), 0, 0, dev),
            CtxCreate::V3020(f) => f(&mut ctx, 0, dev),
            CtxCreate::V2000(f) => f(&mut ctx, 0, dev),
            #[allow(unreachable_patterns)]
            other => return Err(format!("unknown ABI {}", other.info().pfn).into()),
        };
        d.check("cuCtxCreate", r)?;
        let image = std::ffi::CString::new(PTX)?;
        let mut module: CUmodule = std::ptr::null_mut();
        d.check("cuModuleLoadData", d.get::<entries::cuModuleLoadData_v2000>()?(&mut module, image.as_ptr().cast()))?;
        let mut func: CUfunction = std::ptr::null_mut();
        d.check(
            "cuModuleGetFunction",
            d.get::<entries::cuModuleGetFunction_v2000>()?(&mut func, module, c"add_one".as_ptr()),
        )?;
        let n: u32 = 1 << 20;
        let host: Vec<u32> = (0..n).collect();
        let bytes = host.len() * 4;
        let mut dptr: CUdeviceptr_v2 = 0;
        d.check("cuMemAlloc", d.get::<entries::cuMemAlloc_v3020>()?(&mut dptr, bytes))?;
        d.check("cuMemcpyHtoD", d.get::<entries::cuMemcpyHtoD_v3020>()?(dptr, host.as_ptr().cast(), bytes))?;
        let mut arg_ptr = dptr;
        let mut arg_n = n;
        let mut params: [*mut c_void; 2] =
            [(&mut arg_ptr as *mut CUdeviceptr_v2).cast(), (&mut arg_n as *mut u32).cast()];
        let (grid, block) = (n.div_ceil(256), 256);
        let stream: CUstream = std::ptr::null_mut();
        let legacy = d.get::<entries::cuLaunchKernel_v4000>()?;
        d.check(
            "cuLaunchKernel",
            legacy(func, grid, 1, 1, block, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut()),
        )?;
        let per_thread = d.get::<entries::cuLaunchKernel_v7000_ptsz>()?;
        d.check(
            "cuLaunchKernel_ptsz",
            per_thread(func, grid, 1, 1, block, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut()),
        )?;
        d.check("cuCtxSynchronize", d.get::<entries::cuCtxSynchronize_v2000>()?())?;
        let mut back = vec![0u32; n as usize];
        d.check("cuMemcpyDtoH", d.get::<entries::cuMemcpyDtoH_v3020>()?(back.as_mut_ptr().cast(), dptr, bytes))?;
        let wrong = back.iter().enumerate().filter(|(i, v)| **v != *i as u32 + 2).count();
        d.check("cuMemFree", d.get::<entries::cuMemFree_v3020>()?(dptr))?;
        d.check("cuModuleUnload", d.get::<entries::cuModuleUnload_v2000>()?(module))?;
        d.check("cuCtxDestroy", d.get::<entries::cuCtxDestroy_v4000>()?(ctx))?;
        println!("add_one launched twice (cuLaunchKernel and cuLaunchKernel_ptsz) over {n} words: {} wrong", wrong);
        Ok(wrong == 0)
    }
}

type GetProcAddressV2 = unsafe extern "system" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_uint) -> c_uint;
type GetProcAddressV1 = unsafe extern "system" fn(*const c_char, *mut *mut c_void, c_int, u64) -> c_uint;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Nanoseconds per call of `call` (a cuDriverGetVersion), over `n` calls.
fn ns_per_call<R>(n: usize, mut call: impl FnMut(*mut c_int) -> R) -> f64 {
    let mut v = 0;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(call(std::hint::black_box(&mut v)));
    }
    t.elapsed().as_secs_f64() * 1e9 / n as f64
}

/// Seconds for one first lookup of cuMemAlloc_v3020 on each of `drivers`.
fn first_lookups(drivers: &[Driver]) -> Result<f64> {
    let t = Instant::now();
    for d in drivers {
        std::hint::black_box(d.get::<entries::cuMemAlloc_v3020>()?);
    }
    Ok(t.elapsed().as_secs_f64())
}

/// Seconds for `n` bare `cuGetProcAddress_v2` calls with cuMemAlloc_v3020's arguments.
fn bare_lookups(raw: GetProcAddressV2, n: usize) -> f64 {
    let e = entries::cuMemAlloc_v3020::INFO;
    let t = Instant::now();
    for _ in 0..n {
        let mut p = std::ptr::null_mut();
        let mut status = 0;
        // SAFETY: a plain lookup with valid out-pointers.
        unsafe { raw(std::hint::black_box(e.c_symbol.as_ptr()), &mut p, e.version as c_int, e.flags.0, &mut status) };
        std::hint::black_box(p);
    }
    t.elapsed().as_secs_f64()
}

/// Runs both, ours first on even turns: (ours, bare).
fn in_turns(turn: usize, ours: impl FnOnce() -> Result<f64>, bare: impl FnOnce() -> f64) -> Result<(f64, f64)> {
    if turn % 2 == 0 {
        let o = ours()?;
        Ok((o, bare()))
    } else {
        let b = bare();
        Ok((ours()?, b))
    }
}

/// The cost of a call through a stand-in whose hook only forwards, against the same call of
/// the real driver: `cuDriverGetVersion` of the stand-in (`CUDA_SYS_GEN_LIBRARY`) and of the
/// real driver (`CUDA_SYS_GEN_CHECK_REAL`), `ROUNDS` (default 31) paired runs of 1,000,000
/// calls, each pair in alternating order; prints `metric ours baseline ratio`, the median
/// difference in ns, and the samples (`forward-samples\tOURS,...\tBASELINE,...`, ns per call,
/// for `cargo xtask bench --only forward`).
fn forward_bench(rounds: Option<&str>) -> Result<bool> {
    type Version = unsafe extern "system" fn(*mut c_int) -> c_uint;
    let rounds = match rounds {
        Some(r) => r
            .parse::<usize>()
            .ok()
            .filter(|&r| r > 0)
            .ok_or_else(|| format!("ROUNDS is {r:?}: give a count above 0"))?,
        None => 31,
    };
    let (Some(standin), Some(real)) =
        (std::env::var_os("CUDA_SYS_GEN_LIBRARY"), std::env::var_os("CUDA_SYS_GEN_CHECK_REAL"))
    else {
        return Err("set CUDA_SYS_GEN_LIBRARY to the stand-in and CUDA_SYS_GEN_CHECK_REAL to the real driver".into());
    };
    // SAFETY: both libraries' cuDriverGetVersion(int*), loaded by path.
    let standin = unsafe { libloading::Library::new(&standin) }?;
    let real = unsafe { libloading::Library::new(&real) }?;
    let ours: Version = *unsafe { standin.get::<Version>(b"cuDriverGetVersion\0") }?;
    let bare: Version = *unsafe { real.get::<Version>(b"cuDriverGetVersion\0") }?;
    // SAFETY: as above, with a valid out-pointer.
    let call = |f: Version| move |v: *mut c_int| unsafe { f(v) };
    let n = 1_000_000;
    // Warm: the stand-in opens the real driver on its first call.
    ns_per_call(n, call(ours));
    ns_per_call(n, call(bare));
    let (mut o, mut b, mut d) = (Vec::new(), Vec::new(), Vec::new());
    for turn in 0..rounds {
        let (x, y) = in_turns(turn, || Ok(ns_per_call(n, call(ours))), || ns_per_call(n, call(bare)))?;
        o.push(x);
        b.push(y);
        d.push(x - y);
    }
    let join = |v: &[f64]| v.iter().map(|x| format!("{x:.4}")).collect::<Vec<_>>().join(",");
    let samples = format!("forward-samples\t{}\t{}", join(&o), join(&b));
    let (o, b, d) = (median(&mut o), median(&mut b), median(&mut d));
    println!("forwarded-call-ns {o:.2} {b:.2} {:.3}", o / b);
    println!("forwarding-overhead-ns {d:.2} (median of {rounds} paired differences)");
    println!("{samples}");
    Ok(true)
}

/// Calls of the library named by `CUDA_SYS_GEN_LIBRARY` (the tracer) from 8 threads at once,
/// 500 rounds each of `cuDriverGetVersion`, `cuDeviceGetAttribute(MAX_THREADS_PER_BLOCK, 0)`
/// and `cuGetProcAddress_v2("cuMemAlloc", 3020, 0)`, so that a test can read the trace.
fn trace_threads() -> Result<bool> {
    type Version = unsafe extern "system" fn(*mut c_int) -> c_uint;
    type Attribute = unsafe extern "system" fn(*mut c_int, c_uint, c_int) -> c_uint;
    let path = std::env::var_os("CUDA_SYS_GEN_LIBRARY").ok_or("set CUDA_SYS_GEN_LIBRARY to the tracer")?;
    // SAFETY: the library's cuDriverGetVersion, cuDeviceGetAttribute and cuGetProcAddress_v2,
    // of their C prototypes, called with valid out-pointers.
    let lib = unsafe { libloading::Library::new(&path) }?;
    let version: Version = *unsafe { lib.get::<Version>(b"cuDriverGetVersion\0") }?;
    let attribute: Attribute = *unsafe { lib.get::<Attribute>(b"cuDeviceGetAttribute\0") }?;
    let lookup: GetProcAddressV2 = *unsafe { lib.get::<GetProcAddressV2>(b"cuGetProcAddress_v2\0") }?;
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(move || {
                for _ in 0..500 {
                    let (mut v, mut p, mut status) = (0, std::ptr::null_mut(), 0);
                    unsafe {
                        version(&mut v);
                        attribute(&mut v, 1, 0);
                        lookup(c"cuMemAlloc".as_ptr(), &mut p, 3020, 0, &mut status);
                    }
                }
            });
        }
    });
    Ok(true)
}

/// Calls of the library named by `CUDA_SYS_GEN_LIBRARY` (the tracer) whose output parameters a
/// driver fills without a GPU, and two that fail without one, printing what this caller
/// received (`received NAME RESULT name=value ...`, pointers as `{:#x}`), so that a test can
/// compare the trace's lines with it. With `CUDA_SYS_GEN_FAKE` (the fake libcuda's path, the
/// same file the tracer forwards to, so the same loaded copy), the fake is first given
/// `cuMemAlloc` at 3020 and `cuDriverGetVersion` at 2020 as its own exports of their names.
fn trace_outputs() -> Result<bool> {
    type Version = unsafe extern "system" fn(*mut c_int) -> c_uint;
    type Init = unsafe extern "system" fn(c_uint) -> c_uint;
    type DeviceGet = unsafe extern "system" fn(*mut c_int, c_int) -> c_uint;
    type ErrorName = unsafe extern "system" fn(c_uint, *mut *const c_char) -> c_uint;
    type AddAbi = unsafe extern "C" fn(*const c_char, c_int, c_int, usize);
    let path = std::env::var_os("CUDA_SYS_GEN_LIBRARY").ok_or("set CUDA_SYS_GEN_LIBRARY to the tracer")?;
    let _fake = match std::env::var_os("CUDA_SYS_GEN_FAKE") {
        Some(fake) => {
            // SAFETY: the fake's configuration function and two of its exports' addresses.
            let fake = unsafe { libloading::Library::new(&fake) }?;
            let add: AddAbi = *unsafe { fake.get::<AddAbi>(b"fake_add_abi\0") }?;
            for (symbol, version, export) in
                [(c"cuMemAlloc", 3020, &b"cuMemAlloc_v2\0"[..]), (c"cuDriverGetVersion", 2020, b"cuDriverGetVersion\0")]
            {
                let p = *unsafe { fake.get::<*mut c_void>(export) }?;
                unsafe { add(symbol.as_ptr(), version, 0, p as usize) };
            }
            Some(fake)
        }
        None => None,
    };
    // SAFETY: the library's exports, of these C prototypes, called with valid out-pointers
    // (never a NULL pfn).
    let lib = unsafe { libloading::Library::new(&path) }?;
    let version: Version = *unsafe { lib.get::<Version>(b"cuDriverGetVersion\0") }?;
    let lookup: GetProcAddressV2 = *unsafe { lib.get::<GetProcAddressV2>(b"cuGetProcAddress_v2\0") }?;
    let lookup_v1: GetProcAddressV1 = *unsafe { lib.get::<GetProcAddressV1>(b"cuGetProcAddress\0") }?;
    let init: Init = *unsafe { lib.get::<Init>(b"cuInit\0") }?;
    let device_get: DeviceGet = *unsafe { lib.get::<DeviceGet>(b"cuDeviceGet\0") }?;
    let error_name: ErrorName = *unsafe { lib.get::<ErrorName>(b"cuGetErrorName\0") }?;
    let mut v = 0;
    let r = unsafe { version(&mut v) };
    println!("received cuDriverGetVersion {r} driverVersion={v}");
    let (mut p, mut status) = (std::ptr::null_mut(), 77);
    let r = unsafe { lookup(c"cuMemAlloc".as_ptr(), &mut p, 3020, 0, &mut status) };
    println!("received cuGetProcAddress_v2 {r} pfn={p:#x} symbolFound={status}", p = p as usize);
    let mut p1 = std::ptr::null_mut();
    let r = unsafe { lookup_v1(c"cuDriverGetVersion".as_ptr(), &mut p1, 2020, 0) };
    println!("received cuGetProcAddress {r} pfn={p1:#x}", p1 = p1 as usize);
    let r = unsafe { init(0) };
    println!("received cuInit {r}");
    let mut dev = 12345;
    let r = unsafe { device_get(&mut dev, 0) };
    println!("received cuDeviceGet {r} device={dev}");
    let mut name = std::ptr::null();
    let r = unsafe { error_name(100, &mut name) };
    println!("received cuGetErrorName {r} pStr={:#x}", name as usize);
    Ok(true)
}

/// The test stand-in (`CUDA_SYS_GEN_LIBRARY`) with and without its hook of
/// `cuDriverGetVersion` (the real version plus 1, through `standin::forward`): called by name
/// and through the function `cuGetProcAddress_v2` hands out. Prints the four versions.
fn hook_check() -> Result<bool> {
    type Version = unsafe extern "system" fn(*mut c_int) -> c_uint;
    let path = std::env::var_os("CUDA_SYS_GEN_LIBRARY").ok_or("set CUDA_SYS_GEN_LIBRARY to the test stand-in")?;
    // SAFETY: the test stand-in's exports, of these prototypes.
    let lib = unsafe { libloading::Library::new(&path) }?;
    let by_name: Version = *unsafe { lib.get::<Version>(b"cuDriverGetVersion\0") }?;
    let lookup: GetProcAddressV2 = *unsafe { lib.get::<GetProcAddressV2>(b"cuGetProcAddress_v2\0") }?;
    let hook: unsafe extern "C" fn(c_int) =
        *unsafe { lib.get::<unsafe extern "C" fn(c_int)>(b"cuda_standin_test_hook\0") }?;
    let looked_up = || -> Result<Version> {
        let (mut p, mut status) = (std::ptr::null_mut(), 0);
        let r = unsafe { lookup(c"cuDriverGetVersion".as_ptr(), &mut p, 2020, 0, &mut status) };
        if r != 0 || p.is_null() || p as usize != by_name as usize {
            return Err(
                format!("cuGetProcAddress_v2 answered {r} -> {p:?}, not the stand-in's cuDriverGetVersion").into()
            );
        }
        // SAFETY: the stand-in's cuDriverGetVersion, as checked.
        Ok(unsafe { std::mem::transmute::<*mut c_void, Version>(p) })
    };
    let version = |f: Version| {
        let mut v = 0;
        // SAFETY: a valid out-pointer.
        let r = unsafe { f(&mut v) };
        (r, v)
    };
    let plain = (version(by_name), version(looked_up()?));
    unsafe { hook(1) };
    let hooked = (version(by_name), version(looked_up()?));
    unsafe { hook(0) };
    let after = version(by_name);
    println!("plain {plain:?} hooked {hooked:?} after {after:?}");
    let (r, v) = plain.0;
    Ok(r == 0 && v > 0 && plain.1 == (0, v) && hooked == ((0, v + 1), (0, v + 1)) && after == (0, v))
}

/// Lookup costs, paired in one run: prints `metric ours baseline ratio` lines (ns or ms).
fn bench() -> Result<bool> {
    let path = Driver::load()?.library().to_owned();
    let loader = Loader::open(std::path::Path::new(&path))?;
    let raw_addr = loader.dlsym("cuGetProcAddress_v2").ok_or("no cuGetProcAddress_v2")?;
    // SAFETY: the export has this signature (cuda.h).
    let raw: GetProcAddressV2 = unsafe { std::mem::transmute::<usize, GetProcAddressV2>(raw_addr) };
    let live: Vec<usize> = {
        let d = Driver::from_path(&path)?;
        let r = resolve_all(&d);
        (0..ENTRIES.len()).filter(|&i| r[i].is_ok()).collect()
    };
    if live.is_empty() {
        return Err("no entry resolves on this driver: nothing to measure".into());
    }
    let rounds = 31;
    // First lookups: a fresh Driver per round, every resolvable entry once (errors build
    // messages, which is not what is measured here), against the same (symbol, version,
    // flags) passed to the bare call. Then every entry, errors included, for the total.
    struct Live<'a>(&'a Driver, &'a [bool], usize);
    impl EntryVisitor for Live<'_> {
        fn visit<E: Entry>(&mut self) {
            if self.1[E::INDEX] {
                if let Ok(f) = self.0.get::<E>() {
                    std::hint::black_box(f);
                    self.2 += 1;
                }
            }
        }
    }
    let is_live: Vec<bool> = (0..ENTRIES.len()).map(|i| live.contains(&i)).collect();
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    let mut all_ms = Vec::new();
    for round in 0..rounds {
        let d = Driver::from_path(&path)?;
        let every_live = || {
            let t = Instant::now();
            let mut v = Live(&d, &is_live, 0);
            visit_entries(&mut v);
            Ok(t.elapsed().as_secs_f64() * 1e9 / v.2 as f64)
        };
        let bare_every_live = || {
            let t = Instant::now();
            for &i in &live {
                let e = &ENTRIES[i];
                let mut p = std::ptr::null_mut();
                let mut status = 0;
                // SAFETY: a plain lookup with valid out-pointers.
                unsafe { raw(e.c_symbol.as_ptr(), &mut p, e.version as c_int, e.flags.0, &mut status) };
                std::hint::black_box(p);
            }
            t.elapsed().as_secs_f64() * 1e9 / live.len() as f64
        };
        let (o, b) = in_turns(round, every_live, bare_every_live)?;
        ours.push(o);
        base.push(b);
        let d = Driver::from_path(&path)?;
        let t = Instant::now();
        std::hint::black_box(resolve_all(&d));
        all_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let (o, b) = (median(&mut ours), median(&mut base));
    println!("first lookup, every resolvable entry once (ns per entry)\t{o:.1}\t{b:.1}\t{:.3}", o / b);
    // The same entry's first lookup on many fresh drivers: one code path, warm caches, so
    // the figure is the shim's own cost over the bare call and not the instruction-cache
    // misses of 700 distinct monomorphized lookups.
    let k = 1000;
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let drivers: Vec<Driver> = (0..k).map(|_| Driver::from_path(&path)).collect::<std::result::Result<_, _>>()?;
        // Taking turns at going first, as below.
        let (o, b) = in_turns(round, || first_lookups(&drivers), || bare_lookups(raw, k))?;
        ours.push(o * 1e9 / k as f64);
        base.push(b * 1e9 / k as f64);
    }
    let (o, b) = (median(&mut ours), median(&mut base));
    println!("first lookup, cuMemAlloc_v3020 on {k} fresh drivers (ns)\t{o:.1}\t{b:.1}\t{:.3}", o / b);
    // The same with the drivers hot in the cache, as a program's one Driver is: batches of
    // 16 fresh drivers (100 KB) made just before they are timed. The 1000 above (6 MB of
    // slot tables) also time the memory traffic of drivers long evicted. Making a driver
    // (dlopen, dlsym, cuDriverGetVersion) disturbs the caches the driver's own lookup uses,
    // so whichever loop runs first after it pays for that: the two take turns.
    let (batch, batches) = (16, 64);
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut t_ours = 0.0;
        let mut t_base = 0.0;
        for turn in 0..batches {
            let drivers: Vec<Driver> =
                (0..batch).map(|_| Driver::from_path(&path)).collect::<std::result::Result<_, _>>()?;
            let (o, b) = in_turns(turn, || first_lookups(&drivers), || bare_lookups(raw, batch))?;
            t_ours += o;
            t_base += b;
        }
        ours.push(t_ours * 1e9 / (batch * batches) as f64);
        base.push(t_base * 1e9 / (batch * batches) as f64);
    }
    let (o, b) = (median(&mut ours), median(&mut base));
    println!(
        "first lookup, cuMemAlloc_v3020, {batch} fresh drivers at a time, hot (ns)\t{o:.1}\t{b:.1}\t{:.3}\t(+{:.2} ns)",
        o / b,
        o - b
    );
    println!(
        "resolve every entry ({} resolvable of {}), fresh driver (ms)\t{:.3}",
        live.len(),
        ENTRIES.len(),
        median(&mut all_ms)
    );
    // Cached lookup + call against a raw pointer call, on cuDriverGetVersion.
    let d = Driver::from_path(&path)?;
    let f = d.get::<entries::cuDriverGetVersion_v2020>()?;
    let n = 5_000_000;
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let cached = || {
            let g = || std::hint::black_box(&d).get::<entries::cuDriverGetVersion_v2020>();
            g()?;
            // SAFETY: a valid out-pointer; the lookup succeeded just before.
            Ok(ns_per_call(n, |v| unsafe { g().map(|g| g(v)) }))
        };
        // SAFETY: a valid out-pointer.
        let raw_pointer = || ns_per_call(n, |v| unsafe { std::hint::black_box(f)(v) });
        let (o, b) = in_turns(round, cached, raw_pointer)?;
        ours.push(o);
        base.push(b);
    }
    let (o, b) = (median(&mut ours), median(&mut base));
    println!("cached lookup + call (ns)\t{o:.2}\t{b:.2}\t{:.3}\t(+{:.2} ns)", o / b, o - b);
    // One call through the C-name module (process-wide driver, resolved on the first call)
    // against the same call through a resolved pointer.
    let mut v = 0;
    // SAFETY: a valid out-pointer.
    cuda_driver_pfn::api::check("cuDriverGetVersion", unsafe { cuda_driver_pfn::api::cuDriverGetVersion(&mut v) })?;
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // SAFETY: a valid out-pointer.
        let through_api = || Ok(ns_per_call(n, |v| unsafe { cuda_driver_pfn::api::cuDriverGetVersion(v) }));
        // SAFETY: a valid out-pointer.
        let raw_pointer = || ns_per_call(n, |v| unsafe { std::hint::black_box(f)(v) });
        let (o, b) = in_turns(round, through_api, raw_pointer)?;
        ours.push(o);
        base.push(b);
    }
    let (o, b) = (median(&mut ours), median(&mut base));
    println!("api::cuDriverGetVersion call vs resolved pointer (ns)\t{o:.2}\t{b:.2}\t{:.3}\t(+{:.2} ns)", o / b, o - b);
    Ok(true)
}

/// Every function of the C-name module: the pointer it calls (resolved through the module's
/// own driver) against `dlsym` of the name cuda.h's macros make of it.
fn c_names() -> Result<bool> {
    let driver = cuda_driver_pfn::api::driver()?;
    let loader = Loader::open(std::path::Path::new(driver.library()))?;
    let (mut same, mut not_exported, mut missing, mut different) = (0, 0, Vec::new(), Vec::new());
    for &(c_name, index) in cuda_driver_pfn::api::C_NAMES {
        let info = &ENTRIES[index];
        match (driver.resolve(info), loader.dlsym(info.exported)) {
            (Ok(p), Some(q)) if p.as_ptr() as usize == q => same += 1,
            (Ok(p), Some(q)) => different.push(format!(
                "{c_name}: {} at {:#x}, dlsym({}) {:#x} ({})",
                info.pfn,
                p.as_ptr() as usize,
                info.exported,
                q,
                loader.dladdr(q).unwrap_or_default()
            )),
            // cuda.h's names are the driver's exports: one that is not names a wrong entry.
            (Ok(_), None) => {
                not_exported += 1;
                different.push(format!("{c_name}: {} resolves, but dlsym({}) finds nothing", info.pfn, info.exported));
            }
            // Unavailable: what the function returns its lookup code for must be this error, and the
            // driver must not serve the entry under its name.
            (Err(e), export) => {
                if cuda_driver_pfn::api::error_of(c_name).as_ref() != Some(&e) {
                    different.push(format!(
                        "{c_name}: error_of says {:?}, the lookup {e}",
                        cuda_driver_pfn::api::error_of(c_name)
                    ));
                }
                if let Some(q) = export {
                    different.push(format!("{c_name}: refused ({e}), but dlsym({}) is {q:#x}", info.exported));
                }
                missing.push(format!("{c_name} ({}): {e}", info.pfn));
            }
        }
    }
    println!(
        "C names: {} functions; {same} equal to dlsym of their exported name, {not_exported} resolved but not exported under that name, {} not on this driver, {} different",
        cuda_driver_pfn::api::C_NAMES.len(),
        missing.len(),
        different.len()
    );
    for m in &missing {
        println!("  not on this driver: {m}");
    }
    for d in &different {
        println!("  DIFFERENT: {d}");
    }
    Ok(different.is_empty())
}

/// The driver's raw answers to the probe requests, one per line (what the fake must answer
/// alike: tests/tests/real_drivers.rs).
fn probe() -> Result<bool> {
    let driver = Driver::load()?;
    let loader = Loader::open(std::path::Path::new(driver.library()))?;
    // SAFETY: the library is loaded already; this takes another reference.
    let lib = unsafe { libloading::Library::new(driver.library()) }?;
    println!("driver {}", driver.version());
    for line in cuda_sys_gen_tests::conformance::probe(&lib, driver.version(), &|p| entry_named(loader.dladdr(p))) {
        println!("{line}");
    }
    Ok(true)
}

/// Every request of the answer check (`conformance::answer_requests`) made of the driver, its
/// answers compared with the registry's rule (`cuda_driver_pfn::answer::driver_answer`): the
/// count and every difference. `CUDA_SYS_GEN_LIBRARY=PATH` checks that library instead of the
/// one the loader finds (a stand-in, say), with the version the driver it loads reports.
fn answers() -> Result<bool> {
    let driver = Driver::load()?;
    let path = std::env::var_os("CUDA_SYS_GEN_LIBRARY").map_or_else(|| PathBuf::from(driver.library()), PathBuf::from);
    let loader = Loader::open(&path)?;
    // SAFETY: as in `probe`.
    let lib = unsafe { libloading::Library::new(&path) }?;
    // A stand-in (it exports `cuda_standin_forward`): each function handed out must be its own
    // export of the entry's name, forwarding to the real driver's (`CUDA_SYS_GEN_CHECK_REAL`).
    type Forward = unsafe extern "C" fn(usize) -> *mut c_void;
    // SAFETY: the test stand-in's own export, of this prototype.
    let forward = unsafe { lib.get::<Forward>(b"cuda_standin_forward\0") }.ok().map(|f| *f);
    let real = match (forward, std::env::var_os("CUDA_SYS_GEN_CHECK_REAL")) {
        (Some(_), Some(p)) => Some(Loader::open(std::path::Path::new(&p))?),
        (Some(_), None) => {
            return Err("a stand-in is checked against the real driver named by CUDA_SYS_GEN_CHECK_REAL".into())
        }
        _ => None,
    };
    let also = |e: &'static cuda_driver_pfn::EntryInfo, p: usize| -> std::result::Result<(), String> {
        let (Some(forward), Some(real)) = (forward, &real) else { return Ok(()) };
        let ours = loader.dlsym(e.exported);
        if ours != Some(p) {
            return Err(format!("handed out {p:#x}, not the stand-in's {} ({ours:x?})", e.exported));
        }
        let index = e.index().ok_or("a row of ENTRIES")?;
        // SAFETY: as above.
        let to = unsafe { forward(index) } as usize;
        match real.dlsym(e.exported) {
            // The lookup functions forward to the stand-in's interception of them.
            Some(r) if e.symbol == "cuGetProcAddress" && to != 0 && to != r => Ok(()),
            Some(r) if r == to && e.symbol != "cuGetProcAddress" => Ok(()),
            r => Err(format!("the stand-in's {} forwards to {to:#x}, the real driver's export is {r:x?}", e.exported)),
        }
    };
    // A stand-in has the lookup functions the real driver has: `dlsym` finds no other (the
    // stand-in exports them as indirect functions that resolve to NULL there).
    let lookups = match &real {
        Some(real) => {
            let has = |name: &str| real.dlsym(name).is_some();
            let (v2, v1) = (has("cuGetProcAddress_v2"), has("cuGetProcAddress"));
            for (name, has) in [("cuGetProcAddress_v2", v2), ("cuGetProcAddress", v1)] {
                if let Some(ours) = loader.dlsym(name).filter(|_| !has) {
                    println!("DIFFERENT {name}, which the real driver lacks, is found in the stand-in at {ours:#x}");
                    return Ok(false);
                }
            }
            if !v2 && !v1 {
                println!(
                    "answers of {}: the real driver has no lookup function, so the stand-in answers none: 0 requests, 0 different",
                    path.display()
                );
                return Ok(true);
            }
            cuda_sys_gen_tests::conformance::Lookups { v2, v1 }
        }
        None => cuda_sys_gen_tests::conformance::Lookups { v2: true, v1: true },
    };
    let check =
        cuda_sys_gen_tests::conformance::check_answers(&lib, driver.version(), &|p| named(&loader, p), &also, lookups);
    for d in &check.differences {
        println!("DIFFERENT {d}");
    }
    println!(
        "answers of {} (driver version {}): {} requests ({} through cuGetProcAddress_v2, {} through cuGetProcAddress, {} by export), {} different",
        path.display(),
        driver.version(),
        check.requests,
        check.by_api[0],
        check.by_api[1],
        check.by_api[2],
        check.differences.len()
    );
    Ok(check.differences.is_empty())
}

/// The newest cuda.h's `cuCtxCreate` is `cuCtxCreate_v4(pctx,
/// ctxCreateParams, flags, dev)`; a port of an older `cuCtxCreate(&ctx, 0, dev)` that follows
/// rustc's suggestion passes null for `ctxCreateParams`. What the driver does with it, measured:
/// the line before the call is printed first, so a crash leaves it as the last line.
fn ctx_create_null() -> Result<bool> {
    let d = Driver::load()?;
    println!("driver {}", d.version());
    d.check("cuInit", unsafe { d.get::<entries::cuInit_v2000>()?(0) })?;
    let mut dev: CUdevice = 0;
    d.check("cuDeviceGet", unsafe { d.get::<entries::cuDeviceGet_v2000>()?(&mut dev, 0) })?;
    let create = d.get::<entries::cuCtxCreate_v12050>()?;
    let mut ctx: CUcontext = std::ptr::null_mut();
    println!("calling cuCtxCreate_v4(&ctx, NULL, 0, dev {dev})");
    use std::io::Write;
    std::io::stdout().flush()?;
    // SAFETY: the measurement itself; every other argument is valid.
    let r = unsafe { create(&mut ctx, std::ptr::null_mut(), 0, dev) };
    let name = d.error_name(r.0).unwrap_or_else(|| format!("code {}", r.0));
    println!("cuCtxCreate_v4 with ctxCreateParams = NULL returned {name} ({}); context {ctx:p}", r.0);
    if r.0 == 0 && !ctx.is_null() {
        d.check("cuCtxDestroy", unsafe { d.get::<entries::cuCtxDestroy_v4000>()?(ctx) })?;
    }
    Ok(true)
}

/// The exported name of the function at `p`: `dladdr`'s, else the lookup function whose
/// `dlsym` is `p` (a stand-in exports those as indirect functions, whose address is what their
/// resolver answers, not the symbol's own).
fn named(loader: &cuda_sys_gen_tests::conformance::Loader, p: usize) -> Option<String> {
    loader.dladdr(p).or_else(|| {
        ["cuGetProcAddress", "cuGetProcAddress_v2"].into_iter().find(|n| loader.dlsym(n) == Some(p)).map(str::to_owned)
    })
}
