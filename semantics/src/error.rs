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

/// Resource limits of one evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Statements that may be evaluated.
    pub fuel: u64,
    /// Heap cells (array elements) that may be allocated in all.
    pub max_heap: u64,
}

impl Default for Limits {
    /// Generous limits that still stop a runaway program: 10^10 statements,
    /// 2^30 cells (8 GiB of i64s).
    fn default() -> Limits {
        Limits {
            fuel: 10_000_000_000,
            max_heap: 1 << 30,
        }
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
            return Err(EvalError {
                kind: ErrorKind::OutOfFuel,
                rule,
                span,
                message: format!(
                    "fuel of {} statements and kernel iterations exhausted",
                    self.limit
                ),
            });
        }
        self.left -= 1;
        Ok(())
    }
}
