//! `include/cuda_pfn.h`: the registry for C and C++ callers of `cuGetProcAddress`. One header,
//! plain C99 (and C++11 on), on top of the user's own `cuda.h`: per ABI of cuda.h's typedef
//! header its version and flags, its function pointer type (`cuda_pfn_PFN_x`, the same type as
//! cudaTypedefs.h's `PFN_x`, taken from the declaration of the toolkit whose `CUDA_VERSION` the
//! user's cuda.h has) and a getter that asks for exactly that ABI under the crate's rules; and
//! cuda.h's own names, per `CUDA_VERSION` and stream mode, as the model's C names say.
//!
//! Rules it keeps:
//! - **Only what that cuda.h declares.** An ABI is there only for the `CUDA_VERSION`s of the
//!   pinned toolkits that declare it (the next pinned toolkit's version bounds a range; the
//!   newest range is open), with that toolkit's own parameter types; an ABI cudaTypedefs.h
//!   declares only under `__CUDA_API_VERSION_INTERNAL` needs that too (its types are there
//!   only then). Only cuda.h's own row (`cudaTypedefs.h`): the interop headers' types are not
//!   in `cuda.h`.
//! - **The record.** Every getter holds its entry's record (the same 160 bytes as the Rust
//!   crate's, [`super::record`]) as a `static const` inside the `static inline` function, and
//!   reads the name it gives the driver from it: the compiler emits the record exactly where it
//!   emits the getter, so min-driver reads a C program as it reads a Rust one.
//! - **No state.** The driver is a value the caller holds; getters read it and write nothing
//!   else: thread-safe, no allocation.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::ctx::Ctx;
use super::record::{Abi, Record};
use crate::model::Entry;
use crate::platform::Platform;
use crate::version::{format_cuda_version, ToolkitVersion};

pub const C_HEADER: &str = "include/cuda_pfn.h";

/// The manifest row whose entries the header holds: cuda.h's own.
const ROW: &str = "cuda";

/// A Rust type of bindgen's output as C: `*const c_char` is `const char *`, `*mut *mut c_void`
/// `void **`; `None` for anything that is not a named type or a pointer to one.
pub(crate) fn c_type(rust: &str) -> Option<String> {
    let rust = rust.trim();
    if let Some(inner) = rust.strip_prefix("*mut ") {
        let t = c_type(inner)?;
        return Some(if t.ends_with('*') { format!("{t}*") } else { format!("{t} *") });
    }
    if let Some(inner) = rust.strip_prefix("*const ") {
        let t = c_type(inner)?;
        return Some(if t.ends_with('*') { format!("{t}const *") } else { format!("const {t} *") });
    }
    let base = match rust {
        "c_char" => "char",
        "c_schar" => "signed char",
        "c_uchar" => "unsigned char",
        "c_short" => "short",
        "c_ushort" => "unsigned short",
        "c_int" => "int",
        "c_uint" => "unsigned int",
        "c_long" => "long",
        "c_ulong" => "unsigned long",
        "c_longlong" => "long long",
        "c_ulonglong" => "unsigned long long",
        "c_float" | "f32" => "float",
        "c_double" | "f64" => "double",
        "c_void" | "()" => "void",
        "usize" => "size_t",
        "u8" => "uint8_t",
        "u16" => "uint16_t",
        "u32" => "uint32_t",
        "u64" => "uint64_t",
        "i8" => "int8_t",
        "i16" => "int16_t",
        "i32" => "int32_t",
        "i64" => "int64_t",
        other => {
            let ident = other.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && other.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            return ident.then(|| other.to_owned());
        }
    };
    Some(base.to_owned())
}

/// The typedef of one declaration as C, named `name`: `CUresult (CUDAAPI *name)(CUcontext
/// *pctx, unsigned int flags)`. `None` where a type has no C spelling here.
fn typedef_text(name: &str, params: &[crate::model::Param], returns: &str) -> Option<String> {
    let mut list = Vec::new();
    for p in params {
        let ty = c_type(p.ty.as_str())?;
        // bindgen's parameter names are the header's, or `arg<i>`, or a Rust keyword with `_`
        // after it: all valid C and C++ names that cudaTypedefs.h compiles with.
        let sep = if ty.ends_with('*') { "" } else { " " };
        list.push(if p.name.is_empty() { ty } else { format!("{ty}{sep}{}", p.name) });
    }
    let list = if list.is_empty() { "void".to_owned() } else { list.join(", ") };
    Some(format!("typedef {} (CUDAAPI *{name})({list});", c_type(returns)?))
}

