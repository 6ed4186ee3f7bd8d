//! Watching an evaluation: the events the interpreters report.
//!
//! Interpreters are generic over an [`Observer`], so that with
//! [`NoObserver`] every call is an empty inlined function and costs nothing;
//! `--stats` uses [`Stats`], and a step-through debugger can implement the
//! same trait. Events carry only what is cheap to give: names, block
//! numbers, offsets, iteration indices, the words written.
//!
//! The order of events is the evaluation order of the big-step rules, so
//! that an observer can rebuild the derivation: [`Observer::rule`] when a
//! statement starts, the events of its premises (the statements of its
//! bodies, each kernel or loop iteration opened by
//! [`Observer::iteration_start`] or [`Observer::loop_iteration`] and the
//! names bound on entry by [`Observer::enter`]), the names it binds
//! ([`Observer::bind`], with [`Observer::place`] for an array in memory),
//! and [`Observer::done`] when it has finished. A statement that goes
//! wrong gets no `done`.

use funmem_lang::lmad::Lmad;
use funmem_lang::prim::Prim;
use funmem_lang::{Name, Span};
use std::fmt;

/// Receives evaluation events. Every method defaults to doing nothing.
pub trait Observer {
    /// Whether the observer wants events that cost work to produce even
    /// when nobody listens: each element of an input array laid out in its
    /// block (IMP writes inputs in bulk). Checked at compile time.
    const DETAILED: bool = false;
    /// A statement is evaluated by the named rule.
    #[inline(always)]
    fn rule(&mut self, _rule: &'static str, _span: Span) {}
    /// A name is bound to a value: each name a statement's pattern binds,
    /// in pattern order, once per evaluation of the statement (after the
    /// statements of its bodies: a loop's pattern after all its
    /// iterations, a kernel's after all its iterations, each result
    /// array in turn). Program parameters are bound first. A kernel's or
    /// `for` loop's index and a loop's parameters are not reported (at the
    /// start or at each iteration): only the body's own statements are, in
    /// every iteration.
    #[inline(always)]
    fn bind(&mut self, _name: &Name, _value: &dyn fmt::Display) {}
    /// The array just bound to `name` lives in `block` at `lmad` (in
    /// elements of `elem`): the heap semantics' `(ℓ, L)` (fig. 6). Follows
    /// the [`Observer::bind`] of the name.
    #[inline(always)]
    fn place(&mut self, _name: &Name, _block: usize, _lmad: &Lmad<i64>, _elem: Prim) {}
    /// A kernel that starts will bind its result `name` to `block` at
    /// `lmad` (E-MEM-KERNEL's `(E(z_mem), E(L_z))`): its iterations write
    /// there. Follows the kernel's [`Observer::rule`].
    #[inline(always)]
    fn destination(&mut self, _name: &Name, _block: usize, _lmad: &Lmad<i64>, _elem: Prim) {}
    /// A name bound on entry to a body, at each iteration: a kernel's or
    /// `for` loop's index, a loop's parameters.
    #[inline(always)]
    fn enter(&mut self, _name: &Name, _value: &dyn fmt::Display) {}
    /// The statement that started with [`Observer::rule`] at `span` has
    /// finished, its names bound.
    #[inline(always)]
    fn done(&mut self, _span: Span) {}
    /// A block (or, in the value semantics, an array) of `cells` cells is
    /// allocated: `bytes` bytes (the heap semantics count 8-byte cells, the
    /// value semantics elements).
    #[inline(always)]
    fn alloc(&mut self, _block: usize, _cells: u64, _bytes: u64) {}
    /// The element of type `elem` at element offset `offset` of a block
    /// (bytes `offset * size(elem)` ..) is read.
    #[inline(always)]
    fn read(&mut self, _block: usize, _offset: i64, _elem: Prim) {}
    /// The element of type `elem` at element offset `offset` of a block is
    /// written with `word` (a scalar as a 64-bit word:
    /// [`funmem_lang::prim::Const::from_bits`]).
    #[inline(always)]
    fn write(&mut self, _block: usize, _offset: i64, _elem: Prim, _word: u64) {}
    /// Iteration `i` of the sequential loop at `span` starts (`loop`, IMP's
    /// `for` and `while`).
    #[inline(always)]
    fn loop_iteration(&mut self, _span: Span, _i: i64) {}
    /// Iteration `i` of the kernel at `kernel` starts.
    #[inline(always)]
    fn iteration_start(&mut self, _kernel: Span, _i: i64) {}
    /// Iteration `i` of the kernel at `kernel` ends.
    #[inline(always)]
    fn iteration_end(&mut self, _kernel: Span, _i: i64) {}
}

/// The observer that observes nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl Observer for NoObserver {}

/// Counts for `--stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Statements evaluated.
    pub statements: u64,
    /// Allocations made.
    pub allocations: u64,
    /// Cells allocated in all.
    pub cells: u64,
    /// Heap cells read.
    pub reads: u64,
    /// Heap cells written.
    pub writes: u64,
    /// Kernel iterations run.
    pub iterations: u64,
}

