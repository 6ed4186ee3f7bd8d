//! Type checking FUN (IFL paper fig. 3) and FUNMEM (fig. 8).
//!
//! One checker serves both languages; FUNMEM adds the rules about memory:
//! blocks are bound `mem` variables, an LMAD has the array's rank and its
//! dimensions have the array's sizes, its variables are `int`s in scope, and
//! a derived array (slice, transpose) lives in its source's block at the LMAD
//! that `slice_f` or the transposition gives (eqs. 2 and E-MEM-TRANSPOSE).
//! Fresh arrays (kernel, iota, copy) may have any well-formed layout
//! (T-MEM-KERNEL). Symbolic LMAD components are compared as polynomials
//! (`o + i*n` is `i*n + o*1`), everything else by name.
//!
//! Bodies returning into a pattern (T-RESULT) use the paper's substitution
//! S from the pattern's names to the result names: the type each result has
//! in the body must equal S applied to its binding's type. In FUNMEM this
//! forces a body to return all of an array's supporting information: its
//! sizes, its block and the variables of its LMAD.
//!
//! Scalar definitions are known equalities: in FUNMEM, after
//! `let (x: int) = se`, the variable `x` stands for `se` wherever LMADs are
//! compared (its definition is unfolded into the polynomials). That is what
//! lets a branch bind an array's offset to a variable and return it (the
//! paper's Support procedure): the array's LMAD `i*n + o + {...}` and the
//! pattern's `x_off + {...}` with `x_off = i*n + o` compare equal. Sizes
//! still compare by name. A definition whose polynomial has more than
//! [`DEF_TERMS`] terms is not unfolded (the variable stays opaque).
//!
//! Deviations from the paper, all recorded in docs/language.md: indices are 0-based
//! (no effect on typing); a FUN program takes parameters (`def main`) rather
//! than being closed; integer literals may stand for sizes.

use super::count;
use super::scope::Scope;
use crate::ast::*;
use crate::diag::{Diagnostic, Phase};
use crate::lmad::Lmad;
use crate::name::Name;
use crate::poly::Poly;
use crate::span::Span;
use crate::subst::Subst;
use rustc_hash::FxHashMap as HashMap;

/// Checks a FUN or FUNMEM program (T-PROG): its parameters are well formed
/// and its body is well typed.
pub fn check_program(p: &Program) -> Result<(), Diagnostic> {
    let mut c = Checker {
        lang: p.lang,
        env: Scope::new("bound"),
        defs: HashMap::default(),
    };
    // The parameters form one pattern: a size may be any parameter.
    c.bind_pattern(&p.params, "parameter")?;
    for q in &p.params {
        if q.unique && q.ty.as_array().is_none() {
            return Err(err(
                q.ty.span(),
                format!(
                    "only an array parameter can be unique (`*`), and `{}` is {}",
                    q.name.name, q.ty
                ),
            ));
        }
    }
    c.stms(&p.body.stms)?;
    for x in &p.body.result {
        c.lookup(x)?;
    }
    super::unique::check_uniqueness(p)
}

fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Phase::Type, span, msg)
}

/// Largest scalar definition (in polynomial terms) that LMAD comparisons
/// unfold.
pub const DEF_TERMS: usize = 256;

struct Checker {
    lang: Lang,
    env: Scope<Type>,
    /// FUNMEM: the unfolded polynomial of each `int` variable bound to a
    /// scalar expression. An entry is set or cleared whenever its name is
    /// bound, so it always describes the visible binding.
    defs: HashMap<Name, Poly>,
}

impl Checker {
    /// Binds a name (without a scalar definition).
    fn bind(&mut self, x: &Ident, ty: Type) -> Result<(), Diagnostic> {
        self.defs.remove(&x.name);
        self.env.bind(x, ty)
    }

    /// A polynomial with every known scalar definition unfolded.
    fn unfold(&self, p: Poly) -> Poly {
        if self.defs.is_empty() {
            return p;
        }
        p.subst(&|x| self.defs.get(x).cloned())
    }

    fn atom_poly(&self, a: &Atom) -> Poly {
        self.unfold(Poly::atom(a))
    }

    fn poly_lmad(&self, l: &LmadSyn) -> Lmad<Poly> {
        l.to_lmad().map(|e| self.unfold(Poly::from_sexp(e)))
    }

    /// Type equality: sizes and blocks by name, LMADs as polynomials with
    /// scalar definitions unfolded.
    fn types_equal(&self, a: &Type, b: &Type) -> bool {
        match (a, b) {
            (Type::Prim(p, _), Type::Prim(q, _)) => p == q,
            (Type::Mem(_), Type::Mem(_)) => true,
            (Type::Array(x, _), Type::Array(y, _)) => {
                x.shape == y.shape
                    && x.elem == y.elem
                    && match (&x.mem, &y.mem) {
                        (None, None) => true,
                        (Some(m), Some(n)) => {
                            m.block.name == n.block.name
                                && self.poly_lmad(&m.lmad) == self.poly_lmad(&n.lmad)
                        }
                        _ => false,
                    }
            }
            _ => false,
        }
    }

    fn lookup(&self, x: &Ident) -> Result<&Type, Diagnostic> {
        match self.env.get(&x.name) {
            Some(b) => Ok(&b.val),
            None => Err(err(x.span, format!("unbound variable `{}`", x.name))),
        }
    }

    /// `x` must be bound to an `int`; `what` names the role it plays.
    fn int_var(&self, x: &Ident, what: &str) -> Result<(), Diagnostic> {
        match self.lookup(x)? {
            Type::Prim(Prim::I64, _) => Ok(()),
            t => Err(self.mismatch(x, what, "int", t)),
        }
    }

    /// `x` must be bound to a scalar; returns its type.
    fn scalar_var(&self, x: &Ident, what: &str) -> Result<Prim, Diagnostic> {
        match self.lookup(x)? {
            Type::Prim(p, _) => Ok(*p),
            t => {
                let mut d = err(
                    x.span,
                    format!("{what} `{}` must be a scalar, but it is {t}", x.name),
                );
                if let Some(b) = self.env.get(&x.name) {
                    d = d.with_label(b.span, "bound here");
                }
                Err(d)
            }
        }
    }

