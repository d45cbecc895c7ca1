//! The fake libcuda of `tests/fake-libcuda`, built on demand and loaded as separate copies.
//!
//! A crate of its own (and not a module of the tests crate) so that the race tests in
//! `tests/race` can use it without building the generator: that crate is built with
//! ThreadSanitizer (`cargo xtask tsan`), and everything it depends on with it.
//!
//! How the tests find it: the first test that needs a flavour (a feature set of the fake)
//! runs `cargo build -p fake-libcuda` with the cargo that runs the tests (`env!("CARGO")`),
//! offline, into `target/fake-libcuda/<flavour>/`: one target folder per flavour, so that
//! flavours never overwrite each other's file, and the lock of the outer build's target
//! folder is not needed. The build is cached by cargo across runs and by a mutex within one.
//!
//! Each [`Fake`] is a fresh copy of that file in a temporary folder. The dynamic loader
//! keeps one instance per file, so each copy has its own statics: its own table, knobs and
//! log, and tests in one process run in parallel without sharing a driver. The test opens
//! the copy itself to configure it, then hands the same path to `Driver::from_path`, which
//! gets the same instance.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_uint, CString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The repository root (this crate is `tests/fake-client`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).map(Path::to_owned).unwrap_or_default()
}

/// Which exports the fake has (its cargo features).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Flavour {
    /// Everything: a driver of CUDA 12.0 or later, a runtime of 12.5 or later.
    Full,
    /// Only the 4-argument `cuGetProcAddress`: a driver of CUDA 11.3 to 11.8.
    V1Only,
    /// No `cuGetProcAddress` at all: a driver older than 11.3.
    NoProcAddress,
    /// No `cuGetProcAddress` and no `cuDriverGetVersion` (nor `cuGetErrorName`).
    NoProcAddressBare,
    /// No `cuDriverGetVersion` and no `cuGetErrorName` exported.
    Bare,
    /// A runtime with `cudaGetDriverEntryPoint` only (older than 12.5).
    OldRuntime,
    /// A runtime with neither entry point function (older than 11.3).
    AncientRuntime,
}

impl Flavour {
    fn features(self) -> &'static str {
        match self {
            Flavour::Full => "",
            Flavour::V1Only => "no-v2",
            Flavour::NoProcAddress => "no-v2,no-v1",
            Flavour::NoProcAddressBare => "no-v2,no-v1,no-driver-version,no-error-name",
            Flavour::Bare => "no-driver-version,no-error-name",
            Flavour::OldRuntime => "no-by-version",
            Flavour::AncientRuntime => "no-by-version,no-entry-point",
        }
    }

    fn dir(self) -> String {
        format!("{self:?}").to_lowercase()
    }
}

