//! Run-time errors: every way evaluation can go wrong, as a value.
//!
//! A stuck evaluation names the rule of the paper whose premise failed
//! (`E-INDEX`, `E-MEM-KERNEL`, `E-IMP-READ`, ...), where in the source, and
//! with which values. Races, and running out of fuel or heap, are errors of
//! their own kinds. Nothing in the interpreters panics on a user's program.

use funmem_lang::Span;
use std::fmt;

/// What kind of failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A rule's premise does not hold: out of bounds, division by zero,
    /// a write outside a block, an unset block, a wrong input.
    Stuck,
    /// Two iterations of a kernel touched one location and one of them wrote
    /// (eq. 4).
    Race(Box<Race>),
    /// More statements were evaluated than the fuel allows.
    OutOfFuel,
    /// More heap cells were allocated than the limit allows.
    OutOfHeap,
}

/// One access in a race report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The iteration indices from the racing kernel inwards: the full index
    /// path for nested kernels. (The interpreters recover the earlier
    /// access's inner indices by re-running, deterministically, with the
    /// racing location watched; see `RaceDetector::watching`.)
    pub path: Vec<i64>,
    /// `true` for a write, `false` for a read.
    pub write: bool,
}

/// A data race: what eq. 4 forbids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// The kernel whose iterations race.
    pub kernel: Span,
    /// The block (its allocation number, in allocation order from 0).
    pub block: usize,
    /// The offset in the block.
    pub offset: i64,
    /// The earlier access.
    pub first: Access,
    /// The later access.
    pub second: Access,
}

/// A run-time error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    /// The kind.
    pub kind: ErrorKind,
    /// The rule that got stuck, as the paper names it.
    pub rule: &'static str,
    /// Where.
    pub span: Span,
    /// What, with the values involved.
    pub message: String,
}

impl EvalError {
    /// A stuck rule.
    pub fn stuck(rule: &'static str, span: Span, message: impl Into<String>) -> EvalError {
        EvalError {
            kind: ErrorKind::Stuck,
            rule,
            span,
            message: message.into(),
        }
    }

    /// Division or remainder by zero in a statement evaluated by `rule`.
    pub fn div_by_zero(
        rule: &'static str,
        span: Span,
    ) -> impl Fn(crate::scalar::DivByZero) -> EvalError {
        move |_| EvalError::stuck(rule, span, "division by zero")
    }

    /// Whether this is a race.
    pub fn is_race(&self) -> bool {
        matches!(self.kind, ErrorKind::Race(_))
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.message)
    }
}

impl std::error::Error for EvalError {}

impl EvalError {
    /// Whether this is a resource limit (fuel, heap) rather than a
    /// behaviour of the program: limits are not semantics.
    pub fn is_limit(&self) -> bool {
        matches!(self.kind, ErrorKind::OutOfFuel | ErrorKind::OutOfHeap)
    }
}

/// Fuel of a run unless told otherwise: statements and kernel iterations.
/// At the interpreters' speeds (about 10^7 units a second for the heap
/// semantics with race detection, 2·10^7 for FUN's value semantics, 5·10^7
/// for IMP) a run that spends it all ends in seconds; `--fuel` raises it.
pub const DEFAULT_FUEL: u64 = 100_000_000;

/// The default fuel on an OpenCL device: 10^12 kernel iterations (a
/// kernel's work-items share it, each getting its part for its nested
/// loops). A GPU runs simple iterations about 10^4 times faster than the
/// interpreters, so the interpreters' 10^8 would refuse a kernel of 2·10^8
/// work-items that ends in milliseconds; 10^12 still ends in seconds.
pub const DEVICE_FUEL: u64 = 1_000_000_000_000;

/// Resource limits of one evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Statements that may be evaluated.
    pub fuel: u64,
    /// Heap cells (array elements) that may be allocated in all.
    pub max_heap: u64,
}