/// The `#if` condition of the `CUDA_VERSION`s a set of pinned toolkits stands for: each run of
/// consecutive pinned toolkits from its first version up to the next pinned toolkit's.
fn version_condition(all: &[ToolkitVersion], have: &[ToolkitVersion]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < all.len() {
        if !have.contains(&all[i]) {
            i += 1;
            continue;
        }
        let start = all[i].cuda_version();
        while i < all.len() && have.contains(&all[i]) {
            i += 1;
        }
        parts.push(match all.get(i) {
            Some(next) => format!("(CUDA_VERSION >= {start} && CUDA_VERSION < {})", next.cuda_version()),
            None => format!("CUDA_VERSION >= {start}"),
        });
    }
    if parts.is_empty() {
        "0".to_owned()
    } else {
        parts.join(" || ")
    }
}

/// An entry's marker name (`cuCtxCreate_v12050`).
fn abi_name(e: &Entry) -> &str {
    e.pfn.strip_prefix("PFN_").unwrap_or(&e.pfn)
}

/// What the header holds of one entry: its condition and its typedef per group of toolkits.
struct HeaderEntry<'a> {
    entry: &'a Entry,
    /// `(toolkits, typedef text)`: the toolkits that declare it alike.
    typedefs: Vec<(Vec<ToolkitVersion>, String)>,
    /// The platform and legacy condition, or empty.
    cond: Vec<String>,
}

/// The entries the header holds, by typedef name; and those left out, with why.
fn header_entries<'a>(ctx: &Ctx<'a>) -> (BTreeMap<&'a str, HeaderEntry<'a>>, Vec<String>) {
    let mut out = BTreeMap::new();
    let mut left_out = Vec::new();
    for e in ctx.model.entries.values().filter(|e| e.module == ROW) {
        let name = format!("cuda_pfn_PFN_{}", abi_name(e));
        let mut groups: Vec<(Vec<ToolkitVersion>, String)> = Vec::new();
        let mut missing = None;
        for (t, d) in &e.declared {
            match typedef_text(&name, &d.params, d.returns.as_str()) {
                Some(text) => match groups.iter_mut().find(|(_, g)| *g == text) {
                    Some((ts, _)) => ts.push(*t),
                    None => groups.push((vec![*t], text)),
                },
                None => missing = Some(*t),
            }
        }
        if let Some(t) = missing {
            left_out.push(format!("{} (a parameter type of CUDA {t}'s declaration has no C spelling here)", e.pfn));
            continue;
        }
        if Record::entry(&e.symbol, Abi::of(e)).bytes().is_err() {
            left_out.push(format!("{} (a name longer than a record holds)", e.pfn));
            continue;
        }
        let mut cond = Vec::new();
        match (e.platforms.contains(&Platform::Linux), e.platforms.contains(&Platform::Windows)) {
            (true, true) => {}
            (true, false) => cond.push("!defined(_WIN32)".to_owned()),
            (false, true) => cond.push("defined(_WIN32)".to_owned()),
            (false, false) => continue,
        }
        match e.arch.as_deref() {
            None => {}
            Some("aarch64") => cond.push("defined(__aarch64__)".to_owned()),
            Some("x86_64") => cond.push("(defined(__x86_64__) || defined(_M_X64))".to_owned()),
            Some(other) => {
                left_out.push(format!("{} (only on {other})", e.pfn));
                continue;
            }
        }
        if e.legacy {
            cond.push("defined(__CUDA_API_VERSION_INTERNAL)".to_owned());
        }
        out.insert(e.pfn.as_str(), HeaderEntry { entry: e, typedefs: groups, cond });
    }
    (out, left_out)
}

