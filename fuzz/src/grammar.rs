//! A grammar of bindgen-like Rust source, so that fuzzed inputs are mostly valid Rust and
//! reach the `PFN_` paths of the parser (names, function pointer shapes, parameter types)
//! and its layout table (aliases, structs, unions, newtypes, bindgen's layout tests) instead
//! of stopping at syn.

use arbitrary::Arbitrary;

/// Names that matter to the parser, mixed with ones that should not.
const TYPE_NAMES: &[&str] = &[
    "CUresult",
    "CUdeviceptr",
    "CUdeviceptr_v2",
    "CUstream",
    "CUstream_st",
    "CUdevice",
    "CUcontext",
    "CUctx_st",
    "A",
    "B",
    "C",
    "D",
    "E",
    "F",
    "CUtensorMap",
    "CUtensorMap_st",
    "CUdevResource",
    "Option",
    "c_int",
    "c_void",
    "c_uint",
    "Self",
    "PFN_cuX_v1",
    "CUlaunchConfig",
    "CUlaunchAttribute",
    "u8",
    "i128",
    "usize",
    "c_long",
];
const SYMBOLS: &[&str] = &[
    "cuMemAlloc",
    "cuCtxCreate",
    "cuX",
    "cuY",
    "cu_v2",
    "cuFoo_v1",
    "a",
    "cuMemcpy",
    "cuGraph__",
    "PFN_cuX",
    "PFN_1x",
    "_",
    "v2",
    "cuStreamBeginCapture",
    "cuGetProcAddress",
    "Self",
    "self",
    "r#type",
];
const FIELDS: &[&str] =
    &["x", "y", "reserved", "_reserved", "reserved0", "_bitfield_1", "pad", "type_", "r#type", "_", "flags", "a"];
const PRIMS: &[&str] = &[
    "::core::ffi::c_int",
    "::core::ffi::c_uint",
    "::core::ffi::c_void",
    "::core::ffi::c_char",
    "::core::ffi::c_ulonglong",
    "::core::ffi::c_longlong",
    "::core::ffi::c_float",
    "::core::ffi::c_double",
    "::core::ffi::c_ushort",
    "::core::ffi::c_uchar",
    "u32",
    "u64",
    "i64",
    "usize",
    "bool",
    "u128",
    "f32",
    "c_long",
];
const VERSIONS: &[u32] = &[0, 1, 2000, 3000, 3020, 4000, 7000, 10010, 11040, 12000, 12050, 999999, 1000000, 4294967295];
/// Items bindgen writes that are not typedefs, and a few it never would.
const SNIPPETS: &[&str] = &[
    "impl CUresult { pub const CUDA_SUCCESS: CUresult = CUresult(0); }",
    "#[repr(transparent)] #[derive(Copy, Clone, Hash, PartialEq, Eq)] pub struct CUresult(pub ::core::ffi::c_uint);",
    "pub use self::CUresult_enum as CUresult;",
    "pub const CUDA_VERSION: u32 = 13050;",
    "#[repr(C)] #[derive(Copy, Clone)] pub struct __BindgenBitfieldUnit<Storage> { storage: Storage }",
    "unsafe extern \"C\" { pub fn cuInit(Flags: ::core::ffi::c_uint) -> CUresult; }",
    "macro_rules! m { () => {} }",
    "m!();",
    "pub type PFN_cuX_v1 = m!();",
    "pub type PFN_cuX_v1 = ::core::option::Option<unsafe extern \"C\" fn(...) -> CUresult>;",
    "pub type PFN_cuX_v1<T> = ::core::option::Option<unsafe extern \"C\" fn(x: T) -> CUresult>;",
    "pub type PFN_cuX_v2 = impl Sized;",
    "pub type PFN_cuX_v3 = _;",
    "pub type PFN_cuX_v4 = ::core::option::Option<for<'a> unsafe extern \"C\" fn(x: &'a u8) -> CUresult>;",
    "pub type PFN_cuX_v5 = ::core::option::Option<unsafe extern \"C\" fn(x: [u8; N]) -> CUresult>;",
    "pub type PFN_cuX_v6 = ::core::option::Option<unsafe extern \"C\" fn(x: [u8; 1 + 2]) -> CUresult>;",
    "pub type PFN_cuX_v7 = ::core::option::Option<unsafe extern \"C\" fn(x: dyn Fn()) -> !>;",
    "const _: () = { [\"Size of A\"][::core::mem::size_of::<A>() - 18446744073709551615usize]; };",
    "const _: () = { [\"Offset of field: A::\"][::core::mem::offset_of!(A, x) - 8usize]; };",
    "const _: () = { [\"Size of \"][0 - 1usize]; };",
    "pub union U { pub a: u32, pub b: [u8; 8] }",
    "pub enum E { A = 1, B }",
    "#[cfg(x)] pub type PFN_cuY_v1 = ::core::option::Option<unsafe extern \"C\" fn()>;",
];