    /// The type of a scalar atom.
    fn scalar_atom(&self, a: &Atom, what: &str) -> Result<Prim, Diagnostic> {
        match a {
            Atom::Var(x) => self.scalar_var(x, what),
            Atom::Int(..) => Ok(Prim::I64),
            Atom::Const(c, _) => Ok(c.prim()),
        }
    }

    /// A condition (`if`, `while`): a bool, or an int (true when non-zero).
    fn condition(&self, x: &Ident, what: &str) -> Result<(), Diagnostic> {
        match self.lookup(x)? {
            Type::Prim(Prim::I64 | Prim::Bool, _) => Ok(()),
            t => Err(self.mismatch(x, what, "bool or int", t)),
        }
    }

    fn mismatch(&self, x: &Ident, what: &str, expected: &str, found: &Type) -> Diagnostic {
        let mut d = err(
            x.span,
            format!(
                "{what} `{}` must have type {expected}, but it is {}",
                x.name, found
            ),
        );
        if let Some(b) = self.env.get(&x.name) {
            d = d.with_label(b.span, "bound here");
        }
        d
    }

    fn int_atom(&self, a: &Atom, what: &str) -> Result<(), Diagnostic> {
        match a {
            Atom::Var(x) => self.int_var(x, what),
            Atom::Int(..) => Ok(()),
            Atom::Const(c, sp) => Err(err(
                *sp,
                format!("{what} must be an int (i64), but `{a}` is {}", c.prim()),
            )),
        }
    }

    /// `x` must be an array; returns its type.
    fn array(&self, x: &Ident, construct: &str) -> Result<ArrayType, Diagnostic> {
        match self.lookup(x)? {
            Type::Array(a, _) => Ok(a.clone()),
            t => Err(self.mismatch(x, &format!("{construct}: the operand"), "array", t)),
        }
    }

    /// T-CONST, T-VAR, T-OP: the type of a scalar expression.
    fn sexp(&self, e: &SExp) -> Result<Prim, Diagnostic> {
        super::sexp_type(e, &|x| self.scalar_var(x, "variable"))
    }

    /// A scalar expression that must be an int (sizes, LMADs, `alloc`).
    fn int_sexp(&self, e: &SExp, what: &str) -> Result<(), Diagnostic> {
        match self.sexp(e)? {
            Prim::I64 => Ok(()),
            t => Err(err(
                e.span(),
                format!("{what} must be an int (i64), but `{e}` is {t}"),
            )),
        }
    }

    /// Γ ⊢ τ: sizes are ints in scope; in FUNMEM the block is a `mem` and
    /// the LMAD fits the array (rank, sizes, variables).
    fn well_formed(&self, ty: &Type) -> Result<(), Diagnostic> {
        let Type::Array(a, _) = ty else { return Ok(()) };
        for s in &a.shape {
            self.int_atom(s, "array size")?;
        }
        let Some(m) = &a.mem else { return Ok(()) };
        match self.lookup(&m.block)? {
            Type::Mem(_) => {}
            t => return Err(self.mismatch(&m.block, "memory block", "mem", t)),
        }
        let mut res = Ok(());
        m.lmad.for_each_var(&mut |x| {
            if res.is_ok() {
                res = self.int_var(x, "index-function variable");
            }
        });
        res?;
        super::lmad_fits(&m.lmad, &a.shape, "the array", &|p| self.unfold(p))
    }

    /// Binds a pattern whose types may use the pattern's own names (T-IF,
    /// parameters): names first, then every type checked in the new scope.
    fn bind_pattern(&mut self, pats: &[Pat], what: &str) -> Result<(), Diagnostic> {
        for p in pats {
            if self.lang == Lang::Fun && matches!(p.ty, Type::Mem(_)) {
                return Err(err(p.ty.span(), "type `mem` belongs to FUNMEM"));
            }
            self.bind(&p.name, p.ty.clone())?;
        }
        for p in pats {
            self.well_formed(&p.ty)
                .map_err(|d| d.with_note(format!("in the type of {what} `{}`", p.name.name)))?;
        }
        Ok(())
    }

    fn stms(&mut self, stms: &[Stm]) -> Result<(), Diagnostic> {
        for s in stms {
            self.stm(s)?;
        }
        Ok(())
    }

    /// Γ ⊢ let p̄ = e: the expression is checked in Γ, the pattern then bound.
    fn stm(&mut self, s: &Stm) -> Result<(), Diagnostic> {
        let construct = construct_name(&s.exp.kind);
        // Every form but `if`, `loop` and `kernel` produces exactly one value.
        if !matches!(
            s.exp.kind,
            ExpKind::If(..) | ExpKind::Kernel(..) | ExpKind::Loop(..)
        ) && s.pats.len() != 1
        {
            return Err(err(
                s.pats.get(1).map_or(s.span, |p| p.span),
                format!(
                    "{construct} produces one value, but the pattern binds {}",
                    count(s.pats.len(), "name")
                ),
            ));
        }
        match &s.exp.kind {
            ExpKind::If(c, t, e) => self.t_if(s, c, t, e),
            ExpKind::Kernel(i, n, b) => self.t_kernel(s, i, n, b),
            ExpKind::Loop(ps, init, form, b) => self.t_loop(s, ps, init, form, b),
            kind => {
                let p = &s.pats[0];
                self.t_single(p, kind, construct)?;
                self.bind_pattern(std::slice::from_ref(p), "binding")?;
                // Definitions are known in FUN too: `concat`'s size needs them.
                if let (ExpKind::Scalar(e), Type::Prim(Prim::I64, _)) = (kind, &p.ty) {
                    let def = self.unfold(Poly::from_sexp(e));
                    if def.terms().count() <= DEF_TERMS {
                        self.defs.insert(p.name.name.clone(), def);
                    }
                }
                Ok(())
            }
        }
    }

