//! What a program ported from C leans on: `CUresult` that prints itself, calls that
//! name themselves in their errors, user-declared tables with their minimum driver, and
//! cuda.h's cast constants.

use cuda_driver_pfn::types::{cudaError_enum, CUresult, CU_DEVICE_CPU, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD};
use cuda_driver_pfn::{entries, entry_table, min_driver, Driver, Entry, Error, TOOLKITS};
use cuda_sys_gen_tests::fake::{Fake, Flavour};
use cuda_sys_gen_tests::*;

#[test]
fn cuda_result_prints_its_name_without_a_driver() {
    let invalid: CUresult = cudaError_enum::CUDA_ERROR_INVALID_VALUE;
    assert_eq!(format!("{invalid:?}"), "CUDA_ERROR_INVALID_VALUE");
    assert_eq!(
        invalid.to_string(),
        "CUDA_ERROR_INVALID_VALUE (1): This indicates that one or more of the parameters passed to the API call is \
         not within an acceptable range of values."
    );
    assert_eq!(invalid.description(), Some(&invalid.to_string()["CUDA_ERROR_INVALID_VALUE (1): ".len()..]));
    assert_eq!(invalid.name(), Some("CUDA_ERROR_INVALID_VALUE"));
    assert_eq!(invalid.result(), Err(invalid));
    assert_eq!(cudaError_enum::CUDA_SUCCESS.result(), Ok(()));
    let unknown = cudaError_enum(987_654);
    assert_eq!(format!("{unknown:?}"), "CUresult(987654)");
    assert!(unknown.to_string().contains("987654"), "{unknown}");
    // Usable as a `?` error where a program wants only the code.
    let boxed: Box<dyn std::error::Error> = Box::new(invalid);
    assert!(boxed.to_string().starts_with("CUDA_ERROR_INVALID_VALUE (1): This indicates"), "{boxed}");
}

#[test]
fn a_call_through_a_marker_names_its_entry() {
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version(13050);
    fake.add_abi("cuDriverGetVersion", 2020, false, fake.export("fake_cuDriverGetVersion"));
    let driver = Driver::from_path(fake.path()).unwrap();
    let mut v = 0;
    driver.call::<entries::cuDriverGetVersion_v2020>(|f| unsafe { f(&mut v) }).unwrap();
    assert_eq!(v, 13050);
    fake.set_version_result(2); // CUDA_ERROR_OUT_OF_MEMORY
    let err = driver.call::<entries::cuDriverGetVersion_v2020>(|f| unsafe { f(&mut v) }).unwrap_err();
    assert!(matches!(&err, Error::Call { function, code: 2, .. } if function == "cuDriverGetVersion"), "{err:?}");
    assert!(err.to_string().starts_with("cuDriverGetVersion failed with"), "{err}");
    // cuda.h's description of the code follows its name, as cuGetErrorString's text would.
    let shown = cudaError_enum(2).to_string();
    let (_, described) = shown.split_once(": ").expect("CUresult shows cuda.h's description");
    assert!(err.to_string().ends_with(&format!(": {described}")), "{err}");
    // A missing entry is the lookup's error, not a call's.
    let err = driver.call::<entries::cuMemAlloc_v3020>(|f| unsafe { f(std::ptr::null_mut(), 0) }).unwrap_err();
    assert!(matches!(err, Error::SymbolNotFound { .. }), "{err:?}");
}

entry_table! {
    /// A program's entries: the newest is cuCtxCreate_v12050, so it needs CUDA 12.5.
    struct Program {
        init: entries::cuInit_v2000,
        ctx_create: entries::cuCtxCreate_v12050,
        mem_alloc: entries::cuMemAlloc_v3020,
        launch: entries::cuLaunchKernel_v4000,
    }
}

entry_table! {
    /// Fields behind a `cfg` are left out of the struct, the load and the minimum driver.
    struct Gated {
        /// A documented field.
        init: entries::cuInit_v2000,
        #[cfg(any())]
        ctx_create: entries::cuCtxCreate_v12050,
    }
}

