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
pub use crate::prim::{Const, Prim};
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

/// An atom: a variable or a literal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Atom {
    /// A variable of scalar type.
    Var(Ident),
    /// An integer literal without a suffix: an `i64` once the front end
    /// has typed the program (before that, the literal takes the numeric
    /// type its context asks for, see [`crate::elab`]).
    Int(i64, Span),
    /// A literal of another type (`1i32`, `2.5f32`, `true`). The front end
    /// turns an `i64` constant into [`Atom::Int`].
    Const(Const, Span),
}

impl Atom {
    /// Where the atom occurs.
    pub fn span(&self) -> Span {
        match self {
            Atom::Var(x) => x.span,
            Atom::Int(_, s) | Atom::Const(_, s) => *s,
        }
    }

    /// The variable, if the atom is one.
    pub fn var(&self) -> Option<&Name> {
        match self {
            Atom::Var(x) => Some(&x.name),
            Atom::Int(..) | Atom::Const(..) => None,
        }
    }

    /// The literal's value, if the atom is a literal (an unsuffixed
    /// integer is an `i64`).
    pub fn constant(&self) -> Option<Const> {
        match self {
            Atom::Var(_) => None,
            Atom::Int(k, _) => Some(Const::I64(*k)),
            Atom::Const(c, _) => Some(*c),
        }
    }

    /// The literal `c` at `span`, in its canonical form (an `i64` as
    /// [`Atom::Int`]).
    pub fn lit(c: Const, span: Span) -> Atom {
        match c {
            Const::I64(k) => Atom::Int(k, span),
            c => Atom::Const(c, span),
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

/// Unary operators and functions of scalar expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-se`: negation (wrapping on integers, IEEE on floats).
    Neg,
    /// `!se`: logical not on `bool`; on integers 1 for 0, 0 otherwise.
    Not,
    /// `t(se)`: conversion to the element type t (`f32(x)`, `i64(b)`).
    Conv(Prim),
    /// `sqrt(se)` (floats).
    Sqrt,
    /// `exp(se)` (floats).
    Exp,
    /// `log(se)`: the natural logarithm (floats).
    Log,
    /// `abs(se)` (integers wrap: `abs` of the least value is itself).
    Abs,
    /// `floor(se)` (floats).
    Floor,
}

impl UnOp {
    /// The functions written `name(se)`, by name.
    pub const FUNCTIONS: [(&'static str, UnOp); 5] = [
        ("sqrt", UnOp::Sqrt),
        ("exp", UnOp::Exp),
        ("log", UnOp::Log),
        ("abs", UnOp::Abs),
        ("floor", UnOp::Floor),
    ];

    /// The function's name for those written as calls; `None` for `-` and
    /// `!`.
    pub fn function_name(self) -> Option<&'static str> {
        match self {
            UnOp::Neg | UnOp::Not => None,
            UnOp::Conv(p) => Some(p.name()),
            UnOp::Sqrt => Some("sqrt"),
            UnOp::Exp => Some("exp"),
            UnOp::Log => Some("log"),
            UnOp::Abs => Some("abs"),
            UnOp::Floor => Some("floor"),
        }
    }
}

/// A scalar expression (`se` in the paper).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SExp {
    /// A variable or literal.
    Atom(Atom),
    /// `se op se`, or `min(se, se)` / `max(se, se)`.
    Bin(BinOp, Box<SExp>, Box<SExp>, Span),
    /// `-se`, `!se`, or a function `f(se)`.
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
            SExp::Atom(Atom::Int(..) | Atom::Const(..)) => {}
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
            (UnOp::Neg, SExp::Atom(Atom::Const(c, _))) if c.negated().is_some() => {
                SExp::Atom(Atom::Const(c.negated().unwrap_or(c), span))
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
            SExp::Atom(Atom::Int(..) | Atom::Const(..)) => self.clone(),
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

/// An array type: its shape, outermost first, its element type, and in
/// FUNMEM its memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayType {
    /// One atom per dimension.
    pub shape: Vec<Atom>,
    /// The element type.
    pub elem: Prim,
    /// `Some` exactly in FUNMEM.
    pub mem: Option<MemAnn>,
}

/// A type (`τ`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A scalar: `int` (`i64`), `i32`, `f32`, `f64`, `bool`.
    Prim(Prim, Span),
    /// `mem`: a memory block (FUNMEM only).
    Mem(Span),
    /// `[n]...[m]int`, in FUNMEM followed by `@ m -> L`.
    Array(ArrayType, Span),
}

impl Type {
    /// Where the type occurs.
    pub fn span(&self) -> Span {
        match self {
            Type::Prim(_, s) | Type::Mem(s) | Type::Array(_, s) => *s,
        }
    }

