//! The simplifier: removes what lowering leaves redundant (the IFL paper
//! defers this to "a fairly straight-forward simplifier"; we do it).
//!
//! Rules, applied in rounds until nothing changes:
//!
//! - **Copy propagation and constant folding.** `let (x: int) = se` where
//!   `se` is, as a polynomial, a variable or a constant: `x` is replaced by
//!   it everywhere after (sizes, indices, LMADs, results). LMADs are put
//!   in polynomial normal form, and one equal to the row-major layout of
//!   its array is written `R(...)`; other expressions keep their form.
//! - **Branch-invariant `if` results.** A result that both branches compute
//!   as the same expression of names bound outside the `if` (sizes,
//!   offsets, strides), or the same outer block, is bound before the `if`
//!   (or substituted) and dropped from the pattern and both result lists.
//! - **Copies of values already in place.** A `copy` whose destination is
//!   its source's block and LMAD is dropped (the result is the source); a
//!   kernel body's result copied just before the kernel copies it again
//!   into its row is not copied twice; a program result copied to a fresh
//!   row-major block when it is already row-major is returned as it is.
//! - **Loop-invariant parameters.** An int or block loop parameter that
//!   the body returns unchanged is its initial value throughout: it is
//!   replaced by that value (a literal one becomes a binding before the
//!   loop, since sizes must stay names) and dropped from the parameters,
//!   the initial values, the body's results and the pattern. A loop body
//!   is simplified in its own scope; its parameters are never constants.
//! - **Unused bindings.** A statement none of whose names is used is
//!   dropped when it cannot get stuck (a scalar expression without a
//!   division by a variable, an `alloc` of a size known to be non-negative,
//!   a transpose, a copy, a `concat`, a `replicate` of a literal count, a
//!   `for` loop whose body cannot get stuck); so are unused results of an
//!   `if`. An update (its indices may be out of bounds) and a `while` (it
//!   may never end) always stay. Two updates are never merged: each is a
//!   new value.
//!
//! Nothing that may get stuck is removed or moved, so a program and its
//! simplified form go wrong in the same way on the same inputs.
//!
//! The pass counts what it did as the difference between its input and
//! its output (statements, `copy`s, `if` results, at any depth), so the
//! counts need no bookkeeping in the rules themselves.

use crate::pass::{Counts, PassOutput};
use crate::to_funmem::lmad_syn;
use crate::walk::{self, Subst};
use funmem_lang::ast::*;
use funmem_lang::diag::Diagnostic;
use funmem_lang::lmad::Lmad;
use funmem_lang::poly::Poly;
use funmem_lang::prim::{Const, Prim};
use funmem_lang::{Name, Span};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Most rounds of rewriting (each removes something, so few are needed).
const MAX_ROUNDS: usize = 16;

/// The `simplify` pass (it relies on no fact about index functions).
pub fn simplify_pass(
    p: &Program,
    _: &dyn crate::obligation::Prover,
) -> Result<PassOutput, Diagnostic> {
    let program = simplify(p);
    let (before, after) = (Census::of(&p.body), Census::of(&program.body));
    let mut counts = Counts::default();
    let pairs = [
        ("statements", "statements removed", before.stms, after.stms),
        ("copies", "copies removed", before.copies, after.copies),
        (
            "if results",
            "if results removed",
            before.if_results,
            after.if_results,
        ),
    ];
    for (seen, removed, x, y) in pairs {
        counts.add(seen, x);
        counts.add(removed, x.saturating_sub(y));
    }
    Ok(PassOutput {
        program,
        obligations: Vec::new(),
        counts,
        explain: Vec::new(),
    })
}

/// What a body holds, at any depth: what the pass's counts compare.
#[derive(Default)]
struct Census {
    stms: u64,
    copies: u64,
    if_results: u64,
}

impl Census {
    fn of(b: &Body) -> Census {
        let mut c = Census::default();
        c.add(b);
        c
    }

    fn add(&mut self, b: &Body) {
        for s in &b.stms {
            self.stms += 1;
            match &s.exp.kind {
                ExpKind::Copy(_) => self.copies += 1,
                ExpKind::If(_, b1, b2) => {
                    self.if_results += s.pats.len() as u64;
                    self.add(b1);
                    self.add(b2);
                }
                ExpKind::Kernel(_, _, kb) | ExpKind::Loop(_, _, _, kb) => self.add(kb),
                _ => {}
            }
        }
    }
}

/// The simplified program.
pub fn simplify(p: &Program) -> Program {
    let mut cur = p.clone();
    for _ in 0..MAX_ROUNDS {
        let next = round(&cur);
        if next == cur {
            break;
        }
        cur = next;
    }
    cur
}

fn round(p: &Program) -> Program {
    let mut pr = Prop::default();
    update_targets(&p.body, &mut pr.updated);
    let mut params = Vec::new();
    for q in &p.params {
        let q = pr.pat(&Subst::default(), q);
        pr.bind_param(&q);
        params.push(q);
    }
    let body = pr.body(&p.body, Subst::default(), Where::Top);
    let mut sizes = Sizes::default();
    for p in params.iter().filter_map(|q| element_count(&q.ty)) {
        sizes.push(p);
    }
    let body = dce_body(&body, &mut sizes);
    Program {
        lang: p.lang,
        params,
        body,
        span: p.span,
    }
}

/// Can evaluating this scalar expression get stuck (a division or
/// remainder by something that is not a non-zero literal, nor `max(x, k)`
/// or `max(k, x)` with a literal `k >= 1`, the divisor of the caps that
/// memory expansion writes)?
pub fn sexp_may_fail(e: &SExp) -> bool {
    let positive = |e: &SExp| matches!(e, SExp::Atom(Atom::Int(k, _)) if *k >= 1);
    match e {
        SExp::Atom(_) => false,
        SExp::Bin(op, l, r, _) => {
            let div = matches!(op, BinOp::Div | BinOp::Rem)
                && !match &**r {
                    SExp::Atom(Atom::Int(k, _)) => *k != 0,
                    SExp::Bin(BinOp::Max, a, b, _) => positive(a) || positive(b),
                    _ => false,
                };
            div || sexp_may_fail(l) || sexp_may_fail(r)
        }
        SExp::Un(_, x, _) => sexp_may_fail(x),
    }
}

