//! Tables of entry points declared by the program that uses them: [`entry_table!`](crate::entry_table).

/// The highest of `versions`, or 0: the oldest driver that has every entry of a table
/// ([`entry_table!`](crate::entry_table)'s `MIN_DRIVER`). A `const fn`, so that a program can state its floor
/// at compile time from its entries' [`Entry::MIN_DRIVER`](crate::Entry::MIN_DRIVER)s:
/// `const _: () = assert!(min_driver(&[...]) <= 12000);`.
pub const fn min_driver(versions: &[u32]) -> u32 {
    let mut max = 0;
    let mut i = 0;
    while i < versions.len() {
        if versions[i] > max {
            max = versions[i];
        }
        i += 1;
    }
    max
}

/// Declares a struct of the entry points a program uses, one field per entry marker, which
/// [`Driver`](crate::Driver) loads in one call.
///
/// The struct gets `MIN_DRIVER`, the oldest driver that has every entry (a `const`, from the
/// markers' versions), and `load(&driver)`, which asks for every entry and, if any fails,
/// returns [`Error::MissingEntries`](crate::Error::MissingEntries) with each failure, not
/// only the first.
///
/// The crate docs' "Calls and tables" shows one in a whole program.
#[macro_export]
macro_rules! entry_table {
    ($(#[$meta:meta])* $vis:vis struct $name:ident { $($(#[$fmeta:meta])* $fvis:vis $field:ident : $entry:ty),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy)]
        $vis struct $name {
            $($(#[$fmeta])* $fvis $field: <$entry as $crate::Entry>::Fn,)*
        }

        impl $name {
            /// The oldest driver that has every entry of this table: the highest
            /// `Entry::MIN_DRIVER` among them (`major * 1000 + minor * 10`).
            #[allow(unused_doc_comments)]
            pub const MIN_DRIVER: u32 = {
                let mut max = 0;
                // Each field's own attributes (a `#[cfg]` among them) apply to its term.
                $($(#[$fmeta])* {
                    let v = <$entry as $crate::Entry>::MIN_DRIVER;
                    if v > max {
                        max = v;
                    }
                })*
                max
            };

            /// Every entry of the table, from `driver`; on failure, every entry that failed.
            #[allow(unused_doc_comments)]
            pub fn load(driver: &$crate::Driver) -> ::core::result::Result<Self, $crate::Error> {
                let mut errors = ::std::vec::Vec::new();
                $($(#[$fmeta])* let $field = match driver.get::<$entry>() {
                    ::core::result::Result::Ok(f) => ::core::option::Option::Some(f),
                    ::core::result::Result::Err(e) => {
                        errors.push(e);
                        ::core::option::Option::None
                    }
                };)*
                let missing = |errors| $crate::Error::MissingEntries {
                    table: ::core::stringify!($name),
                    min_driver: Self::MIN_DRIVER,
                    errors,
                };
                if !errors.is_empty() {
                    return ::core::result::Result::Err(missing(errors));
                }
                // Every field is `Some` here; the `None` arms are never taken.
                ::core::result::Result::Ok($name {
                    $($(#[$fmeta])* $field: match $field {
                        ::core::option::Option::Some(f) => f,
                        ::core::option::Option::None => return ::core::result::Result::Err(missing(::std::vec::Vec::new())),
                    },)*
                })
            }
        }
    };
}

/// Without the `api` feature there is no `cu!`, and rustc would only say that the crate has no
/// `cu`: this stand-in says which feature brings it, where the program calls it.
#[cfg(not(feature = "api"))]
#[doc(hidden)]
#[macro_export]
macro_rules! cu {
    ($($call:tt)*) => {
        ::core::compile_error!(
            "`cu!` (and `api::`) need the `api` feature of cuda-driver-pfn: `features = [\"api\"]` on its line in Cargo.toml"
        )
    };
}

/// A PTX file embedded with the NUL byte the driver needs at its end, as the `*const c_void`
/// that `cuModuleLoadData`, `cuModuleLoadDataEx`, `cuLibraryLoadData` and `cuLinkAddData` take.
///
/// The driver reads a text image as a C string, up to its first zero byte, and
/// `include_str!("k.ptx").as_ptr()` has none: the driver reads past the end of the file. This
/// is `concat!(include_str!(path), "\0")`, with the path relative to the file that calls it, as
/// `include_str!`'s is. Cubins and fatbins carry their sizes in their headers and need no NUL
/// (`include_bytes!`).
///
/// ```ignore
/// let image = cuda_driver_pfn::include_ptx!("kernels/vector_add.ptx");
/// unsafe { cu!(cuModuleLoadData(&mut module, image))? };
/// ```
#[macro_export]
macro_rules! include_ptx {
    ($($path:tt)+) => {
        ::core::concat!(::core::include_str!($($path)+), "\0").as_ptr().cast::<::core::ffi::c_void>()
    };
}

/// [`Driver::get_raw`](crate::Driver::get_raw) of a symbol and version fixed at compile time,
/// which leaves their record in the program for `cuda-sys-gen min-driver` (`get_raw` itself
/// leaves one that makes the floor "at least"): `get_raw!(driver, "cuFoo", 13050,
/// StreamFlags::LEGACY_STREAM)` is `driver.get_raw(c"cuFoo", 13050, StreamFlags::LEGACY_STREAM)`.
/// Use it inside `unsafe`, with the same contract: the result's type must be exactly the ABI
/// introduced at that version.
///
/// ```no_run
/// use cuda_driver_pfn::{get_raw, Driver, Error, StreamFlags};
/// type Init = unsafe extern "system" fn(u32) -> u32;
/// fn main() -> Result<(), Error> {
///     let driver = Driver::load()?;
///     let init: Init = unsafe { get_raw!(driver, "cuInit", 2000, StreamFlags::LEGACY_STREAM)? };
///     let _ = unsafe { init(0) };
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! get_raw {
    ($driver:expr, $symbol:literal, $version:literal, $flags:expr $(,)?) => {{
        static RECORD: $crate::EntryRecord = $crate::EntryRecord::new(
            $crate::EntryRecord::FIXED,
            $symbol,
            "",
            $version,
            $version,
            $version,
            ($flags).0 as u8,
            1,
        );
        ($driver).get_recorded(&RECORD)
    }};
}
