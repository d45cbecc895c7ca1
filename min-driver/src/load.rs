//! Whether an older driver loads an image (`--as-driver`): the observer asks this of each image
//! a program loads, by min-driver's own kernel reading of the bytes, and fails the load with
//! the driver's own error where the driver it stands in for would.
//!
//! The rule, per fatbin container (a cubin or PTX module on its own is one container of one
//! entry), for a GPU of compute capability `gpu` and a driver of CUDA `driver`:
//! - the entries that run on the GPU (`kernels::runs_on`: a cubin of its major and not above
//!   it, PTX of a target not above it); none: the image is no business of this rule (the real
//!   driver refuses it itself, whatever its version);
//! - a cubin among them loads where its toolkit's major is not above the driver's (NVIDIA's
//!   minor version compatibility: a 13.5 cubin loads on a 13.0 driver, not on 12.9; a cubin
//!   that does not name its toolkit, ptxas before 12.8, is taken to load);
//! - else PTX among them is JIT-compiled where the driver's release JIT-compiles its ISA
//!   (`cuda-releases.toml`'s PTX table; an ISA the table does not know is taken to load);
//! - else, with PTX among them: `CUDA_ERROR_UNSUPPORTED_PTX_VERSION` (222), as measured on
//!   driver 580 (CUDA 13.0) loading PTX ISA 9.1 (docs/gpu-machine-runs.md), and as every report
//!   of a toolkit newer than the driver says it ("the provided PTX was compiled with an
//!   unsupported toolchain"), fatbins with no cubin for the GPU included;
//! - else (cubins for the GPU, every one of a newer major, and no PTX):
//!   `CUDA_ERROR_NO_BINARY_FOR_GPU` (209), the driver's error for an image with nothing it can
//!   load on the GPU. Not measured for this case (no older driver with a GPU was at hand).
//!
//! The GPU itself is taken as one the older driver supports (an H100 under `--as-driver 11.4`
//! is not refused as a device).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::kernels::{self, Image, Need};
use crate::releases::{cuda_text, Releases};

/// `CUDA_ERROR_NO_BINARY_FOR_GPU`.
pub const NO_BINARY_FOR_GPU: u32 = 209;
/// `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`.
pub const UNSUPPORTED_PTX_VERSION: u32 = 222;

/// An older driver's refusal of an image: its result code, the code's name, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: u32,
    pub name: &'static str,
    pub why: String,
}

/// One fatbin entry (or the image itself, where it is no fatbin): its target, whether it is
/// PTX, its ISA and the toolkit that built it (a cubin).
#[derive(Debug, Default)]
struct Entry {
    arch: Option<String>,
    ptx: bool,
    isa: Option<String>,
    toolkit: Option<String>,
}

fn releases() -> Option<&'static Releases> {
    static RELEASES: OnceLock<Option<Releases>> = OnceLock::new();
    RELEASES.get_or_init(|| Releases::load().ok()).as_ref()
}

/// How a driver of CUDA `driver` (12040) answers a load of `bytes` (a fatbin, a cubin or PTX
/// text) on a GPU of compute capability `gpu` (90): `None` where it loads them, or where they
/// are nothing this rule can judge (see the module doc).
pub fn refusal(bytes: &[u8], gpu: u32, driver: u32) -> Option<Refusal> {
    let releases = releases()?;
    let mut image = Image::default();
    kernels::binary(bytes, "the image", &mut image);
    refusal_of(image, gpu, driver, releases)
}