fn type_may_fail(t: &Type) -> bool {
    let mut fail = false;
    if let Type::Array(ArrayType { mem: Some(m), .. }, _) = t {
        if let LmadSyn::Explicit { offset, dims, .. } = &m.lmad {
            fail = sexp_may_fail(offset) || dims.iter().any(|(_, s)| sexp_may_fail(s));
        }
    }
    fail
}

/// Which body is being simplified: its results may get special treatment.
#[derive(Clone, PartialEq, Eq)]
enum Where {
    /// The program's body: results are copied to row-major blocks.
    Top,
    /// A kernel's body; its results are copied into the kernel's arrays,
    /// which live in these blocks when all were bound by `alloc`.
    Kernel(Option<Vec<Name>>),
    /// A branch of an `if`.
    Branch,
    /// A loop's body: its results become the next iteration's parameters.
    Loop,
}

/// State of the forward rewriting: the type of each name in scope (after
/// rewriting) and the blocks bound by `alloc` (two such blocks with
/// different names are different blocks at run time).
#[derive(Default)]
struct Prop {
    env: HashMap<Name, Type>,
    allocated: HashSet<Name>,
    /// The blocks of the arrays some update consumes. A copy of an array
    /// in one of them is kept: dropping it would replace the copy's uses by
    /// uses of its source, which an update may consume in between (or the
    /// copy's own update would consume the source).
    updated: HashSet<Name>,
}

impl Prop {
    fn bind_param(&mut self, p: &Pat) {
        self.env.insert(p.name.name.clone(), p.ty.clone());
        self.allocated.remove(&p.name.name);
    }

    fn bind(&mut self, s: &Stm) {
        for p in &s.pats {
            self.env.insert(p.name.name.clone(), p.ty.clone());
            if matches!(s.exp.kind, ExpKind::Alloc(..)) {
                self.allocated.insert(p.name.name.clone());
            } else {
                self.allocated.remove(&p.name.name);
            }
        }
    }

    /// A pattern element with the substitution applied and its LMAD
    /// normalised.
    fn pat(&self, sub: &Subst, p: &Pat) -> Pat {
        let mut p = sub.pat(p);
        if !type_may_fail(&p.ty) {
            if let Type::Array(
                ArrayType {
                    shape,
                    mem: Some(m),
                    ..
                },
                _,
            ) = &mut p.ty
            {
                m.lmad = lmad_syn(shape, &m.lmad.to_poly_lmad());
            }
        }
        p
    }

    fn body(&mut self, b: &Body, mut sub: Subst, at: Where) -> Body {
        let mut out: Vec<Stm> = Vec::with_capacity(b.stms.len());
        for s in &b.stms {
            self.stm(s, &mut sub, &mut out);
        }
        let mut result: Vec<Ident> = b.result.iter().map(|x| sub.ident(x)).collect();
        self.drop_result_copies(&mut out, &mut result, &at);
        Body {
            stms: out,
            result,
            span: b.span,
        }
    }

    fn emit(&mut self, s: Stm, out: &mut Vec<Stm>) {
        self.bind(&s);
        out.push(s);
    }

    fn stm(&mut self, s: &Stm, sub: &mut Subst, out: &mut Vec<Stm>) {
        let pats: Vec<Pat> = s.pats.iter().map(|p| self.pat(sub, p)).collect();
        let mk = |pats: Vec<Pat>, kind: ExpKind| Stm {
            pats,
            exp: Exp {
                kind,
                span: s.exp.span,
            },
            span: s.span,
        };
        match &s.exp.kind {
            ExpKind::Loop(ps, init, form, b) => {
                let s0 = mk(pats, ExpKind::Scalar(SExp::int(0)));
                let s2 = self.simplify_loop(s0, (ps, init, form, b), sub, out);
                self.emit(s2, out);
            }
            ExpKind::Scalar(e) => {
                let e = sub.sexp(e);
                if sexp_may_fail(&e) {
                    return self.emit(mk(pats, ExpKind::Scalar(e)), out);
                }
                if !(pats[0].ty.is_int() && pure_int(&e)) {
                    // Not integer arithmetic: no polynomial rules (`x + x`
                    // on floats is not `2 * x`); copies propagate and
                    // literals fold where the result is exact.
                    let folded = match &e {
                        SExp::Atom(a) => Some(a.clone()),
                        _ => fold_const(&e).map(|c| Atom::lit(c, Span::DUMMY)),
                    };
                    match folded {
                        Some(a @ Atom::Var(_)) => {
                            sub.0.insert(pats[0].name.name.clone(), a);
                        }
                        Some(a) => {
                            sub.0.insert(pats[0].name.name.clone(), a.clone());
                            self.emit(mk(pats, ExpKind::Scalar(SExp::Atom(a))), out);
                        }
                        None => self.emit(mk(pats, ExpKind::Scalar(e)), out),
                    }
                    return;
                }
                let poly = Poly::from_sexp(&e);
                match as_atom(&poly) {
                    Some(a @ Atom::Var(_)) => {
                        sub.0.insert(pats[0].name.name.clone(), a);
                    }
                    Some(a @ Atom::Int(..)) => {
                        // Uses are replaced; the binding stays for the
                        // positions that need a name (results, conditions).
                        sub.0.insert(pats[0].name.name.clone(), a.clone());
                        self.emit(mk(pats, ExpKind::Scalar(SExp::Atom(a))), out);
                    }
                    Some(Atom::Const(..)) | None => self.emit(mk(pats, ExpKind::Scalar(e)), out),
                }
            }
            ExpKind::Alloc(e, t) => {
                let t = *t;
                let e = sub.sexp(e);
                let e = match as_atom(&Poly::from_sexp(&e)) {
                    Some(a) if !sexp_may_fail(&e) && pure_int(&e) => SExp::Atom(a),
                    _ => e,
                };
                self.emit(mk(pats, ExpKind::Alloc(e, t)), out);
            }
            ExpKind::Copy(x) => {
                let x = sub.ident(x);
                if self.same_place(&x, &pats[0].ty) && !self.consumed_block(&x) {
                    // A copy onto the very place it copies from.
                    sub.0.insert(pats[0].name.name.clone(), Atom::Var(x));
                } else {
                    self.emit(mk(pats, ExpKind::Copy(x)), out);
                }
            }
            ExpKind::Kernel(i, n, b) => {
                self.env.insert(i.name.clone(), Type::int(i.span));
                self.allocated.remove(&i.name);
                // The blocks of the kernel's arrays, when every one was
                // bound by `alloc`.
                let dst = pats
                    .iter()
                    .map(|p| match &p.ty {
                        Type::Array(ArrayType { mem: Some(m), .. }, _)
                            if self.allocated.contains(&m.block.name) =>
                        {
                            Some(m.block.name.clone())
                        }
                        _ => None,
                    })
                    .collect::<Option<Vec<Name>>>();
                let body = self.body(b, sub.clone(), Where::Kernel(dst));
                self.emit(mk(pats, ExpKind::Kernel(i.clone(), sub.atom(n), body)), out);
            }
            ExpKind::If(c, t, e) => {
                let t = self.body(t, sub.clone(), Where::Branch);
                let e = self.body(e, sub.clone(), Where::Branch);
                let s2 = self.hoist_invariant(mk(pats, ExpKind::If(sub.ident(c), t, e)), sub, out);
                self.emit(s2, out);
            }
            // Never merged with another: two updates are two values.
            ExpKind::Index(..)
            | ExpKind::Slice(..)
            | ExpKind::Transpose(_)
            | ExpKind::Iota(_)
            | ExpKind::Update(..)
            | ExpKind::Concat(..)
            | ExpKind::Replicate(..) => {
                let e = sub.exp(&s.exp);
                self.emit(mk(pats, e.kind), out);
            }
            // The operator's body is simplified like a kernel's, in a scope
            // of its own (it binds only scalars).
            ExpKind::Reduce(op, ne, xs) | ExpKind::Scan(op, ne, xs) => {
                let op = match op {
                    RedOp::Bin(..) => op.clone(),
                    RedOp::Lambda(l) => {
                        let params: Vec<Pat> = l.params.iter().map(|p| self.pat(sub, p)).collect();
                        for q in &params {
                            self.bind_param(q);
                        }
                        let body = self.body(&l.body, sub.clone(), Where::Branch);
                        RedOp::Lambda(Box::new(Lambda {
                            params,
                            body,
                            span: l.span,
                        }))
                    }
                };
                let (ne, xs) = (sub.atom(ne), sub.ident(xs));
                let kind = match &s.exp.kind {
                    ExpKind::Reduce(..) => ExpKind::Reduce(op, ne, xs),
                    _ => ExpKind::Scan(op, ne, xs),
                };
                self.emit(mk(pats, kind), out);
            }
        }
    }

