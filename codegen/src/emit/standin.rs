//! `src/standin_exports.rs`: the per-entry table of `export_libcuda!` (the macro itself is
//! hand-written, `codegen/src/shim/standin.rs`): one function per ABI of the registry that
//! NVIDIA's Linux driver library exports, each of exactly its prototype and under its exported
//! name, calling its hook or the real driver through the crate's `standin` module.
//!
//! A macro, not items of the crate: a crate that turns the `standin` feature on exports
//! nothing; only the `cdylib` that invokes `export_libcuda!` does.

use std::collections::BTreeMap;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};

use super::ctx::Ctx;

pub const STANDIN_EXPORTS_RS: &str = "src/standin_exports.rs";

/// How an argument is shown to an observer.
#[derive(Clone, PartialEq, Eq)]
enum Kind {
    /// A raw pointer: its address.
    Pointer,
    /// A function pointer or an `Option` of one: its address.
    Function,
    Int,
    /// A C enum, bindgen's `#[repr(transparent)]` newtype of an integer (this one): its value.
    Enum(String),
    Float,
    /// A record passed by value: only its size (its padding is not to be read).
    Bytes,
}

const INTEGERS: &[&str] = &[
    "c_char",
    "c_schar",
    "c_uchar",
    "c_short",
    "c_ushort",
    "c_int",
    "c_uint",
    "c_long",
    "c_ulong",
    "c_longlong",
    "c_ulonglong",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "isize",
    "usize",
    "bool",
];

/// What the crate's types declare each name to be: an alias of a type (`type X = Y;` or
/// `pub use self::Y as X;`), a C enum, or a record.
enum Declared<'a> {
    Alias(&'a syn::Type),
    Renamed(String),
    Enum,
    Record,
}

/// Each C enum's enumerators (bindgen's `impl T { pub const NAME: T = T(N); }`): by value, the
/// first name of each.
fn enumerators(types: &syn::File) -> BTreeMap<String, BTreeMap<u64, String>> {
    let mut out: BTreeMap<String, BTreeMap<u64, String>> = BTreeMap::new();
    for item in &types.items {
        let syn::Item::Impl(imp) = item else { continue };
        let syn::Type::Path(p) = &*imp.self_ty else { continue };
        let Some(ty) = p.path.get_ident() else { continue };
        for it in &imp.items {
            let syn::ImplItem::Const(c) = it else { continue };
            let syn::Expr::Call(call) = &c.expr else { continue };
            let [syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. })] = call.args.iter().collect::<Vec<_>>()[..]
            else {
                continue;
            };
            if let Ok(v) = n.base10_parse::<u64>() {
                out.entry(ty.to_string()).or_default().entry(v).or_insert_with(|| c.ident.to_string());
            }
        }
    }
    out
}