#[derive(Arbitrary, Debug)]
pub struct Source {
    pub items: Vec<Item>,
}

#[derive(Arbitrary, Debug)]
pub enum Item {
    Pfn(Pfn),
    Alias { name: TypeName, ty: Ty },
    Struct { name: TypeName, fields: Vec<(FieldName, Ty)> },
    Newtype { name: TypeName, ty: Ty },
    Union { name: TypeName, fields: Vec<(FieldName, Ty)> },
    Layout { name: TypeName, size: u16, align: u8, offsets: Vec<(FieldName, u16)> },
    Snippet(u8),
}

#[derive(Arbitrary, Debug)]
pub struct Pfn {
    pub name: PfnName,
    pub params: Vec<(Option<FieldName>, Ty)>,
    pub ret: Option<Ty>,
    pub form: FnForm,
    pub abi: Abi,
    pub variadic: bool,
}

#[derive(Arbitrary, Debug)]
pub enum FnForm {
    /// `::core::option::Option<unsafe extern "C" fn(..)>`: what bindgen writes.
    Option,
    Bare,
    ShortOption,
    NotAFunction(Ty),
}

#[derive(Arbitrary, Debug)]
pub enum Abi {
    C,
    System,
    Rust,
    Stdcall,
}

#[derive(Arbitrary, Debug)]
pub enum PfnName {
    Versioned { symbol: Symbol, version: Version, variant: u8 },
    Unversioned(Symbol),
    Parts(Vec<NamePart>),
}

#[derive(Arbitrary, Debug)]
pub enum Symbol {
    Pool(u8),
    Parts(Vec<NamePart>),
}

#[derive(Arbitrary, Debug)]
pub enum Version {
    Pool(u8),
    Any(u32),
    Digits(u8),
}

#[derive(Arbitrary, Debug)]
pub enum NamePart {
    Pfn,
    V,
    Ptds,
    Ptsz,
    Underscore,
    Digits(u16),
    Word(u8),
}

#[derive(Arbitrary, Debug)]
pub struct TypeName(pub u8);

#[derive(Arbitrary, Debug)]
pub struct FieldName(pub u8);

#[derive(Arbitrary, Debug)]
pub enum Ty {
    Prim(u8),
    Named(TypeName),
    Ptr { mutable: bool, to: Box<Ty> },
    Array(Box<Ty>, u16),
    Fn { params: Vec<Ty>, ret: Option<Box<Ty>>, wrapped: bool },
    Unit,
    Never,
    Tuple(Vec<Ty>),
    Generic(TypeName, Vec<Ty>),
    Ref(Box<Ty>),
    Slice(Box<Ty>),
    Paren(Box<Ty>),
    Infer,
}

fn pick<'a>(pool: &[&'a str], i: u8) -> &'a str {
    pool[i as usize % pool.len()]
}

impl NamePart {
    fn render(&self) -> String {
        match self {
            NamePart::Pfn => "PFN_".into(),
            NamePart::V => "_v".into(),
            NamePart::Ptds => "_ptds".into(),
            NamePart::Ptsz => "_ptsz".into(),
            NamePart::Underscore => "_".into(),
            NamePart::Digits(n) => n.to_string(),
            NamePart::Word(i) => pick(SYMBOLS, *i).into(),
        }
    }
}

impl Symbol {
    fn render(&self) -> String {
        match self {
            Symbol::Pool(i) => pick(SYMBOLS, *i).into(),
            Symbol::Parts(p) => p.iter().map(NamePart::render).collect(),
        }
    }
}

impl PfnName {
    pub fn render(&self) -> String {
        match self {
            PfnName::Versioned { symbol, version, variant } => {
                let v = match version {
                    Version::Pool(i) => VERSIONS[*i as usize % VERSIONS.len()].to_string(),
                    Version::Any(n) => n.to_string(),
                    Version::Digits(n) => "9".repeat(*n as usize % 12),
                };
                let suffix = ["", "_ptds", "_ptsz", "_ptds_ptsz", "_PTDS"][*variant as usize % 5];
                format!("PFN_{}_v{v}{suffix}", symbol.render())
            }
            PfnName::Unversioned(s) => format!("PFN_{}", s.render()),
            PfnName::Parts(p) => p.iter().map(NamePart::render).collect(),
        }
    }
}

impl Abi {
    fn render(&self) -> &'static str {
        match self {
            Abi::C => "extern \"C\" ",
            Abi::System => "extern \"system\" ",
            Abi::Rust => "",
            Abi::Stdcall => "extern \"stdcall\" ",
        }
    }
}

fn fn_type(params: &[String], ret: Option<String>, abi: &str, variadic: bool) -> String {
    let mut ps = params.join(", ");
    if variadic {
        ps.push_str(if params.is_empty() { "..." } else { ", ..." });
    }
    let ret = ret.map(|r| format!(" -> {r}")).unwrap_or_default();
    format!("unsafe {abi}fn({ps}){ret}")
}