    /// A loop with the substitution applied and its body simplified in its
    /// own scope (the parameters are variables there, never constants).
    /// An int or block parameter that the body returns unchanged is
    /// loop-invariant: it is its initial value throughout, so it is
    /// replaced by that value (inside the body, and for the pattern's name
    /// after the loop) and dropped. A `while`'s condition and array
    /// parameters always stay. `s` carries the rewritten pattern.
    fn simplify_loop(
        &mut self,
        mut s: Stm,
        (ps, init, form, b): (&[Pat], &[Atom], &LoopForm, &Body),
        sub: &mut Subst,
        out: &mut Vec<Stm>,
    ) -> Stm {
        let init: Vec<Atom> = init.iter().map(|a| sub.atom(a)).collect();
        let form = match form {
            LoopForm::For(i, n) => {
                self.env.insert(i.name.clone(), Type::int(i.span));
                self.allocated.remove(&i.name);
                LoopForm::For(i.clone(), sub.atom(n))
            }
            LoopForm::While(c) => LoopForm::While(c.clone()),
        };
        let cond = match &form {
            LoopForm::While(c) => Some(c.name.clone()),
            LoopForm::For(..) => None,
        };
        // Invariant parameters, found on the body as it comes (before it is
        // simplified, so that its names are still the parameters').
        let mut keep: Vec<bool> = ps
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let invariant = matches!(p.ty, Type::Prim(..) | Type::Mem(_))
                    && cond.as_ref() != Some(&p.name.name)
                    && b.result.get(k).is_some_and(|x| x.name == p.name.name)
                    && s.pats.len() == ps.len();
                !invariant
            })
            .collect();
        // A loop has at least one parameter: the first stays if all would go.
        if let (false, Some(first)) = (keep.iter().any(|k| *k), keep.first_mut()) {
            *first = true;
        }
        let mut inner = sub.clone();
        for (k, p) in ps.iter().enumerate() {
            if keep[k] {
                continue;
            }
            inner.0.insert(p.name.name.clone(), init[k].clone());
            if let Atom::Int(..) | Atom::Const(..) = init[k] {
                // A literal cannot stand where a name is needed (a size):
                // the parameter becomes a constant binding.
                let st = Stm {
                    pats: vec![p.clone()],
                    exp: Exp {
                        kind: ExpKind::Scalar(SExp::Atom(init[k].clone())),
                        span: s.exp.span,
                    },
                    span: s.span,
                };
                self.emit(st, out);
            }
        }
        let mut params = Vec::new();
        let mut inits = Vec::new();
        for (k, p) in ps.iter().enumerate() {
            if keep[k] {
                let q = self.pat(&inner, p);
                self.bind_param(&q);
                params.push(q);
                inits.push(init[k].clone());
            }
        }
        let mut body = self.body(b, inner, Where::Loop);
        if keep.iter().all(|k| *k) {
            s.exp.kind = ExpKind::Loop(params, inits, form, body);
            return s;
        }
        let mut it = keep.iter();
        body.result.retain(|_| *it.next().unwrap_or(&true));
        let mut after = Subst::default();
        for (k, q) in s.pats.iter().enumerate() {
            if !keep[k] {
                let a = match &init[k] {
                    Atom::Int(..) | Atom::Const(..) => Atom::Var(ps[k].name.clone()),
                    a => a.clone(),
                };
                after.0.insert(q.name.name.clone(), a);
            }
        }
        let mut it = keep.iter();
        s.pats.retain(|_| *it.next().unwrap_or(&true));
        s.pats = s.pats.iter().map(|p| self.pat(&after, p)).collect();
        sub.0.extend(after.0);
        s.exp.kind = ExpKind::Loop(params, inits, form, body);
        s
    }

    /// `x` lives in a block some update writes into.
    fn consumed_block(&self, x: &Ident) -> bool {
        match self.env.get(&x.name) {
            Some(Type::Array(ArrayType { mem: Some(m), .. }, _)) => {
                self.updated.contains(&m.block.name)
            }
            _ => false,
        }
    }

    /// `x` lives exactly where an array of type `ty` would.
    fn same_place(&self, x: &Ident, ty: &Type) -> bool {
        let (Some(Type::Array(src, _)), Type::Array(dst, _)) = (self.env.get(&x.name), ty) else {
            return false;
        };
        match (&src.mem, &dst.mem) {
            (Some(ms), Some(md)) => {
                let (ls, ld) = (ms.lmad.to_poly_lmad(), md.lmad.to_poly_lmad());
                #[cfg(feature = "planted-faults")]
                if crate::fault::active(crate::fault::Fault::CopyStridesOnly) {
                    return ms.block.name == md.block.name && ls.dims == ld.dims;
                }
                ms.block.name == md.block.name && ls == ld
            }
            _ => false,
        }
    }

    /// Drops the `if` results that both branches compute the same way from
    /// names bound outside: ints are bound before the `if`, blocks are
    /// substituted. Returns the `if` with the rest.
    fn hoist_invariant(&mut self, mut s: Stm, sub: &mut Subst, out: &mut Vec<Stm>) -> Stm {
        let ExpKind::If(_, t, e) = &mut s.exp.kind else {
            return s;
        };
        let (rt, re) = (Resolver::new(t), Resolver::new(e));
        let outer = |x: &Ident| !rt.local.contains(&x.name) && !re.local.contains(&x.name);
        // What becomes of each result: substituted by an outer name, or
        // bound before the `if` to an expression of outer names.
        let mut hoist: Vec<Option<(Option<Atom>, Option<SExp>)>> = vec![None; s.pats.len()];
        for (k, p) in s.pats.iter().enumerate() {
            let (Some(xt), Some(xe)) = (t.result.get(k), e.result.get(k)) else {
                return s;
            };
            match p.ty {
                Type::Mem(_) if xt.name == xe.name && outer(xt) => {
                    hoist[k] = Some((Some(Atom::Var(xt.clone())), None));
                }
                // Not integer arithmetic: only the same outer name.
                Type::Prim(t, _) if t != Prim::I64 && xt.name == xe.name && outer(xt) => {
                    hoist[k] = Some((Some(Atom::Var(xt.clone())), None));
                }
                Type::Prim(t, _) if t != Prim::I64 => {}
                Type::Prim(..) => {
                    // A size must stay a name that the branches' arrays
                    // share (types compare sizes by name); offsets and
                    // strides may be any expression of outer names.
                    let in_shape = s.pats.iter().any(|q| match &q.ty {
                        Type::Array(at, _) => {
                            at.shape.iter().any(|x| x.var() == Some(&p.name.name))
                        }
                        _ => false,
                    });
                    if in_shape {
                        if xt.name == xe.name && outer(xt) {
                            hoist[k] = Some((Some(Atom::Var(xt.clone())), None));
                        }
                        continue;
                    }
                    let (Some(a), Some(b)) = (rt.resolve(&xt.name, 0), re.resolve(&xe.name, 0))
                    else {
                        continue;
                    };
                    if a != b {
                        continue;
                    }
                    hoist[k] = Some(match as_atom(&a) {
                        Some(v @ Atom::Var(_)) => (Some(v), None),
                        Some(lit) => (Some(lit), Some(a.to_sexp())),
                        None => (None, Some(a.to_sexp())),
                    });
                }
                _ => {}
            }
        }
        // A pattern is never empty: the first result stays if all would go.
        if hoist.iter().all(Option::is_some) {
            hoist[0] = None;
        }
        let keep: Vec<bool> = hoist.iter().map(Option::is_none).collect();
        let mut local = Subst::default();
        for (p, h) in s.pats.iter().zip(&hoist) {
            let Some((atom, bind)) = h else { continue };
            if let Some(se) = bind {
                let st = Stm {
                    pats: vec![p.clone()],
                    exp: Exp {
                        kind: ExpKind::Scalar(se.clone()),
                        span: s.exp.span,
                    },
                    span: s.span,
                };
                self.emit(st, out);
            }
            if let Some(a) = atom {
                local.0.insert(p.name.name.clone(), a.clone());
            }
        }
        if keep.iter().all(|k| *k) {
            return s;
        }
        let filter = |v: &mut Vec<Ident>| {
            let mut it = keep.iter();
            v.retain(|_| *it.next().unwrap_or(&true));
        };
        filter(&mut t.result);
        filter(&mut e.result);
        let mut it = keep.iter();
        s.pats.retain(|_| *it.next().unwrap_or(&true));
        s.pats = s.pats.iter().map(|p| self.pat(&local, p)).collect();
        sub.0.extend(local.0);
        s
    }

    /// Results that are copies made only to be returned: a kernel's result
    /// is copied into its row anyway; a program result that is already
    /// row-major needs no copy to a row-major block.
    ///
    /// The binders, occurrences, allocated blocks and result counts are
    /// computed once and kept up to date as copies go, so that a body with
    /// many results costs time linear in its size.
    fn drop_result_copies(&self, stms: &mut Vec<Stm>, result: &mut [Ident], at: &Where) {
        let (Where::Top | Where::Kernel(Some(_))) = at else {
            return;
        };
        // The statement binding each name alone (the first, as a search
        // from the start would find it).
        let mut binder: HashMap<Name, usize> = HashMap::default();
        let mut allocs: HashSet<Name> = HashSet::default();
        for (k, s) in stms.iter().enumerate() {
            if s.pats.len() == 1 {
                binder.entry(s.pats[0].name.name.clone()).or_insert(k);
            }
            if let (ExpKind::Alloc(..), Some(p)) = (&s.exp.kind, s.pats.first()) {
                allocs.insert(p.name.name.clone());
            }
        }
        let mut occ = walk::occurrences(stms, &[]);
        let mut returned: HashMap<Name, usize> = HashMap::default();
        for r in result.iter() {
            *returned.entry(r.name.clone()).or_default() += 1;
        }
        let mut removed = vec![false; stms.len()];
        for slot in result.iter_mut() {
            let r = slot.clone();
            let Some(&k) = binder.get(&r.name) else {
                continue;
            };
            if removed[k] {
                continue;
            }
            let ExpKind::Copy(x) = &stms[k].exp.kind else {
                continue;
            };
            let Some(Type::Array(src, _)) = self.env.get(&x.name) else {
                continue;
            };
            let Some(ms) = &src.mem else { continue };
            // A source that an update or a loop consumes: returning it
            // instead of its copy would use it after it is consumed.
            if self.updated.contains(&ms.block.name) || walk::consumed_in(stms, &x.name) {
                continue;
            }
            let ok = match at {
                Where::Kernel(Some(dst)) => {
                    !dst.contains(&ms.block.name) && self.allocated.contains(&ms.block.name)
                }
                _ => {
                    let shape: Vec<Poly> = src.shape.iter().map(Poly::atom).collect();
                    ms.lmad.to_poly_lmad() == Lmad::row_major(&shape)
                }
            };
            let uses = occ.get(&r.name).copied().unwrap_or(0);
            let times_returned = returned.get(&r.name).copied().unwrap_or(0);
            // The copy's block must be its own: allocated in this body and
            // used by nothing else, so dropping the copy changes no array.
            let private = match &stms[k].pats[0].ty {
                Type::Array(ArrayType { mem: Some(md), .. }, _) => {
                    occ.get(&md.block.name) == Some(&2) && allocs.contains(&md.block.name)
                }
                _ => false,
            };
            if ok && private && uses == 1 && times_returned == 1 {
                let x = x.clone();
                walk::stm_names(&stms[k], &mut |y| {
                    if let Some(c) = occ.get_mut(&y.name) {
                        *c -= 1;
                    }
                });
                removed[k] = true;
                if let Some(c) = returned.get_mut(&r.name) {
                    *c -= 1;
                }
                *returned.entry(x.name.clone()).or_default() += 1;
                *slot = x;
            }
        }
        let mut it = removed.iter();
        stms.retain(|_| !*it.next().unwrap_or(&false));
    }
}

