//! Nothing but the tests in `tests/`: see `tests/races.rs`.