#[test]
fn a_table_s_cfg_fields_are_left_out_everywhere() {
    const { assert!(Gated::MIN_DRIVER == 2000) };
    let fake = Fake::new(Flavour::Full);
    fake.add_abi("cuInit", 2000, false, 0x1000);
    let table = Gated::load(&Driver::from_path(fake.path()).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(table.init as usize, 0x1000);
}

#[test]
fn a_declared_table_knows_its_minimum_driver_and_lists_every_missing_entry() {
    const { assert!(Program::MIN_DRIVER == 12050) };
    assert_eq!(min_driver(&[]), 0);
    assert_eq!(min_driver(&[entries::cuInit_v2000::VERSION, entries::cuMemAlloc_v3020::VERSION]), 3020);

    let every = fake_with_every_entry(Flavour::Full);
    let driver = Driver::from_path(every.path()).unwrap();
    let table = Program::load(&driver).unwrap();
    assert_eq!(table.mem_alloc as usize, fake::pointer_for(entries::cuMemAlloc_v3020::INDEX));
    let _ = (table.init, table.ctx_create, table.launch);

    // A 12.0 driver that has only cuInit: three entries missing, all named at once.
    let fake = Fake::new(Flavour::Full);
    fake.set_driver_version(12000);
    fake.add_abi("cuInit", 2000, false, 0x1000);
    let driver = Driver::from_path(fake.path()).unwrap();
    let Err(err) = Program::load(&driver) else { panic!("a table with missing entries loaded") };
    let Error::MissingEntries { table, min_driver, errors } = &err else { panic!("{err:?}") };
    assert_eq!((*table, *min_driver, errors.len()), ("Program", 12050, 3), "{err}");
    let text = err.to_string();
    for name in ["cuCtxCreate", "cuMemAlloc", "cuLaunchKernel"] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    assert!(text.contains("CUDA 12.5"), "{text}");
    assert!(!text.contains("cuInit"), "{text}");
}

/// Flags as C writes them: plain integers that the functions' `flags` parameters take.
#[test]
fn flags_need_no_dot_zero() {
    use cuda_driver_pfn::types::{
        CUctx_flags, CUstream_flags, CU_CTX_MAP_HOST, CU_CTX_SCHED_SPIN, CU_STREAM_NON_BLOCKING,
    };
    let flags = CU_CTX_SCHED_SPIN | CU_CTX_MAP_HOST;
    assert_eq!(flags, CUctx_flags::CU_CTX_SCHED_SPIN.0 | CUctx_flags::CU_CTX_MAP_HOST.0);
    assert_eq!(CU_STREAM_NON_BLOCKING, CUstream_flags::CU_STREAM_NON_BLOCKING.0);
    // They type-check where cuda.h's prototypes take `unsigned int Flags` (never called here).
    let _create = || unsafe { cuda_driver_pfn::api::cuStreamCreate(std::ptr::null_mut(), CU_STREAM_NON_BLOCKING) };
    let _ctx = || unsafe { cuda_driver_pfn::api::cuCtxCreate(std::ptr::null_mut(), std::ptr::null_mut(), flags, 0) };
}

/// The cast constants the emitter writes by hand are cuda.h's own, in the newest toolkit.
#[test]
fn cast_constants_are_cuda_h_s() {
    let newest = TOOLKITS.last().unwrap();
    let pkg = cached_include(newest, false);
    let cuda_h = std::fs::read_to_string(pkg.join("cuda.h")).unwrap();
    let define = |name: &str| -> String {
        let line = cuda_h
            .lines()
            .find(|l| l.split_whitespace().take(2).eq(["#define", name]))
            .unwrap_or_else(|| panic!("cuda.h {newest} does not define {name}"));
        line.split_whitespace().skip(2).collect()
    };
    for (name, _, c_type, value, _) in codegen::emit::CAST_CONSTANTS {
        let body = define(name);
        let inner = body
            .strip_prefix(&format!("(({c_type})"))
            .and_then(|b| b.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{name} is `{body}` in cuda.h, not a cast to {c_type}"));
        // `((void*)CU_LAUNCH_PARAM_END_AS_INT)`: the value is one more #define away.
        let inner = if inner.starts_with("CU_") { define(inner) } else { inner.to_owned() };
        assert_eq!(inner, *value, "{name}");
    }
    assert_eq!(CU_STREAM_LEGACY as usize, 1);
    assert_eq!(CU_STREAM_PER_THREAD as usize, 2);
    assert_eq!(CU_DEVICE_CPU, -1);
}
