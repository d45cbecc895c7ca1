//! Which toolkits a run reads: the manifest's pins, with local toolkits (`--toolkit`, a path
//! given to `diff` or `--add-toolkit`) replacing a pin of the same version or added beside,
//! each named by the version its cuda.h says. Shared by `generate`, `diff` and `add_toolkit`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::fetch::{Fetcher, Origin, ToolkitHeaders};
use crate::locate;
use crate::manifest::{Manifest, ToolkitPin};
use crate::model::check_toolkit_count;
use crate::platform::Platform;
use crate::version::ToolkitVersion;
use crate::Error;

/// Pinned toolkits, with local ones replacing a pin of the same version or added beside.
pub fn collect(
    manifest: &Manifest,
    fetcher: &Fetcher,
    local: &[PathBuf],
) -> Result<(Vec<ToolkitHeaders>, Vec<String>), Error> {
    let mut notes = Vec::new();
    let mut locals: BTreeMap<ToolkitVersion, ToolkitHeaders> = BTreeMap::new();
    for path in local {
        let tk = local_toolkit(manifest, path)?;
        let version = tk.version;
        if let Some(prev) = locals.get(&version) {
            if let Origin::Local(p) = &prev.origin {
                return Err(Error::ToolkitNotFound {
                    path: path.clone(),
                    detail: format!("it is CUDA {version}, like {}: give each toolkit once", p.display()),
                });
            }
        }
        locals.insert(version, tk);
    }
    let mut out = Vec::new();
    for pin in &manifest.toolkits {
        match locals.remove(&pin.version) {
            Some(l) => {
                let (used, note) = compare_with_pin(manifest, fetcher, pin, l);
                notes.push(note);
                out.push(used);
            }
            None => out.push(fetcher.toolkit(pin)?),
        }
    }
    let windows_rows: Vec<&str> =
        manifest.headers.iter().filter(|h| h.target == Platform::Windows).map(|h| h.name.as_str()).collect();
    let newest_windows = out.iter().filter(|t| !t.windows_include_dirs.is_empty()).map(|t| t.version).max();
    for (version, l) in locals {
        if let Origin::Local(p) = &l.origin {
            notes.push(format!(
                "CUDA {version} from {} is not pinned in the manifest: added to the inputs",
                p.display()
            ));
            if l.windows_include_dirs.is_empty() && !windows_rows.is_empty() {
                let kept = match newest_windows {
                    Some(v) => format!("keep what CUDA {v}, the newest toolkit with them, declares"),
                    None => "are empty".to_owned(),
                };
                notes.push(format!(
                    "CUDA {version} from {} has no Windows headers: the modules {} {kept}",
                    p.display(),
                    windows_rows.join(", ")
                ));
            }
        }
        out.push(l);
    }
    out.sort_by_key(|t| t.version);
    if out.is_empty() {
        return Err(Error::NoToolkits { manifest: manifest.path.clone() });
    }
    // Before any header is read: 64 pins and a local toolkit of another version are 65.
    check_toolkit_count(out.iter().map(|t| t.version))?;
    Ok((out, notes))
}

/// [`local_toolkit`] for a toolkit a user named where a version would do too (`diff --from`,
/// `--add-toolkit`): a path that does not exist may be a version written wrong (`12.x`), and
/// the error says what a version looks like.
pub fn named_toolkit(manifest: &Manifest, path: &Path) -> Result<ToolkitHeaders, Error> {
    match local_toolkit(manifest, path) {
        Err(Error::ToolkitNotFound { path: p, detail }) if !path.exists() => Err(Error::ToolkitNotFound {
            path: p,
            detail: format!("{detail} (and it is not a toolkit version of the form major.minor, such as 12.9)"),
        }),
        other => other,
    }
}

/// A toolkit on this machine (a root, its include/ folder or a pip layout), its version read
/// off its cuda.h.
pub fn local_toolkit(manifest: &Manifest, path: &Path) -> Result<ToolkitHeaders, Error> {
    let include = locate::locate_toolkit(path)?;
    let version = locate::read_cuda_version(&include)?;
    let source = "a local toolkit".to_owned();
    // A toolkit folder holding the Windows typedef headers too (a Windows install, or a
    // fixture) feeds both translation units.
    let windows_rows = manifest.headers.iter().filter(|h| h.target == Platform::Windows);
    let has_windows =
        windows_rows.clone().count() > 0 && windows_rows.clone().all(|h| include.join(&h.typedefs).is_file());
    let windows_include_dirs = if has_windows { vec![include.clone()] } else { Vec::new() };
    Ok(ToolkitHeaders {
        version,
        include_dirs: vec![include.clone()],
        windows_include_dirs,
        origin: Origin::Local(include),
        source,
    })
}

/// A local toolkit of a pinned version, compared with the pinned packages where they are at
/// hand: the toolkit to read, and a note for the summary. Headers identical to the pin's give
/// the pin itself, so that the same input gives the same tree (registry.json names the pin's
/// packages, not "a local toolkit"). A local Linux toolkit has no Windows headers: those still
/// come from the pin.
fn compare_with_pin(
    manifest: &Manifest,
    fetcher: &Fetcher,
    pin: &ToolkitPin,
    mut local: ToolkitHeaders,
) -> (ToolkitHeaders, String) {
    let Origin::Local(path) = local.origin.clone() else { return (local, String::new()) };
    let pinned = match fetcher.toolkit(pin) {
        Ok(p) => p,
        Err(e) => {
            let note =
                format!("CUDA {} from {} replaces the pinned package (not compared: {e})", pin.version, path.display());
            return (local, note);
        }
    };
    local.windows_include_dirs = pinned.windows_include_dirs.clone();
    let mut differ = Vec::new();
    for h in manifest.headers.iter().filter(|h| h.target == Platform::Linux) {
        for file in [&h.api, &h.typedefs] {
            let read =
                |dirs: &[PathBuf]| dirs.iter().find_map(|d| crate::input::read_bytes(&d.join(file), "a header").ok());
            if read(&local.include_dirs) != read(&pinned.include_dirs) {
                differ.push(file.as_str());
            }
        }
    }
    if differ.is_empty() {
        (
            pinned,
            format!(
                "CUDA {} at {} has the pinned headers, byte for byte: read as the pin",
                pin.version,
                path.display()
            ),
        )
    } else {
        let note = format!(
            "CUDA {} from {} replaces the pinned package; these headers differ from it: {}",
            pin.version,
            path.display(),
            differ.join(", ")
        );
        (local, note)
    }
}
