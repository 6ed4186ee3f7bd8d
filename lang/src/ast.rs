//! Abstract syntax of FUN and FUNMEM (IFL 2022 paper, figs. 1 and 6).
//!
//! One tree serves both languages: a FUNMEM program is a FUN program whose
//! array types carry a memory annotation (`@ m -> L`) and which may bind
//! `mem` variables with `alloc`. [`Program::lang`] says which language a tree
//! is in; the parser and the type checker keep the two apart (a FUN program
//! has no `mem`, no `alloc` and no annotation; in FUNMEM every array type has
//! one). Scalar expressions, atoms and LMAD syntax are shared with IMP.
//!
//! Every node carries a [`Span`]; spans never affect equality.

use crate::name::Name;
use crate::span::Span;

/// Which of the two functional languages a tree is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    /// FUN: no memory information.
    Fun,
    /// FUNMEM: arrays live in memory blocks at positions given by LMADs.
    FunMem,
}

impl Lang {
    /// The language's name as the paper writes it.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Fun => "FUN",
            Lang::FunMem => "FUNMEM",
        }
    }
}

/// An occurrence of a name: a use or a binder.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    /// The name.
    pub name: Name,
    /// Where it occurs.
    pub span: Span,
}

impl Ident {
    /// An identifier built by a program, with no source position.
    pub fn synthetic(name: &str) -> Ident {
        Ident {
            name: Name::new(name),
            span: Span::DUMMY,
        }
    }
}

/// An atom: a variable or an integer literal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Atom {
    /// A variable of type `int`.
    Var(Ident),
    /// An integer literal.
    Int(i64, Span),
}

impl Atom {
    /// Where the atom occurs.
    pub fn span(&self) -> Span {
        match self {
            Atom::Var(x) => x.span,
            Atom::Int(_, s) => *s,
        }
    }

    /// The variable, if the atom is one.
    pub fn var(&self) -> Option<&Name> {
        match self {
            Atom::Var(x) => Some(&x.name),
            Atom::Int(..) => None,
        }
    }
}

/// Binary operators of scalar expressions (`min` and `max` included).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    Min,
    Max,
}

impl BinOp {
    /// Every binary operator, infix ones in order of binding strength.
    pub const ALL: [BinOp; 15] = [
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::And,
        BinOp::Or,
        BinOp::Min,
        BinOp::Max,
    ];

    /// The operator's concrete syntax.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Min => "min",
            BinOp::Max => "max",
        }
    }

    /// Binding strength of an infix operator (C's order; higher binds
    /// tighter). `min` and `max` are written as calls and bind like atoms.
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Eq | BinOp::Ne => 3,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 4,
            BinOp::Add | BinOp::Sub => 5,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 6,
            BinOp::Min | BinOp::Max => 8,
        }
    }
}

/// Unary operators of scalar expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-se`: two's complement negation (wrapping).
    Neg,
    /// `!se`: 1 for 0, 0 otherwise.
    Not,
}

/// A scalar expression (`se` in the paper).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SExp {
    /// A variable or literal.
    Atom(Atom),
    /// `se op se`, or `min(se, se)` / `max(se, se)`.
    Bin(BinOp, Box<SExp>, Box<SExp>, Span),
    /// `-se` or `!se`.
    Un(UnOp, Box<SExp>, Span),
}

impl SExp {
    /// Where the expression occurs.
    pub fn span(&self) -> Span {
        match self {
            SExp::Atom(a) => a.span(),
            SExp::Bin(_, _, _, s) | SExp::Un(_, _, s) => *s,
        }
    }

    /// The literal `k`, with no source position.
    pub fn int(k: i64) -> SExp {
        SExp::Atom(Atom::Int(k, Span::DUMMY))
    }

    /// The variable `x`, with no source position.
    pub fn var(x: &Name) -> SExp {
        SExp::Atom(Atom::Var(Ident {
            name: x.clone(),
            span: Span::DUMMY,
        }))
    }

    /// `l op r`, with no source position.
    pub fn bin(op: BinOp, l: SExp, r: SExp) -> SExp {
        SExp::Bin(op, Box::new(l), Box::new(r), Span::DUMMY)
    }

    /// Calls `f` on every variable occurrence, left to right.
    pub fn for_each_var<'a>(&'a self, f: &mut impl FnMut(&'a Ident)) {
        match self {
            SExp::Atom(Atom::Var(x)) => f(x),
            SExp::Atom(Atom::Int(..)) => {}
            SExp::Bin(_, l, r, _) => {
                l.for_each_var(f);
                r.for_each_var(f);
            }
            SExp::Un(_, e, _) => e.for_each_var(f),
        }
    }