/// The header's text.
pub fn c_header(ctx: &Ctx<'_>) -> String {
    let all = &ctx.all_toolkits;
    let (entries, left_out) = header_entries(ctx);
    let oldest = all.first().map_or(0, |t| t.cuda_version());
    let newest = all.last().map_or(0, |t| t.cuda_version());
    let mut s = ctx.marker("//");
    let list = |v: u32| format_cuda_version(v);
    let _ = write!(
        s,
        r#"//
// cuda_pfn.h: every ABI of the CUDA driver's entry points at its exact version, for C and C++
// programs that call cuGetProcAddress. Plain C99 (and C++11 and later); include it after, or
// instead of, your own cuda.h (CUDA {first} to {last}: each ABI is here only where that cuda.h
// declares its types). The user's manual: docs/c-header.md in cuda-sys-gen's repository.
//
//   cuda_pfn_driver d;
//   cuda_pfn_PFN_cuCtxCreate_v12050 create;     /* the same type as cudaTypedefs.h's */
//   if (cuda_pfn_driver_open(&d) == CUDA_SUCCESS &&
//       cuda_pfn_get_cuCtxCreate_v12050(&d, &create) == CUDA_SUCCESS) ...
//
// Each getter cuda_pfn_get_X(d, &out) asks cuGetProcAddress for exactly X's symbol, version
// and stream flag (CUDA_PFN_VERSION(X), CUDA_PFN_FLAGS(X)), and:
// - refuses an ABI newer than the driver before asking (drivers before CUDA 13.0 answer such a
//   request with an older ABI, of another signature): CUDA_PFN_ERROR_DRIVER_TOO_OLD;
// - checks the result and the status: a driver without the ABI is CUDA_PFN_ERROR_NOT_IN_DRIVER;
// - never hands out NULL: *out is set only with CUDA_SUCCESS (NULL otherwise).
// CUDA_PFN_ERROR_STRING(buf, size, &d, X, result) says why, naming X, its version and the
// driver's. cuda_pfn_get_cuX (cuda.h's own name) is the ABI this cuda.h means by cuX, per-thread
// under CUDA_API_PER_THREAD_DEFAULT_STREAM, as cuda.h's macros make it.
//
// Every getter holds its ABI's record (160 bytes, the Rust crate's), which
// `cuda-sys-gen min-driver PROGRAM` reads: a getter the program never calls is not compiled,
// and leaves none.
//
// No allocation, no global state: a cuda_pfn_driver is a value the caller holds; getters only
// read it, from any thread. A library opened by cuda_pfn_driver_open is never closed by this
// header (the pointers it hands out would dangle).
"#,
        first = list(oldest),
        last = list(newest),
    );
    if !left_out.is_empty() {
        s.push_str("//\n// Left out (each has its Rust entry in the crate):\n");
        for l in &left_out {
            let _ = writeln!(s, "//   {l}");
        }
    }
    let _ = write!(s, "{}", PRELUDE.replace("@OLDEST@", &oldest.to_string()).replace("@OLDEST_TEXT@", &list(oldest)));
    s.push_str("\n// ---- Every ABI of cuda.h's typedef header ----\n");
    for h in entries.values() {
        let e = h.entry;
        let abi = abi_name(e);
        let fields = Record::entry(&e.symbol, Abi::of(e));
        let Ok(check) = fields.record().map(|r| r.check) else { continue };
        let declared: Vec<ToolkitVersion> = h.typedefs.iter().flat_map(|(t, _)| t.clone()).collect();
        let mut cond = vec![format!("({})", version_condition(all, &declared))];
        cond.extend(h.cond.iter().cloned());
        let _ = writeln!(
            s,
            "\n/* {abi}: `{}` at version {} ({}){}, exported as {} */",
            e.symbol,
            e.version,
            list(e.version),
            if e.variant.is_some() { ", per-thread default stream" } else { "" },
            e.exported
        );
        let _ = writeln!(s, "#if {}", cond.join(" && "));
        let _ = writeln!(s, "#define CUDA_PFN_VERSION_{abi} {}", e.version);
        let _ = writeln!(s, "#define CUDA_PFN_FLAGS_{abi} {}", fields.flags);
        let _ = writeln!(s, "#define cuda_pfn_abi_{abi} {abi}");
        if h.typedefs.len() == 1 {
            let _ = writeln!(s, "{}", h.typedefs[0].1);
        } else {
            for (i, (ts, text)) in h.typedefs.iter().enumerate() {
                let kw = if i == 0 { "#if" } else { "#elif" };
                let _ = writeln!(s, "{kw} {}\n{text}", version_condition(all, ts));
            }
            s.push_str("#endif\n");
        }
        let _ = writeln!(
            s,
            "CUDA_PFN_GETTER_({abi}, {}, {}u, {}u, \"{}\", \"{}\", 0x{check:08x}u)",
            fields.flags, fields.version, fields.floor, fields.symbol, fields.exported
        );
        s.push_str("#endif\n");
    }
    s.push_str(&c_names(ctx, &entries));
    s.push_str(EPILOGUE);
    s
}

/// What a C name means in one toolkit: the typedef of its entry without and with
/// `CUDA_API_PER_THREAD_DEFAULT_STREAM`.
type Meanings<'a> = (Option<&'a str>, Option<&'a str>);

/// An ABI (its typedef) and the toolkits whose cuda.h mean it by one C name.
type AbiRun<'a> = (&'a str, Vec<ToolkitVersion>);

