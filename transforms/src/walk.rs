//! Walking FUN/FUNMEM trees: every name occurrence. (Substitution is
//! `funmem_lang::subst::Subst`, re-exported here.)

use funmem_lang::ast::*;
use funmem_lang::Name;
use rustc_hash::FxHashMap as HashMap;

pub use funmem_lang::subst::Subst;

/// Calls `f` on every name occurring in a type (sizes, block, LMAD).
pub fn type_names<'a>(t: &'a Type, f: &mut impl FnMut(&'a Ident)) {
    let Type::Array(a, _) = t else { return };
    for s in &a.shape {
        if let Atom::Var(x) = s {
            f(x);
        }
    }
    if let Some(m) = &a.mem {
        f(&m.block);
        m.lmad.for_each_var(f);
    }
}

/// Calls `f` on every name occurring in a statement: binders, uses, types
/// and nested bodies.
pub fn stm_names<'a>(s: &'a Stm, f: &mut impl FnMut(&'a Ident)) {
    for p in &s.pats {
        f(&p.name);
        type_names(&p.ty, f);
    }
    exp_names(&s.exp, f);
}

/// Calls `f` on every name occurring in an expression.
pub fn exp_names<'a>(e: &'a Exp, f: &mut impl FnMut(&'a Ident)) {
    let atom = |a: &'a Atom, f: &mut dyn FnMut(&'a Ident)| {
        if let Atom::Var(x) = a {
            f(x);
        }
    };
    match &e.kind {
        ExpKind::Scalar(se) | ExpKind::Alloc(se, _) => se.for_each_var(f),
        ExpKind::Index(x, idx) => {
            f(x);
            idx.iter().for_each(|a| atom(a, f));
        }
        ExpKind::Slice(x, sl) => {
            f(x);
            for (o, n) in sl {
                atom(o, f);
                atom(n, f);
            }
        }
        ExpKind::Transpose(x) | ExpKind::Copy(x) => f(x),
        ExpKind::Iota(n) => atom(n, f),
        ExpKind::If(c, t, el) => {
            f(c);
            body_names(t, f);
            body_names(el, f);
        }
        ExpKind::Kernel(i, n, b) => {
            f(i);
            atom(n, f);
            body_names(b, f);
        }
        ExpKind::Loop(ps, init, form, b) => {
            for p in ps {
                f(&p.name);
                type_names(&p.ty, f);
            }
            init.iter().for_each(|a| atom(a, f));
            match form {
                LoopForm::For(i, n) => {
                    f(i);
                    atom(n, f);
                }
                LoopForm::While(c) => f(c),
            }
            body_names(b, f);
        }
        ExpKind::Update(x, is, v) => {
            f(x);
            for i in is {
                i.atoms().into_iter().for_each(|a| atom(a, f));
            }
            atom(v, f);
        }
        ExpKind::Concat(x, y) => {
            f(x);
            f(y);
        }
        ExpKind::Replicate(n, v) => {
            atom(n, f);
            atom(v, f);
        }
        ExpKind::Reduce(op, ne, xs) | ExpKind::Scan(op, ne, xs) => {
            if let RedOp::Lambda(l) = op {
                for p in &l.params {
                    f(&p.name);
                    type_names(&p.ty, f);
                }
                body_names(&l.body, f);
            }
            atom(ne, f);
            f(xs);
        }
    }
}

/// Calls `f` on every name occurring in a body.
pub fn body_names<'a>(b: &'a Body, f: &mut impl FnMut(&'a Ident)) {
    for s in &b.stms {
        stm_names(s, f);
    }
    b.result.iter().for_each(f);
}

/// Calls `f` on every name occurring in a program.
pub fn program_names<'a>(p: &'a Program, f: &mut impl FnMut(&'a Ident)) {
    for q in &p.params {
        f(&q.name);
        type_names(&q.ty, f);
    }
    body_names(&p.body, f);
}

/// How many times each name occurs in a statement list and results.
pub fn occurrences(stms: &[Stm], result: &[Ident]) -> HashMap<Name, usize> {
    let mut m: HashMap<Name, usize> = HashMap::default();
    let mut add = |x: &Ident| *m.entry(x.name.clone()).or_default() += 1;
    for s in stms {
        stm_names(s, &mut add);
    }
    result.iter().for_each(add);
    m
}

/// Whether `x` is consumed in the statements (at any depth): the array an
/// update writes into, or a loop's initial value (which the loop may
/// update in place).
pub fn consumed_in(stms: &[Stm], x: &Name) -> bool {
    stms.iter().any(|s| match &s.exp.kind {
        ExpKind::Update(w, ..) => &w.name == x,
        ExpKind::Loop(_, init, _, b) => {
            init.iter().any(|a| a.var() == Some(x)) || consumed_in(&b.stms, x)
        }
        ExpKind::If(_, t, e) => consumed_in(&t.stms, x) || consumed_in(&e.stms, x),
        ExpKind::Kernel(_, _, b) => consumed_in(&b.stms, x),
        _ => false,
    })
}