    /// `int` (`i64`) at `span`.
    pub fn int(span: Span) -> Type {
        Type::Prim(Prim::I64, span)
    }

    /// The scalar type, if it is one.
    pub fn as_prim(&self) -> Option<Prim> {
        match self {
            Type::Prim(p, _) => Some(*p),
            _ => None,
        }
    }

    /// Whether it is `int` (`i64`).
    pub fn is_int(&self) -> bool {
        matches!(self, Type::Prim(Prim::I64, _))
    }

    /// The array type, if it is one.
    pub fn as_array(&self) -> Option<&ArrayType> {
        match self {
            Type::Array(a, _) => Some(a),
            _ => None,
        }
    }

    /// A short description for messages: `i64`, `f32`, `mem` or `array of
    /// rank n of f32`.
    pub fn describe(&self) -> String {
        match self {
            Type::Prim(p, _) => p.name().into(),
            Type::Mem(_) => "mem".into(),
            Type::Array(a, _) => format!("an array of rank {} of {}", a.shape.len(), a.elem),
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
    /// `x[i, ..., j]`: an element, or with fewer indices than x has
    /// dimensions the sub-array they select (a view: no copy).
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
    /// `alloc se t`: a fresh block of `se` elements of type t (FUNMEM
    /// only; `alloc se` is `alloc se i64`).
    Alloc(SExp, Prim),
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
    /// `reduce op ne xs`: ne op xs[0] op ... op xs[n-1], folded from the
    /// left (op must be associative with ne its neutral element for the
    /// parallel implementations to agree).
    Reduce(RedOp, Atom, Ident),
    /// `scan op ne xs`: the inclusive prefix folds of xs.
    Scan(RedOp, Atom, Ident),
}

/// The operator of a `reduce` or `scan`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RedOp {
    /// `(+)`, `(*)`, `(min)`, `(max)`, `(&&)`, `(||)`.
    Bin(BinOp, Span),
    /// `(\(a: t) (b: t) -> body)`: a scalar function of two arguments.
    Lambda(Box<Lambda>),
}

impl RedOp {
    /// The binary operators that may be written `(op)`.
    pub const BUILTIN: [BinOp; 6] = [
        BinOp::Add,
        BinOp::Mul,
        BinOp::Min,
        BinOp::Max,
        BinOp::And,
        BinOp::Or,
    ];

    /// Where the operator occurs.
    pub fn span(&self) -> Span {
        match self {
            RedOp::Bin(_, s) => *s,
            RedOp::Lambda(l) => l.span,
        }
    }
}

/// `\(a: t) (b: t) -> body`: the operator of a reduction. Its parameters
/// are scalars of the array's element type and its body returns one scalar
/// of that type; the body binds no arrays.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lambda {
    /// The two parameters.
    pub params: Vec<Pat>,
    /// The body.
    pub body: Body,
    /// The whole lambda, parentheses included.
    pub span: Span,
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
    /// Calls `f` on every binding of the body's statements, nested bodies
    /// (branches, kernels, loops with their parameters, lambdas) included.
    pub fn for_each_pat<'a>(&'a self, f: &mut impl FnMut(&'a Pat)) {
        for s in &self.stms {
            s.pats.iter().for_each(&mut *f);
            match &s.exp.kind {
                ExpKind::If(_, t, e) => {
                    t.for_each_pat(f);
                    e.for_each_pat(f);
                }
                ExpKind::Kernel(_, _, b) => b.for_each_pat(f),
                ExpKind::Loop(ps, _, _, b) => {
                    ps.iter().for_each(&mut *f);
                    b.for_each_pat(f);
                }
                ExpKind::Reduce(RedOp::Lambda(l), _, _) | ExpKind::Scan(RedOp::Lambda(l), _, _) => {
                    l.params.iter().for_each(&mut *f);
                    l.body.for_each_pat(f);
                }
                _ => {}
            }
        }
    }

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
            ExpKind::Scalar(se) | ExpKind::Alloc(se, _) => se.depth_within(limit - 1)?,
            ExpKind::Reduce(RedOp::Lambda(l), _, _) | ExpKind::Scan(RedOp::Lambda(l), _, _) => {
                l.body.depth_within(limit - 1)?
            }
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