/// The blocks the updates of a body (at any depth) write into (their
/// results' blocks, which are their targets').
fn update_targets(b: &Body, out: &mut HashSet<Name>) {
    for s in &b.stms {
        match &s.exp.kind {
            ExpKind::Update(..) => {
                if let Some(Type::Array(ArrayType { mem: Some(m), .. }, _)) =
                    s.pats.first().map(|p| &p.ty)
                {
                    out.insert(m.block.name.clone());
                }
            }
            ExpKind::If(_, t, e) => {
                update_targets(t, out);
                update_targets(e, out);
            }
            ExpKind::Kernel(_, _, kb) | ExpKind::Loop(_, _, _, kb) => update_targets(kb, out),
            _ => {}
        }
    }
}

/// The value of an `if` branch's results in terms of names bound outside
/// the branch, through its scalar bindings.
struct Resolver<'a> {
    defs: HashMap<&'a Name, &'a SExp>,
    local: HashSet<Name>,
}

impl<'a> Resolver<'a> {
    fn new(b: &'a Body) -> Resolver<'a> {
        let mut defs = HashMap::default();
        let mut local = HashSet::default();
        for s in &b.stms {
            for p in &s.pats {
                local.insert(p.name.name.clone());
            }
            if let (ExpKind::Scalar(e), [p]) = (&s.exp.kind, s.pats.as_slice()) {
                if p.ty.is_int() && pure_int(e) {
                    defs.insert(&p.name.name, e);
                }
            }
        }
        Resolver { defs, local }
    }

    fn resolve(&self, x: &Name, depth: usize) -> Option<Poly> {
        if !self.local.contains(x) {
            return Some(Poly::var(x));
        }
        let e = self.defs.get(x)?;
        if sexp_may_fail(e) || depth > 64 {
            return None;
        }
        let mut vals = HashMap::default();
        let mut ok = true;
        e.for_each_var(&mut |v| {
            if ok && !vals.contains_key(&v.name) {
                match self.resolve(&v.name, depth + 1) {
                    Some(p) => {
                        vals.insert(v.name.clone(), p);
                    }
                    None => ok = false,
                }
            }
        });
        ok.then(|| Poly::from_sexp(e).subst(&|v| vals.get(v).cloned()))
    }
}

/// Whether an `i64` expression is integer arithmetic throughout: no
/// conversion, float function, comparison or literal of another type. In a
/// strictly typed program every variable of such an expression is then an
/// `i64`, so its polynomial normal form means what it says.
pub fn pure_int(e: &SExp) -> bool {
    match e {
        SExp::Atom(Atom::Var(_) | Atom::Int(..)) => true,
        SExp::Atom(Atom::Const(c, _)) => c.prim() == Prim::I64,
        SExp::Bin(op, l, r, _) => !is_comparison(*op) && pure_int(l) && pure_int(r),
        SExp::Un(op, x, _) => matches!(op, UnOp::Neg | UnOp::Not | UnOp::Abs) && pure_int(x),
    }
}

/// `< <= > >= == !=`: a `bool` from two operands of another type.
fn is_comparison(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
    )
}

