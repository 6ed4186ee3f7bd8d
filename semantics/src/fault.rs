//! Deliberately broken variants of the semantics, to test the tester: the
//! oracle's checks must catch each one (oracle/tests/power_races.rs).
//! Compiled only with the `planted-faults` feature, and even then off
//! unless a test switches one on for its own thread.

use std::cell::Cell;

/// A planted fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// No fault: the semantics as shipped.
    None,
    /// The race detector: a write made inside a nested kernel (at depth
    /// 2 or more) is not checked against the earlier reads of other
    /// iterations at the outer levels (a write-after-read race missed).
    RaceIgnoresReadsOnNestedWrite,
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
