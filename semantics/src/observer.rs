//! Watching an evaluation: the events the interpreters report.
//!
//! Interpreters are generic over an [`Observer`], so that with
//! [`NoObserver`] every call is an empty inlined function and costs nothing;
//! `--stats` uses [`Stats`], and a step-through debugger can implement the
//! same trait. Events carry only what is cheap to give: names, block
//! numbers, offsets, iteration indices.

use funmem_lang::{Name, Span};
use std::fmt;

/// Receives evaluation events. Every method defaults to doing nothing.
pub trait Observer {
    /// A statement is evaluated by the named rule.
    #[inline(always)]
    fn rule(&mut self, _rule: &'static str, _span: Span) {}
    /// A name is bound to a value.
    #[inline(always)]
    fn bind(&mut self, _name: &Name, _value: &dyn fmt::Display) {}
    /// A block (or, in the value semantics, an array) of `cells` elements is allocated.
    #[inline(always)]
    fn alloc(&mut self, _block: usize, _cells: u64) {}
    /// A heap cell is read.
    #[inline(always)]
    fn read(&mut self, _block: usize, _offset: i64) {}
    /// A heap cell is written.
    #[inline(always)]
    fn write(&mut self, _block: usize, _offset: i64) {}
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
    fn alloc(&mut self, _: usize, cells: u64) {
        self.allocations += 1;
        self.cells += cells;
    }
    #[inline(always)]
    fn read(&mut self, _: usize, _: i64) {
        self.reads += 1;
    }
    #[inline(always)]
    fn write(&mut self, _: usize, _: i64) {
        self.writes += 1;
    }
    #[inline(always)]
    fn iteration_start(&mut self, _: Span, _: i64) {
        self.iterations += 1;
    }
}