impl Default for Limits {
    /// Fixed limits, the same on every machine (for tests and libraries):
    /// [`DEFAULT_FUEL`] and [`crate::machine::FALLBACK_MAX_HEAP`] cells. The
    /// command line uses [`Limits::for_this_machine`].
    fn default() -> Limits {
        Limits {
            fuel: DEFAULT_FUEL,
            max_heap: crate::machine::FALLBACK_MAX_HEAP,
        }
    }
}

impl Limits {
    /// [`DEFAULT_FUEL`], and as many heap cells as this machine's free
    /// memory affords ([`crate::machine::default_max_heap`]).
    pub fn for_this_machine() -> Limits {
        Limits {
            fuel: DEFAULT_FUEL,
            max_heap: crate::machine::default_max_heap(),
        }
    }

    /// [`Limits::for_this_machine`] with the device's fuel,
    /// [`DEVICE_FUEL`], for runs on OpenCL.
    pub fn for_device() -> Limits {
        Limits {
            fuel: DEVICE_FUEL,
            ..Limits::for_this_machine()
        }
    }

    /// The error for allocating `cells` more with `used` allocated already,
    /// when that exceeds `max_heap`; charged to `rule` at `span`.
    pub fn over_heap(&self, rule: &'static str, span: Span, cells: u64, used: u64) -> EvalError {
        EvalError {
            kind: ErrorKind::OutOfHeap,
            rule,
            span,
            message: format!(
                "heap limit of {} cells exceeded: allocating {cells} cells with {used} already allocated (raise it with --max-heap CELLS)",
                self.max_heap
            ),
        }
    }

    /// Charges `cells` to a run that has allocated `used` so far: the new
    /// total, or the error [`Limits::over_heap`].
    pub fn charge(
        &self,
        used: u64,
        cells: u64,
        rule: &'static str,
        span: Span,
    ) -> Result<u64, EvalError> {
        used.checked_add(cells)
            .filter(|&t| t <= self.max_heap)
            .ok_or_else(|| self.over_heap(rule, span, cells, used))
    }
}

/// What is left of an evaluation's fuel: one unit per statement and per
/// kernel iteration, so that every evaluation stops in bounded time.
#[derive(Clone, Copy, Debug)]
pub struct Fuel {
    left: u64,
    limit: u64,
}

impl Fuel {
    /// A full tank of `limit` units.
    pub fn new(limit: u64) -> Fuel {
        Fuel { left: limit, limit }
    }

    /// Spends one unit; out of fuel is an error at `span`, charged to `rule`.
    #[inline]
    pub fn burn(&mut self, rule: &'static str, span: Span) -> Result<(), EvalError> {
        if self.left == 0 {
            return Err(out_of_fuel(self.limit, rule, span));
        }
        self.left -= 1;
        Ok(())
    }
}

/// The error of a run that spent all of its `limit` units of fuel.
#[cold]
pub fn out_of_fuel(limit: u64, rule: &'static str, span: Span) -> EvalError {
    EvalError {
        kind: ErrorKind::OutOfFuel,
        rule,
        span,
        message: format!(
            "fuel of {limit} statements and kernel iterations exhausted (raise it with --fuel N)"
        ),
    }
}

/// A loop that ran out of fuel, named as such: an out-of-fuel error from
/// inside the loop at `span` (its body's statements, its iterations)
/// becomes the loop's, under `rule` (E-LOOP-FOR, E-LOOP-WHILE,
/// E-MEM-LOOP), so that a `while` that never ends says so; `form` is
/// `for` or `while`. An error an inner loop already named stays the inner
/// loop's; other errors pass.
pub fn loop_out_of_fuel(
    e: EvalError,
    rule: &'static str,
    form: &'static str,
    span: Span,
) -> EvalError {
    if e.kind != ErrorKind::OutOfFuel || is_loop_rule(e.rule) {
        return e;
    }
    EvalError {
        message: format!("the `{form}` loop did not finish: {}", e.message),
        rule,
        span,
        ..e
    }
}

fn is_loop_rule(rule: &str) -> bool {
    matches!(
        rule,
        "E-LOOP-FOR" | "E-LOOP-WHILE" | "E-MEM-LOOP" | "E-IMP-FOR" | "E-IMP-WHILE"
    )
}
