//! What a `CUresult` is beyond its C definition: its name and cuda.h's description (from the
//! generated `codes.rs`), `Debug` and `Display` by name, `?` through [`CUresult::result`], and
//! `std::error::Error`.

// `super::`, not `crate::`: the types crate is a module of the shim's check crate.
use super::codes::{result_description, result_name};
use super::types::CUresult;

impl CUresult {
    /// The code's name in the newest pinned toolkit's `cuda.h`
    /// (`CUDA_ERROR_INVALID_VALUE`), if it defines the code.
    pub fn name(self) -> Option<&'static str> {
        result_name(self.0)
    }

    /// What the newest pinned toolkit's `cuda.h` says of the code, if it does.
    pub fn description(self) -> Option<&'static str> {
        result_description(self.0)
    }

    /// `Ok` for `CUDA_SUCCESS`, else the code as the error, for `?`.
    pub fn result(self) -> Result<(), CUresult> {
        if self.0 == 0 {
            Ok(())
        } else {
            Err(self)
        }
    }
}

/// `CUDA_ERROR_INVALID_VALUE`, or `CUresult(999)` for a code the headers lack.
impl core::fmt::Debug for CUresult {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match result_name(self.0) {
            Some(name) => f.write_str(name),
            None => write!(f, "CUresult({})", self.0),
        }
    }
}

/// `CUDA_ERROR_INVALID_VALUE (1): This indicates that ...` (cuda.h's words), or
/// `CUresult 999 (not in cuda.h of this crate)`.
impl core::fmt::Display for CUresult {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match (result_name(self.0), result_description(self.0)) {
            (Some(name), Some(what)) => write!(f, "{name} ({}): {what}", self.0),
            (Some(name), None) => write!(f, "{name} ({})", self.0),
            _ => write!(f, "CUresult {} (not in cuda.h of this crate)", self.0),
        }
    }
}

impl std::error::Error for CUresult {}
