//! `examples/` of the generated crate: hand-written programs in `codegen/crate-files/examples/`,
//! written as they are after the `@generated` marker (with the crate's name put in): `doctor`, `roundtrip`, and the ports of NVIDIA's
//! driver API samples, `vector_add_drv` and `device_query_drv`, and three programs a C
//! developer writes, ported line for line from their C originals in `tests/ports/`:
//! `graphs_drv`, `vector_add_mmap_drv` and `launch_ex_drv` (feature `api`).

use super::ctx::{crate_file, Ctx};

pub const DOCTOR_RS: &str = "examples/doctor.rs";
pub const ROUNDTRIP_RS: &str = "examples/roundtrip.rs";

pub const DOCTOR_SOURCE: &str = include_str!("../../crate-files/examples/doctor.rs");
pub const ROUNDTRIP_SOURCE: &str = include_str!("../../crate-files/examples/roundtrip.rs");

/// The sample ports: (name, path, source, the C names it calls). Each is emitted only for
/// a crate whose newest toolkit has all its C names.
pub const SAMPLES: &[(&str, &str, &str, &[&str])] = &[
    (
        "vector_add_drv",
        "examples/vector_add_drv.rs",
        include_str!("../../crate-files/examples/vector_add_drv.rs"),
        &[
            "cuInit",
            "cuDeviceGet",
            "cuDevicePrimaryCtxRetain",
            "cuCtxSetCurrent",
            "cuModuleLoadData",
            "cuModuleGetFunction",
            "cuMemAlloc",
            "cuMemcpyHtoD",
            "cuLaunchKernel",
            "cuMemcpyDtoH",
            "cuMemFree",
            "cuModuleUnload",
            "cuDevicePrimaryCtxRelease",
        ],
    ),
    (
        "device_query_drv",
        "examples/device_query_drv.rs",
        include_str!("../../crate-files/examples/device_query_drv.rs"),
        &[
            "cuInit",
            "cuDriverGetVersion",
            "cuDeviceGetCount",
            "cuDeviceGet",
            "cuDeviceGetName",
            "cuDeviceTotalMem",
            "cuDeviceGetAttribute",
        ],
    ),
    (
        "graphs_drv",
        "examples/graphs_drv.rs",
        include_str!("../../crate-files/examples/graphs_drv.rs"),
        &[
            "cuInit",
            "cuDeviceGet",
            "cuDevicePrimaryCtxRetain",
            "cuCtxSetCurrent",
            "cuModuleLoadData",
            "cuModuleGetFunction",
            "cuMemAlloc",
            "cuStreamCreate",
            "cuStreamBeginCapture",
            "cuMemcpyHtoDAsync",
            "cuLaunchKernel",
            "cuMemcpyDtoHAsync",
            "cuStreamEndCapture",
            "cuGraphInstantiate",
            "cuGraphLaunch",
            "cuStreamSynchronize",
            "cuGraphCreate",
            "cuGraphAddKernelNode",
            "cuMemcpyDtoH",
            "cuGraphExecDestroy",
            "cuGraphDestroy",
            "cuStreamDestroy",
            "cuMemFree",
            "cuModuleUnload",
            "cuDevicePrimaryCtxRelease",
        ],
    ),
    (
        "vector_add_mmap_drv",
        "examples/vector_add_mmap_drv.rs",
        include_str!("../../crate-files/examples/vector_add_mmap_drv.rs"),
        &[
            "cuInit",
            "cuDeviceGet",
            "cuDeviceGetAttribute",
            "cuDevicePrimaryCtxRetain",
            "cuCtxSetCurrent",
            "cuModuleLoadData",
            "cuModuleGetFunction",
            "cuStreamCreate",
            "cuMemGetAllocationGranularity",
            "cuMemAddressReserve",
            "cuMemCreate",
            "cuMemMap",
            "cuMemRelease",
            "cuMemSetAccess",
            "cuMemAllocAsync",
            "cuMemcpyHtoDAsync",
            "cuLaunchKernel",
            "cuMemcpyDtoHAsync",
            "cuMemFreeAsync",
            "cuStreamSynchronize",
            "cuDeviceGetDefaultMemPool",
            "cuMemPoolGetAttribute",
            "cuMemUnmap",
            "cuMemAddressFree",
            "cuStreamDestroy",
            "cuModuleUnload",
            "cuDevicePrimaryCtxRelease",
        ],
    ),
    (
        "launch_ex_drv",
        "examples/launch_ex_drv.rs",
        include_str!("../../crate-files/examples/launch_ex_drv.rs"),
        &[
            "cuInit",
            "cuDeviceGet",
            "cuDeviceGetUuid",
            "cuDevicePrimaryCtxRetain",
            "cuCtxSetCurrent",
            "cuModuleLoadData",
            "cuModuleGetFunction",
            "cuFuncGetAttribute",
            "cuCtxGetStreamPriorityRange",
            "cuMemAlloc",
            "cuLaunchKernelEx",
            "cuCtxSynchronize",
            "cuMemcpyDtoH",
            "cuMemFree",
            "cuModuleUnload",
            "cuDevicePrimaryCtxRelease",
        ],
    ),
];