    /// The forms that produce one value without a body of their own.
    fn t_single(&self, p: &Pat, kind: &ExpKind, construct: &str) -> Result<(), Diagnostic> {
        match kind {
            ExpKind::Scalar(e) => {
                let t = self.sexp(e)?; // T-SCALAR
                self.expect_prim(p, construct, t)
            }
            ExpKind::Alloc(e, _) => {
                self.int_sexp(e, "alloc: the number of elements")?; // T-MEM-ALLOC
                match p.ty {
                    Type::Mem(_) => Ok(()),
                    _ => Err(err(
                        p.ty.span(),
                        format!(
                            "alloc produces a mem, but `{}` is declared {}",
                            p.name.name, p.ty
                        ),
                    )),
                }
            }
            ExpKind::Index(x, idx) => self.t_index(p, x, idx),
            ExpKind::Slice(x, sl) => self.t_slice(p, x, sl),
            ExpKind::Transpose(x) => self.t_transpose(p, x),
            ExpKind::Iota(n) => {
                self.int_atom(n, "iota: the length")?;
                self.expect_fresh(p, construct, std::slice::from_ref(n), Prim::I64)
            }
            ExpKind::Copy(x) => {
                let a = self.array(x, construct)?;
                self.expect_fresh(p, construct, &a.shape, a.elem)
            }
            ExpKind::Reduce(op, ne, xs) => {
                let t = self.t_reduction(op, ne, xs, "reduce")?;
                self.expect_prim(p, construct, t)
            }
            ExpKind::Scan(op, ne, xs) => {
                let t = self.t_reduction(op, ne, xs, "scan")?;
                let a = self.array(xs, "scan")?;
                self.expect_fresh(p, construct, &a.shape, t)
            }
            ExpKind::Update(x, is, v) => self.t_update(p, x, is, v),
            ExpKind::Concat(x, y) => self.t_concat(p, x, y),
            ExpKind::Replicate(n, v) => {
                // T-REPLICATE: `[n]` followed by v's shape, in any layout.
                self.int_atom(n, "replicate: the count")?;
                let mut shape = vec![n.clone()];
                let elem = match v {
                    Atom::Var(x) => match self.lookup(x)? {
                        Type::Prim(t, _) => *t,
                        Type::Array(a, _) => {
                            shape.extend(a.shape.iter().cloned());
                            a.elem
                        }
                        t => {
                            return Err(self.mismatch(
                                x,
                                "replicate: the value",
                                "a scalar or an array",
                                t,
                            ))
                        }
                    },
                    Atom::Int(..) => Prim::I64,
                    Atom::Const(c, _) => c.prim(),
                };
                self.expect_fresh(p, construct, &shape, elem)
            }
            // Checked with their bodies by `t_if`, `t_kernel` and `t_loop`.
            ExpKind::If(..) | ExpKind::Kernel(..) | ExpKind::Loop(..) => Ok(()),
        }
    }

    /// T-UPDATE / T-MEM-UPDATE: `x with [idx, ...] = v`. The indices (at
    /// most x's rank; each an element or an `offset : size` range) leave a
    /// shape, which v must have (an int when it is empty). The result has
    /// x's shape and, in FUNMEM, lives in x's block at x's LMAD. (That x is
    /// not used afterwards is the uniqueness check's business.)
    fn t_update(&self, p: &Pat, x: &Ident, is: &[UpdIdx], v: &Atom) -> Result<(), Diagnostic> {
        let a = self.array(x, "update")?;
        if is.len() > a.shape.len() {
            return Err(err(
                x.span,
                format!(
                    "update: `{}` has rank {}, but {} indices are given",
                    x.name,
                    a.shape.len(),
                    is.len()
                ),
            ));
        }
        let mut rest: Vec<Atom> = Vec::new();
        for i in is {
            match i {
                UpdIdx::Elem(j) => self.int_atom(j, "update: index")?,
                UpdIdx::Range(o, n) => {
                    self.int_atom(o, "update: range offset")?;
                    self.int_atom(n, "update: range size")?;
                    rest.push(n.clone());
                }
            }
        }
        rest.extend(a.shape[is.len()..].iter().cloned());
        let want = format!("{}{}", shape_str(&rest), Type::Prim(a.elem, Span::DUMMY));
        match v {
            Atom::Int(..) | Atom::Const(..) => {
                let t = self.scalar_atom(v, "update: the new value")?;
                if !rest.is_empty() || t != a.elem {
                    return Err(err(
                        v.span(),
                        format!("update: the new value must be {want}, but `{v}` is {t}"),
                    ));
                }
            }
            Atom::Var(y) => {
                let ty = self.lookup(y)?;
                let ok = match ty {
                    Type::Prim(t, _) => rest.is_empty() && *t == a.elem,
                    Type::Array(b, _) => b.shape == rest && b.elem == a.elem,
                    Type::Mem(_) => false,
                };
                if !ok {
                    return Err(self.mismatch(y, "update: the new value", &want, ty));
                }
            }
        }
        let derived = a
            .mem
            .as_ref()
            .map(|m| (m.block.name.clone(), self.poly_lmad(&m.lmad)));
        self.expect_derived(p, "update", x, &a.shape, a.elem, derived)
    }

    /// T-CONCAT: two arrays of equal rank and equal inner sizes; the
    /// result's outer size is a name or literal equal to the sum of theirs
    /// (compared as polynomials with scalar definitions unfolded, so
    /// `let (k: int) = n + m` names it). Fresh, in any layout.
    fn t_concat(&self, p: &Pat, x: &Ident, y: &Ident) -> Result<(), Diagnostic> {
        let a = self.array(x, "concat")?;
        let b = self.array(y, "concat")?;
        if a.elem != b.elem {
            return Err(err(
                y.span,
                format!(
                    "concat: `{}` and `{}` must have one element type, but they are {} and {}",
                    x.name, y.name, a.elem, b.elem
                ),
            ));
        }
        if a.shape.len() != b.shape.len() || a.shape[1..] != b.shape[1..] {
            return Err(err(
                y.span,
                format!(
                    "concat: `{}` and `{}` must agree in every dimension but the outer one, but they have shapes {} and {}",
                    x.name,
                    y.name,
                    shape_str(&a.shape),
                    shape_str(&b.shape)
                ),
            ));
        }
        let Type::Array(r, _) = &p.ty else {
            return Err(err(
                p.ty.span(),
                format!(
                    "concat produces an array, but `{}` is declared {}",
                    p.name.name, p.ty
                ),
            ));
        };
        if r.shape.len() != a.shape.len() || r.shape[1..] != a.shape[1..] || r.elem != a.elem {
            return Err(err(
                p.ty.span(),
                format!(
                    "concat produces an array of type [k]{}{}, but `{}` is declared {}",
                    shape_str(&a.shape[1..]),
                    a.elem,
                    p.name.name,
                    p.ty
                ),
            ));
        }
        let want = self
            .atom_poly(&a.shape[0])
            .add(&self.atom_poly(&b.shape[0]));
        if self.atom_poly(&r.shape[0]) != want {
            return Err(err(
                r.shape[0].span(),
                format!(
                    "concat: the result's outer size `{}` must be `{} + {}`; bind it first, as in `let (k: int) = {} + {}`",
                    r.shape[0], a.shape[0], b.shape[0], a.shape[0], b.shape[0]
                ),
            ));
        }
        Ok(())
    }

