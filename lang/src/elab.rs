//! Elaboration: the front end's last step, which gives every literal its
//! type and makes the paper's "booleans are integers" convention explicit
//! (docs/language.md, "Literals and conversions").
//!
//! Every other layer works on the typed core, where each scalar expression
//! has one type by the rules of [`crate::check::sexp_type`]. Programs are
//! friendlier to write than that, and this pass closes the gap:
//!
//! - An integer literal written without a suffix (`0`, `-3`) takes the
//!   numeric type its context asks for: the declared type of the binding,
//!   the other operand of an operator, the element type of the array an
//!   update writes or a reduction folds. Without a context it is an `i64`.
//! - A decimal literal without a suffix (`2.5`) is an `f64`, or an `f32`
//!   where the context asks for one.
//! - A `bool` where an integer is expected (a comparison bound to an `int`,
//!   `(a < b) + 1`, `&&` of a comparison and an int) is converted to 1 or 0
//!   by an explicit `i64(...)`, and an integer where a `bool` is expected
//!   (`&&` with a `bool` operand) by `bool(...)` (non-zero is true). So the
//!   programs of the paper, which compute with truth values as integers,
//!   mean what they meant.
//!
//! It also desugars the surface syntax: a scalar expression written where
//! the core has an atom or a name (`xs[n - 1 - i]`, `kernel i < n + 1`,
//! `if a < b then`, `in (x + 1)`), and an index written as an operand of a
//! scalar expression (`2 * xs[i]`), arrive from the parser as holes `#k`
//! ([`crate::parse::HOLE`]); each is bound by a fresh `let` of the
//! expression's type, placed just before the statement (or the body's
//! result) that uses it, at the expression's position, so errors still
//! point at what the user wrote. `funmem print` shows the result.
//!
//! Literals written with a suffix (`1i32`, `2.5f64`) keep their type;
//! whether a literal had one is read from the source text. Elaboration
//! never fails: what it cannot type (an unbound name) it leaves for the
//! type checker to report. It is idempotent, so printing an elaborated
//! program and parsing it back gives the same tree.

use crate::ast::*;
use crate::imp;
use crate::name::Name;
use crate::parse::Hole;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Elaborates a FUN or FUNMEM program parsed from `src` (the text its
/// spans point into; `None` for a program built by a tool, whose unsuffixed
/// integer literals are then taken as flexible and decimals as `f64`).
pub fn program(p: &mut Program, src: Option<&str>) {
    program_with_holes(p, src, Vec::new());
}

/// As [`program`], where `holes` are the scalar expressions the parser
/// found in atom positions (the `k`-th stands for the name `#k`); each gets
/// a fresh `let`.
pub fn program_with_holes(p: &mut Program, src: Option<&str>, holes: Vec<Hole>) {
    let mut used = HashSet::default();
    if !holes.is_empty() {
        // Fresh names must differ from every name the program writes.
        for w in src
            .unwrap_or("")
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '\''))
        {
            used.insert(w.to_string());
        }
    }
    let mut e = Elab {
        src,
        env: HashMap::default(),
        holes: holes.into_iter().map(Some).collect(),
        used,
        next: 0,
    };
    let mut arrays = HashMap::default();
    e.pats(&mut p.params, &mut arrays);
    e.body_with(&mut p.body, &mut arrays);
}

/// Elaborates an IMP program.
pub fn imp_program(p: &mut imp::Program, src: Option<&str>) {
    let mut e = Elab {
        src,
        env: HashMap::default(),
        holes: Vec::new(),
        used: HashSet::default(),
        next: 0,
    };
    for q in &p.params {
        match q {
            imp::Param::Scalar(x, t, _) => {
                e.env.insert(x.name.clone(), Some(*t));
            }
            imp::Param::Array(a) => {
                e.env.insert(a.block.name.clone(), None);
            }
        }
    }
    e.stmts(&mut p.body);
}

struct Elab<'s> {
    src: Option<&'s str>,
    /// The scalar type of each name in scope (`None`: not a scalar).
    /// Names are never shadowed where visible, so one map serves.
    env: HashMap<Name, Option<Prim>>,
    /// The parser's holes, each taken when it is bound.
    holes: Vec<Option<Hole>>,
    /// Names the source writes (fresh names avoid them).
    used: HashSet<String>,
    /// Counter for fresh names.
    next: usize,
}

