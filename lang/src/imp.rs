//! Abstract syntax of IMP (IFL 2022 paper, fig. 11).
//!
//! IMP is imperative: variables of type `int` or `mem` are declared with
//! `var`, assigned, and blocks are read and written one element at a time.
//! `kernel i < n do s done` runs its iterations in parallel. A program names
//! its inputs and says how to read each result back (a scalar, or an array
//! by its shape, block and LMAD), as docs/language.md states. Scalar expressions,
//! atoms and LMAD syntax are those of [`crate::ast`].

use crate::ast::{Atom, Ident, LmadSyn, SExp};
use crate::span::Span;

/// IMP's two types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImpType {
    /// A 64-bit integer (initially 0).
    Int,
    /// A memory block (initially unset).
    Mem,
}

impl ImpType {
    /// The type's concrete syntax.
    pub fn name(self) -> &'static str {
        match self {
            ImpType::Int => "int",
            ImpType::Mem => "mem",
        }
    }
}

/// An array as a parameter or result: `xs : [n]int @ m -> L`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrDecl {
    /// The array's name (for messages and printing results).
    pub name: Ident,
    /// Its shape.
    pub shape: Vec<Atom>,
    /// The block it lives in.
    pub block: Ident,
    /// Where each element lives in the block.
    pub lmad: LmadSyn,
    /// The whole declaration.
    pub span: Span,
}

/// A parameter: `(n : int)` or an array `(xs : [n]int @ xm -> L)`, which
/// declares its block `xm` too.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    /// An integer input.
    Int(Ident, Span),
    /// An array input and its block.
    Array(ArrDecl),
}

/// A result in the `out (...)` list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Result {
    /// An integer variable.
    Scalar(Ident),
    /// An array read back from a block.
    Array(ArrDecl),
}

/// What an `assert` checks: the bounds of an index or of a slice of the
/// source program, so that a failure names the source's rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    /// `assert index se`: an index within its dimension (E-INDEX).
    Index,
    /// `assert slice se`: a slice within its dimension (E-SLICE).
    Slice,
}

impl Check {
    /// The word after `assert`.
    pub fn keyword(self) -> &'static str {
        match self {
            Check::Index => "index",
            Check::Slice => "slice",
        }
    }

    /// The check named by `word`, if any.
    pub fn from_keyword(word: &str) -> Option<Check> {
        match word {
            "index" => Some(Check::Index),
            "slice" => Some(Check::Slice),
            _ => None,
        }
    }

    /// The rule of the source semantics that a failure stands for.
    pub fn rule(self) -> &'static str {
        match self {
            Check::Index => "E-INDEX",
            Check::Slice => "E-SLICE",
        }
    }
}

/// A statement (`s`); sequences are `Vec<Stmt>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StmtKind {
    /// `skip`.
    Skip,
    /// `var x : τ`.
    Var(Ident, ImpType),
    /// `x <- se`.
    Assign(Ident, SExp),
    /// `x <- alloc se`.
    Alloc(Ident, SExp),
    /// `x <- m[se]`.
    Read(Ident, Ident, SExp),
    /// `m[se] <- se`.
    Write(Ident, SExp, SExp),
    /// `if x then s else s fi`.
    If(Ident, Vec<Stmt>, Vec<Stmt>),
    /// `kernel i < se do s done`.
    Kernel(Ident, SExp, Vec<Stmt>),
    /// `for i < se do s done`: sequential; se is evaluated once, i runs
    /// 0 .. se-1 and is bound (read-only) in s.
    For(Ident, SExp, Vec<Stmt>),
    /// `while x do s done`: runs s while the `int` variable x is non-zero,
    /// tested before each iteration.
    While(Ident, Vec<Stmt>),
    /// `assert index se` / `assert slice se`: stuck unless se is non-zero.
    Assert(Check, SExp),
}

/// A statement with its position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Where it is.
    pub span: Span,
}

/// An IMP program: `def main params = s out (results)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// The inputs, in order.
    pub params: Vec<Param>,
    /// The statements (never empty: `skip` stands for nothing).
    pub body: Vec<Stmt>,
    /// How to read back each result.
    pub results: Vec<Result>,
    /// The whole program.
    pub span: Span,
}

/// Nesting depth of a statement sequence, or `None` once it exceeds `limit`.
pub fn depth_within(stmts: &[Stmt], limit: usize) -> Option<usize> {
    if limit == 0 {
        return None;
    }
    let mut d = 1;
    for s in stmts {
        let inner = match &s.kind {
            StmtKind::Skip | StmtKind::Var(..) => 0,
            StmtKind::Assign(_, e)
            | StmtKind::Alloc(_, e)
            | StmtKind::Read(_, _, e)
            | StmtKind::Assert(_, e) => e.depth_within(limit - 1)?,
            StmtKind::Write(_, i, e) => i.depth_within(limit - 1)?.max(e.depth_within(limit - 1)?),
            StmtKind::If(_, a, b) => depth_within(a, limit - 1)?.max(depth_within(b, limit - 1)?),
            StmtKind::Kernel(_, n, b) | StmtKind::For(_, n, b) => {
                n.depth_within(limit - 1)?.max(depth_within(b, limit - 1)?)
            }
            StmtKind::While(_, b) => depth_within(b, limit - 1)?,
        };
        d = d.max(1 + inner);
    }
    Some(d)
}