    /// T-LOOP / T-MEM-LOOP: the initial values fit the parameters (their
    /// types, with the parameters' names replaced by the initial atoms);
    /// the body, with the parameters (and a `for`'s index) bound, returns
    /// into the parameters (T-RESULT); the statement's pattern has the
    /// parameters' types with their names replaced by the pattern's. In
    /// FUNMEM a parameter array names a parameter block and LMAD variables,
    /// so each iteration may return its array anywhere (existential memory).
    fn t_loop(
        &mut self,
        s: &Stm,
        ps: &[Pat],
        init: &[Atom],
        form: &LoopForm,
        b: &Body,
    ) -> Result<(), Diagnostic> {
        if init.len() != ps.len() {
            return Err(err(
                init.last().map_or(s.exp.span, |a| a.span()),
                format!(
                    "loop: {} declared, but {} given",
                    count(ps.len(), "parameter"),
                    count(init.len(), "initial value")
                ),
            ));
        }
        if let LoopForm::For(_, n) = form {
            self.int_atom(n, "loop: the bound")?;
        }
        let to_init = Subst(
            ps.iter()
                .zip(init)
                .map(|(p, a)| (p.name.name.clone(), a.clone()))
                .collect(),
        );
        for (p, a) in ps.iter().zip(init) {
            // A size parameter may start from a literal: the initial
            // array's shape then has that literal (sizes compare by name
            // or value), which `Subst` leaves alone in size positions.
            let want = literal_sizes(to_init.ty(&p.ty), &to_init);
            let ok = match (a, &want) {
                (Atom::Var(x), _) => self.types_equal(self.lookup(x)?, &want),
                (lit, Type::Prim(t, _)) => lit.constant().map(|c| c.prim()) == Some(*t),
                _ => false,
            };
            if !ok {
                let found = match a {
                    Atom::Var(x) => self.lookup(x)?.to_string(),
                    lit => lit
                        .constant()
                        .map_or("int".into(), |c| c.prim().to_string()),
                };
                return Err(err(
                    a.span(),
                    format!(
                        "loop: the initial value `{a}` of type {found} does not fit the parameter `{}`, which needs type {want}",
                        p.name.name
                    ),
                )
                .with_label(p.span, "parameter declared here"));
            }
        }
        self.env.open();
        let r = self.loop_body(ps, form, b);
        self.env.close();
        r?;
        if s.pats.len() != ps.len() {
            return Err(err(
                s.pats.get(ps.len()).map_or(s.span, |p| p.span),
                format!(
                    "loop: the loop has {}, but the pattern binds {}",
                    count(ps.len(), "parameter"),
                    count(s.pats.len(), "name")
                ),
            ));
        }
        self.bind_pattern(&s.pats, "binding")?;
        let to_pat = Subst(
            ps.iter()
                .zip(&s.pats)
                .map(|(p, q)| (p.name.name.clone(), Atom::Var(q.name.clone())))
                .collect(),
        );
        for (p, q) in ps.iter().zip(&s.pats) {
            let want = to_pat.ty(&p.ty);
            if !self.types_equal(&q.ty, &want) {
                return Err(err(
                    q.ty.span(),
                    format!(
                        "loop: `{}` binds the final value of parameter `{}`, so it needs type {want}, not {}",
                        q.name.name, p.name.name, q.ty
                    ),
                )
                .with_label(p.span, "parameter declared here"));
            }
        }
        Ok(())
    }

    fn loop_body(&mut self, ps: &[Pat], form: &LoopForm, b: &Body) -> Result<(), Diagnostic> {
        self.bind_pattern(ps, "loop parameter")?;
        match form {
            LoopForm::For(i, _) => self.bind(i, Type::int(i.span))?,
            LoopForm::While(c) => {
                if !ps.iter().any(|p| p.name.name == c.name) {
                    return Err(err(
                        c.span,
                        format!(
                            "loop: the condition of `while` must be a loop parameter, and `{}` is not one",
                            c.name
                        ),
                    ));
                }
                self.condition(c, "while: the condition")?;
            }
        }
        self.stms(&b.stms)?;
        self.t_result(ps, b, "loop", "the body")
    }

    fn expect_prim(&self, p: &Pat, construct: &str, t: Prim) -> Result<(), Diagnostic> {
        match p.ty {
            Type::Prim(q, _) if q == t => Ok(()),
            _ => Err(err(
                p.ty.span(),
                format!(
                    "{construct} produces {}, but `{}` is declared {}",
                    Type::Prim(t, Span::DUMMY),
                    p.name.name,
                    p.ty
                ),
            )),
        }
    }

    /// The pattern of a fresh array (iota, copy): an array of the given shape
    /// and element type in any layout.
    fn expect_fresh(
        &self,
        p: &Pat,
        construct: &str,
        shape: &[Atom],
        elem: Prim,
    ) -> Result<(), Diagnostic> {
        let found = match &p.ty {
            Type::Array(a, _) if a.shape == shape && a.elem == elem => return Ok(()),
            t => t,
        };
        Err(err(
            found.span(),
            format!(
                "{construct} produces an array of type {}{}, but `{}` is declared {}",
                shape_str(shape),
                Type::Prim(elem, Span::DUMMY),
                p.name.name,
                found
            ),
        ))
    }