/// What an expression's type is known to be before its context decides.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    /// Fixed.
    Rigid(Prim),
    /// An unsuffixed integer literal, or an expression of them: any numeric
    /// type, `i64` by default.
    AnyNum,
    /// An unsuffixed decimal literal: a float, `f64` by default.
    AnyFloat,
    /// Not known (an unbound name).
    Unknown,
}

impl Ty {
    fn rigid(self) -> Option<Prim> {
        match self {
            Ty::Rigid(p) => Some(p),
            _ => None,
        }
    }

    /// The type a flexible expression takes by default.
    fn default(self) -> Option<Prim> {
        match self {
            Ty::Rigid(p) => Some(p),
            Ty::AnyNum => Some(Prim::I64),
            Ty::AnyFloat => Some(Prim::F64),
            Ty::Unknown => None,
        }
    }

    /// Two operands' shared type, the rigid one winning.
    fn join(self, o: Ty) -> Ty {
        match (self, o) {
            (Ty::Rigid(p), _) | (_, Ty::Rigid(p)) => Ty::Rigid(p),
            (Ty::Unknown, _) | (_, Ty::Unknown) => Ty::Unknown,
            (Ty::AnyFloat, _) | (_, Ty::AnyFloat) => Ty::AnyFloat,
            _ => Ty::AnyNum,
        }
    }
}

fn is_cmp(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
    )
}

/// `t(e)`, with no source position of its own beyond e's.
fn conv(t: Prim, e: SExp) -> SExp {
    let sp = e.span();
    SExp::Un(UnOp::Conv(t), Box::new(e), sp)
}