    /// Its variables, each once, in the order they first occur.
    pub fn distinct_vars(&self) -> Vec<&Ident> {
        let mut out: Vec<&Ident> = Vec::new();
        self.for_each_var(&mut |x| {
            if !out.iter().any(|y| y.name == x.name) {
                out.push(x);
            }
        });
        out
    }

    /// The value of an integer literal; `None` for anything else.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            SExp::Atom(Atom::Int(k, _)) => Some(*k),
            _ => None,
        }
    }

    /// `op a`, with the negation of a literal folded into the literal `-k`,
    /// as the parser reads it (so that a built tree prints and parses
    /// back to itself).
    pub fn unary(op: UnOp, a: SExp, span: Span) -> SExp {
        match (op, a) {
            (UnOp::Neg, SExp::Atom(Atom::Int(k, _))) => {
                SExp::Atom(Atom::Int(k.wrapping_neg(), span))
            }
            (_, a) => SExp::Un(op, Box::new(a), span),
        }
    }

    /// The expression with every variable for which `f` gives `Some(e)`
    /// replaced by `e` (negated literals folded, see [`SExp::unary`]); the
    /// first error of `f` ends the walk.
    pub fn try_replace_vars<E>(
        &self,
        f: &mut impl FnMut(&Ident) -> Result<Option<SExp>, E>,
    ) -> Result<SExp, E> {
        Ok(match self {
            SExp::Atom(Atom::Var(x)) => f(x)?.unwrap_or_else(|| self.clone()),
            SExp::Atom(Atom::Int(..)) => self.clone(),
            SExp::Bin(op, l, r, sp) => SExp::Bin(
                *op,
                Box::new(l.try_replace_vars(f)?),
                Box::new(r.try_replace_vars(f)?),
                *sp,
            ),
            SExp::Un(op, x, sp) => SExp::unary(*op, x.try_replace_vars(f)?, *sp),
        })
    }

    /// Whether the variable `x` occurs.
    pub fn mentions(&self, x: &str) -> bool {
        let mut found = false;
        self.for_each_var(&mut |y| found |= y.name.as_str() == x);
        found
    }

    /// Whether a division or remainder occurs (evaluating it may get stuck).
    pub fn divides(&self) -> bool {
        match self {
            SExp::Atom(_) => false,
            SExp::Un(_, a, _) => a.divides(),
            SExp::Bin(op, a, b, _) => {
                matches!(op, BinOp::Div | BinOp::Rem) || a.divides() || b.divides()
            }
        }
    }

    /// Nesting depth of the tree (an atom has depth 1), or `None` once it
    /// exceeds `limit`; costs at most the size of the part visited.
    pub fn depth_within(&self, limit: usize) -> Option<usize> {
        if limit == 0 {
            return None;
        }
        match self {
            SExp::Atom(_) => Some(1),
            SExp::Bin(_, l, r, _) => {
                let dl = l.depth_within(limit - 1)?;
                let dr = r.depth_within(limit - 1)?;
                Some(1 + dl.max(dr))
            }
            SExp::Un(_, e, _) => Some(1 + e.depth_within(limit - 1)?),
        }
    }
}

impl From<Atom> for SExp {
    fn from(a: Atom) -> SExp {
        SExp::Atom(a)
    }
}

/// An LMAD as written in a type (fig. 6): explicit, or the row-major
/// abbreviation `R(x, ..., z)` (offset 0).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LmadSyn {
    /// `se + {(n : s) ...}`: offset, then (elements : stride) per dimension,
    /// outermost first.
    Explicit {
        offset: SExp,
        dims: Vec<(Atom, SExp)>,
        span: Span,
    },
    /// `R(n, ..., m)`: row-major layout of an array of that shape.
    RowMajor(Vec<Atom>, Span),
}

impl LmadSyn {
    /// Where the LMAD occurs.
    pub fn span(&self) -> Span {
        match self {
            LmadSyn::Explicit { span, .. } | LmadSyn::RowMajor(_, span) => *span,
        }
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        match self {
            LmadSyn::Explicit { dims, .. } => dims.len(),
            LmadSyn::RowMajor(shape, _) => shape.len(),
        }
    }