    /// T-REDUCE / T-SCAN: xs is a 1-D array of some element type t, ne is
    /// a t, and the operator takes two t and gives a t (a built-in operator
    /// that applies to t, or a lambda whose parameters are t and whose body
    /// binds only scalars and returns one t). Gives t.
    fn t_reduction(
        &self,
        op: &RedOp,
        ne: &Atom,
        xs: &Ident,
        construct: &str,
    ) -> Result<Prim, Diagnostic> {
        let a = self.array(xs, construct)?;
        if a.shape.len() != 1 {
            return Err(err(
                xs.span,
                format!(
                    "{construct}: `{}` must be a one-dimensional array, but it has rank {}",
                    xs.name,
                    a.shape.len()
                ),
            ));
        }
        let t = a.elem;
        let tn = self.scalar_atom(ne, &format!("{construct}: the neutral element"))?;
        if tn != t {
            return Err(err(
                ne.span(),
                format!(
                    "{construct}: the neutral element must be {t}, the element type of `{}`, but `{ne}` is {tn}",
                    xs.name
                ),
            ));
        }
        match op {
            RedOp::Bin(b, sp) => {
                if !super::builtin_applies(*b, t) {
                    return Err(err(
                        *sp,
                        format!("{construct}: `({})` does not apply to {t}", b.symbol()),
                    ));
                }
            }
            RedOp::Lambda(l) => {
                if l.params.len() != 2 {
                    return Err(err(
                        l.span,
                        format!(
                            "{construct}: the operator takes two parameters, but the lambda has {}",
                            l.params.len()
                        ),
                    ));
                }
                for q in &l.params {
                    if q.ty.as_prim() != Some(t) {
                        return Err(err(
                            q.ty.span(),
                            format!(
                                "{construct}: the operator's parameters must be {t}, the element type of `{}`, but `{}` is declared {}",
                                xs.name, q.name.name, q.ty
                            ),
                        ));
                    }
                }
                // The lambda's body is checked in a scope of its own; it
                // sees the enclosing names (it is a closure) but binds only
                // scalars, so it allocates nothing.
                let mut inner = Checker {
                    lang: self.lang,
                    env: self.env.clone(),
                    defs: self.defs.clone(),
                };
                inner.env.open();
                inner.bind_pattern(&l.params, "operator parameter")?;
                let mut arrays = Ok(());
                l.body.for_each_pat(&mut |q: &Pat| {
                    if arrays.is_ok() && !matches!(q.ty, Type::Prim(..)) {
                        arrays = Err(err(
                            q.ty.span(),
                            format!(
                                "{construct}: an operator's body binds only scalars, but `{}` is {}",
                                q.name.name, q.ty
                            ),
                        ));
                    }
                });
                arrays?;
                inner.stms(&l.body.stms)?;
                if l.body.result.len() != 1 {
                    return Err(err(
                        l.body.span,
                        format!(
                            "{construct}: the operator returns one value, but its body returns {}",
                            l.body.result.len()
                        ),
                    ));
                }
                let r = &l.body.result[0];
                let tr = inner.scalar_var(r, &format!("{construct}: the operator's result"))?;
                if tr != t {
                    return Err(err(
                        r.span,
                        format!(
                            "{construct}: the operator must return {t}, but `{}` is {tr}",
                            r.name
                        ),
                    ));
                }
            }
        }
        Ok(t)
    }

    /// T-INDEX / E-MEM-INDEX: one int index per dimension gives an
    /// element; fewer indices give the sub-array they select (a row of a
    /// matrix), in FUNMEM in the same block at the LMAD with those
    /// dimensions fixed (`index_f`, no copy).
    fn t_index(&self, p: &Pat, x: &Ident, idx: &[Atom]) -> Result<(), Diagnostic> {
        let a = self.array(x, "index")?;
        if idx.is_empty() || idx.len() > a.shape.len() {
            return Err(err(
                x.span,
                format!(
                    "index: `{}` has rank {}, but the number of indices given is {}",
                    x.name,
                    a.shape.len(),
                    idx.len()
                ),
            ));
        }
        for i in idx {
            self.int_atom(i, "index")?;
        }
        if idx.len() == a.shape.len() {
            return self.expect_prim(p, "index", a.elem);
        }
        let shape = &a.shape[idx.len()..];
        let derived = a.mem.as_ref().map(|m| {
            let mut l = self.poly_lmad(&m.lmad);
            for i in idx {
                l = l.index(&self.atom_poly(i));
            }
            (m.block.name.clone(), l)
        });
        self.expect_derived(p, "index", x, shape, a.elem, derived)
    }

    /// T-SLICE / T-MEM-SLICE: one `offset : size` pair per dimension; the
    /// result has the sizes as its shape and, in FUNMEM, lives in the same
    /// block at `slice_f` of the source's LMAD.
    fn t_slice(&self, p: &Pat, x: &Ident, sl: &[(Atom, Atom)]) -> Result<(), Diagnostic> {
        let a = self.array(x, "slice")?;
        if sl.len() != a.shape.len() {
            return Err(err(
                x.span,
                format!(
                    "slice: `{}` has rank {}, but the number of offset:size pairs given is {}",
                    x.name,
                    a.shape.len(),
                    sl.len()
                ),
            ));
        }
        for (o, n) in sl {
            self.int_atom(o, "slice offset")?;
            self.int_atom(n, "slice size")?;
        }
        let shape: Vec<Atom> = sl.iter().map(|(_, n)| n.clone()).collect();
        let derived = a.mem.as_ref().map(|m| {
            let slices: Vec<(Poly, Poly)> = sl
                .iter()
                .map(|(o, n)| (self.atom_poly(o), self.atom_poly(n)))
                .collect();
            (m.block.name.clone(), self.poly_lmad(&m.lmad).slice(&slices))
        });
        self.expect_derived(p, "slice", x, &shape, a.elem, derived)
    }

    /// T-TRANSPOSE / E-MEM-TRANSPOSE: a 2-D array with its dimensions
    /// swapped, in FUNMEM in the same block with the LMAD's dimensions swapped.
    fn t_transpose(&self, p: &Pat, x: &Ident) -> Result<(), Diagnostic> {
        let a = self.array(x, "transpose")?;
        if a.shape.len() != 2 {
            return Err(err(
                x.span,
                format!(
                    "transpose: `{}` must have rank 2, but it has rank {}",
                    x.name,
                    a.shape.len()
                ),
            ));
        }
        let shape = vec![a.shape[1].clone(), a.shape[0].clone()];
        let derived = a
            .mem
            .as_ref()
            .and_then(|m| Some((m.block.name.clone(), self.poly_lmad(&m.lmad).transpose()?)));
        self.expect_derived(p, "transpose", x, &shape, a.elem, derived)
    }