impl Elab<'_> {
    fn bind(&mut self, p: &Pat) {
        self.env.insert(p.name.name.clone(), p.ty.as_prim());
    }

    /// Whether the literal at `a` was written without a type suffix.
    fn unsuffixed(&self, a: &Atom) -> bool {
        let Some(src) = self.src else {
            return matches!(a, Atom::Int(..));
        };
        let sp = a.span();
        match src.get(sp.start..sp.end) {
            Some(text) => !text.is_empty() && !text.contains(['i', 'f']),
            None => matches!(a, Atom::Int(..)),
        }
    }

    /// What an atom's type is known to be.
    fn atom_ty(&self, a: &Atom) -> Ty {
        match a {
            Atom::Var(x) => match self.env.get(&x.name) {
                Some(Some(p)) => Ty::Rigid(*p),
                _ => Ty::Unknown,
            },
            Atom::Int(..) if self.unsuffixed(a) => Ty::AnyNum,
            Atom::Int(..) => Ty::Rigid(Prim::I64),
            Atom::Const(Const::F64(_), _) if self.unsuffixed(a) => Ty::AnyFloat,
            Atom::Const(c, _) => Ty::Rigid(c.prim()),
        }
    }

    /// The literal `a` as a literal of type `want`, where it is a flexible
    /// one that can be (an integer fits, a decimal goes to a float).
    fn atom_at(&self, a: &Atom, want: Option<Prim>) -> Atom {
        let (Some(want), ty) = (want, self.atom_ty(a)) else {
            return a.clone();
        };
        let sp = a.span();
        match (ty, a) {
            (Ty::AnyNum, Atom::Int(k, _)) => match want {
                Prim::I64 | Prim::Bool => a.clone(),
                Prim::I32 => match i32::try_from(*k) {
                    Ok(v) => Atom::Const(Const::I32(v), sp),
                    Err(_) => a.clone(),
                },
                Prim::F32 => Atom::Const(Const::f32(*k as f32), sp),
                Prim::F64 => Atom::Const(Const::f64(*k as f64), sp),
            },
            (Ty::AnyFloat, Atom::Const(Const::F64(b), _)) if want == Prim::F32 => {
                Atom::Const(Const::f32(f64::from_bits(*b) as f32), sp)
            }
            _ => a.clone(),
        }
    }

    /// What a scalar expression's type is known to be, before elaboration.
    fn ty(&self, e: &SExp) -> Ty {
        match e {
            SExp::Atom(a) => self.atom_ty(a),
            SExp::Bin(op, l, r, _) => {
                if is_cmp(*op) {
                    return Ty::Rigid(Prim::Bool);
                }
                let j = self.ty(l).join(self.ty(r));
                match op {
                    BinOp::And | BinOp::Or => match (self.ty(l), self.ty(r)) {
                        (Ty::Rigid(Prim::Bool), Ty::Rigid(Prim::Bool)) => Ty::Rigid(Prim::Bool),
                        (Ty::Rigid(p), _) | (_, Ty::Rigid(p)) if p.is_int() => Ty::Rigid(p),
                        (Ty::Rigid(Prim::Bool), _) | (_, Ty::Rigid(Prim::Bool)) => {
                            Ty::Rigid(Prim::Bool)
                        }
                        _ => j,
                    },
                    _ => match j {
                        // `(a < b) + 1`: the paper's truth values are ints.
                        Ty::Rigid(Prim::Bool) => {
                            let other = [self.ty(l), self.ty(r)]
                                .into_iter()
                                .find_map(|t| t.rigid().filter(|p| *p != Prim::Bool));
                            other.map_or(Ty::Rigid(Prim::I64), Ty::Rigid)
                        }
                        j => j,
                    },
                }
            }
            SExp::Un(op, a, _) => match op {
                UnOp::Conv(p) => Ty::Rigid(*p),
                UnOp::Not => match self.ty(a) {
                    Ty::Rigid(p) => Ty::Rigid(p),
                    _ => Ty::AnyNum,
                },
                UnOp::Sqrt | UnOp::Exp | UnOp::Log | UnOp::Floor => match self.ty(a) {
                    Ty::AnyNum | Ty::AnyFloat => Ty::AnyFloat,
                    t => t,
                },
                UnOp::Neg | UnOp::Abs => self.ty(a),
            },
        }
    }

    /// Elaborates `e` where its context expects `want` (if anything);
    /// returns the expression and its type (`None` if unknown).
    fn sexp(&self, e: &SExp, want: Option<Prim>) -> (SExp, Option<Prim>) {
        let (e2, t) = self.sexp_inner(e, want);
        // The convention's conversions between bool and the integers.
        match (t, want) {
            (Some(Prim::Bool), Some(w)) if w.is_int() => (conv(w, e2), Some(w)),
            _ => (e2, t),
        }
    }

    fn sexp_inner(&self, e: &SExp, want: Option<Prim>) -> (SExp, Option<Prim>) {
        match e {
            SExp::Atom(a) => {
                let ty = self.atom_ty(a);
                let target = match (ty, want) {
                    (Ty::AnyNum, Some(w)) if w.is_numeric() => Some(w),
                    (Ty::AnyFloat, Some(w)) if w.is_float() => Some(w),
                    _ => ty.default(),
                };
                (SExp::Atom(self.atom_at(a, target)), target)
            }
            SExp::Bin(op, l, r, sp) => {
                let (lt, rt) = (self.ty(l), self.ty(r));
                if is_cmp(*op) {
                    // Both sides at their shared type; bools compare as
                    // bools, a bool against an int as ints.
                    let t = match (lt.rigid(), rt.rigid()) {
                        (Some(Prim::Bool), Some(p)) | (Some(p), Some(Prim::Bool)) => Some(p),
                        // A truth value against a flexible number: as ints.
                        (Some(Prim::Bool), None) => rt.default(),
                        (None, Some(Prim::Bool)) => lt.default(),
                        _ => lt.join(rt).default(),
                    };
                    let (a, _) = self.sexp(l, t);
                    let (b, _) = self.sexp(r, t);
                    return (
                        SExp::Bin(*op, Box::new(a), Box::new(b), *sp),
                        Some(Prim::Bool),
                    );
                }
                let t = match self.ty(e) {
                    Ty::Rigid(p) => Some(p),
                    Ty::AnyNum => match want {
                        Some(w) if w.is_numeric() => Some(w),
                        _ => Some(Prim::I64),
                    },
                    Ty::AnyFloat => match want {
                        Some(w) if w.is_float() => Some(w),
                        _ => Some(Prim::F64),
                    },
                    Ty::Unknown => want.filter(|w| w.is_numeric()),
                };
                let t = match (op, want) {
                    // `&&` where a bool is expected is a bool `&&`.
                    (BinOp::And | BinOp::Or, Some(Prim::Bool)) => Some(Prim::Bool),
                    _ => t,
                };
                let side = |x: &SExp| {
                    let (x2, xt) = self.sexp(x, t);
                    match (xt, t) {
                        // An int operand of a bool `&&`: non-zero is true.
                        (Some(p), Some(Prim::Bool)) if p.is_int() => conv(Prim::Bool, x2),
                        _ => x2,
                    }
                };
                (SExp::Bin(*op, Box::new(side(l)), Box::new(side(r)), *sp), t)
            }
            SExp::Un(op, a, sp) => {
                let (inner_want, out) = match op {
                    UnOp::Conv(p) => (None, Some(*p)),
                    UnOp::Sqrt | UnOp::Exp | UnOp::Log | UnOp::Floor => {
                        let t = match self.ty(a) {
                            Ty::Rigid(p) => Some(p),
                            _ => want.filter(|w| w.is_float()).or(Some(Prim::F64)),
                        };
                        (t, t)
                    }
                    UnOp::Neg | UnOp::Abs | UnOp::Not => {
                        let t = match self.ty(a) {
                            Ty::Rigid(p) => Some(p),
                            Ty::AnyFloat => want.filter(|w| w.is_float()).or(Some(Prim::F64)),
                            Ty::AnyNum => want.filter(|w| w.is_numeric()).or(Some(Prim::I64)),
                            Ty::Unknown => want,
                        };
                        (t, t)
                    }
                };
                let (a2, at) = if matches!(op, UnOp::Conv(_)) {
                    self.sexp_inner(a, inner_want)
                } else {
                    self.sexp(a, inner_want)
                };
                let out = if matches!(op, UnOp::Conv(_)) {
                    out
                } else {
                    at.or(out)
                };
                (SExp::unary(*op, a2, *sp), out)
            }
        }
    }

    fn int_atom(&self, a: &Atom) -> Atom {
        self.atom_at(a, Some(Prim::I64))
    }

    fn int_sexp(&self, e: &SExp) -> SExp {
        self.sexp(e, Some(Prim::I64)).0
    }

    fn ty_syn(&self, t: &mut Type) {
        if let Type::Array(a, _) = t {
            if let Some(m) = &mut a.mem {
                if let LmadSyn::Explicit { offset, dims, .. } = &mut m.lmad {
                    *offset = self.int_sexp(offset);
                    for (_, s) in dims.iter_mut() {
                        *s = self.int_sexp(s);
                    }
                }
            }
        }
    }

    /// The element type of the array named `x`, if known.
    fn elem_of(&self, x: &Ident, types: &HashMap<Name, Prim>) -> Option<Prim> {
        types.get(&x.name).copied()
    }

    fn body_with(&mut self, b: &mut Body, arrays: &mut HashMap<Name, Prim>) {
        if self.holes.is_empty() {
            for s in &mut b.stms {
                self.stm(s, arrays);
            }
            return;
        }
        for mut s in std::mem::take(&mut b.stms) {
            let mut lets = Vec::new();
            self.fill_holes(&mut s, arrays, &mut lets);
            b.stms.append(&mut lets);
            self.stm(&mut s, arrays);
            b.stms.push(s);
        }
        let mut lets = Vec::new();
        for r in &mut b.result {
            if is_hole(r) {
                *r = self.bind_hole(r, None, arrays, &mut lets);
            }
        }
        b.stms.append(&mut lets);
    }

    /// Binds the holes among the atoms and names of `s`'s own expression
    /// (not its nested bodies) by `let`s pushed onto `lets`, and names
    /// their fresh variables in their places.
    fn fill_holes(&mut self, s: &mut Stm, arrays: &mut HashMap<Name, Prim>, lets: &mut Vec<Stm>) {
        let int = Some(Prim::I64);
        // The element type an update writes or a reduction folds.
        let elem = match &s.exp.kind {
            ExpKind::Update(x, ..) | ExpKind::Reduce(_, _, x) | ExpKind::Scan(_, _, x) => {
                arrays.get(&x.name).copied()
            }
            _ => None,
        };
        let mut at = |me: &mut Self, a: &mut Atom, want: Option<Prim>, lets: &mut Vec<Stm>| {
            if let Atom::Var(x) = a {
                if is_hole(x) {
                    *x = me.bind_hole(x, want, arrays, lets);
                }
            }
        };
        match &mut s.exp.kind {
            ExpKind::Index(_, is) => is.iter_mut().for_each(|a| at(self, a, int, lets)),
            ExpKind::Slice(_, sl) => {
                for (o, n) in sl.iter_mut() {
                    at(self, o, int, lets);
                    at(self, n, int, lets);
                }
            }
            ExpKind::Iota(n) | ExpKind::Kernel(_, n, _) => at(self, n, int, lets),
            ExpKind::Replicate(n, v) => {
                at(self, n, int, lets);
                at(self, v, None, lets);
            }
            ExpKind::If(c, _, _) => {
                if is_hole(c) {
                    let mut a = Atom::Var(c.clone());
                    at(self, &mut a, None, lets);
                    if let Atom::Var(x) = a {
                        *c = x;
                    }
                }
            }
            ExpKind::Loop(ps, init, form, _) => {
                for (p, a) in ps.iter().zip(init.iter_mut()) {
                    at(self, a, p.ty.as_prim(), lets);
                }
                if let LoopForm::For(_, n) = form {
                    at(self, n, int, lets);
                }
            }
            ExpKind::Update(_, is, v) => {
                for i in is.iter_mut() {
                    match i {
                        UpdIdx::Elem(a) => at(self, a, int, lets),
                        UpdIdx::Range(o, n) => {
                            at(self, o, int, lets);
                            at(self, n, int, lets);
                        }
                    }
                }
                at(self, v, elem, lets);
            }
            ExpKind::Reduce(_, ne, _) | ExpKind::Scan(_, ne, _) => at(self, ne, elem, lets),
            ExpKind::Scalar(e) | ExpKind::Alloc(e, _) => self.fill_sexp(e, arrays, lets),
            ExpKind::Transpose(_) | ExpKind::Copy(_) | ExpKind::Concat(..) => {}
        }
    }

    /// Binds the holes inside a scalar expression (indices written in it).
    fn fill_sexp(&mut self, e: &mut SExp, arrays: &mut HashMap<Name, Prim>, lets: &mut Vec<Stm>) {
        match e {
            SExp::Atom(Atom::Var(x)) if is_hole(x) => *x = self.bind_hole(x, None, arrays, lets),
            SExp::Atom(_) => {}
            SExp::Bin(_, a, b, _) => {
                self.fill_sexp(a, arrays, lets);
                self.fill_sexp(b, arrays, lets);
            }
            SExp::Un(_, a, _) => self.fill_sexp(a, arrays, lets),
        }
    }

    /// `let (t: T) = e` for the hole `x` (its expression e, elaborated,
    /// T its type where the context wants `want`), pushed onto `lets`;
    /// gives the name t at x's position.
    fn bind_hole(
        &mut self,
        x: &Ident,
        want: Option<Prim>,
        arrays: &mut HashMap<Name, Prim>,
        lets: &mut Vec<Stm>,
    ) -> Ident {
        let k: Option<usize> = x.name.as_str()[1..].parse().ok();
        let Some(h) = k.and_then(|k| self.holes.get_mut(k)).and_then(Option::take) else {
            return x.clone();
        };
        let (kind, span, t) = match h {
            Hole::Exp(mut e) => {
                // Indices written inside it are bound first.
                self.fill_sexp(&mut e, arrays, lets);
                let t = self.hole_type(&e, want);
                let span = e.span();
                (ExpKind::Scalar(e), span, t)
            }
            Hole::Index(a, mut idx, span) => {
                for i in idx.iter_mut() {
                    if let Atom::Var(y) = i {
                        if is_hole(y) {
                            *y = self.bind_hole(y, Some(Prim::I64), arrays, lets);
                        }
                    }
                }
                let t = arrays.get(&a.name).copied().unwrap_or(Prim::I64);
                (ExpKind::Index(a, idx), span, t)
            }
        };
        let name = loop {
            let cand = format!("t{}", self.next);
            self.next += 1;
            if !self.used.contains(&cand) {
                break Ident {
                    name: Name::new(&cand),
                    span: x.span,
                };
            }
        };
        let mut s = Stm {
            pats: vec![Pat {
                name: name.clone(),
                ty: Type::Prim(t, span),
                unique: false,
                span,
            }],
            exp: Exp { kind, span },
            span,
        };
        self.stm(&mut s, arrays);
        lets.push(s);
        name
    }

    /// The type of a hole's expression where its context wants `want`.
    fn hole_type(&self, e: &SExp, want: Option<Prim>) -> Prim {
        let mut t = match self.ty(e) {
            Ty::Rigid(p) => p,
            Ty::AnyNum => want.filter(|w| w.is_numeric()).unwrap_or(Prim::I64),
            Ty::AnyFloat => want.filter(|w| w.is_float()).unwrap_or(Prim::F64),
            Ty::Unknown => want.unwrap_or(Prim::I64),
        };
        if t == Prim::Bool && want.is_some_and(Prim::is_int) {
            t = want.unwrap_or(Prim::I64);
        }
        t
    }

    fn pats(&mut self, ps: &mut [Pat], arrays: &mut HashMap<Name, Prim>) {
        for p in ps.iter_mut() {
            self.ty_syn(&mut p.ty);
            self.bind(p);
            if let Type::Array(a, _) = &p.ty {
                arrays.insert(p.name.name.clone(), a.elem);
            }
        }
    }

    fn stm(&mut self, s: &mut Stm, arrays: &mut HashMap<Name, Prim>) {
        let want = s.pats.first().and_then(|p| p.ty.as_prim());
        match &mut s.exp.kind {
            ExpKind::Scalar(e) => *e = self.sexp(e, want).0,
            ExpKind::Alloc(e, _) => *e = self.int_sexp(e),
            ExpKind::Index(_, is) => is.iter_mut().for_each(|a| *a = self.int_atom(a)),
            ExpKind::Slice(_, sl) => {
                for (o, n) in sl.iter_mut() {
                    *o = self.int_atom(o);
                    *n = self.int_atom(n);
                }
            }
            ExpKind::Transpose(_) | ExpKind::Copy(_) | ExpKind::Concat(..) => {}
            ExpKind::Iota(n) => *n = self.int_atom(n),
            ExpKind::Replicate(n, v) => {
                *n = self.int_atom(n);
                let elem = match &s.pats.first().map(|p| &p.ty) {
                    Some(Type::Array(a, _)) if a.shape.len() == 1 => Some(a.elem),
                    _ => None,
                };
                *v = self.atom_at(v, elem.or(self.atom_ty(v).default()));
            }
            ExpKind::If(_, t, e) => {
                self.body_with(t, &mut arrays.clone());
                self.body_with(e, &mut arrays.clone());
            }
            ExpKind::Kernel(i, n, b) => {
                *n = self.int_atom(n);
                self.env.insert(i.name.clone(), Some(Prim::I64));
                self.body_with(b, &mut arrays.clone());
            }
            ExpKind::Loop(ps, init, form, b) => {
                for (p, a) in ps.iter().zip(init.iter_mut()) {
                    *a = self.atom_at(a, p.ty.as_prim().or(self.atom_ty(a).default()));
                }
                if let LoopForm::For(i, n) = form {
                    *n = self.int_atom(n);
                    self.env.insert(i.name.clone(), Some(Prim::I64));
                }
                let mut inner = arrays.clone();
                self.pats(ps, &mut inner);
                self.body_with(b, &mut inner);
            }
            ExpKind::Update(x, is, v) => {
                for i in is.iter_mut() {
                    match i {
                        UpdIdx::Elem(a) => *a = self.int_atom(a),
                        UpdIdx::Range(o, n) => {
                            *o = self.int_atom(o);
                            *n = self.int_atom(n);
                        }
                    }
                }
                let elem = self.elem_of(x, arrays);
                *v = self.atom_at(v, elem);
            }
            ExpKind::Reduce(op, ne, xs) | ExpKind::Scan(op, ne, xs) => {
                let elem = self.elem_of(xs, arrays);
                *ne = self.atom_at(ne, elem.or(self.atom_ty(ne).default()));
                if let RedOp::Lambda(l) = op {
                    let mut inner = arrays.clone();
                    self.pats(&mut l.params, &mut inner);
                    self.body_with(&mut l.body, &mut inner);
                }
            }
        }
        self.pats(&mut s.pats, arrays);
    }

    // ---------------------------------------------------------------- IMP

    fn imp_var(&self, x: &Ident) -> Option<Prim> {
        self.env.get(&x.name).copied().flatten()
    }

    fn stmts(&mut self, ss: &mut [imp::Stmt]) {
        for s in ss {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &mut imp::Stmt) {
        use imp::StmtKind as K;
        match &mut s.kind {
            K::Skip => {}
            K::Var(x, t) => {
                let p = match t {
                    imp::ImpType::Prim(p) => Some(*p),
                    imp::ImpType::Mem => None,
                };
                self.env.insert(x.name.clone(), p);
            }
            K::Assign(x, e) => {
                if let Some(t) = self.imp_var(x) {
                    *e = self.sexp(e, Some(t)).0;
                }
            }
            K::Alloc(_, e, _) => *e = self.int_sexp(e),
            // A guard's condition is a truth value, as the lowering writes it.
            K::Assert(_, e) => *e = self.sexp(e, Some(Prim::Bool)).0,
            K::Read(_, _, i) => *i = self.int_sexp(i),
            K::Write(_, i, e) => {
                *i = self.int_sexp(i);
                *e = self.sexp(e, None).0;
            }
            K::If(_, a, b) => {
                self.stmts(a);
                self.stmts(b);
            }
            K::Kernel(i, n, b) | K::For(i, n, b) => {
                *n = self.int_sexp(n);
                self.env.insert(i.name.clone(), Some(Prim::I64));
                self.stmts(b);
            }
            K::While(_, b) => self.stmts(b),
            K::Reduce(x, r) => {
                let t = self.imp_var(x);
                self.red(r, t);
            }
            K::Scan(r, _, j) => {
                let t = self.ty(&r.ne).default();
                self.red(r, t);
                *j = self.int_sexp(j);
            }
        }
    }

    fn red(&mut self, r: &mut imp::Red, t: Option<Prim>) {
        r.ne = self.sexp(&r.ne, t).0;
        r.count = self.int_sexp(&r.count);
        if let imp::ImpOp::Lambda(a, b, ss, e) = &mut r.op {
            self.env.insert(a.name.clone(), t);
            self.env.insert(b.name.clone(), t);
            self.stmts(ss);
            *e = self.sexp(e, t).0;
        }
        self.env.insert(r.index.name.clone(), Some(Prim::I64));
        self.stmts(&mut r.body);
        r.elem = self.sexp(&r.elem, t).0;
    }
}