/// Builds the flavour once; returns the library's path.
pub fn build(flavour: Flavour) -> PathBuf {
    static BUILT: Mutex<BTreeMap<Flavour, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(&flavour) {
        return p.clone();
    }
    let target = repo_root().join("target").join("fake-libcuda").join(flavour.dir());
    let mut cmd = std::process::Command::new(env!("CARGO"));
    cmd.args(["build", "--quiet", "--offline", "-p", "fake-libcuda", "--manifest-path"])
        .arg(repo_root().join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        // The fake is built as a driver would be, whatever flags the tests were built with
        // (`cargo xtask tsan` sets RUSTFLAGS for its own build only).
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    if !flavour.features().is_empty() {
        cmd.args(["--features", flavour.features()]);
    }
    let out = cmd.output().expect("run cargo to build the fake libcuda");
    assert!(
        out.status.success(),
        "building fake-libcuda ({flavour:?}) failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = format!("{}fake_libcuda{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    let path = target.join("debug").join(file);
    assert!(path.is_file(), "cargo built fake-libcuda but {} is missing", path.display());
    built.insert(flavour, path.clone());
    path
}

/// The value the fake hands out for registry entry `index`: never called, only compared.
pub fn pointer_for(index: usize) -> usize {
    0x1000_0000 + 0x10 * index
}

/// Which exported function a request came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    V1,
    V2,
    RuntimeByVersion,
    RuntimeEntryPoint,
}

/// One request the fake saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub symbol: String,
    pub version: i32,
    pub flags: u64,
    pub api: Api,
}

/// One copy of the fake, loaded and configurable.
pub struct Fake {
    // Fields drop in order: the handle, then the folder with the file (a driver loaded
    // from it keeps its own reference, and the mapping outlives the file).
    lib: libloading::Library,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

macro_rules! call {
    ($self:ident, $name:literal: fn($($t:ty),*) $(-> $r:ty)? $(, $arg:expr)* $(,)?) => {{
        // SAFETY: the fake's own configuration functions, with their prototypes.
        let f = unsafe { $self.lib.get::<unsafe extern "C" fn($($t),*) $(-> $r)?>(concat!($name, "\0").as_bytes()) }
            .unwrap_or_else(|e| panic!("the fake has no {}: {e}", $name));
        unsafe { f($($arg),*) }
    }};
}

impl Fake {
    /// A fresh copy of the flavour, reset: driver and runtime version 13.5, empty table.
    pub fn new(flavour: Flavour) -> Fake {
        let built = build(flavour);
        let dir = tempfile::Builder::new().prefix("fake-libcuda-").tempdir().expect("temp dir");
        let path = dir.path().join(built.file_name().expect("a file name"));
        std::fs::copy(&built, &path).unwrap_or_else(|e| panic!("copy {}: {e}", built.display()));
        // SAFETY: the fake's initialisers are Rust's own; it has no constructors.
        let lib = unsafe { libloading::Library::new(&path) }.unwrap_or_else(|e| panic!("load {}: {e}", path.display()));
        let fake = Fake { lib, path, _dir: dir };
        fake.reset();
        fake
    }

    /// The fake at `path` as it is (no copy, no reset): for a process whose `Driver::load`
    /// finds that file by its soname, so that both share one copy's state.
    pub fn open(path: &Path) -> Fake {
        // SAFETY: as in `new`.
        let lib = unsafe { libloading::Library::new(path) }.unwrap_or_else(|e| panic!("load {}: {e}", path.display()));
        let dir = tempfile::Builder::new().prefix("fake-libcuda-").tempdir().expect("temp dir");
        Fake { lib, path: path.to_owned(), _dir: dir }
    }

    /// Where the copy is: give this to `Driver::from_path`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn reset(&self) {
        call!(self, "fake_reset": fn());
    }

    pub fn set_driver_version(&self, v: u32) {
        self.set_driver_version_raw(v as c_int);
    }

    /// What `cuDriverGetVersion` writes, including values no driver has (0, negative).
    pub fn set_driver_version_raw(&self, v: c_int) {
        call!(self, "fake_set_driver_version": fn(c_int), v);
    }

    /// What `cuDriverGetVersion` returns instead of success.
    pub fn set_version_result(&self, code: u32) {
        call!(self, "fake_set_version_result": fn(c_uint), code);
    }

    pub fn set_runtime_version(&self, v: u32) {
        call!(self, "fake_set_runtime_version": fn(c_int), v as c_int);
    }

    /// What `cudaRuntimeGetVersion` and the runtime's entry point lookups fail with (0:
    /// success), as NVIDIA's runtimes were measured to without a GPU.
    pub fn set_runtime_failures(&self, version: u32, entry_point: u32) {
        call!(self, "fake_set_runtime_failures": fn(c_uint, c_uint), version, entry_point);
    }

    /// An ABI the driver has.
    pub fn add_abi(&self, symbol: &str, version: u32, per_thread: bool, ptr: usize) {
        let s = CString::new(symbol).expect("no NUL in a symbol");
        call!(self, "fake_add_abi": fn(*const c_char, c_int, c_int, usize), s.as_ptr(), version as c_int, per_thread as c_int, ptr);
    }

    /// Requests for `symbol` at `version` (0: any) get exactly this answer ([`answers`]
    /// names the values); status [`answers::UNWRITTEN`] leaves `symbolStatus` unwritten.
    pub fn answer(&self, symbol: &str, version: u32, result: u32, status: i32, ptr: usize) {
        let s = CString::new(symbol).expect("no NUL in a symbol");
        call!(self, "fake_override": fn(*const c_char, c_int, c_uint, c_int, usize), s.as_ptr(), version as c_int, result, status, ptr);
    }

    /// Fault injection, no real driver's behaviour: "version not sufficient" as
    /// `CUDA_ERROR_NOT_FOUND` rather than a status (the guide's 4.20.3.1; the drivers measured
    /// answer with the status).
    pub fn set_not_sufficient_as_not_found(&self, on: bool) {
        call!(self, "fake_set_not_sufficient_as_not_found": fn(c_int), on as c_int);
    }

    pub fn set_delay_us(&self, us: u32) {
        call!(self, "fake_set_delay_us": fn(c_uint), us);
    }

    pub fn log_len(&self) -> usize {
        call!(self, "fake_log_len": fn() -> usize)
    }

    pub fn clear_log(&self) {
        call!(self, "fake_log_clear": fn());
    }

    /// Every request so far, in order.
    pub fn log(&self) -> Vec<Request> {
        let mut out = Vec::new();
        for i in 0.. {
            let mut buf = [0 as c_char; 256];
            let (mut version, mut flags, mut api) = (0, 0u64, 0);
            let more = call!(self, "fake_log_entry": fn(usize, *mut c_char, usize, *mut c_int, *mut u64, *mut c_int) -> c_int,
                i, buf.as_mut_ptr(), buf.len(), &mut version, &mut flags, &mut api);
            if more == 0 {
                break;
            }
            // SAFETY: fake_log_entry NUL-terminates within the buffer.
            let symbol = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
            let api = match api {
                1 => Api::V1,
                2 => Api::V2,
                3 => Api::RuntimeByVersion,
                4 => Api::RuntimeEntryPoint,
                n => panic!("the fake logged an unknown entry point {n}"),
            };
            out.push(Request { symbol, version, flags, api });
        }
        out
    }

    /// The address of one of the fake's exports (`fake_cuDriverGetVersion`).
    pub fn export(&self, name: &str) -> usize {
        let name = CString::new(name).expect("no NUL");
        // SAFETY: only the address is taken.
        let p = unsafe { self.lib.get::<*mut std::ffi::c_void>(name.as_bytes_with_nul()) }
            .unwrap_or_else(|e| panic!("{e}"));
        *p as usize
    }
}

/// The values [`Fake::answer`] takes: `CUresult`s and `symbolStatus`es as cuda.h numbers them.
pub mod answers {
    pub const SUCCESS: u32 = 0;
    pub const INVALID_VALUE: u32 = 1;
    pub const NOT_FOUND: u32 = 500;
    /// The status is not written at all.
    pub const UNWRITTEN: i32 = -1;
    pub const STATUS_SYMBOL_NOT_FOUND: i32 = 1;
    pub const STATUS_VERSION_NOT_SUFFICIENT: i32 = 2;
}