/// The value of an expression of literals, computed with the interpreters'
/// operators where that is exact: `None` when a variable occurs, when it
/// would get stuck (division by zero), for `exp` and `log` (whose last
/// bits may differ between the host and a device), and for a NaN (the
/// program text has one NaN, `f32.nan`, not each NaN's bits).
fn fold_const(e: &SExp) -> Option<Const> {
    fold_const_bits(e).filter(|c| !c.is_nan())
}

fn fold_const_bits(e: &SExp) -> Option<Const> {
    use funmem_semantics::scalar::{binop_t, unop_t};
    match e {
        SExp::Atom(a) => a.constant(),
        SExp::Bin(op, l, r, _) => {
            let (a, b) = (fold_const(l)?, fold_const(r)?);
            let t = a.prim();
            if b.prim() != t {
                return None;
            }
            let w = binop_t(*op, t, a.to_bits(), b.to_bits()).ok()?;
            let rt = if is_comparison(*op) { Prim::Bool } else { t };
            Some(Const::from_bits(rt, w))
        }
        SExp::Un(UnOp::Exp | UnOp::Log, ..) => None,
        SExp::Un(op, x, _) => {
            let c = fold_const(x)?;
            let rt = match op {
                UnOp::Conv(to) => *to,
                _ => c.prim(),
            };
            Some(Const::from_bits(rt, unop_t(*op, c.prim(), c.to_bits())))
        }
    }
}

