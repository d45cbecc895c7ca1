//! `min-driver` over binaries no one here wrote, for the platforms this machine cannot build
//! for: NVIDIA's own wheels on PyPI, the Windows x86-64 (PE) and Linux aarch64 builds of
//! CUDA 12.9's runtime (`cudart64_12.dll`, `libcudart.so.12`) and of nvJPEG 12.4
//! (`nvjpeg64_12.dll`, `libnvjpeg.so.12`: a static runtime and fatbins of cubins and
//! LZ4-compressed PTX; a PE program's fatbin section is `.nv_fatb`, its name cut to 8 bytes).
//!
//! The wheels are pinned by version and SHA256, fetched with `pip download` into
//! `target/min-driver-wheels/` once (cached; about 17 MB) and the one library needed taken out
//! of each. Without pip or a network the test prints SKIPPED and why; with `CI=true` it fails
//! instead.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use cuda_sys_gen::min_driver::{floor, floor_on, Floor, Reading};
use cuda_sys_gen_tests::*;
use sha2::{Digest, Sha256};

/// One binary of one pinned wheel.
struct Pin {
    /// `name==version` for pip.
    spec: &'static str,
    /// pip's `--platform`.
    platform: &'static str,
    wheel: &'static str,
    sha256: &'static str,
    /// The member of the wheel that is read.
    member: &'static str,
}

const CUDART_WINDOWS: Pin = Pin {
    spec: "nvidia-cuda-runtime-cu12==12.9.79",
    platform: "win_amd64",
    wheel: "nvidia_cuda_runtime_cu12-12.9.79-py3-none-win_amd64.whl",
    sha256: "8e018af8fa02363876860388bd10ccb89eb9ab8fb0aa749aaf58430a9f7c4891",
    member: "nvidia/cuda_runtime/bin/cudart64_12.dll",
};

const CUDART_AARCH64: Pin = Pin {
    spec: "nvidia-cuda-runtime-cu12==12.9.79",
    platform: "manylinux2014_aarch64",
    wheel: "nvidia_cuda_runtime_cu12-12.9.79-py3-none-manylinux2014_aarch64.manylinux_2_17_aarch64.whl",
    sha256: "83469a846206f2a733db0c42e223589ab62fd2fabac4432d2f8802de4bded0a4",
    member: "nvidia/cuda_runtime/lib/libcudart.so.12",
};

const NVJPEG_WINDOWS: Pin = Pin {
    spec: "nvidia-nvjpeg-cu12==12.4.0.76",
    platform: "win_amd64",
    wheel: "nvidia_nvjpeg_cu12-12.4.0.76-py3-none-win_amd64.whl",
    sha256: "21923726db667bd53050d0de88320983ff423322b7f376057dd943e487c40abc",
    member: "nvidia/nvjpeg/bin/nvjpeg64_12.dll",
};

const NVJPEG_AARCH64: Pin = Pin {
    spec: "nvidia-nvjpeg-cu12==12.4.0.76",
    platform: "manylinux2014_aarch64",
    wheel: "nvidia_nvjpeg_cu12-12.4.0.76-py3-none-manylinux2014_aarch64.manylinux_2_17_aarch64.whl",
    sha256: "f52c5ef7cf56e8bffac8903a59f14494017a52e4fe89d5a1d16c1e88d7bbf194",
    member: "nvidia/nvjpeg/lib/libnvjpeg.so.12",
};

fn cache() -> PathBuf {
    repo_root().join("target/min-driver-wheels")
}

fn sha256_of(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|b| hex::encode(Sha256::digest(b)))
}

/// The pinned wheel's binary: taken from the cache, else downloaded (and checked) first.
/// `Err` says why it could not be fetched.
fn fetch(pin: &Pin) -> Result<PathBuf, String> {
    let dir = cache();
    let wheel = dir.join(pin.wheel);
    let out = dir.join(pin.wheel.trim_end_matches(".whl")).join(Path::new(pin.member).file_name().unwrap());
    if out.is_file() && sha256_of(&wheel).as_deref() == Some(pin.sha256) {
        return Ok(out);
    }
    std::fs::create_dir_all(&dir).unwrap();
    if sha256_of(&wheel).as_deref() != Some(pin.sha256) {
        let tmp = tempfile::tempdir_in(&dir).unwrap();
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let o = Command::new(&python)
            .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check"])
            .args(["--platform", pin.platform, "--dest"])
            .arg(tmp.path())
            .arg(pin.spec)
            .output()
            .map_err(|e| format!("could not run `{python} -m pip`: {e}"))?;
        if !o.status.success() {
            return Err(format!("pip download {} ({}): {}", pin.spec, pin.platform, text(&o.stderr)));
        }
        let got = tmp.path().join(pin.wheel);
        let digest = sha256_of(&got).unwrap_or_else(|| panic!("pip did not write {}", pin.wheel));
        assert_eq!(digest, pin.sha256, "{}: not the wheel pinned here (the hash differs)", pin.wheel);
        std::fs::rename(&got, &wheel).unwrap();
    }
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&wheel).unwrap()).unwrap();
    let mut member = zip.by_name(pin.member).unwrap_or_else(|e| panic!("{}: no {}: {e}", pin.wheel, pin.member));
    let mut bytes = Vec::new();
    member.read_to_end(&mut bytes).unwrap();
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let part = out.with_extension("part");
    std::fs::write(&part, &bytes).unwrap();
    std::fs::rename(&part, &out).unwrap();
    Ok(out)
}