/// Whether `x` is a hole of the parser.
fn is_hole(x: &Ident) -> bool {
    x.name.as_str().starts_with(crate::parse::HOLE)
}

#[cfg(test)]
mod tests {
    use crate::ast::Lang;
    use crate::parse::parse_program;
    use crate::print;

    fn elab(src: &str) -> String {
        let p = parse_program(src, Lang::Fun).expect("parses");
        crate::check::check_program(&p)
            .unwrap_or_else(|d| panic!("{}\n{}", d.message, print::program(&p)));
        print::program(&p)
    }

    #[test]
    fn literals_take_their_context_type() {
        let out = elab("def main (x: f32) (k: i32) = let (y: f32) = x * 2 + 0.5 let (j: i32) = k - 1 in (y, j)");
        assert!(out.contains("x * 2.0f32 + 0.5f32"), "{out}");
        assert!(out.contains("k - 1i32"), "{out}");
    }

    #[test]
    fn truth_values_are_ints_where_ints_are_expected() {
        let out = elab("def main (a: int) (b: int) = let (c: int) = a < b let (d: int) = (a < b) + 1 let (e: bool) = a < b && c in (c, d, e)");
        assert!(out.contains("let (c: int) = i64(a < b)"), "{out}");
        assert!(out.contains("i64(a < b) + 1"), "{out}");
        assert!(out.contains("a < b && bool(c)"), "{out}");
    }

