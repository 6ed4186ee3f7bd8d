//! The oracle: random programs, differential checks of a pipeline of
//! passes, a reducer, and fuzz campaigns.
//!
//! - [`big`]: large programs of a chosen shape, for measuring scaling.
//! - [`gen`]: random well-typed FUN programs with inputs.
//! - [`fun_ref`]: an independent FUN evaluator over nested vectors, the
//!   reference a FUN source's results are held against.
//! - [`gen_mem`]: random FUNMEM programs written directly (not lowered).
//! - [`gen_race`]: FUNMEM programs with exactly one data race, to check the
//!   race detector's report against the reference's.
//! - [`reference`](crate::reference): a brute-force FUNMEM heap semantics with explicit read
//!   and write sets, the reference for the race detector and validity.
//! - [`check`]: the differential checks of a pipeline on one case.
//! - [`guards`]: every index and slice lowered to IMP is in bounds by a
//!   fact or guarded by an assert (`Checks.guards`).
//! - [`reduce`]: shrinks a failing case while it fails the same way.
//! - [`campaign`]: fuzz campaigns (seeds, shards, summaries).
//! - [`baseline`]: the shares of what the passes did, and their
//!   comparison with a saved campaign (`--baseline`).
//!
//! Architecture invariant: everything here is deterministic given a seed:
//! the same seed gives the same programs on any machine.

pub mod baseline;
pub mod big;
pub mod campaign;
pub mod check;
pub mod fun_ref;
pub mod gen;
pub mod gen_mem;
pub mod gen_race;
pub mod guards;
pub mod prove;
pub mod reduce;
pub mod reference;

use funmem_lang::ast::Program;
use funmem_semantics::value::Value;

/// The random number generator of the generators: ChaCha8, whose output is
/// fixed by its seed on every platform.
pub type Rng = rand_chacha::ChaCha8Rng;

/// A test case: a program and the inputs to run it on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// The program (FUN or FUNMEM).
    pub program: Program,
    /// One value per non-`mem` parameter, in order.
    pub inputs: Vec<Value>,
}

/// Knobs of the random program generators.
#[derive(Clone, Debug, PartialEq)]
pub struct GenConfig {
    /// Most statements in one body.
    pub max_stms: usize,
    /// Most nesting of kernels and `if`s.
    pub max_depth: usize,
    /// Largest array size in inputs and literal sizes (sizes are drawn
    /// from 0 ..= max_size).
    pub max_size: i64,
    /// Share (0 to 1) of programs that contain an operation that may go
    /// wrong at run time (an index or slice out of bounds, a division by
    /// zero); the rest never go wrong.
    pub fail_share: f64,
}

impl Default for GenConfig {
    fn default() -> GenConfig {
        GenConfig {
            max_stms: 8,
            max_depth: 3,
            max_size: 5,
            fail_share: 0.1,
        }
    }
}
