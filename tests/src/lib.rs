//! Integration tests of cuda-sys-gen live in tests/; this library is empty.
