//! A trace of the stand-in tracer (`examples/libcuda-tracer`), read: what a run asked the driver
//! for and what it was answered. Only the evidence, line by line; what it implies is `runs.rs`'s.
//!
//! The lines read (the tracer's module doc is their definition):
//! - `start PID real driver PATH (version N)` (or `... real driver none: WHY`), once per process;
//! - `as-driver N` (answered as a driver of N), or `as-driver refused: WHY`;
//! - `request TID "SYMBOL" VERSION flags F -> ABI (EXPORTED) ...`: a request the driver answered
//!   with a function (`-> a function the registry does not know` where the registry lacks it);
//! - `refused TID "SYMBOL" VERSION flags F -> RESULT status S`: a request it refused;
//! - `as-driver TID "SYMBOL" VERSION flags F -> ABI (EXPORTED)|refused ... real ...`: a request
//!   answered as the older driver would, beside the real driver's answer;
//! - `call TID ABI (EXPORTED) ... -> RESULT ...`: a call of the ABI;
//! - `missing TID ABI (EXPORTED) -> ...`: a call of an ABI the older driver does not export;
//! - `runtime PID PATH`: a CUDA runtime (`libcudart.so...`) mapped into the process;
//! - `image PID ABI PATH` (or `... not recorded: WHY`): a copy of an image a load was given.
//! - `gpu PID CC`: the compute capability of the GPU an image was just loaded on (`90`).
//! - `image-refused PID ABI -> NAME (CODE): a driver of N would not load it: WHY`: under
//!   `--as-driver`, a load failed with the older driver's own error.
//!
//! Anything else is counted as not read. A line cut by the tracer (`...` at its end) still
//! has its head, which is all that is read. Never panics: every field is parsed or the line
//! is not read.

use std::path::Path;

use anyhow::{Context, Result};

/// One `cuGetProcAddress` request of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The line of the trace (1-based).
    pub line: usize,
    pub symbol: String,
    pub version: i32,
    pub flags: u64,
    /// The ABI answered (`cuCtxCreate_v12050`); `None`: refused, or a function the registry
    /// does not know ([`Request::unknown`]).
    pub answered: Option<String>,
    /// Answered with a function the registry does not know.
    pub unknown: bool,
    /// For a refusal: what the driver said (`CUDA_SUCCESS status 1`).
    pub refusal: Option<String>,
    /// Under `--as-driver`: what the real driver answered (`cuCtxCreate_v12050`, or `refused
    /// ...`), where the line says it.
    pub real: Option<String>,
    /// The line flags the answer as older than the ABI the version asked names.
    pub hazard: bool,
}

/// One ABI called (its first call in the trace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Called {
    pub line: usize,
    /// `cuMemAlloc_v3020`.
    pub abi: String,
    /// `cuMemAlloc_v2`.
    pub exported: String,
    /// `CUDA_SUCCESS`.
    pub result: String,
}

/// A tracer's trace, read.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// The processes that loaded the tracer (`start` lines).
    pub processes: usize,
    /// The real driver's path and `cuDriverGetVersion` (the first `start` line that names one).
    pub real_driver: Option<(String, u32)>,
    /// Why no real driver was opened, where a `start` line says so.
    pub no_driver: Option<String>,
    /// `as-driver N`.
    pub as_driver: Option<u32>,
    /// `as-driver refused: WHY`.
    pub as_driver_refused: Option<String>,
    /// Every request answered, refused, or answered as the older driver, in order.
    pub requests: Vec<Request>,
    /// The ABIs called, each once (its first call), in order.
    pub calls: Vec<Called>,
    /// Calls of ABIs the older driver does not export (`--as-driver`).
    pub missing: Vec<Called>,
    /// The images loaded: (line, the loader's ABI, the copy's path or `None` where the tracer
    /// says it was not recorded).
    pub images: Vec<(usize, String, Option<String>)>,
    /// Loads the older driver refused (`--as-driver`): (line, the loader's ABI, the result as
    /// `NAME (CODE)`, why).
    pub refused_images: Vec<(usize, String, String, String)>,
    /// The GPUs images were loaded on (`gpu PID CC` lines: `major * 10 + minor`).
    pub gpus: std::collections::BTreeSet<u32>,
    /// The CUDA runtimes mapped: (line, path), each path once.
    pub runtimes: Vec<(usize, String)>,
    /// Lines of no form above.
    pub not_read: usize,
}

