//! Running a program of any layer under one of its semantics.
//!
//! | layer  | semantics                                   | default |
//! |--------|---------------------------------------------|---------|
//! | FUN    | value (figs. 4-5)                           | value   |
//! | FUNMEM | value (`unmem`, fig. 9), heap (fig. 10)     | heap    |
//! | IMP    | heap (fig. 12)                              | heap    |

use crate::error::{EvalError, Limits};
use crate::observer::Observer;
use crate::value::Value;
use funmem_lang::parse::{AnyProgram, Layer};
use std::fmt;

/// Which semantics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Semantics {
    /// Values only: FUN's semantics (FUNMEM through `unmem`).
    Value,
    /// Memory as a heap of blocks: FUNMEM's fig. 10, IMP's fig. 12.
    Heap,
}

impl Semantics {
    /// The semantics' name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Semantics::Value => "value",
            Semantics::Heap => "heap",
        }
    }

    /// The semantics a layer has, default first.
    pub fn of(layer: Layer) -> &'static [Semantics] {
        match layer {
            Layer::Fun => &[Semantics::Value],
            Layer::FunMem => &[Semantics::Heap, Semantics::Value],
            Layer::Imp => &[Semantics::Heap],
        }
    }
}

impl fmt::Display for Semantics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Fuel and heap limits.
    pub limits: Limits,
    /// Whether kernels are checked for races (heap semantics only).
    pub race_check: bool,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            limits: Limits::default(),
            race_check: true,
        }
    }
}

/// The layer of a parsed program.
pub fn layer_of(p: &AnyProgram) -> Layer {
    match p {
        AnyProgram::Fun(q) if q.lang == funmem_lang::ast::Lang::FunMem => Layer::FunMem,
        AnyProgram::Fun(_) => Layer::Fun,
        AnyProgram::Imp(_) => Layer::Imp,
    }
}

/// Runs a program; `None` when the layer has no such semantics.
pub fn run<O: Observer>(
    p: &AnyProgram,
    sem: Semantics,
    inputs: &[Value],
    opts: RunOptions,
    obs: &mut O,
) -> Option<Result<Vec<Value>, EvalError>> {
    if !Semantics::of(layer_of(p)).contains(&sem) {
        return None;
    }
    Some(match (p, sem) {
        (AnyProgram::Fun(q), Semantics::Value) => {
            crate::fun::run_value(q, inputs, opts.limits, obs)
        }
        (AnyProgram::Fun(q), Semantics::Heap) => {
            crate::heap::run_heap(q, inputs, opts.limits, opts.race_check, obs)
        }
        (AnyProgram::Imp(q), _) => {
            crate::imp::run_imp(q, inputs, opts.limits, opts.race_check, obs)
        }
    })
}