    /// The symbolic LMAD this syntax denotes (`R(...)` expanded).
    pub fn to_lmad(&self) -> crate::lmad::Lmad<SExp> {
        use crate::lmad::{Dim, Lmad};
        match self {
            LmadSyn::Explicit { offset, dims, .. } => Lmad {
                offset: offset.clone(),
                dims: dims
                    .iter()
                    .map(|(n, s)| Dim {
                        elems: SExp::Atom(n.clone()),
                        stride: s.clone(),
                    })
                    .collect(),
            },
            LmadSyn::RowMajor(shape, _) => {
                let shape: Vec<SExp> = shape.iter().cloned().map(SExp::Atom).collect();
                Lmad::row_major(&shape)
            }
        }
    }

    /// The LMAD in polynomial normal form, so that equal LMADs compare
    /// equal (`R(n)` is `0 + {(n : 1)}`).
    pub fn to_poly_lmad(&self) -> crate::lmad::Lmad<crate::poly::Poly> {
        self.to_lmad().map(crate::poly::Poly::from_sexp)
    }

    /// Calls `f` on every variable occurrence.
    pub fn for_each_var<'a>(&'a self, f: &mut impl FnMut(&'a Ident)) {
        match self {
            LmadSyn::Explicit { offset, dims, .. } => {
                offset.for_each_var(f);
                for (n, s) in dims {
                    if let Atom::Var(x) = n {
                        f(x);
                    }
                    s.for_each_var(f);
                }
            }
            LmadSyn::RowMajor(shape, _) => {
                for a in shape {
                    if let Atom::Var(x) = a {
                        f(x);
                    }
                }
            }
        }
    }
}

/// FUNMEM's memory annotation of an array type: `@ block -> lmad`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemAnn {
    /// The memory block the array lives in.
    pub block: Ident,
    /// Where each element lives in the block.
    pub lmad: LmadSyn,
}

/// An array type: its shape, outermost first, and in FUNMEM its memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayType {
    /// One atom per dimension.
    pub shape: Vec<Atom>,
    /// `Some` exactly in FUNMEM.
    pub mem: Option<MemAnn>,
}

/// A type (`τ`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `int`: a 64-bit integer.
    Int(Span),
    /// `mem`: a memory block (FUNMEM only).
    Mem(Span),
    /// `[n]...[m]int`, in FUNMEM followed by `@ m -> L`.
    Array(ArrayType, Span),
}

impl Type {
    /// Where the type occurs.
    pub fn span(&self) -> Span {
        match self {
            Type::Int(s) | Type::Mem(s) | Type::Array(_, s) => *s,
        }
    }

    /// The array type, if it is one.
    pub fn as_array(&self) -> Option<&ArrayType> {
        match self {
            Type::Array(a, _) => Some(a),
            _ => None,
        }
    }

    /// A short description for messages: `int`, `mem` or `array of rank n`.
    pub fn describe(&self) -> String {
        match self {
            Type::Int(_) => "int".into(),
            Type::Mem(_) => "mem".into(),
            Type::Array(a, _) => format!("an array of rank {}", a.shape.len()),
        }
    }
}

/// A binding `(x : τ)`, or for a program parameter `(x : *τ)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pat {
    /// The bound name.
    pub name: Ident,
    /// Its type.
    pub ty: Type,
    /// `*τ`: a unique parameter, which the program may consume (only
    /// program parameters of array type may be unique).
    pub unique: bool,
    /// The whole binding, parentheses included.
    pub span: Span,
}

/// An expression (`e`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ExpKind {
    /// A scalar expression.
    Scalar(SExp),
    /// `x[i, ..., j]`: an element.
    Index(Ident, Vec<Atom>),
    /// `x[o : n, ...]`: one `offset : size` pair per dimension.
    Slice(Ident, Vec<(Atom, Atom)>),
    /// `transpose x`.
    Transpose(Ident),
    /// `if c then b else b`.
    If(Ident, Body, Body),
    /// `kernel i < n do b`: `i` runs over 0 .. n-1 in parallel.
    Kernel(Ident, Atom, Body),
    /// `iota n`: `[0, ..., n-1]`.
    Iota(Atom),
    /// `copy x`: a fresh array equal to `x`.
    Copy(Ident),
    /// `alloc se`: a fresh block of `se` elements (FUNMEM only).
    Alloc(SExp),
    /// `loop p̄ = (ā) for i < n do b` / `loop p̄ = (ā) while p do b`: the
    /// loop parameters, their initial values (one atom each), how the loop
    /// runs, and the body, which returns the parameters' next values.
    Loop(Vec<Pat>, Vec<Atom>, LoopForm, Body),
    /// `x with [idx, ...] = v`: x with the element or sub-array at the
    /// indices replaced by v; consumes x.
    Update(Ident, Vec<UpdIdx>, Atom),
    /// `concat x y`: x's rows, then y's (the outer dimension).
    Concat(Ident, Ident),
    /// `replicate n v`: n copies of v (a scalar or an array).
    Replicate(Atom, Atom),
}

