//! The visitor traits of `visit` (feature `visit`): the code to run for one entry type or one
//! symbol type. The generated `visit.rs` calls them once per marker and re-exports them.

#[cfg(feature = "newest")]
use crate::newest::Symbol;
use crate::registry::Entry;

/// Code to run for one entry type: `driver.get::<E>()`, say.
pub trait EntryVisitor {
    fn visit<E: Entry>(&mut self);
}

/// Code to run for one symbol type: `driver.newest::<S>()`, say.
#[cfg(feature = "newest")]
pub trait SymbolVisitor {
    fn visit<S: Symbol>(&mut self);
}