    #[test]
    fn a_truth_value_compares_with_a_number_as_an_int() {
        let out = elab("def main (i: int) (n: int) = let (c: int) = -9 < (i != n) in (c)");
        assert!(out.contains("i64(-9 < i64(i != n))"), "{out}");
    }

    #[test]
    fn suffixed_literals_keep_their_type() {
        let p = parse_program(
            "def main (x: f32) = let (y: f32) = x * 2.0f64 in (y)",
            Lang::Fun,
        )
        .expect("parses");
        assert!(crate::check::check_program(&p).is_err());
    }

    #[test]
    fn scalar_expressions_in_atom_positions_get_their_own_lets() {
        let src = "def main (n: int) (m: int) (xss: [n][m]f32) (lim: f32) =\n  let (ys: [n]f32) = kernel i < n do\n    let (row: [m]f32) = xss[n - 1 - i]\n    let (s: f32) = reduce (+) 0 row\n    let (r: f32) = if s < lim then in (s) else in (lim)\n    in (r)\n  let (top: f32) = reduce (max) (-1.0 / 0.0) ys\n  in (ys, top * 2)";
        let out = elab(src);
        for want in [
            "    let (t0: int) = n - 1 - i\n    let (row: [m]f32) = xss[t0]",
            "reduce (+) 0.0f32 row",
            "let (t1: bool) = s < lim",
            "if t1 then",
            "let (t2: f32) = -1.0f32 / 0.0f32\n  let (top: f32) = reduce (max) t2 ys",
            "let (t3: f32) = top * 2.0f32\n  in (ys, t3)",
        ] {
            assert!(out.contains(want), "{want:?} not in\n{out}");
        }
        // Positions are kept: an error in a desugared expression points
        // at what the user wrote.
        let bad = "def main (n: int) (x: f32) = let (y: [n]int) = iota n + x in (y)";
        let p = parse_program(bad, Lang::Fun).expect("parses");
        let d = crate::check::check_program(&p).expect_err("ill typed");
        assert_eq!(&bad[d.span.start..d.span.end], "n + x");
    }