/// How a loop runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LoopForm {
    /// `for i < n`: i = 0 .. n-1 (n evaluated once, before the first
    /// iteration).
    For(Ident, Atom),
    /// `while p`: while the loop parameter p is non-zero, tested before
    /// each iteration.
    While(Ident),
}

/// One index of an in-place update: an element or an `offset : size` range.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum UpdIdx {
    /// `i`: one element of the dimension (the dimension disappears).
    Elem(Atom),
    /// `o : n`: n elements from o (the dimension stays, of size n).
    Range(Atom, Atom),
}

impl UpdIdx {
    /// Where the index occurs.
    pub fn span(&self) -> Span {
        match self {
            UpdIdx::Elem(a) => a.span(),
            UpdIdx::Range(o, n) => o.span().to(n.span()),
        }
    }

    /// Its atoms, in order.
    pub fn atoms(&self) -> Vec<&Atom> {
        match self {
            UpdIdx::Elem(a) => vec![a],
            UpdIdx::Range(o, n) => vec![o, n],
        }
    }
}

/// An expression with its position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Exp {
    /// What it is.
    pub kind: ExpKind,
    /// Where it is.
    pub span: Span,
}

/// A statement `let p ... p = e`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stm {
    /// The pattern: one binding per value the expression produces.
    pub pats: Vec<Pat>,
    /// The expression.
    pub exp: Exp,
    /// The whole statement.
    pub span: Span,
}

/// A body: statements, then `in (x, ..., y)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Body {
    /// The statements, in order.
    pub stms: Vec<Stm>,
    /// The names whose values the body returns.
    pub result: Vec<Ident>,
    /// The whole body.
    pub span: Span,
}

/// A program `def main (p) ... = body`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// FUN or FUNMEM.
    pub lang: Lang,
    /// The parameters, in input order.
    pub params: Vec<Pat>,
    /// The body; its results are the program's results.
    pub body: Body,
    /// The whole program.
    pub span: Span,
}

impl Body {
    /// Nesting depth of bodies and expressions, or `None` once it exceeds
    /// `limit`.
    pub fn depth_within(&self, limit: usize) -> Option<usize> {
        if limit == 0 {
            return None;
        }
        let mut d = 1;
        for s in &self.stms {
            d = d.max(1 + s.exp.depth_within(limit - 1)?);
            for p in &s.pats {
                d = d.max(1 + p.ty.depth_within(limit - 1)?);
            }
        }
        Some(d)
    }
}

impl Exp {
    /// Nesting depth, or `None` once it exceeds `limit`.
    pub fn depth_within(&self, limit: usize) -> Option<usize> {
        if limit == 0 {
            return None;
        }
        let inner = match &self.kind {
            ExpKind::Scalar(se) | ExpKind::Alloc(se) => se.depth_within(limit - 1)?,
            ExpKind::If(_, b1, b2) => b1.depth_within(limit - 1)?.max(b2.depth_within(limit - 1)?),
            ExpKind::Kernel(_, _, b) => b.depth_within(limit - 1)?,
            ExpKind::Loop(ps, _, _, b) => {
                let mut d = b.depth_within(limit - 1)?;
                for p in ps {
                    d = d.max(p.ty.depth_within(limit - 1)?);
                }
                d
            }
            _ => 0,
        };
        Some(1 + inner)
    }
}

impl Type {
    /// Nesting depth of the scalar expressions in the type's LMAD, or `None`
    /// once it exceeds `limit`.
    pub fn depth_within(&self, limit: usize) -> Option<usize> {
        if limit == 0 {
            return None;
        }
        let mut d = 1;
        if let Type::Array(ArrayType { mem: Some(m), .. }, _) = self {
            if let LmadSyn::Explicit { offset, dims, .. } = &m.lmad {
                d = d.max(1 + offset.depth_within(limit - 1)?);
                for (_, s) in dims {
                    d = d.max(1 + s.depth_within(limit - 1)?);
                }
            }
        }
        Some(d)
    }
}
