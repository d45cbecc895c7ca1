//! `examples/doctor.rs` and `examples/roundtrip.rs` of the generated crate: hand-written
//! programs in `templates/`, written verbatim after the `@generated` marker.

use super::ctx::{template_file, Ctx};

pub const DOCTOR_RS: &str = "examples/doctor.rs";
pub const ROUNDTRIP_RS: &str = "examples/roundtrip.rs";

pub const DOCTOR_TEMPLATE: &str = include_str!("templates/doctor.rs");
pub const ROUNDTRIP_TEMPLATE: &str = include_str!("templates/roundtrip.rs");

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
    template_file(ctx, DOCTOR_TEMPLATE)
}

/// Whether the registry has what `roundtrip` calls.
pub fn has_roundtrip(ctx: &Ctx<'_>) -> bool {
    ROUNDTRIP_NEEDS.iter().all(|p| ctx.by_pfn.contains_key(p))
}

pub fn roundtrip_rs(ctx: &Ctx<'_>) -> Option<Vec<u8>> {
    has_roundtrip(ctx).then(|| template_file(ctx, ROUNDTRIP_TEMPLATE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_rust() {
        for (name, t) in [("doctor", DOCTOR_TEMPLATE), ("roundtrip", ROUNDTRIP_TEMPLATE)] {
            if let Err(e) = syn::parse_file(t) {
                panic!("templates/{name}.rs does not parse: {e}");
            }
        }
    }
}