/// cuda.h's own names: per range of `CUDA_VERSION` where a name means one ABI (in a stream
/// mode, or in both), the type, the getter and the ABI's name under the C name.
fn c_names(ctx: &Ctx<'_>, entries: &BTreeMap<&str, HeaderEntry<'_>>) -> String {
    let all = &ctx.all_toolkits;
    let mut names: BTreeMap<&str, BTreeMap<ToolkitVersion, Meanings<'_>>> = BTreeMap::new();
    for (t, map) in &ctx.model.c_names {
        for (c, target) in map {
            names.entry(c.as_str()).or_default().insert(*t, (target.default.as_deref(), target.per_thread.as_deref()));
        }
    }
    let every_c_name: std::collections::BTreeSet<&str> = names.keys().copied().collect();
    const PER_THREAD: &str = "defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)";
    let mut s = String::from(
        "\n// ---- cuda.h's own names: the ABI this cuda.h means, in its stream mode ----\n\
         #if !defined(__CUDA_API_VERSION_INTERNAL)\n",
    );
    for (c, by_toolkit) in &names {
        // Per stream mode and ABI, the toolkits whose cuda.h means it by `c`.
        let mut rows: BTreeMap<(&str, Vec<ToolkitVersion>), (bool, bool)> = BTreeMap::new();
        for per_thread in [false, true] {
            let mut by_abi: BTreeMap<&str, Vec<ToolkitVersion>> = BTreeMap::new();
            for (t, (d, p)) in by_toolkit {
                let Some(pfn) = (if per_thread { *p } else { *d }) else { continue };
                if entries.contains_key(pfn) {
                    by_abi.entry(pfn).or_default().push(*t);
                }
            }
            for (pfn, ts) in by_abi {
                let modes = rows.entry((pfn, ts)).or_default();
                if per_thread {
                    modes.1 = true;
                } else {
                    modes.0 = true;
                }
            }
        }
        // In the order of their first toolkit: the header reads as cuda.h's history.
        let mut rows: Vec<(AbiRun<'_>, (bool, bool))> = rows.into_iter().collect();
        rows.sort_by_key(|((pfn, ts), _)| (ts.first().copied(), *pfn));
        for ((pfn, ts), modes) in rows {
            let Some(h) = entries.get(pfn) else { continue };
            let abi = abi_name(h.entry);
            let mut cond = vec![format!("({})", version_condition(all, &ts))];
            match modes {
                (true, true) => {}
                (true, false) => cond.push(format!("!{PER_THREAD}")),
                (false, true) => cond.push(PER_THREAD.to_owned()),
                (false, false) => continue,
            }
            cond.extend(h.cond.iter().cloned());
            // A macro's argument `cuX` is expanded by cuda.h before it reaches the header's
            // macros (`cuMemAlloc_v2`): that name stands for the ABI too, where it is no C name.
            let expanded = &h.entry.exported;
            let also = if expanded != c && !every_c_name.contains(expanded.as_str()) {
                format!("\n#define cuda_pfn_abi_{expanded} {abi}")
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "#if {}\ntypedef cuda_pfn_PFN_{abi} cuda_pfn_PFN_{c};\n\
                 #define cuda_pfn_get_{c} cuda_pfn_get_{abi}\n#define cuda_pfn_abi_{c} {abi}{also}\n#endif",
                cond.join(" && ")
            );
        }
    }
    s.push_str("#endif\n");
    s
}

/// Everything before the entries: includes, the driver, the lookup, the error text.
const PRELUDE: &str = include_str!("../../crate-files/cuda_pfn_prelude.h");

/// The end of the header.
const EPILOGUE: &str = "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* CUDA_PFN_H */\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_types() {
        assert_eq!(c_type("*const c_char").as_deref(), Some("const char *"));
        assert_eq!(c_type("*mut *mut c_void").as_deref(), Some("void **"));
        assert_eq!(c_type("*mut *const c_char").as_deref(), Some("const char **"));
        assert_eq!(c_type("*const *mut c_char").as_deref(), Some("char *const *"));
        assert_eq!(c_type("usize").as_deref(), Some("size_t"));
        assert_eq!(c_type("CUdeviceptr_v2").as_deref(), Some("CUdeviceptr_v2"));
        assert_eq!(c_type("Option<unsafe extern \"C\" fn()>"), None);
        assert_eq!(c_type("[c_int; 4]"), None);
    }

    #[test]
    fn version_conditions() {
        let v = |s: &str| s.parse::<ToolkitVersion>().unwrap();
        let all = [v("11.7"), v("12.0"), v("12.4"), v("13.0")];
        assert_eq!(version_condition(&all, &all), "CUDA_VERSION >= 11070");
        assert_eq!(version_condition(&all, &[v("12.0"), v("12.4")]), "(CUDA_VERSION >= 12000 && CUDA_VERSION < 13000)");
        assert_eq!(
            version_condition(&all, &[v("11.7"), v("13.0")]),
            "(CUDA_VERSION >= 11070 && CUDA_VERSION < 12000) || CUDA_VERSION >= 13000"
        );
        assert_eq!(version_condition(&all, &[]), "0");
    }
}