    #[test]
    fn indices_may_be_operands() {
        let out = elab("def main (n: int) (xs: [n]f32) (ys: [n]int) =\n  let (zs: [n]f32) = kernel i < n do\n    let (z: f32) = 2 * xs[i] + xs[ys[i] % n] * 0.5\n    in (z)\n  let (w: f32) = xs[0]\n  in (zs, w, xs[n - 1])");
        for want in [
            "let (t0: f32) = xs[i]\n    let (t1: int) = ys[i]\n    let (t2: int) = t1 % n\n    let (t3: f32) = xs[t2]\n    let (z: f32) = 2.0f32 * t0 + t3 * 0.5f32",
            "let (w: f32) = xs[0]\n",
            "let (t4: int) = n - 1\n  let (t5: f32) = xs[t4]\n  in (zs, w, t5)",
        ] {
            assert!(out.contains(want), "{want:?} not in\n{out}");
        }
    }

    #[test]
    fn fresh_names_avoid_the_programs_own() {
        let out = elab("def main (t0: int) (xs: [t0]int) = let (y: int) = xs[t0 - 1] in (y)");
        assert!(out.contains("let (t1: int) = t0 - 1"), "{out}");
    }

    #[test]
    fn elaboration_is_idempotent() {
        let src = "def main (xs: [n]f32) (n: int) = let (s: f32) = reduce (+) 0 xs let (t: f32) = s / 2 let (u: int) = n < 3 in (t, u)";
        let once = elab(src);
        assert_eq!(elab(&once), once);
    }
}