/// Reads a trace file (at most 1 GiB; read whole).
pub fn read(path: &Path) -> Result<Trace> {
    let bytes = codegen::input::read_bytes(path, "a trace of the libcuda tracer")
        .with_context(|| format!("reading the trace {}", path.display()))?;
    Ok(parse(&String::from_utf8_lossy(&bytes)))
}

/// Reads a trace's text.
pub fn parse(text: &str) -> Trace {
    let mut t = Trace::default();
    let mut seen_calls = std::collections::HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        let read = match kind {
            "start" => start(&mut t, rest),
            "image" => match rest.splitn(3, ' ').collect::<Vec<_>>()[..] {
                [_pid, abi, what] if abi.starts_with("cu") => {
                    let path = (!what.starts_with("not recorded")).then(|| what.to_owned());
                    t.images.push((n, abi.to_owned(), path));
                    true
                }
                _ => false,
            },
            "image-refused" => match rest.split_once(' ').and_then(|(_pid, r)| r.split_once(" -> ")) {
                Some((abi, what)) if abi.starts_with("cu") => {
                    let (result, why) = what.split_once(": ").unwrap_or((what, ""));
                    let why = why.split_once(" would not load it: ").map_or(why, |(_, w)| w);
                    t.refused_images.push((n, abi.to_owned(), result.to_owned(), why.to_owned()));
                    true
                }
                _ => false,
            },
            "gpu" => match rest.split_once(' ').map(|(_pid, cc)| cc.parse::<u32>()) {
                Some(Ok(cc)) if (10..1000).contains(&cc) => {
                    t.gpus.insert(cc);
                    true
                }
                _ => false,
            },
            "runtime" => match rest.split_once(' ') {
                Some((_pid, path)) if path.rsplit('/').next().is_some_and(|n| n.starts_with("libcudart.so")) => {
                    if !t.runtimes.iter().any(|(_, p)| p == path) {
                        t.runtimes.push((n, path.to_owned()));
                    }
                    true
                }
                _ => false,
            },
            "as-driver" if !rest.contains('"') => as_driver(&mut t, rest),
            "request" | "refused" | "as-driver" => request(kind, rest, n).map(|r| t.requests.push(r)).is_some(),
            "call" | "missing" => match called(rest, n) {
                Some(c) if kind == "missing" => {
                    t.missing.push(c);
                    true
                }
                Some(c) => {
                    if seen_calls.insert(c.abi.clone()) {
                        t.calls.push(c);
                    }
                    true
                }
                None => false,
            },
            _ => false,
        };
        if !read {
            t.not_read += 1;
        }
    }
    t
}

fn start(t: &mut Trace, rest: &str) -> bool {
    let Some((_pid, rest)) = rest.split_once(' ') else { return false };
    let Some(rest) = rest.strip_prefix("real driver ") else { return false };
    t.processes += 1;
    if let Some(why) = rest.strip_prefix("none: ") {
        t.no_driver.get_or_insert_with(|| why.to_owned());
        return true;
    }
    let Some((path, version)) = rest.rsplit_once(" (version ") else { return false };
    let Ok(version) = version.trim_end_matches(')').parse::<u32>() else { return false };
    t.real_driver.get_or_insert_with(|| (path.to_owned(), version));
    true
}

fn as_driver(t: &mut Trace, rest: &str) -> bool {
    if let Some(why) = rest.strip_prefix("refused: ") {
        t.as_driver_refused = Some(why.to_owned());
        return true;
    }
    match rest.trim().parse::<u32>() {
        Ok(v) => {
            t.as_driver = Some(v);
            true
        }
        Err(_) => false,
    }
}

