//! The stand-in headers of this project's (`codegen/standins/`), compiled into the generator
//! and written out per run. A leaf below the manifest (which checks that a row's stand-ins
//! exist) and clang (which parses against them).

use std::path::Path;

use crate::platform::Platform;
use crate::Error;

/// Stand-in headers of this project's: the C library as far as NVIDIA's headers need it, per
/// target; the GL, EGL (with KHR) and VDPAU types the Linux interop headers name; and for
/// Windows the few SDK types the D3D and WGL headers name. Parsing against these alone
/// (`-nostdinc`, no system include folder) keeps the host's libc, compiler and packages out
/// of the output: generation needs nothing installed. `stand_ins_match_the_real_headers`
/// (tests/tests/standins.rs) compares them with the real headers where a machine has those.
pub const STANDINS: &[(Platform, &str, &str)] = &[
    (Platform::Linux, "stddef.h", include_str!("../standins/linux/stddef.h")),
    (Platform::Linux, "stdlib.h", include_str!("../standins/linux/stdlib.h")),
    (Platform::Linux, "stdint.h", include_str!("../standins/linux/stdint.h")),
    (Platform::Linux, "GL/gl.h", include_str!("../standins/shared/GL/gl.h")),
    (Platform::Linux, "KHR/khrplatform.h", include_str!("../standins/linux/KHR/khrplatform.h")),
    (Platform::Linux, "EGL/eglplatform.h", include_str!("../standins/linux/EGL/eglplatform.h")),
    (Platform::Linux, "EGL/egl.h", include_str!("../standins/linux/EGL/egl.h")),
    (Platform::Linux, "EGL/eglext.h", include_str!("../standins/linux/EGL/eglext.h")),
    (Platform::Linux, "vdpau/vdpau.h", include_str!("../standins/linux/vdpau/vdpau.h")),
    (Platform::Windows, "stddef.h", include_str!("../standins/windows/stddef.h")),
    (Platform::Windows, "stdlib.h", include_str!("../standins/windows/stdlib.h")),
    (Platform::Windows, "stdint.h", include_str!("../standins/windows/stdint.h")),
    (Platform::Windows, "rpcsal.h", include_str!("../standins/windows/rpcsal.h")),
    (Platform::Windows, "dxgi.h", include_str!("../standins/windows/dxgi.h")),
    (Platform::Windows, "d3d9.h", include_str!("../standins/windows/d3d9.h")),
    (Platform::Windows, "D3D10_1.h", include_str!("../standins/windows/D3D10_1.h")),
    (Platform::Windows, "D3D11_1.h", include_str!("../standins/windows/D3D11_1.h")),
    (Platform::Windows, "GL/gl.h", include_str!("../standins/shared/GL/gl.h")),
];

/// Whether a stand-in header exists for `target`.
pub fn standin_exists(target: Platform, name: &str) -> bool {
    STANDINS.iter().any(|(t, n, _)| *t == target && *n == name)
}

/// The scratch kind of a run's stand-in folder (`<cache>/standins/.standins-<pid>-<n>`).
const STANDINS_KIND: &str = "standins";

/// A folder of every stand-in header, for one run: under the header cache, named by this
/// process, removed when dropped and, after a killed run (Ctrl-C), by the next run.
///
/// A cache that cannot be written (restored read-only in CI, say) still serves a run that only
/// reads it: the stand-ins then go to the system's temporary folder instead. Their place is
/// no part of any output or cache key (the unit cache leaves them out).
pub fn standins_in(cache: &Path) -> Result<crate::scratch::Scratch, Error> {
    match standins_under(&cache.join("standins")) {
        Ok(dir) => Ok(dir),
        Err(in_cache) => standins_under(&std::env::temp_dir().join("cuda-sys-gen-standins")).map_err(|_| in_cache),
    }
}

fn standins_under(parent: &Path) -> Result<crate::scratch::Scratch, Error> {
    std::fs::create_dir_all(parent).map_err(|source| Error::Io { path: parent.to_owned(), source })?;
    crate::scratch::remove_stale(parent, STANDINS_KIND);
    let dir = crate::scratch::create_dir(parent, STANDINS_KIND)
        .map_err(|source| Error::Io { path: parent.to_owned(), source })?;
    write_standins(dir.path())?;
    Ok(dir)
}

/// Writes every stand-in header into `dir/<target>/`.
pub fn write_standins(dir: &Path) -> Result<(), Error> {
    for (target, name, text) in STANDINS {
        let path = dir.join(target.to_string()).join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io { path: parent.to_owned(), source })?;
        }
        std::fs::write(&path, text).map_err(|source| Error::Io { path, source })?;
    }
    Ok(())
}