    /// The pattern of a derived array: exactly this shape, and in FUNMEM
    /// exactly this block and LMAD.
    fn expect_derived(
        &self,
        p: &Pat,
        construct: &str,
        src: &Ident,
        shape: &[Atom],
        elem: Prim,
        derived: Option<(Name, Lmad<Poly>)>,
    ) -> Result<(), Diagnostic> {
        self.expect_fresh(p, construct, shape, elem)?;
        let (Some((block, lmad)), Type::Array(ArrayType { mem: Some(m), .. }, _)) =
            (derived, &p.ty)
        else {
            return Ok(());
        };
        if m.block.name != block {
            return Err(err(
                m.block.span,
                format!(
                    "{construct}: the result lives in the block of `{}`, `{block}`, not `{}`",
                    src.name, m.block.name
                ),
            ));
        }
        let found = self.poly_lmad(&m.lmad);
        if found != lmad {
            return Err(err(
                m.lmad.span(),
                format!(
                    "{construct}: the result's index function must be {}, derived from `{}`'s; found {}",
                    lmad_str(&lmad),
                    src.name,
                    lmad_str(&found)
                ),
            ));
        }
        Ok(())
    }

    /// T-IF / T-MEM-IF: both branches return into the whole pattern, whose
    /// types may use the pattern's own names.
    fn t_if(&mut self, s: &Stm, c: &Ident, t: &Body, e: &Body) -> Result<(), Diagnostic> {
        self.condition(c, "if: the condition")?;
        for (b, which) in [(t, "then"), (e, "else")] {
            self.env.open();
            let r = self
                .stms(&b.stms)
                .and_then(|()| self.t_result(&s.pats, b, "if", &format!("the {which} branch")));
            self.env.close();
            r?;
        }
        self.bind_pattern(&s.pats, "binding")
    }

    /// T-KERNEL / T-MEM-KERNEL: `kernel i < n` makes one array `[n]τ` per
    /// pattern element, whose element type τ is the type of the body's
    /// corresponding result and depends only on names bound outside the
    /// kernel.
    fn t_kernel(&mut self, s: &Stm, i: &Ident, n: &Atom, b: &Body) -> Result<(), Diagnostic> {
        self.int_atom(n, "kernel: the bound")?;
        for p in &s.pats {
            let outer = match &p.ty {
                Type::Array(a, _) if !a.shape.is_empty() => &a.shape[0],
                t => {
                    return Err(err(
                        t.span(),
                        format!(
                            "kernel produces arrays, but `{}` is declared {t}",
                            p.name.name
                        ),
                    ))
                }
            };
            if outer != n {
                return Err(err(
                    outer.span(),
                    format!("kernel: the result's outer size must be the kernel's bound `{n}`, but it is `{outer}`"),
                ));
            }
            // The pattern's types are checked in Γ: the element type cannot
            // mention the index or the body's names.
            self.well_formed(&p.ty).map_err(|d| {
                d.with_note(
                    "a kernel's result type may use only names bound outside the kernel (T-KERNEL)",
                )
            })?;
        }
        if b.result.len() != s.pats.len() {
            return Err(err(
                b.span,
                format!(
                    "kernel: the body must return one value per result array ({}), but it returns {}",
                    s.pats.len(),
                    count(b.result.len(), "value")
                ),
            ));
        }
        self.env.open();
        let r = self
            .bind(i, Type::int(i.span))
            .and_then(|()| self.stms(&b.stms))
            .and_then(|()| {
                for (p, x) in s.pats.iter().zip(&b.result) {
                    let Type::Array(pa, _) = &p.ty else { continue };
                    let ty = self.lookup(x)?;
                    let elem = &pa.shape[1..];
                    let ok = match ty {
                        Type::Prim(t, _) => elem.is_empty() && *t == pa.elem,
                        Type::Array(a, _) => a.shape == elem && a.elem == pa.elem,
                        Type::Mem(_) => false,
                    };
                    if ok {
                        continue;
                    }
                    let want = format!("{}{}", shape_str(elem), Type::Prim(pa.elem, Span::DUMMY));
                    return Err(err(
                        x.span,
                        format!(
                            "kernel: each iteration must return {want} to make `{}`, but `{}` is {ty}",
                            p.ty, x.name
                        ),
                    )
                    .with_label(p.ty.span(), "result type declared here"));
                }
                Ok(())
            });
        self.env.close();
        r?;
        self.bind_pattern(&s.pats, "binding")
    }

    /// T-RESULT: `Γ ⊢ p̄ ← in (x̄)` holds when each `Γ(x_i) = S(τ_i)`, S
    /// mapping the pattern's names to the result names.
    fn t_result(
        &self,
        pats: &[Pat],
        b: &Body,
        construct: &str,
        which: &str,
    ) -> Result<(), Diagnostic> {
        if pats.len() != b.result.len() {
            return Err(err(
                b.span,
                format!(
                    "{construct}: {which} returns {}, but the pattern binds {}",
                    count(b.result.len(), "value"),
                    count(pats.len(), "name")
                ),
            ));
        }
        let subst = Subst(
            pats.iter()
                .zip(&b.result)
                .map(|(p, x)| (p.name.name.clone(), Atom::Var(x.clone())))
                .collect(),
        );
        for (p, x) in pats.iter().zip(&b.result) {
            let found = self.lookup(x)?;
            let want = subst.ty(&p.ty);
            if !self.types_equal(found, &want) {
                return Err(err(
                    x.span,
                    format!(
                        "{construct}: {which} returns `{}` of type {found} for the binding `{}`, which needs type {want}",
                        x.name, p.name.name
                    ),
                )
                .with_label(p.span, "binding declared here")
                .with_note("a body must return every size, block and index-function variable its arrays depend on"));
            }
        }
        Ok(())
    }
}