/// The polynomial as an atom, when it is a constant or a lone variable.
fn as_atom(p: &Poly) -> Option<Atom> {
    if let Some(k) = p.as_constant() {
        return Some(Atom::Int(k, Span::DUMMY));
    }
    match p.to_sexp() {
        SExp::Atom(a @ Atom::Var(_)) => Some(a),
        _ => None,
    }
}

/// The number of elements of an array type, as a polynomial.
fn element_count(t: &Type) -> Option<Poly> {
    let Type::Array(a, _) = t else { return None };
    Some(
        a.shape
            .iter()
            .fold(Poly::constant(1), |acc, s| acc.mul(&Poly::atom(s))),
    )
}

/// The element counts of the arrays in scope, as a stack (a body pushes
/// its arrays' counts and truncates back when it ends) with a count of each
/// polynomial, so that membership costs one lookup and no scope is copied.
#[derive(Default)]
struct Sizes {
    stack: Vec<Poly>,
    count: HashMap<Poly, usize>,
}

impl Sizes {
    fn len(&self) -> usize {
        self.stack.len()
    }

    fn push(&mut self, p: Poly) {
        *self.count.entry(p.clone()).or_default() += 1;
        self.stack.push(p);
    }

    fn truncate(&mut self, len: usize) {
        while self.stack.len() > len {
            let Some(p) = self.stack.pop() else { break };
            if let Some(c) = self.count.get_mut(&p) {
                *c -= 1;
                if *c == 0 {
                    self.count.remove(&p);
                }
            }
        }
    }

    fn contains(&self, p: &Poly) -> bool {
        self.count.contains_key(p)
    }

    /// Pushes the element counts of the arrays a statement binds.
    fn bind(&mut self, s: &Stm) {
        for p in s.pats.iter().filter_map(|p| element_count(&p.ty)) {
            self.push(p);
        }
    }
}

/// Can this statement get stuck? `sizes` are the element counts of the
/// arrays in scope: an `alloc` of one of them cannot be negative.
fn may_fail(s: &Stm, sizes: &Sizes) -> bool {
    if s.pats.iter().any(|p| type_may_fail(&p.ty)) {
        return true;
    }
    match &s.exp.kind {
        // An index may be out of bounds.
        ExpKind::Update(..) => true,
        // The shapes agree by type, and the result's size is their sum.
        ExpKind::Concat(..) => false,
        // The elements are in bounds by type; a built-in operator cannot
        // get stuck, a lambda where its body may (a division, an index).
        ExpKind::Reduce(op, ..) | ExpKind::Scan(op, ..) => match op {
            RedOp::Bin(..) => false,
            RedOp::Lambda(l) => l.body.stms.iter().any(|s| may_fail(s, sizes)),
        },
        ExpKind::Replicate(n, _) => !matches!(n, Atom::Int(k, _) if *k >= 0),
        // A `while` may never end (the fuel limit stops it); a `for` ends,
        // and gets stuck only where its body may.
        ExpKind::Loop(_, _, LoopForm::While(_), _) => true,
        ExpKind::Loop(ps, _, LoopForm::For(..), b) => {
            ps.iter().any(|p| type_may_fail(&p.ty)) || b.stms.iter().any(|s| may_fail(s, sizes))
        }
        ExpKind::Scalar(e) => sexp_may_fail(e),
        ExpKind::Alloc(e, _) => {
            if sexp_may_fail(e) {
                return true;
            }
            let p = Poly::from_sexp(e);
            !(p.as_constant().is_some_and(|k| k >= 0) || sizes.contains(&p))
        }
        ExpKind::Transpose(_) | ExpKind::Copy(_) => false,
        ExpKind::Iota(n) => !matches!(n, Atom::Int(k, _) if *k >= 0),
        ExpKind::Index(..) | ExpKind::Slice(..) | ExpKind::Kernel(..) => true,
        ExpKind::If(_, t, e) => t.stms.iter().chain(&e.stms).any(|s| may_fail(s, sizes)),
    }
}

/// Removes unused bindings that cannot get stuck, and unused `if`
/// results. `sizes` holds the element counts of the arrays in scope; it is
/// left as it was found.
fn dce_body(b: &Body, sizes: &mut Sizes) -> Body {
    let base = sizes.len();
    // Element counts in scope before each statement. Statements are visited
    // last to first, so the stack is cut back to each one's scope in turn.
    let mut before = Vec::with_capacity(b.stms.len());
    for s in &b.stms {
        before.push(sizes.len());
        sizes.bind(s);
    }
    let mut live: HashSet<Name> = b.result.iter().map(|x| x.name.clone()).collect();
    let mut kept: Vec<Stm> = Vec::new();
    for (k, s) in b.stms.iter().enumerate().rev() {
        sizes.truncate(before[k]);
        let visible = &mut *sizes;
        let s = match &s.exp.kind {
            ExpKind::If(c, t, e) => {
                let Some(s) = dce_if(s, c, t, e, &live, visible) else {
                    continue;
                };
                s
            }
            ExpKind::Loop(ps, init, form, body) => {
                let used = s.pats.iter().any(|p| live.contains(&p.name.name));
                if !used && !may_fail(s, visible) {
                    continue;
                }
                // The parameters are arrays in scope in the body.
                let base = visible.len();
                for c in ps.iter().filter_map(|p| element_count(&p.ty)) {
                    visible.push(c);
                }
                let body = dce_body(body, visible);
                visible.truncate(base);
                Stm {
                    pats: s.pats.clone(),
                    exp: Exp {
                        kind: ExpKind::Loop(ps.clone(), init.clone(), form.clone(), body),
                        span: s.exp.span,
                    },
                    span: s.span,
                }
            }
            ExpKind::Kernel(i, n, body) => {
                let body = dce_body(body, visible);
                Stm {
                    pats: s.pats.clone(),
                    exp: Exp {
                        kind: ExpKind::Kernel(i.clone(), n.clone(), body),
                        span: s.exp.span,
                    },
                    span: s.span,
                }
            }
            _ => {
                let used = s.pats.iter().any(|p| live.contains(&p.name.name));
                if !used && !may_fail(s, visible) {
                    continue;
                }
                s.clone()
            }
        };
        walk::stm_names(&s, &mut |x| {
            live.insert(x.name.clone());
        });
        kept.push(s);
    }
    sizes.truncate(base);
    kept.reverse();
    Body {
        stms: kept,
        result: b.result.clone(),
        span: b.span,
    }
}

