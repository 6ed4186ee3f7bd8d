//! Translations and passes: FUN -> FUNMEM (IFL 2022 §3.5), FUNMEM -> IMP
//! (§4), and the FUNMEM -> FUNMEM passes, each of which returns its program
//! and the proof obligations it relies on.
//!
//! Architecture invariant: this crate rewrites programs; it does not run
//! them. Checking a pass (validity, agreement) is the oracle's business,
//! and the `funmem` binary drives both.

pub mod access;
pub mod aliases;
pub mod coalesce;
pub mod expand;
#[cfg(feature = "planted-faults")]
pub mod fault;
pub mod hoist;
pub mod interference;
pub mod liveness;
pub mod migrate;
pub mod mincut;
pub mod names;
pub mod obligation;
pub mod pass;
pub mod pipeline;
pub mod reuse;
pub mod simplify;
pub mod to_funmem;
pub mod to_imp;
pub mod walk;
pub mod writes;

pub use obligation::{Claim, Obligation};
pub use pass::{Pass, PassOutput, PASSES};
pub use to_funmem::transform_program;
pub use to_imp::fun_mem_to_imp;