/// `t` with every size that `s` maps to a literal replaced by it.
fn literal_sizes(t: Type, s: &Subst) -> Type {
    let lit = |a: &Atom| match a {
        Atom::Var(x) => match s.0.get(&x.name) {
            Some(k @ Atom::Int(..)) => k.clone(),
            _ => a.clone(),
        },
        Atom::Int(..) | Atom::Const(..) => a.clone(),
    };
    match t {
        Type::Array(mut a, sp) => {
            a.shape = a.shape.iter().map(lit).collect();
            if let Some(m) = &mut a.mem {
                match &mut m.lmad {
                    LmadSyn::Explicit { dims, .. } => {
                        for (n, _) in dims.iter_mut() {
                            *n = lit(n);
                        }
                    }
                    LmadSyn::RowMajor(shape, _) => {
                        *shape = shape.iter().map(lit).collect();
                    }
                }
            }
            Type::Array(a, sp)
        }
        t => t,
    }
}

fn construct_name(e: &ExpKind) -> &'static str {
    match e {
        ExpKind::Scalar(_) => "scalar expression",
        ExpKind::Index(..) => "index",
        ExpKind::Slice(..) => "slice",
        ExpKind::Transpose(_) => "transpose",
        ExpKind::If(..) => "if",
        ExpKind::Kernel(..) => "kernel",
        ExpKind::Iota(_) => "iota",
        ExpKind::Copy(_) => "copy",
        ExpKind::Alloc(..) => "alloc",
        ExpKind::Reduce(..) => "reduce",
        ExpKind::Scan(..) => "scan",
        ExpKind::Loop(..) => "loop",
        ExpKind::Update(..) => "update",
        ExpKind::Concat(..) => "concat",
        ExpKind::Replicate(..) => "replicate",
    }
}

fn lmad_str(l: &Lmad<Poly>) -> String {
    let dims: Vec<String> = l
        .dims
        .iter()
        .map(|d| format!("({} : {})", d.elems, d.stride))
        .collect();
    format!("{} + {{{}}}", l.offset, dims.join(" "))
}

fn shape_str(shape: &[Atom]) -> String {
    shape.iter().map(|a| format!("[{a}]")).collect()
}

#[cfg(test)]
mod tests {
    use crate::ast::Lang;
    use crate::parse::parse_program;

    fn check(lang: Lang, src: &str) -> Result<(), String> {
        let p = parse_program(src, lang).map_err(|d| format!("parse: {d}"))?;
        super::check_program(&p).map_err(|d| d.message)
    }

    #[track_caller]
    fn ok(lang: Lang, src: &str) {
        if let Err(e) = check(lang, src) {
            panic!("rejected: {e}\n{src}");
        }
    }

    #[track_caller]
    fn bad(lang: Lang, src: &str, msg: &str) {
        match check(lang, src) {
            Ok(()) => panic!("accepted:\n{src}"),
            Err(e) => assert!(
                e.contains(msg),
                "expected a message containing {msg:?}, got {e:?}"
            ),
        }
    }

    #[test]
    fn sizes_may_be_bound_in_the_same_pattern() {
        ok(Lang::Fun, "def main (xs: [n]int) (n: int) = in (xs)");
        ok(
            Lang::Fun,
            "def main (c: int) (a: int) (b: int) =\n let (k: int) (v: [k]int) = if c then let (x: [a]int) = iota a in (a, x) else let (y: [b]int) = iota b in (b, y)\n in (v)",
        );
        // ...but T-RESULT's substitution still ties each size to its array.
        bad(
            Lang::Fun,
            "def main (c: int) (a: int) (b: int) =\n let (k: int) (v: [k]int) = if c then let (x: [a]int) = iota a in (b, x) else let (y: [b]int) = iota b in (b, y)\n in (v)",
            "needs type [b]int",
        );
    }

    #[test]
    fn no_shadowing_but_siblings_may_reuse_names() {
        bad(
            Lang::Fun,
            "def main (n: int) = let (n: int) = 1 in (n)",
            "already bound",
        );
        bad(
            Lang::Fun,
            "def main (n: int) (xs: [n]int) = let (y: [n]int) = kernel n < n do in (n) in (y)",
            "already bound",
        );
        ok(
            Lang::Fun,
            "def main (n: int) =\n let (a: [n]int) = kernel i < n do let (t: int) = i in (t)\n let (b: [n]int) = kernel i < n do let (t: int) = i * 2 in (t)\n in (a, b)",
        );
    }

    #[test]
    fn kernel_element_type_must_not_depend_on_the_body() {
        bad(
            Lang::Fun,
            "def main (n: int) = let (a: [n][k]int) = kernel i < n do let (k: int) = 2 let (r: [k]int) = iota k in (r) in (a)",
            "unbound variable `k`",
        );
        ok(Lang::Fun, "def main (n: int) (k: int) = let (a: [n][k]int) = kernel i < n do let (r: [k]int) = iota k in (r) in (a)");
        ok(
            Lang::Fun,
            "def main = let (a: [4]int) = kernel i < 4 do in (i) in (a)",
        );
    }

    #[test]
    fn funmem_slices_compare_lmads_as_polynomials() {
        let pre = "def main (n: int) (o: int) (k: int) (m: mem) (xs: [n]int @ m -> R(n)) =";
        ok(
            Lang::FunMem,
            &format!("{pre} let (ys: [k]int @ m -> o + {{(k : 1)}}) = xs[o : k] in (ys)"),
        );
        ok(
            Lang::FunMem,
            &format!(
                "{pre} let (ys: [k]int @ m -> 0 + o * 1 + {{(k : 2 - 1)}}) = xs[o : k] in (ys)"
            ),
        );
        bad(
            Lang::FunMem,
            &format!("{pre} let (ys: [k]int @ m -> o + 1 + {{(k : 1)}}) = xs[o : k] in (ys)"),
            "index function must be",
        );
        bad(
            Lang::FunMem,
            &format!("{pre} let (q: mem) = alloc n let (ys: [k]int @ q -> o + {{(k : 1)}}) = xs[o : k] in (ys)"),
            "lives in the block of `xs`",
        );
    }

