//! Deliberately broken variants of the workspace's code, to test the
//! tester: the oracle's checks must catch each one (oracle/tests/planted.rs
//! and power_*.rs). One switch for every crate: the faults of the shared
//! LMAD code here, of the semantics and of the translations and passes
//! (funmem-semantics and funmem-transforms re-export this module as their
//! own `fault`). Compiled only with the `planted-faults` feature (the
//! other crates' features turn this one on), and even then off unless a
//! test switches one on for its own thread; at most one is on at a time.

use std::cell::Cell;

/// A planted fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// No fault: everything as shipped.
    None,
    /// `slice_f` (eq. 2): the offset moves by `oi * s1`, the outermost
    /// stride, for every dimension `i` instead of by `oi * si`. Common to
    /// every stage (the type checker, every semantics and both
    /// translations use `lmad.rs`), so the stages agree on the wrong
    /// answer and only an independent evaluator (the oracle's `fun_ref`)
    /// can see it.
    SliceOffsetOuterStride,
    /// The race detector: a write made inside a nested kernel (at depth
    /// 2 or more) is not checked against the earlier reads of other
    /// iterations at the outer levels (a write-after-read race missed).
    RaceIgnoresReadsOnNestedWrite,
    /// FUN to FUNMEM: fresh arrays (kernel, `iota`, `copy`) are laid out
    /// one element too far into their block (an off-by-one LMAD offset).
    FreshOffsetOffByOne,
    /// FUNMEM to IMP: a kernel whose body returns an array does not copy
    /// it into its row (a missing Copy).
    MissingKernelCopy,
    /// FUNMEM to IMP: a transposed array is read with its source's strides
    /// (a wrong stride in transpose).
    TransposeStride,
    /// Memory expansion (CPU layout): iteration i's part starts at i
    /// instead of i*M, so the parts of neighbouring iterations overlap.
    ExpandOverlap,
    /// FUNMEM to IMP: an index that is some enclosing kernel's index is
    /// taken as in bounds (no `assert index`), whatever that kernel's
    /// bound, even when it is not the indexed dimension's size.
    KernelIndexInBounds,
    /// The simplifier: a copy within its source's block is dropped as
    /// already in place when the strides agree, whatever the offsets (the
    /// offsets are not compared).
    CopyStridesOnly,
    /// Memory expansion: a size that depends on the kernel index is
    /// taken to be at most its first iteration's (`M = se(0)` instead of
    /// `max(se(0), se(n-1))`), so an increasing size no longer fits its
    /// part and the rewrite is skipped.
    ExpandFirstIteration,
    /// FUN to FUNMEM: a `copy` whose result an in-place update consumes
    /// gets no fresh block; it stays in its source's block and LMAD (a
    /// copy onto itself), so the update writes into the source's block
    /// while the source is still read: the heap semantics and the value
    /// semantics disagree (validity).
    UpdateFreshBlock,
    /// FUN to FUNMEM: a loop's array result is read from the parameter's
    /// initial block (a view of the initial array, `x[0 : k]`) instead of
    /// the block the last iteration returned: the lowered program's value
    /// differs from the source's whenever the body makes a new array.
    LoopResultParamBlock,
    /// Coalescing without C1 (last use): a source still used after its
    /// root is moved into the destination anyway.
    CoalesceNoC1,
    /// Coalescing without C2: a destination block allocated after the
    /// source is created is taken anyway.
    CoalesceNoC2,
    /// Coalescing without C3: uses of the destination between the
    /// source's creation and the root are not looked at.
    CoalesceNoC3,
    /// Coalescing without the block test of C4: a source whose block
    /// holds other arrays too, or escapes, is moved anyway.
    CoalesceNoC4,
    /// Coalescing without C5: names the new LMAD reads need not be bound
    /// where the source is created.
    CoalesceNoC5,
    /// Coalescing without the bounds check before an update's source
    /// (errors stay errors): the source is written where the indices
    /// point before anyone checks them.
    CoalesceNoBoundsCheck,
    /// Reuse without spreading uses over aliases (Futhark bug #1545): a
    /// use of an array in an `if`'s or a loop's block is not a use of the
    /// blocks that block may be.
    ReuseNoAliases,
    /// Reuse's liveness without the loop rule: a block made before a loop
    /// and used inside it is alive only where the body uses it, not for
    /// the whole loop (a later iteration reads it again).
    ReuseNoLoopWiden,
    /// Reuse's liveness without the kernel rule: a block used inside a
    /// kernel is alive only where the body uses it (other iterations run
    /// at the same time).
    ReuseNoKernelWiden,
    /// Reuse without carried blocks: a block a loop body returns (which
    /// the next iteration reads) is dead after its last use in the body,
    /// and may take a block from outside the loop (one block for every
    /// iteration's, while the previous one is still read).
    ReuseNoCarried,
    /// Reuse's liveness without the body results as uses (thesis fig.
    /// 6.1): a block a body returns is dead after its last statement.
    ReuseNoResultUse,
    /// Reuse's interference exceptions taken without their proofs: the
    /// places of two iterations are assumed disjoint.
    ReuseNoExceptionProof,
    /// Reuse inside kernels without the element-size rule: blocks of
    /// elements of different sizes share, and expansion's interleaving
    /// then overlaps them (or cannot expand them).
    ReuseNoElemSize,
    /// Reuse without its size checks: a block too small for the array is
    /// reused (no `max`, no proof that it fits).
    ReuseNoSizeCheck,
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