/// `TID "SYMBOL" VERSION flags F -> ...` of a `request`, `refused` or `as-driver` line.
fn request(kind: &str, rest: &str, line: usize) -> Option<Request> {
    let (_tid, rest) = rest.split_once(' ')?;
    let (symbol, rest) = quoted(rest)?;
    let mut words = rest.trim_start().splitn(4, ' ');
    let version = words.next()?.parse::<i32>().ok()?;
    (words.next()? == "flags").then_some(())?;
    let flags = words.next()?.parse::<u64>().ok()?;
    let answer = words.next()?.strip_prefix("-> ")?;
    let mut r = Request {
        line,
        symbol,
        version,
        flags,
        answered: None,
        unknown: false,
        refusal: None,
        real: None,
        hazard: answer.contains(" HAZARD: "),
    };
    // The answer, and for `as-driver` the real driver's after ` real `.
    let (ours, real) = match kind {
        "as-driver" => {
            let (o, r) = answer.split_once(" real ")?;
            (o, Some(r.split(" HAZARD: ").next().unwrap_or(r)))
        }
        _ => (answer, None),
    };
    if kind == "refused" {
        r.refusal = Some(ours.to_owned());
    } else if let Some(why) = ours.strip_prefix("refused ") {
        r.refusal = Some(why.to_owned());
    } else if ours.starts_with("a function the registry does not know") {
        r.unknown = true;
    } else {
        let abi = ours.split(' ').next()?;
        if !abi.starts_with("cu") || !abi.contains("_v") {
            return None;
        }
        r.answered = Some(abi.to_owned());
    }
    r.real = real.map(|x| {
        let x = x.trim();
        // `ABI (EXPORTED)`: the ABI alone.
        if x.starts_with("refused") || x.starts_with("a function") {
            x.to_owned()
        } else {
            x.split(' ').next().unwrap_or(x).to_owned()
        }
    });
    Some(r)
}

/// `TID ABI (EXPORTED) ... -> RESULT ...` of a `call` or `missing` line.
fn called(rest: &str, line: usize) -> Option<Called> {
    let mut words = rest.splitn(4, ' ');
    let _tid = words.next()?;
    let abi = words.next()?;
    let exported = words.next()?.strip_prefix('(')?.strip_suffix(')')?;
    if !abi.starts_with("cu") {
        return None;
    }
    let tail = words.next().unwrap_or("");
    let result = tail.rsplit_once(" -> ").map_or("", |(_, r)| r).split([' ', ':']).next().unwrap_or("");
    Some(Called { line, abi: abi.to_owned(), exported: exported.to_owned(), result: result.to_owned() })
}

