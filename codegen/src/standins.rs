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
/// reads it: the stand-ins then go to a folder of this user's own in the system's temporary
/// folder (`cuda-sys-gen-standins-<uid>`, mode 0700: another user's run never shares it, and
/// one of that name that is not this user's is refused by name). Where neither can be written,
/// the error names both and why. Their place is no part of any output or cache key (the unit
/// cache leaves them out).
pub fn standins_in(cache: &Path) -> Result<crate::scratch::Scratch, Error> {
    match standins_under(&cache.join("standins")) {
        Ok(dir) => Ok(dir),
        Err(in_cache) => {
            let temp = std::env::temp_dir().join(user_folder_name());
            match own_folder(&temp).and_then(|()| standins_under(&temp)) {
                Ok(dir) => Ok(dir),
                Err(in_temp) => Err(Error::Io {
                    path: cache.join("standins"),
                    source: std::io::Error::other(format!(
                        "the stand-in headers could not be written under the cache ({in_cache}) nor in the temporary \
                         folder ({in_temp}); make one of them writable, or set TMPDIR to a folder of yours"
                    )),
                }),
            }
        }
    }
}

/// This user's folder name in the temporary folder.
fn user_folder_name() -> String {
    #[cfg(unix)]
    {
        // SAFETY: getuid has no preconditions and cannot fail.
        format!("cuda-sys-gen-standins-{}", unsafe { libc::getuid() })
    }
    #[cfg(not(unix))]
    {
        "cuda-sys-gen-standins".to_owned()
    }
}

/// Makes `dir` this user's own folder (0700), or says whose it is when it is not.
fn own_folder(dir: &Path) -> Result<(), Error> {
    let io = |source| Error::Io { path: dir.to_owned(), source };
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io(e)),
        }
        let meta = std::fs::symlink_metadata(dir).map_err(io)?;
        // SAFETY: as above.
        let me = unsafe { libc::getuid() };
        if !meta.is_dir() || meta.uid() != me {
            return Err(io(std::io::Error::other(format!(
                "it is {} of user {}, not a folder of this user ({me}): remove it, or set TMPDIR to a folder of yours",
                if meta.is_dir() { "a folder" } else { "not a folder but a file" },
                meta.uid()
            ))));
        }
        Ok(())
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir).map_err(io)
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
