//! The planted faults of the semantics, to test the tester: the one switch of
//! every crate (`funmem_lang::fault`), re-exported under this crate's name.
//! Compiled only with the `planted-faults` feature.

pub use funmem_lang::fault::{active, set, Fault};
