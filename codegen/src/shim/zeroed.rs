//! `Default` as C's `= {0}` for the C types' records: the one macro the generated type
//! modules invoke with the records whose every byte may be zero.

/// `Default` as C's `= {0}`: every byte zero.
#[allow(unused_macros)]
macro_rules! zeroed_default {
    ($($record:ident)*) => {$(
        impl Default for $record {
            #[inline]
            fn default() -> Self {
                // SAFETY: every field of the record is an integer, a float, a raw
                // pointer, an `Option` of a function pointer or a record of those
                // (checked by the generator), for which all zero bytes are a value.
                unsafe { ::core::mem::zeroed() }
            }
        }
    )*};
}
#[allow(unused_imports)]
pub(crate) use zeroed_default;
