//! Deliberately broken variants of the shared LMAD code, to test the
//! tester: a fault here is common to every stage (the type checker, every
//! semantics and both translations use `lmad.rs`), so the stages agree on
//! the wrong answer and only an independent evaluator (the oracle's
//! `fun_ref`) can see it (oracle/tests/power_reference.rs). Compiled only
//! with the `planted-faults` feature, and even then off unless a test
//! switches one on for its own thread.

use std::cell::Cell;

/// A planted fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// No fault: the LMAD operations as shipped.
    None,
    /// `slice_f` (eq. 2): the offset moves by `oi * s1`, the outermost
    /// stride, for every dimension `i` instead of by `oi * si`.
    SliceOffsetOuterStride,
}

thread_local! {
    static FAULT: Cell<Fault> = const { Cell::new(Fault::None) };
}

/// Switches a fault on (or `Fault::None` off) for this thread.
pub fn set(f: Fault) {
    FAULT.with(|c| c.set(f));
}

/// Whether this fault is on in this thread.
pub fn active(f: Fault) -> bool {
    FAULT.with(|c| c.get() == f)
}