/// An `if` without its unused results; `None` when nothing of it is needed
/// and nothing in it can get stuck.
fn dce_if(
    s: &Stm,
    c: &Ident,
    t: &Body,
    e: &Body,
    live: &HashSet<Name>,
    visible: &mut Sizes,
) -> Option<Stm> {
    let n = s.pats.len();
    let mut keep: Vec<bool> = s.pats.iter().map(|p| live.contains(&p.name.name)).collect();
    if !keep.iter().any(|k| *k) {
        if dead_is_empty(t, visible) && dead_is_empty(e, visible) {
            return None;
        }
        // Something may get stuck: keep the `if`, with one result (a
        // pattern is never empty).
        keep[0] = true;
    }
    // A result the types of kept results mention is needed too.
    loop {
        let mut changed = false;
        for k in 0..n {
            if !keep[k] {
                continue;
            }
            let mut needed = HashSet::default();
            walk::type_names(&s.pats[k].ty, &mut |x| {
                needed.insert(&x.name);
            });
            for (j, q) in s.pats.iter().enumerate() {
                if !keep[j] && needed.contains(&q.name.name) {
                    keep[j] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut prune = |b: &Body| {
        let mut it = keep.iter();
        let mut r = b.result.clone();
        r.retain(|_| *it.next().unwrap_or(&true));
        dce_body(
            &Body {
                stms: b.stms.clone(),
                result: r,
                span: b.span,
            },
            visible,
        )
    };
    let (t2, e2) = (prune(t), prune(e));
    let mut it = keep.iter();
    let mut pats = s.pats.clone();
    pats.retain(|_| *it.next().unwrap_or(&true));
    Some(Stm {
        pats,
        exp: Exp {
            kind: ExpKind::If(c.clone(), t2, e2),
            span: s.exp.span,
        },
        span: s.span,
    })
}

/// Whether [`dce_body`] leaves no statement of `b` when none of its results
/// is needed: nothing in it can get stuck. (No statement is kept for its
/// uses until one is kept for itself, so this needs no liveness.)
fn dead_is_empty(b: &Body, sizes: &mut Sizes) -> bool {
    let base = sizes.len();
    let mut empty = true;
    for s in &b.stms {
        empty = match &s.exp.kind {
            ExpKind::Kernel(..) => false,
            ExpKind::If(_, t, e) => dead_is_empty(t, sizes) && dead_is_empty(e, sizes),
            _ => !may_fail(s, sizes),
        };
        if !empty {
            break;
        }
        sizes.bind(s);
    }
    sizes.truncate(base);
    empty
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::check::check_program;
    use funmem_lang::parse::parse_program;

    fn simp(src: &str) -> String {
        let p = parse_program(src, Lang::FunMem).unwrap();
        check_program(&p).unwrap();
        let q = simplify(&p);
        check_program(&q).unwrap_or_else(|d| panic!("{d}\n{q}"));
        assert_eq!(simplify(&q), q, "simplify is idempotent");
        q.to_string()
    }

    #[test]
    fn unused_bindings_go_unless_they_may_get_stuck() {
        let out = simp(
            "def main (a: int) (b: int) (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
               let (u: int) = a + b
               let (q: int) = a / b
               let (h: int) = a / 2
               let (e: int) = xs[a]
               let (t: [n]int @ xm -> R(n)) = xs[0 : n]
               let (m2: mem) = alloc n
               let (m3: mem) = alloc a
               in (a)",
        );
        assert!(!out.contains("let (u"), "{out}");
        assert!(!out.contains("let (h"), "{out}");
        assert!(out.contains("let (q: int) = a / b"), "{out}");
        assert!(out.contains("let (e: int) = xs[a]"), "{out}");
        assert!(
            out.contains("let (t:"),
            "slices may be out of bounds: {out}"
        );
        assert!(
            !out.contains("m2"),
            "an alloc of an array's size cannot fail: {out}"
        );
        assert!(
            out.contains("m3"),
            "an alloc of any size may be negative: {out}"
        );
    }

    #[test]
    fn copies_propagate_and_constants_fold_into_types() {
        let out = simp(
            "def main (n: int) =
               let (k: int) = n + 0
               let (one: int) = 2 - 1
               let (m: mem) = alloc k
               let (xs: [k]int @ m -> 0 + {(k : one)}) = iota k
               let (y: int) = xs[one]
               in (xs, y)",
        );
        assert!(out.contains("(xs: [n]int @ m -> R(n)) = iota n"), "{out}");
        assert!(out.contains("xs[1]"), "{out}");
        assert!(!out.contains("let (k"), "{out}");
    }

    #[test]
    fn branch_invariant_results_leave_the_if() {
        let out = simp(
            "def main (c: int) (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
               let (k: int) (bm: mem) (o: int) (ys: [k]int @ bm -> o + {(k : 1)}) = if c then
                   let (a: [n]int @ xm -> R(n)) = xs[0 : n]
                   let (ao: int) = 0
                   in (n, xm, ao, a)
                 else
                   let (bo: int) = 0 * n
                   in (n, xm, bo, xs)
               in (ys)",
        );
        assert!(out.contains("(ys: [n]int @ xm -> R(n)) = if c"), "{out}");
        assert!(out.contains("in (a)") && out.contains("in (xs)"), "{out}");
    }

    #[test]
    fn a_copy_that_is_only_returned_by_a_kernel_body_goes() {
        let out = simp(
            "def main (n: int) (xm: mem) (xss: [n][n]int @ xm -> R(n, n)) =
               let (ym: mem) = alloc n * n
               let (yss: [n][n]int @ ym -> R(n, n)) = kernel i < n do
                 let (rm: mem) = alloc n
                 let (r: [n]int @ rm -> R(n)) = kernel j < n do
                   let (v: int) = xss[j, i]
                   in (v)
                 let (cm: mem) = alloc n
                 let (c: [n]int @ cm -> R(n)) = copy r
                 in (c)
               in (yss)",
        );
        assert!(!out.contains("copy"), "{out}");
        assert!(!out.contains("cm"), "{out}");
        assert!(out.contains("in (r)"), "{out}");
    }

    #[test]
    fn a_copy_onto_its_own_place_goes() {
        let out = simp(
            "def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
               let (ys: [n]int @ xm -> R(n)) = copy xs
               let (z: int) = ys[0]
               in (z)",
        );
        assert!(!out.contains("copy"), "{out}");
        assert!(out.contains("xs[0]"), "{out}");
    }

    #[test]
    fn loop_invariant_blocks_and_offsets_leave_the_loop() {
        let out = simp(
            "def main (n: int) (xm: mem) (xs: *[n]int @ xm -> R(n)) =
               let (o: int) = 0
               let (s: int) = 1
               let (k: int) (rm: mem) (ro: int) (rs: int) (r: [n]int @ rm -> ro + {(n : rs)}) =
                 loop (j: int) (am: mem) (ao: int) (as: int) (a: [n]int @ am -> ao + {(n : as)}) = (0, xm, o, s, xs) for i < n do
                   let (b: [n]int @ am -> ao + {(n : as)}) = a with [i] = j
                   let (bo: int) = ao
                   let (j2: int) = j + 1
                   in (j2, am, bo, as, b)
               in (r, k)",
        );
        assert!(
            out.contains("loop (j: int) (a: [n]int @ xm -> R(n)) = (0, xs) for i < n do"),
            "{out}"
        );
        assert!(out.contains("(r: [n]int @ xm -> R(n))"), "{out}");
        assert!(out.contains("in (j2, b)"), "{out}");
    }

    #[test]
    fn a_literal_invariant_size_stays_a_name() {
        let out = simp(
            "def main (n: int) =
               let (k: int) (r: int) = loop (m: int) (acc: int) = (3, 0) for i < n do
                   let (a: int) = acc + m
                   in (m, a)
               let (zm: mem) = alloc k
               let (z: [k]int @ zm -> R(k)) = iota k
               in (z, r)",
        );
        assert!(out.contains("let (m: int) = 3"), "{out}");
        assert!(out.contains("(z: [m]int @ zm -> R(m)) = iota m"), "{out}");
    }

    #[test]
    fn dead_loops_updates_concats_and_replicates() {
        let out = simp(
            "def main (n: int) (c: int) (xm: mem) (xs: *[n]int @ xm -> R(n)) =
               let (k: int) = n + n
               let (zm: mem) = alloc k
               let (z: [k]int @ zm -> R(k)) = concat xs xs
               let (rm: mem) = alloc 3 * n
               let (r: [3][n]int @ rm -> R(3, n)) = replicate 3 xs
               let (qm: mem) = alloc c * n
               let (q: [c][n]int @ qm -> R(c, n)) = replicate c xs
               let (u: int) = loop (a: int) = (0) for i < n do
                   let (a2: int) = a + i
                   in (a2)
               let (v: int) = loop (b: int) = (c) while b do
                   let (b2: int) = b - 1
                   in (b2)
               let (w: int) = loop (d: int) = (0) for i < n do
                   let (e: int) = xs[i]
                   in (e)
               let (ys: [n]int @ xm -> R(n)) = xs with [0] = 1
               in (n)",
        );
        assert!(!out.contains("concat"), "{out}");
        assert!(!out.contains("replicate 3"), "{out}");
        assert!(
            out.contains("replicate c"),
            "a negative count is stuck: {out}"
        );
        assert!(
            !out.contains("let (u"),
            "a for loop that cannot fail: {out}"
        );
        assert!(out.contains("let (v"), "a while may never end: {out}");
        assert!(out.contains("let (w"), "its body may get stuck: {out}");
        assert!(
            out.contains("xs with [0] = 1"),
            "an update may be out of bounds: {out}"
        );
    }

    #[test]
    fn a_multi_result_kernel_keeps_copies_into_its_own_blocks() {
        let out = simp(
            "def main (n: int) =
               let (pm: mem) = alloc n
               let (qm: mem) = alloc n
               let (p: [n]int @ pm -> R(n)) (q: [n]int @ qm -> R(n)) = kernel i < n do
                 let (e: int) = i * 2
                 in (i, e)
               in (p, q)",
        );
        assert!(out.contains("in (i, e)"), "{out}");
    }

    #[test]
    fn a_copy_onto_its_own_place_that_an_update_consumes_stays() {
        let out = simp(
            "def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
               let (ys: [n]int @ xm -> R(n)) = copy xs
               let (zs: [n]int @ xm -> R(n)) = ys with [0] = 1
               in (zs)",
        );
        assert!(out.contains("copy xs"), "{out}");
    }

    #[test]
    fn a_loop_keeps_one_parameter_when_all_are_invariant() {
        let out = simp(
            "def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
               let (q: int) = loop (p: int) = (3) for i < 2 do
                   let (e: int) = xs[i]
                   in (p)
               in (q)",
        );
        assert!(out.contains("loop (p: int) = (3) for i < 2 do"), "{out}");
        let again = parse_program(&out, Lang::FunMem).unwrap();
        assert_eq!(again.to_string(), out);
    }

    #[test]
    fn a_result_copy_of_an_array_an_update_consumes_stays() {
        let out = simp(
            "def main (n: int) (xm: mem) (xs: *[n]int @ xm -> R(n)) =
               let (ym: mem) = alloc n
               let (ys: [n]int @ ym -> R(n)) = copy xs
               let (zs: [n]int @ xm -> R(n)) = xs with [0] = 1
               in (ys)",
        );
        assert!(out.contains("copy xs"), "{out}");
    }
}
