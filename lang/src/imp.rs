//! Abstract syntax of IMP (IFL 2022 paper, fig. 11).
//!
//! IMP is imperative: variables of type `int` or `mem` are declared with
//! `var`, assigned, and blocks are read and written one element at a time.
//! `kernel i < n do s done` runs its iterations in parallel. A program names
//! its inputs and says how to read each result back (a scalar, or an array
//! by its shape, block and LMAD), as docs/language.md states. Scalar expressions,
//! atoms and LMAD syntax are those of [`crate::ast`].

use crate::ast::{Atom, BinOp, Ident, LmadSyn, SExp};
use crate::prim::Prim;
use crate::span::Span;

/// IMP's types: scalars and blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImpType {
    /// A scalar of an element type (initially zero: 0, 0.0 or false).
    Prim(Prim),
    /// A memory block (initially unset).
    Mem,
}

impl ImpType {
    /// `int` (`i64`).
    pub const INT: ImpType = ImpType::Prim(Prim::I64);

    /// The type's concrete syntax (`int` for `i64`).
    pub fn name(self) -> &'static str {
        match self {
            ImpType::Prim(Prim::I64) => "int",
            ImpType::Prim(p) => p.name(),
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
    /// Its element type.
    pub elem: Prim,
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
    /// A scalar input.
    Scalar(Ident, Prim, Span),
    /// An array input and its block.
    Array(ArrDecl),
}

/// A result in the `out (...)` list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Result {
    /// A scalar variable.
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
    /// `x <- alloc se t`: se elements of type t (`alloc se` is `alloc se
    /// i64`).
    Alloc(Ident, SExp, Prim),
    /// `x <- m[se]`: the element of x's type at element index se (byte
    /// se * size of the type) of block m.
    Read(Ident, Ident, SExp),
    /// `m[se] <- se'`: writes se' at element index se of the type of se'.
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
    /// `x <- reduce op ne for i < n do s yield se done`: x becomes
    /// ne op e(0) op ... op e(n-1), where e(i) is the value of se after s
    /// runs with index i. The iterations may run in parallel (as a kernel's
    /// do) and the combination may be reassociated: op must be associative
    /// with ne neutral.
    Reduce(Ident, Box<Red>),
    /// `scan op ne for i < n do s yield se into m[se'] done`: writes the
    /// inclusive prefix ne op e(0) op ... op e(i) at element index se'
    /// (which mentions i) of block m, for every i.
    Scan(Box<Red>, Ident, SExp),
}

/// The part a `reduce` and a `scan` statement share.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Red {
    /// The operator.
    pub op: ImpOp,
    /// The neutral element; its type is the reduction's element type.
    pub ne: SExp,
    /// The iteration index.
    pub index: Ident,
    /// The number of iterations (evaluated once).
    pub count: SExp,
    /// What each iteration runs (its variables are its own).
    pub body: Vec<Stmt>,
    /// The iteration's element, after `yield`.
    pub elem: SExp,
}

/// The operator of an IMP `reduce` or `scan`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ImpOp {
    /// `(+)`, `(*)`, `(min)`, `(max)`, `(&&)`, `(||)`.
    Bin(BinOp),
    /// `(\a b -> s yield se)`: a and b are bound to the two operands
    /// (variables of the element type), s runs, se is the result.
    Lambda(Ident, Ident, Vec<Stmt>, SExp),
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
            | StmtKind::Alloc(_, e, _)
            | StmtKind::Read(_, _, e)
            | StmtKind::Assert(_, e) => e.depth_within(limit - 1)?,
            StmtKind::Reduce(_, r) | StmtKind::Scan(r, _, _) => {
                let mut d = depth_within(&r.body, limit - 1)?;
                if let ImpOp::Lambda(_, _, b, _) = &r.op {
                    d = d.max(depth_within(b, limit - 1)?);
                }
                d
            }
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