fn declared(types: &syn::File) -> BTreeMap<String, Declared<'_>> {
    let mut out = BTreeMap::new();
    for item in &types.items {
        match item {
            syn::Item::Type(t) => {
                out.insert(t.ident.to_string(), Declared::Alias(&t.ty));
            }
            syn::Item::Struct(s) => {
                let transparent = s.attrs.iter().any(|a| {
                    a.path().is_ident("repr")
                        && a.meta.require_list().is_ok_and(|l| l.tokens.to_string() == "transparent")
                });
                let one_unnamed = matches!(&s.fields, syn::Fields::Unnamed(f) if f.unnamed.len() == 1);
                out.insert(
                    s.ident.to_string(),
                    if transparent && one_unnamed { Declared::Enum } else { Declared::Record },
                );
            }
            syn::Item::Union(u) => {
                out.insert(u.ident.to_string(), Declared::Record);
            }
            syn::Item::Use(u) => {
                if let syn::UseTree::Path(p) = &u.tree {
                    if let (true, syn::UseTree::Rename(r)) = (p.ident == "self", &*p.tree) {
                        out.insert(r.rename.to_string(), Declared::Renamed(r.ident.to_string()));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn kind(ty: &syn::Type, declared: &BTreeMap<String, Declared<'_>>, depth: usize) -> Kind {
    match ty {
        syn::Type::Ptr(_) => Kind::Pointer,
        syn::Type::BareFn(_) => Kind::Function,
        syn::Type::Paren(p) => kind(&p.elem, declared, depth),
        syn::Type::Group(g) => kind(&g.elem, declared, depth),
        syn::Type::Path(p) => {
            let Some(last) = p.path.segments.last() else { return Kind::Bytes };
            let name = last.ident.to_string();
            match name.as_str() {
                "Option" => Kind::Function,
                "f32" | "f64" | "c_float" | "c_double" => Kind::Float,
                n if INTEGERS.contains(&n) => Kind::Int,
                n => match declared.get(n) {
                    Some(Declared::Alias(t)) if depth < 16 => kind(t, declared, depth + 1),
                    Some(Declared::Renamed(to)) if depth < 16 => {
                        let to = Ident::new(to, Span::call_site());
                        kind(&syn::parse_quote!(#to), declared, depth + 1)
                    }
                    Some(Declared::Enum) => Kind::Enum(n.to_owned()),
                    _ => Kind::Bytes,
                },
            }
        }
        _ => Kind::Bytes,
    }
}

/// Whether a parameter's name says it counts the elements of an array (`numNodes`, `count`,
/// `cudaDeviceCount`, `numDependencies_out`, `nbGroups`).
fn counts(name: &str) -> bool {
    let n = name.trim_end_matches("_out");
    n.starts_with("num") || n.starts_with("nb") || n.eq_ignore_ascii_case("count") || n.ends_with("Count")
}

/// The C `char` types: a pointer to one is a string or a byte buffer, never one value.
const CHARS: &[&str] = &["c_char", "c_schar", "c_uchar", "i8", "u8"];

/// How to read what parameter `name` of type `ty` points to after a successful call, where it
/// is an output parameter (the rule: `standin::Arg::output`'s docs); `names` are all the
/// parameters' names. The reader is a non-capturing closure, `unsafe fn(usize) -> ArgValue`.
fn output_reader(
    ty: &syn::Type,
    name: &str,
    names: &[&str],
    declared: &BTreeMap<String, Declared<'_>>,
    enums_used: &mut std::collections::BTreeSet<String>,
) -> Option<TokenStream> {
    let syn::Type::Ptr(ptr) = ty else { return None };
    ptr.mutability?;
    if !counts(name) && names.iter().any(|n| *n != name && counts(n)) {
        return None;
    }
    let elem = &*ptr.elem;
    let pointee = elem.to_token_stream().to_string().replace(' ', "");
    let value = match kind(elem, declared, 0) {
        _ if CHARS.contains(&pointee.as_str()) => return None,
        // An untyped pointer (`void**`, `const char**`): an array (`kernelParams`) unless the
        // name says it is returned.
        Kind::Pointer if matches!(elem, syn::Type::Ptr(_)) => {
            let returned = (name.starts_with('p') && name.len() > 1) || name.ends_with("Out") || name.ends_with("_out");
            if !returned {
                return None;
            }
            quote!($crate::standin::ArgValue::Pointer(v as usize))
        }
        Kind::Pointer => quote!($crate::standin::ArgValue::Pointer(v as usize)),
        Kind::Function => quote!($crate::standin::ArgValue::Pointer(unsafe { ::core::mem::transmute::<_, usize>(v) })),
        // A device address: shown as one.
        Kind::Int if pointee.starts_with("CUdeviceptr") => quote!($crate::standin::ArgValue::Pointer(v as usize)),
        Kind::Int => quote!($crate::standin::ArgValue::Int(v as i128)),
        Kind::Enum(e) => {
            let table = Ident::new(&format!("ENUM_{e}"), Span::call_site());
            enums_used.insert(e);
            quote!($crate::standin::ArgValue::Enum(v.0 as i128, #table))
        }
        Kind::Float => quote!($crate::standin::ArgValue::Float(v as f64)),
        Kind::Bytes => return None,
    };
    Some(quote!(::core::option::Option::Some(|p: usize| {
        // SAFETY: `Arg::output`'s contract: after a successful call, the caller's pointer.
        let v = unsafe { ::core::ptr::read(p as *const #elem) };
        #value
    })))
}

/// The lookup functions: a runtime must see exactly those the real driver has.
const LOOKUPS: &[&str] = &["cuGetProcAddress", "cuGetProcAddress_v2"];

/// Where the stand-in exports the lookup functions as GNU indirect functions (glibc on the
/// architectures of NVIDIA's Linux drivers); elsewhere as plain functions.
const IFUNC: Cfg = Cfg;

struct Cfg;

impl ToTokens for Cfg {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(quote!(all(
            target_os = "linux",
            target_env = "gnu",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )));
    }
}

/// `exported` as an indirect function: its resolver, run by the loader or `dlsym`, answers
/// the stand-in's `inner` where the real driver exports `exported` too, and NULL where it
/// does not (`standin::lookup_export`), so that `dlsym` finds it exactly where it finds the
/// real driver's. The resolver is a plain function of the name, marked an indirect function
/// by its type in the same object file.
fn lookup_resolver(exported: &str, inner: &Ident) -> TokenStream {
    let name = Ident::new(exported, Span::call_site());
    let v2 = exported.ends_with("_v2");
    quote! {
        #[cfg(#IFUNC)]
        #[unsafe(no_mangle)]
        extern "C" fn #name() -> *const ::core::ffi::c_void {
            $crate::standin::lookup_export(#v2, #inner as *const ::core::ffi::c_void)
        }
    }
}

/// The assembler's directive that makes `exported` an indirect function: at the module's top
/// level (`global_asm!` is an item of a module), in the object file of its resolver.
fn lookup_type(exported: &str) -> TokenStream {
    let directive = format!(".type {exported}, %gnu_indirect_function");
    quote! {
        #[cfg(#IFUNC)]
        ::core::arch::global_asm!(#directive);
    }
}

pub fn standin_exports_rs(ctx: &Ctx<'_>, types: &syn::File) -> TokenStream {
    let declared = declared(types);
    let names = enumerators(types);
    let mut enums_used = std::collections::BTreeSet::new();
    let mut functions = Vec::new();
    let mut lookups = Vec::new();
    let mut lookup_types = Vec::new();
    let mut table = Vec::new();
    for (index, e) in ctx.model.entries.values().enumerate() {
        let linux = e.platforms.contains(&crate::platform::Platform::Linux);
        if !linux {
            table.push(quote!($crate::standin::Export::NONE,));
            continue;
        }
        let name = Ident::new(&e.exported, Span::call_site());
        let arch = e.arch.as_ref().map(|a| quote!(#[cfg(target_arch = #a)]));
        let args: Vec<Ident> = (0..e.params.len()).map(|i| Ident::new(&format!("a{i}"), Span::call_site())).collect();
        let tys: Vec<&syn::Type> = e.params.iter().map(|p| p.ty.syntax()).collect();
        let ret = e.returns.syntax();
        let names: Vec<&str> = e.params.iter().map(|p| p.name.as_str()).collect();
        let shown: Vec<TokenStream> = e
            .params
            .iter()
            .zip(&args)
            .map(|(p, a)| {
                let (pname, ptext) = (&p.name, p.ty.as_str());
                let output = output_reader(p.ty.syntax(), pname, &names, &declared, &mut enums_used)
                    .unwrap_or_else(|| quote!(::core::option::Option::None));
                let value = match kind(p.ty.syntax(), &declared, 0) {
                    Kind::Pointer => quote!($crate::standin::ArgValue::Pointer(#a as usize)),
                    // A function pointer or an `Option` of one: an address or 0.
                    Kind::Function => {
                        quote!($crate::standin::ArgValue::Pointer(unsafe { ::core::mem::transmute::<_, usize>(#a) }))
                    }
                    Kind::Int => quote!($crate::standin::ArgValue::Int(#a as i128)),
                    Kind::Enum(ty) => {
                        let table = Ident::new(&format!("ENUM_{ty}"), Span::call_site());
                        enums_used.insert(ty);
                        quote!($crate::standin::ArgValue::Enum(#a.0 as i128, #table))
                    }
                    Kind::Float => quote!($crate::standin::ArgValue::Float(#a as f64)),
                    Kind::Bytes => quote!($crate::standin::ArgValue::Bytes(::core::mem::size_of_val(&#a))),
                };
                quote!($crate::standin::Arg { name: #pname, ty: #ptext, value: #value, output: #output },)
            })
            .collect();
        // The lookup functions are exported as indirect functions (`lookup_resolver`): the
        // function itself under a name of the stand-in's own.
        let lookup = LOOKUPS.contains(&e.exported.as_str());
        let exported = e.exported.as_str();
        let (name, export) = if lookup {
            let inner = Ident::new(&format!("standin_{exported}"), Span::call_site());
            lookups.push(lookup_resolver(exported, &inner));
            lookup_types.push(lookup_type(exported));
            (inner, quote!(#[allow(non_snake_case)] #[cfg_attr(not(#IFUNC), unsafe(export_name = #exported))]))
        } else {
            (name, quote!(#[unsafe(no_mangle)]))
        };
        functions.push(quote! {
            #arch
            #export
            pub unsafe extern "system" fn #name(#(#args: #tys),*) -> #ret {
                type F = unsafe extern "system" fn(#(#tys),*) -> #ret;
                let mut forward = || match $crate::standin::target(&EXPORTS, #index) {
                    // SAFETY: the target is a function of exactly this ABI (the hook's type,
                    // or the real driver's export of this name).
                    Some(p) => unsafe { ::core::mem::transmute::<*mut ::core::ffi::c_void, F>(p.as_ptr())(#(#args),*) },
                    None => $crate::standin::MISSING,
                };
                match EXPORTS.observer {
                    Some(o) => o.call(#index, &[#(#shown)*], &mut forward),
                    None => forward(),
                }
            }
        });
        let export = quote!($crate::standin::Export::of(#name as *const ()));
        table.push(match &e.arch {
            Some(a) => quote!({
                #[cfg(target_arch = #a)]
                let e = #export;
                #[cfg(not(target_arch = #a))]
                let e = $crate::standin::Export::NONE;
                e
            },),
            None => quote!(#export,),
        });
    }
    // One table of enumerator names per C enum an argument is.
    let tables = enums_used.iter().map(|ty| {
        let table = Ident::new(&format!("ENUM_{ty}"), Span::call_site());
        let rows = names.get(ty).into_iter().flatten().map(|(v, n)| {
            let v = *v as i128;
            quote!((#v, #n),)
        });
        quote!(static #table: &[(i128, &str)] = &[#(#rows)*];)
    });
    quote! {
        //! The table of [`export_libcuda!`](crate::export_libcuda) (hand-written, in
        //! [`standin`](crate::standin)): one exported function per ABI the driver library exports
        //! on Linux, for a `cdylib` that stands in for it.

        /// The per-entry part of [`export_libcuda!`](crate::export_libcuda), which invokes it: `fns`,
        /// the table of the exported functions (an array, in the registry's order); `items`, the
        /// functions themselves, their lookups' resolvers and the enumerator names their
        /// observer shows; `types`, the assembler directives of the indirect functions (at the
        /// module's top level).
        #[doc(hidden)]
        #[macro_export]
        macro_rules! __standin_exports {
            (fns) => {
                [#(#table)*]
            };
            (items) => {
                #(#lookups)*

                #(#tables)*

                #(#functions)*
            };
            (types) => {
                #(#lookup_types)*
            };
        }
    }
}