impl Ty {
    pub fn render(&self) -> String {
        match self {
            Ty::Prim(i) => pick(PRIMS, *i).into(),
            Ty::Named(n) => pick(TYPE_NAMES, n.0).into(),
            Ty::Ptr { mutable, to } => format!("*{} {}", if *mutable { "mut" } else { "const" }, to.render()),
            Ty::Array(t, n) => format!("[{}; {n}usize]", t.render()),
            Ty::Fn { params, ret, wrapped } => {
                let ps: Vec<String> = params.iter().map(Ty::render).collect();
                let f = fn_type(&ps, ret.as_ref().map(|r| r.render()), "extern \"C\" ", false);
                if *wrapped {
                    format!("::core::option::Option<{f}>")
                } else {
                    f
                }
            }
            Ty::Unit => "()".into(),
            Ty::Never => "!".into(),
            Ty::Tuple(ts) => format!("({},)", ts.iter().map(Ty::render).collect::<Vec<_>>().join(", ")),
            Ty::Generic(n, ts) => {
                format!("{}<{}>", pick(TYPE_NAMES, n.0), ts.iter().map(Ty::render).collect::<Vec<_>>().join(", "))
            }
            Ty::Ref(t) => format!("&'static {}", t.render()),
            Ty::Slice(t) => format!("[{}]", t.render()),
            Ty::Paren(t) => format!("({})", t.render()),
            Ty::Infer => "_".into(),
        }
    }
}

impl Item {
    /// The name this item defines in the parser's type table, if any.
    pub fn defines(&self) -> Option<String> {
        match self {
            Item::Pfn(p) => Some(p.name.render()),
            Item::Alias { name, .. }
            | Item::Struct { name, .. }
            | Item::Newtype { name, .. }
            | Item::Union { name, .. } => Some(pick(TYPE_NAMES, name.0).into()),
            Item::Layout { name, .. } => Some(format!("layout of {}", pick(TYPE_NAMES, name.0))),
            Item::Snippet(_) => Some("snippet".into()),
        }
    }

    pub fn render(&self) -> String {
        let fields = |fs: &[(FieldName, Ty)]| {
            fs.iter().map(|(f, t)| format!("pub {}: {},", pick(FIELDS, f.0), t.render())).collect::<Vec<_>>().join(" ")
        };
        match self {
            Item::Pfn(p) => {
                let params: Vec<String> = p
                    .params
                    .iter()
                    .map(|(n, t)| match n {
                        Some(n) => format!("{}: {}", pick(FIELDS, n.0), t.render()),
                        None => t.render(),
                    })
                    .collect();
                let f = fn_type(&params, p.ret.as_ref().map(Ty::render), p.abi.render(), p.variadic);
                let ty = match &p.form {
                    FnForm::Option => format!("::core::option::Option<{f}>"),
                    FnForm::Bare => f,
                    FnForm::ShortOption => format!("Option<{f}>"),
                    FnForm::NotAFunction(t) => t.render(),
                };
                format!("pub type {} = {ty};", p.name.render())
            }
            Item::Alias { name, ty } => format!("pub type {} = {};", pick(TYPE_NAMES, name.0), ty.render()),
            Item::Struct { name, fields: fs } => {
                format!(
                    "#[repr(C)] #[derive(Copy, Clone)] pub struct {} {{ {} }}",
                    pick(TYPE_NAMES, name.0),
                    fields(fs)
                )
            }
            Item::Newtype { name, ty } => {
                format!("#[repr(transparent)] pub struct {}(pub {});", pick(TYPE_NAMES, name.0), ty.render())
            }
            Item::Union { name, fields: fs } => {
                format!("#[repr(C)] pub union {} {{ {} }}", pick(TYPE_NAMES, name.0), fields(fs))
            }
            Item::Layout { name, size, align, offsets } => {
                let n = pick(TYPE_NAMES, name.0);
                let mut s = format!(
                    "const _: () = {{ [\"Size of {n}\"][::core::mem::size_of::<{n}>() - {size}usize]; [\"Alignment of {n}\"][::core::mem::align_of::<{n}>() - {align}usize]; "
                );
                for (f, off) in offsets {
                    let f = pick(FIELDS, f.0);
                    s.push_str(&format!(
                        "[\"Offset of field: {n}::{f}\"][::core::mem::offset_of!({n}, {f}) - {off}usize]; "
                    ));
                }
                s.push_str("};");
                s
            }
            Item::Snippet(i) => pick(SNIPPETS, *i).into(),
        }
    }
}

impl Source {
    pub fn render(&self) -> String {
        self.items.iter().map(|i| i.render() + "\n").collect()
    }

    pub fn render_reversed(&self) -> String {
        self.items.iter().rev().map(|i| i.render() + "\n").collect()
    }

    /// Whether no two items define the same name (then their order cannot matter).
    pub fn names_unique(&self) -> bool {
        let mut seen = std::collections::BTreeSet::new();
        self.items.iter().filter_map(Item::defines).all(|n| n != "snippet" && seen.insert(n))
    }
}