/// Every pinned binary, or `None` (SKIPPED, said why) where they cannot be fetched outside CI.
fn fetched(pins: &[&Pin]) -> Option<Vec<PathBuf>> {
    let mut out = Vec::new();
    for pin in pins {
        match fetch(pin) {
            Ok(p) => out.push(p),
            Err(why) if std::env::var("CI").as_deref() != Ok("true") => {
                eprintln!("SKIPPED: NVIDIA's wheels could not be fetched: {why}");
                return None;
            }
            Err(why) => panic!("{why}"),
        }
    }
    Some(out)
}

fn registry() -> PathBuf {
    repo_root().join("generated/registry.json")
}

fn floor_of(path: &Path) -> Floor {
    floor(&registry(), &[path.to_owned()]).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

/// The CUDA runtime itself, for Windows x86-64 and Linux aarch64: it needs what a CUDA 12
/// runtime needs, a driver of CUDA 12.0 (NVIDIA's minor version compatibility minimum of its
/// platform). The hundreds of driver names among
/// its strings are the runtime's (it asks the driver for each by version and handles their
/// absence): reading them at their highest meaning said CUDA 13.4, a release after its own.
#[test]
fn the_cuda_runtime_for_windows_and_aarch64_needs_its_major_version() {
    let Some(paths) = fetched(&[&CUDART_WINDOWS, &CUDART_AARCH64]) else { return };
    for (path, format) in paths.iter().zip(["Pe X86_64", "Elf Aarch64"]) {
        let f = floor_of(path);
        let report = f.render(Path::new("."), None);
        assert!(f.programs[0].contains(format), "{report}");
        assert_eq!(f.version(), 12000, "{report}");
        assert!(!f.at_least(), "{report}");
        assert!(f.uses.is_empty(), "the runtime's strings are not the program's:\n{report}");
        // It needs only the system's libraries (and opens the driver by name).
        assert!(f.not_read.is_empty(), "{report}");
        let k = f.kernels.iter().find(|k| k.reading == Reading::Runtime).unwrap_or_else(|| panic!("{report}"));
        assert_eq!(k.needs, "the CUDA 12.x runtime", "{report}");
        // It is the runtime (it defines cudaMalloc and cudaGetDriverEntryPoint): its lookups by
        // name are its callers', not a capability of its own.
        assert!(k.what.contains("is the CUDA runtime") && k.what.contains("minor version"), "{report}");
    }
    // The driver named is the platform's minor version compatibility minimum: Windows' 527.41
    // for the DLL, Linux's 525.60.13 for the aarch64 library.
    let f = floor_of(&paths[0]);
    let k = f.kernels.iter().find(|k| k.reading == Reading::Runtime).unwrap();
    assert!(k.what.contains("Windows x86-64 driver 527.41"), "{}", k.what);
    let f = floor_of(&paths[1]);
    let k = f.kernels.iter().find(|k| k.reading == Reading::Runtime).unwrap();
    assert!(k.what.contains("Linux x86-64 driver 525.60.13"), "{}", k.what);
}

/// nvJPEG for Windows x86-64 and Linux aarch64: its fatbins (`.nv_fatb` in the PE file,
/// `.nv_fatbin` in the ELF one) hold cubins for sm_50 to sm_121 and PTX compressed by CUDA
/// 12's default scheme (entry flag 0x2000, an LZ4 block), decompressed here: ISA 8.8, CUDA
/// 12.9's. Its static runtime counts as CUDA 12's, its strings do not. The cubins before
/// sm_100 do not name their toolkit: "at least". On an sm_90 GPU only sm_90's cubins load.
#[test]
fn nvjpeg_for_windows_and_aarch64_is_read_with_its_lz4_ptx() {
    let Some(paths) = fetched(&[&NVJPEG_WINDOWS, &NVJPEG_AARCH64]) else { return };
    for (path, section) in paths.iter().zip([".nv_fatb", ".nv_fatbin"]) {
        let f = floor_of(path);
        let report = f.render(Path::new("."), None);
        assert!(f.uses.is_empty(), "{report}");
        let ptx = f.kernels.iter().find(|k| k.needs == "PTX ISA 8.8").unwrap_or_else(|| panic!("{report}"));
        assert!(ptx.what.contains("(LZ4)") && ptx.what.contains(section), "{report}");
        assert_eq!(f.version(), 12090, "{report}");
        assert!(f.kernels.iter().any(|k| k.needs == "the CUDA 12.x runtime"), "{report}");
        assert!(f.kernels.iter().any(|k| k.needs == "a CUDA 12.x cubin"), "{report}");
        assert!(!report.contains("compressed PTX"), "every compressed PTX is read:\n{report}");
        assert!(f.at_least(), "{report}");
        let on_h100 = floor_on(&registry(), std::slice::from_ref(path), Some(90)).unwrap();
        let report = on_h100.render(Path::new("."), None);
        assert!(on_h100.kernels.iter().any(|k| k.needs == "sm_90"), "{report}");
        assert!(!on_h100.kernels.iter().any(|k| k.needs == "PTX ISA 8.8" || k.needs == "sm_100"), "{report}");
        assert_eq!(on_h100.version(), 12000, "{report}");
    }
}