    #[test]
    fn funmem_transpose_swaps_the_lmad() {
        let pre = "def main (n: int) (k: int) (m: mem) (xs: [n][k]int @ m -> R(n, k)) =";
        ok(
            Lang::FunMem,
            &format!(
                "{pre} let (ys: [k][n]int @ m -> 0 + {{(k : 1) (n : k)}}) = transpose xs in (ys)"
            ),
        );
        bad(
            Lang::FunMem,
            &format!("{pre} let (ys: [k][n]int @ m -> R(k, n)) = transpose xs in (ys)"),
            "index function must be",
        );
    }

    #[test]
    fn funmem_lmads_fit_their_arrays() {
        bad(
            Lang::FunMem,
            "def main (n: int) (m: mem) (xs: [n]int @ m -> R(n, n)) = in (xs)",
            "rank 2, but the array has rank 1",
        );
        bad(
            Lang::FunMem,
            "def main (n: int) (m: mem) (xs: [n]int @ m -> 0 + {(4 : 1)}) = in (xs)",
            "has 4 elements",
        );
        bad(
            Lang::FunMem,
            "def main (n: int) (m: int) (xs: [n]int @ m -> R(n)) = in (xs)",
            "must have type mem",
        );
        bad(
            Lang::FunMem,
            "def main (n: int) (m: mem) (xs: [n]int @ m -> q + {(n : 1)}) = in (xs)",
            "unbound variable `q`",
        );
    }

    #[test]
    fn funmem_if_returns_its_supporting_information() {
        let branch = |name: &str| {
            format!(
                "let (mm{name}: mem) = alloc n let (b{name}: [n]int @ mm{name} -> R(n)) = iota n"
            )
        };
        ok(
            Lang::FunMem,
            &format!(
                "def main (c: int) (n: int) = let (bm: mem) (a: [n]int @ bm -> 0 + {{(n : 1)}}) = if c then {} in (mm1, b1) else {} in (mm2, b2) in (a)",
                branch("1"),
                branch("2")
            ),
        );
        // Returning the array without its block cannot name the block.
        bad(
            Lang::FunMem,
            &format!(
                "def main (c: int) (n: int) (bm: mem) = let (a: [n]int @ bm -> R(n)) = if c then {} in (b1) else {} in (b2) in (a)",
                branch("1"),
                branch("2")
            ),
            "needs type [n]int @ bm",
        );
    }

    #[test]
    fn funmem_scalar_definitions_are_known_equalities() {
        // The branch returns a slice's offset through a variable bound to it,
        // as the lowering's Support does.
        let src = "def main (c: int) (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
            let (k: int) = n - 1
            let (zo: int) (z: [k]int @ xm -> zo + {(k : 1)}) = if c then
                let (a: [k]int @ xm -> 1 + {(k : 1)}) = xs[1 : k]
                let (ao: int) = 0 + 1 * 1
                in (ao, a)
              else
                let (b: [k]int @ xm -> R(k)) = xs[0 : k]
                let (bo: int) = 0
                in (bo, b)
            in (z)";
        ok(Lang::FunMem, src);
        // A wrong definition is caught.
        bad(
            Lang::FunMem,
            &src.replace("let (bo: int) = 0", "let (bo: int) = 2"),
            "needs type",
        );
        // Sizes still compare by name.
        bad(
            Lang::FunMem,
            "def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
               let (k: int) = n
               let (ys: [k]int @ xm -> R(k)) = xs[0 : n]
               in (ys)",
            "produces an array of type",
        );
    }

    #[test]
    fn loops_may_change_their_arrays_sizes_through_size_parameters() {
        ok(
            Lang::Fun,
            "def main (n: int) (xs: [n]int) =
               let (k: int) (r: [k]int) = loop (m: int) (a: [m]int) = (n, xs) for i < 3 do
                   let (m2: int) = m + m
                   let (b: [m2]int) = concat a a
                   in (m2, b)
               in (r)",
        );
        ok(
            Lang::Fun,
            "def main (n: int) =
               let (e: [0]int) = iota 0
               let (k: int) (r: [k]int) = loop (m: int) (a: [m]int) = (0, e) for i < n do
                   let (m2: int) = m + 1
                   let (one: [1]int) = iota 1
                   let (b: [m2]int) = concat a one
                   in (m2, b)
               in (r)",
        );
        ok(
            Lang::Fun,
            "def main (n: int) =
               let (c: int) (t: int) = loop (go: int) (s: int) = (1, 0) while go do
                   let (s2: int) = s + 1
                   let (g2: int) = s2 < n
                   in (g2, s2)
               in (t)",
        );
    }

    #[test]
    fn funmem_loops_carry_their_memory_as_parameters() {
        let src = |ret: &str| {
            format!(
                "def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
                   let (rm: mem) (r: [n]int @ rm -> R(n)) = loop (m: mem) (a: [n]int @ m -> R(n)) = (xm, xs) for i < 2 do
                       let (m2: mem) = alloc n
                       let (b: [n]int @ m2 -> R(n)) = copy a
                       in ({ret})
                   in (r)"
            )
        };
        ok(Lang::FunMem, &src("m2, b"));
        bad(Lang::FunMem, &src("m, b"), "needs type [n]int @ m -> R(n)");
    }

    #[test]
    fn updates_concats_replicates_and_kernels_with_several_results() {
        ok(
            Lang::Fun,
            "def main (n: int) (m: int) (xss: *[n][m]int) (ys: [m]int) =
               let (a: [n][m]int) = xss with [0] = ys
               let (b: [n][m]int) = a with [1, 0 : m] = ys
               let (k: int) = 2 + n
               let (r: [2][m]int) = replicate 2 ys
               let (c: [k][m]int) = concat r b
               let (p: [n]int) (q: [n][m]int) = kernel i < n do
                   let (v: int) = c[i, 0]
                   in (v, ys)
               in (p, q)",
        );
        bad(
            Lang::Fun,
            "def main (n: int) (m: int) (xss: *[n][m]int) (ys: [m]int) =
               let (a: [n][m]int) = xss with [0 : 1, 2] = ys
               in (a)",
            "must have type [1]int",
        );
        bad(
            Lang::FunMem,
            "def main (n: int) (xm: mem) (xs: *[n]int @ xm -> R(n)) =
               let (ym: mem) = alloc n
               let (ys: [n]int @ ym -> R(n)) = xs with [0] = 1
               in (ys)",
            "update: the result lives in the block of `xs`",
        );
    }
}