fn refusal_of(image: Image, gpu: u32, driver: u32, releases: &Releases) -> Option<Refusal> {
    // Per container, per entry; needs outside a fatbin are one container of one entry.
    let mut containers: BTreeMap<usize, BTreeMap<usize, Entry>> = BTreeMap::new();
    for ((need, _), tag) in image.needs.into_iter().zip(image.tags) {
        let (c, e) = tag.map_or((usize::MAX, 0), |t| (t.container, t.entry));
        let entry = containers.entry(c).or_default().entry(e).or_default();
        if let Some(t) = tag {
            entry.ptx = t.ptx;
        }
        match need {
            Need::PtxIsa(isa) => {
                entry.ptx = true;
                entry.isa = Some(isa);
            }
            Need::Arch(a) => {
                entry.arch.get_or_insert(a);
            }
            Need::Toolkit(t) => entry.toolkit = Some(t),
        }
    }
    let major = |t: &str| t.split_once('.').and_then(|(m, _)| m.parse::<u32>().ok());
    for entries in containers.values() {
        let here: Vec<&Entry> =
            entries.values().filter(|e| e.arch.as_deref().is_some_and(|a| kernels::runs_on(a, e.ptx, gpu))).collect();
        if here.is_empty() {
            continue;
        }
        let cubin_loads =
            |e: &&Entry| !e.ptx && e.toolkit.as_deref().and_then(major).is_none_or(|m| m * 1000 <= driver);
        let ptx_loads =
            |e: &&Entry| e.ptx && e.isa.as_deref().and_then(|i| releases.ptx(i)).is_none_or(|v| v <= driver);
        if here.iter().any(cubin_loads) || here.iter().any(ptx_loads) {
            continue;
        }
        let arch = |e: &Entry| e.arch.clone().unwrap_or_default();
        if let Some(p) = here.iter().find(|e| e.ptx) {
            let isa = p.isa.clone().unwrap_or_default();
            let of = releases.ptx(&isa).map_or(String::new(), |v| format!(" (CUDA {}'s)", cuda_text(v)));
            return Some(Refusal {
                code: UNSUPPORTED_PTX_VERSION,
                name: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                why: format!(
                    "PTX ISA {isa}{of} for {}, and no cubin a driver of CUDA {} loads on sm_{gpu}: that driver's JIT \
                     does not compile it",
                    arch(p),
                    cuda_text(driver)
                ),
            });
        }
        let cubins: Vec<String> =
            here.iter().map(|e| format!("{} by CUDA {}", arch(e), e.toolkit.as_deref().unwrap_or("?"))).collect();
        return Some(Refusal {
            code: NO_BINARY_FOR_GPU,
            name: "CUDA_ERROR_NO_BINARY_FOR_GPU",
            why: format!(
                "cubins for sm_{gpu} ({}) of a newer major than a driver of CUDA {} loads, and no PTX to JIT-compile",
                cubins.join(", "),
                cuda_text(driver)
            ),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(name: &str) -> Vec<u8> {
        std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels").join(name)).unwrap()
    }

    /// PTX of ISA 8.5 (CUDA 12.5's): refused by 12.4 with 222, loaded by 12.5; a target above
    /// the GPU is the real driver's own business.
    #[test]
    fn ptx_newer_than_the_driver_is_unsupported() {
        let ptx = b".version 8.5\n.target sm_90\n.address_size 64\n";
        let r = refusal(ptx, 90, 12040).expect("12.4 does not JIT ISA 8.5");
        assert_eq!((r.code, r.name), (222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"), "{r:?}");
        assert!(r.why.contains("PTX ISA 8.5 (CUDA 12.5's)"), "{r:?}");
        assert_eq!(refusal(ptx, 90, 12050), None);
        assert_eq!(refusal(ptx, 80, 12000), None, "sm_90 PTX does not run on sm_80 whatever the driver");
        assert_eq!(refusal(b"not an image", 90, 2000), None);
    }

    /// A fatbin of an sm_90 cubin by ptxas 13.5 and PTX ISA 9.5: on sm_90 a 13.0 driver loads
    /// the cubin (minor version compatibility); a 12.9 driver loads neither: 222 (its PTX is
    /// what it would have JIT-compiled). A bare cubin of 13.5 on 12.9: 209.
    #[test]
    fn a_fatbin_falls_back_to_its_ptx_and_a_newer_major_cubin_is_no_binary() {
        let fatbin = kernel("sm90_ptx95.fatbin");
        assert_eq!(refusal(&fatbin, 90, 13000), None);
        let r = refusal(&fatbin, 90, 12090).expect("12.9 loads no 13.x cubin and JITs no ISA 9.5");
        assert_eq!(r.code, 222, "{r:?}");
        let cubin = kernel("add_sm90_cuda13.5.cubin");
        assert_eq!(refusal(&cubin, 90, 13000), None);
        let r = refusal(&cubin, 90, 12090).expect("a 13.x cubin on 12.9");
        assert_eq!((r.code, r.name), (209, "CUDA_ERROR_NO_BINARY_FOR_GPU"), "{r:?}");
        assert!(r.why.contains("sm_90 by CUDA 13.5"), "{r:?}");
        // A cubin for sm_80 on sm_90: the real driver's own refusal, not this rule's.
        assert_eq!(refusal(&kernel("add_sm80_cuda12.4.cubin"), 90, 11000), None);
    }
}