impl Observer for Stats {
    #[inline(always)]
    fn rule(&mut self, _: &'static str, _: Span) {
        self.statements += 1;
    }
    #[inline(always)]
    fn alloc(&mut self, _: usize, cells: u64, _: u64) {
        self.allocations += 1;
        self.cells += cells;
    }
    #[inline(always)]
    fn read(&mut self, _: usize, _: i64, _: Prim) {
        self.reads += 1;
    }
    #[inline(always)]
    fn write(&mut self, _: usize, _: i64, _: Prim, _: u64) {
        self.writes += 1;
    }
    #[inline(always)]
    fn iteration_start(&mut self, _: Span, _: i64) {
        self.iterations += 1;
    }
    /// A sequential loop's iteration costs fuel like a statement.
    #[inline(always)]
    fn loop_iteration(&mut self, _: Span, _: i64) {
        self.statements += 1;
    }
}

/// Memory footprint of a run, for `funmem stats`.
///
/// The semantics never frees a block. A block allocated inside a kernel
/// iteration cannot outlive it, though (a kernel's results are copied out),
/// so a sequential machine could free it when the iteration ends:
/// [`MemProfile::peak`] is the largest number of cells live at once under
/// that rule. A parallel machine runs every iteration at once and needs
/// every cell: [`MemProfile::cells`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemProfile {
    /// Allocations made.
    pub allocations: u64,
    /// Cells allocated in all.
    pub cells: u64,
    /// Most cells live at once when each iteration's blocks die with it.
    pub peak: u64,
    /// Allocations made inside kernel iterations.
    pub allocations_in_kernels: u64,
    /// Synchronous host reads a GPU would make: element reads (E-MEM-INDEX
    /// of a scalar) and `reduce`s (E-MEM-REDUCE) outside every kernel
    /// iteration, each time one runs.
    pub host_reads: u64,
    /// An E-MEM-INDEX outside kernels whose read (if it reads an element)
    /// comes next.
    index_pending: bool,
    live: u64,
    /// Cells allocated by each iteration in progress, innermost last.
    frames: Vec<u64>,
}

impl Observer for MemProfile {
    fn rule(&mut self, rule: &'static str, _: Span) {
        let host = self.frames.is_empty();
        self.index_pending = host && rule == "E-MEM-INDEX";
        if host && rule == "E-MEM-REDUCE" {
            self.host_reads += 1;
        }
    }
    fn read(&mut self, _: usize, _: i64, _: Prim) {
        if self.index_pending {
            self.host_reads += 1;
            self.index_pending = false;
        }
    }
    fn alloc(&mut self, _: usize, cells: u64, _: u64) {
        self.allocations += 1;
        self.cells += cells;
        self.live += cells;
        self.peak = self.peak.max(self.live);
        if let Some(f) = self.frames.last_mut() {
            *f += cells;
            self.allocations_in_kernels += 1;
        }
    }
    fn iteration_start(&mut self, _: Span, _: i64) {
        self.frames.push(0);
    }
    fn iteration_end(&mut self, _: Span, _: i64) {
        if let Some(f) = self.frames.pop() {
            self.live -= f;
        }
    }
}

#[cfg(test)]
mod mem_profile_tests {
    use super::*;

    #[test]
    fn iterations_free_their_blocks() {
        let mut m = MemProfile::default();
        m.alloc(0, 10, 80);
        for i in 0..3 {
            m.iteration_start(Span::DUMMY, i);
            m.alloc(1, 4, 32);
            m.iteration_end(Span::DUMMY, i);
        }
        assert_eq!((m.allocations, m.cells, m.peak), (4, 22, 14));
        assert_eq!(m.allocations_in_kernels, 3);
    }

    #[test]
    fn host_reads_are_element_reads_and_reduces_outside_kernels() {
        let mut m = MemProfile::default();
        m.rule("E-MEM-INDEX", Span::DUMMY);
        m.read(0, 3, Prim::I64);
        m.rule("E-MEM-INDEX", Span::DUMMY); // a row: no read follows
        m.rule("E-MEM-COPY", Span::DUMMY);
        m.read(0, 0, Prim::I64);
        m.rule("E-MEM-REDUCE", Span::DUMMY);
        m.iteration_start(Span::DUMMY, 0);
        m.rule("E-MEM-INDEX", Span::DUMMY);
        m.read(0, 1, Prim::I64);
        m.rule("E-MEM-REDUCE", Span::DUMMY);
        m.iteration_end(Span::DUMMY, 0);
        assert_eq!(m.host_reads, 2);
    }
}