/// A symbol as the tracer quotes it (`escape_debug`, bytes that are no UTF-8 as `\xNN`), and
/// what follows the closing quote.
fn quoted(s: &str) -> Option<(String, &str)> {
    let s = s.strip_prefix('"')?;
    let mut out = Vec::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((String::from_utf8_lossy(&out).into_owned(), &s[i + 1..])),
            '\\' => {
                let (_, e) = chars.next()?;
                match e {
                    'n' => out.push(b'\n'),
                    't' => out.push(b'\t'),
                    'r' => out.push(b'\r'),
                    '0' => out.push(0),
                    'x' => {
                        let hi = chars.next()?.1.to_digit(16)?;
                        let lo = chars.next()?.1.to_digit(16)?;
                        out.push((hi * 16 + lo) as u8);
                    }
                    'u' => {
                        let mut hex = String::new();
                        for (_, h) in chars.by_ref() {
                            match h {
                                '{' => {}
                                '}' => break,
                                h => hex.push(h),
                            }
                        }
                        let ch = char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?;
                        out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                    other => out.extend_from_slice(other.encode_utf8(&mut [0; 4]).as_bytes()),
                }
            }
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "\
start 13085 real driver /d/libcuda.so.1 (version 12050)
call 13085 cuGetProcAddress_v12000 (cuGetProcAddress_v2) symbol: *const c_char = 0x7f, pfn: *mut *mut c_void = 0x7f -> CUDA_SUCCESS {*pfn = 0x7f} 3 ns
request 13085 \"cuCtxCreate\" 12050 flags 0 -> cuCtxCreate_v12050 (cuCtxCreate_v4) rule ok
refused 13088 \"cuNo\\\"Such\\xff\" 12050 flags 0 -> CUDA_SUCCESS status 1
request 1 \"cuX\" -1 flags 2 -> a function the registry does not know (not traced) rule ok
as-driver 1 \"cuCtxCreate\" 12050 flags 0 -> cuCtxCreate_v11040 (cuCtxCreate_v3) real cuCtxCreate_v12050 (cuCtxCreate_v4) HAZARD: asked 12050, older than cuCtxCreate_v12050, the ABI of 12050;
as-driver 1 \"cuNew\" 12050 flags 0 -> refused 0 status 1 (SymbolNotFound) real cuNew_v12050 (cuNew)
missing 1 cuNew_v12050 (cuNew) -> CUDA_ERROR_NOT_FOUND: a driver of 12040 does not export it
call 2 cuInit_v2000 (cuInit) flags: c_uint = 0 -> CUDA_ERROR_NO_DEVICE 5 ns
call 2 cuInit_v2000 (cuInit) flags: c_uint = 0 -> CUDA_SUCCESS 5 ns
runtime 2 /usr/lib/libcudart.so.12.4.99
image 2 cuModuleLoadData_v2000 /tmp/x/image-2-0.fatbin
image 2 cuModuleLoadData_v2000 not recorded: no image pointer, or larger than 1 GiB
image-refused 2 cuModuleLoadData_v2000 -> CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): a driver of 12000 would not load it: PTX ISA 8.5
runtime 3 /usr/lib/libcudart.so.12.4.99
something else
request 1 \"unterminated 1 flags 0 -> x
";

    #[test]
    fn every_line_of_the_tracer_is_read_and_the_rest_counted() {
        let t = parse(TRACE);
        assert_eq!(t.processes, 1);
        assert_eq!(t.real_driver, Some(("/d/libcuda.so.1".to_owned(), 12050)));
        assert_eq!(t.requests.len(), 5, "{:?}", t.requests);
        assert_eq!(t.requests[0].answered.as_deref(), Some("cuCtxCreate_v12050"));
        assert_eq!(t.requests[1].symbol, "cuNo\"Such\u{fffd}");
        assert_eq!(t.requests[1].refusal.as_deref(), Some("CUDA_SUCCESS status 1"));
        assert!(t.requests[2].unknown && t.requests[2].version == -1 && t.requests[2].flags == 2);
        let as_driver = &t.requests[3];
        assert_eq!(as_driver.answered.as_deref(), Some("cuCtxCreate_v11040"));
        assert_eq!(as_driver.real.as_deref(), Some("cuCtxCreate_v12050"));
        assert!(as_driver.hazard);
        assert_eq!(t.requests[4].refusal.as_deref(), Some("0 status 1 (SymbolNotFound)"));
        assert_eq!(t.calls.len(), 2, "each ABI once: {:?}", t.calls);
        assert_eq!(t.calls[1].result, "CUDA_ERROR_NO_DEVICE");
        assert_eq!(t.missing[0].exported, "cuNew");
        assert_eq!(t.runtimes, [(11, "/usr/lib/libcudart.so.12.4.99".to_owned())]);
        assert_eq!(t.images.len(), 2);
        assert_eq!(t.images[0].2.as_deref(), Some("/tmp/x/image-2-0.fatbin"));
        assert_eq!(t.images[1].2, None);
        assert_eq!(
            t.refused_images,
            [(
                14,
                "cuModuleLoadData_v2000".to_owned(),
                "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)".to_owned(),
                "PTX ISA 8.5".to_owned()
            )]
        );
        assert_eq!(t.not_read, 2);
    }

    #[test]
    fn hostile_lines_are_not_read_and_never_panic() {
        for line in [
            "request",
            "request 1",
            "request 1 \"",
            "request 1 \"a\\",
            "request 1 \"a\\x4",
            "request 1 \"a\\u{zz}\" 1 flags 0 -> cuA_v1 (cuA)",
            "call",
            "call 1 cu",
            "start 1 real driver x (version",
            "as-driver x",
            "\u{0}\u{ffff}",
        ] {
            let t = parse(line);
            assert_eq!(t.not_read, 1, "{line:?}: {t:?}");
        }
    }
}
