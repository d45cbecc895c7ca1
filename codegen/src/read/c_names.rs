//! The C-name runs' inputs: which names of the API headers may be functions (candidates,
//! from the header text), and the C programs clang compiles for them ([`c_programs`]), so
//! that tests can check the answers another way.

use std::path::Path;

use super::{clang, header_text};
use crate::fetch::Fetcher;
use crate::manifest::{HeaderSpec, Manifest};
use crate::platform::Platform;
use crate::version::ToolkitVersion;
use crate::Error;

/// One C program of the C-name runs, for checking their answers another way: each pinned
/// toolkit, target and stream mode, with the wrapper that includes its headers, clang's
/// arguments and the candidate names.
#[derive(Debug, Clone)]
pub struct CProgram {
    pub toolkit: ToolkitVersion,
    pub target: Platform,
    pub per_thread: bool,
    pub wrapper: String,
    pub args: Vec<String>,
    pub candidates: Vec<String>,
}

/// Every pinned toolkit's [`CProgram`]s (headers from the cache, fetched if missing), and the
/// stand-in folder their arguments name, which lives as long as the returned guard.
pub fn c_programs(manifest: &Path, cache: &Path) -> Result<(crate::scratch::Scratch, Vec<CProgram>), Error> {
    let manifest = Manifest::load(manifest)?;
    let fetcher = Fetcher::new(cache.to_owned(), &manifest);
    let standins = crate::standins::standins_in(cache)?;
    let first_api = manifest.headers.first().map_or("cuda.h", |h| h.api.as_str());
    let mut out = Vec::new();
    for pin in &manifest.toolkits {
        let tk = fetcher.toolkit(pin)?;
        for target in Platform::ALL {
            let rows: Vec<&HeaderSpec> = manifest.headers.iter().filter(|h| h.target == target).collect();
            let dirs = tk.include_dirs_for(target);
            if rows.is_empty() || dirs.is_empty() {
                continue;
            }
            let unit = clang::Unit { toolkit: tk.version, target, first_api, headers: rows, include_dirs: dirs };
            let candidates = c_name_candidates(&unit);
            for per_thread in [false, true] {
                out.push(CProgram {
                    toolkit: tk.version,
                    target,
                    per_thread,
                    wrapper: clang::wrapper_source(first_api, &unit.headers),
                    args: clang::c_program_args(&unit, per_thread, standins.path()),
                    candidates: candidates.clone(),
                });
            }
        }
    }
    Ok((standins, out))
}

/// The C-name candidates of a unit: read from the text of its API headers (cuda.h first).
pub fn c_name_candidates(unit: &clang::Unit<'_>) -> Vec<String> {
    let apis = std::iter::once(unit.first_api).chain(unit.headers.iter().map(|h| h.api.as_str()));
    let mut all = std::collections::BTreeSet::new();
    for api in apis {
        let Some(path) = unit.include_dirs.iter().map(|d| d.join(api)).find(|p| p.is_file()) else { continue };
        // Unreadable text leaves no candidates; bindgen, reading the same file, says what failed.
        let text = crate::input::read_bytes(&path, "an API header")
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        all.extend(header_text::c_name_candidates(&text));
    }
    all.into_iter().collect()
}