/// The paths of [`SAMPLES`], in its order.
pub const SAMPLE_PATHS: [&str; SAMPLES.len()] = paths_of!(SAMPLES, 1);

/// Whether the newest toolkit has every C name a sample calls (`needs`).
fn has_c_names(ctx: &Ctx<'_>, needs: &[&str]) -> bool {
    let names = ctx.all_toolkits.last().and_then(|t| ctx.model.c_names.get(t));
    names.is_some_and(|n| needs.iter().all(|c| n.get(*c).is_some_and(|t| t.default.is_some())))
}

/// The names of the samples whose C names the newest toolkit has.
pub fn sample_names<'a>(ctx: &'a Ctx<'_>) -> impl Iterator<Item = &'static str> + 'a {
    SAMPLES.iter().filter(|(_, _, _, needs)| has_c_names(ctx, needs)).map(|(name, ..)| *name)
}

/// Sample `i` of [`SAMPLES`] as a file of the crate, if the newest toolkit has its C names.
pub fn sample_rs(ctx: &Ctx<'_>, i: usize) -> Option<Vec<u8>> {
    let (_, _, source, needs) = SAMPLES.get(i)?;
    has_c_names(ctx, needs).then(|| crate_file(ctx, source))
}

/// The typedefs `roundtrip` calls by name. It is emitted only for a registry that has them
/// all (a crate generated from fixture headers does not).
const ROUNDTRIP_NEEDS: &[&str] = &[
    "PFN_cuInit_v2000",
    "PFN_cuDeviceGet_v2000",
    "PFN_cuCtxCreate_v2000",
    "PFN_cuCtxCreate_v3020",
    "PFN_cuCtxCreate_v11040",
    "PFN_cuCtxCreate_v12050",
    "PFN_cuCtxDestroy_v4000",
    "PFN_cuMemAlloc_v3020",
    "PFN_cuMemFree_v3020",
    "PFN_cuMemcpyHtoD_v3020",
    "PFN_cuMemcpyDtoH_v3020",
];

pub fn doctor_rs(ctx: &Ctx<'_>) -> Vec<u8> {
    crate_file(ctx, DOCTOR_SOURCE)
}

/// Whether the registry has what `roundtrip` calls.
pub fn has_roundtrip(ctx: &Ctx<'_>) -> bool {
    ROUNDTRIP_NEEDS.iter().all(|p| ctx.by_pfn.contains_key(p))
}

pub fn roundtrip_rs(ctx: &Ctx<'_>) -> Option<Vec<u8>> {
    has_roundtrip(ctx).then(|| crate_file(ctx, ROUNDTRIP_SOURCE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_are_rust() {
        let samples = SAMPLES.iter().map(|(name, _, t, _)| (*name, *t));
        for (name, t) in [("doctor", DOCTOR_SOURCE), ("roundtrip", ROUNDTRIP_SOURCE)].into_iter().chain(samples) {
            if let Err(e) = syn::parse_file(t) {
                panic!("crate-files/examples/{name}.rs does not parse: {e}");
            }
        }
    }
}
