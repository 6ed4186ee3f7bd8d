//! The reducer: shrinks a failing case while it keeps failing the same way.
//!
//! Delta debugging that knows our syntax. Starting from a case for which
//! the caller's predicate holds, [`reduce`] tries smaller candidates, largest
//! reductions first, and keeps each one that still type-checks and on which
//! the predicate still holds, until nothing smaller works (a fixpoint) or the
//! predicate has been called `max_tries` times. The moves:
//!
//! - remove dead statements; remove a program result (one is always kept);
//! - delete a statement at any depth, or replace it by a cheap binding of
//!   the same pattern (`0` of a scalar's type, `iota n` for a `[n]int`
//!   array, `replicate n 0` of another element type, `alloc 0` for a
//!   block), or delete it and use `0` for its `int` name
//!   and another visible name where a body returned it;
//! - replace an `if` by the statements of one branch, the pattern's names
//!   renamed to that branch's results in what follows;
//! - return another name of the same kind from a body (a kernel body may
//!   return its index, say), then remove what became dead;
//! - remove a binding and use another visible name of the same kind in its
//!   place (a needless `copy` goes this way);
//! - inline a binding `let (x: int) = a` of an atom;
//! - replace a scalar expression or any part of it by `0`, `1` or one of
//!   its operands; replace an index or slice offset by `0` or `1`;
//! - shrink a kernel bound, an `iota` length, a `replicate` count or a
//!   slice size to a literal (`0`, `1`, `2`) together with the pattern's
//!   type;
//! - a `for` loop's bound to `0` or `1`; a loop to its initial values
//!   (the pattern bound to them), or to its body run once (parameters
//!   bound to the initial values, the index to `0`, the pattern to the
//!   body's results); an update `x with [...] = v` to `x`; `concat x y` to
//!   one operand (its size name to the operand's); a kernel with several
//!   results to one without an unused result;
//! - a `reduce` to its neutral element; a `scan` to a `copy` of its operand
//!   or to its neutral element replicated; a lambda to a builtin operator
//!   (`+ * min max && ||`, those that fit the element type);
//! - a conversion `t(e)` to `e` where the types allow; a part of a scalar
//!   expression to `0` or `1` of its own type (a non-`i64` literal to `0`
//!   of its type);
//! - remove an unused parameter, or turn a scalar parameter into its input
//!   value;
//! - shrink inputs: integers toward 0 (truncating the arrays whose sizes
//!   they are, consistently), other scalars toward 0 of their type (floats
//!   to their integer part, halved), array elements to 0 of their type.
//!
//! The type checker is the guard of every move: a candidate that leaves a
//! name unbound, rebinds a visible name or breaks a type is dropped before
//! the predicate sees it.
//!
//! Every accepted candidate is strictly smaller in a well-founded order
//! (statements, then syntax weight, then literal magnitudes, then input
//! elements, then input magnitudes), so reduction always stops. Candidates
//! are generated and tried in a fixed order and a candidate already tried is
//! not tried again, so reduction is deterministic.

use crate::Case;
use funmem_lang::ast::*;
use funmem_lang::check::check_program;
use funmem_lang::prim::Const;
use funmem_lang::prim::Prim;
use funmem_lang::{Name, Span};
use funmem_semantics::value::{ArrayValue, Elems, Value};
use funmem_transforms::walk::{body_names, program_names, type_names, Subst};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// The number of statements of a program at all depths (kernel and loop
/// bodies and branches included).
pub fn size(p: &Program) -> usize {
    body_size(&p.body)
}

fn body_size(b: &Body) -> usize {
    b.stms
        .iter()
        .map(|s| {
            1 + match &s.exp.kind {
                ExpKind::Kernel(_, _, kb) | ExpKind::Loop(_, _, _, kb) => body_size(kb),
                ExpKind::If(_, t, e) => body_size(t) + body_size(e),
                ExpKind::Scalar(_)
                | ExpKind::Alloc(..)
                | ExpKind::Index(..)
                | ExpKind::Slice(..)
                | ExpKind::Transpose(_)
                | ExpKind::Iota(_)
                | ExpKind::Copy(_)
                | ExpKind::Update(..)
                | ExpKind::Concat(..)
                | ExpKind::Replicate(..) => 0,
                ExpKind::Reduce(op, ..) | ExpKind::Scan(op, ..) => match op {
                    RedOp::Lambda(l) => body_size(&l.body),
                    RedOp::Bin(..) => 0,
                },
            }
        })
        .sum()
}

/// Shrinks `case`, for which `fails` holds, to a smaller case for which it
/// still holds and which still type-checks; calls `fails` at most
/// `max_tries` times and only on well-typed candidates. Returns the
/// smallest case found (`case` itself when nothing smaller fails).
pub fn reduce(case: &Case, fails: &mut dyn FnMut(&Case) -> bool, max_tries: usize) -> Case {
    reduce_until(case, fails, max_tries, None)
}

/// [`reduce`] that also stops trying new candidates at `deadline`: the
/// smallest case found by then. (One call of `fails` may run past it.)
pub fn reduce_until(
    case: &Case,
    fails: &mut dyn FnMut(&Case) -> bool,
    max_tries: usize,
    deadline: Option<std::time::Instant>,
) -> Case {
    let mut r = Reducer {
        fails,
        tries: 0,
        max_tries,
        deadline,
        seen: HashSet::new(),
        cur_measure: measure(case),
        cur: case.clone(),
    };
    r.run();
    r.cur
}

/// A candidate generator: every candidate of one kind of move.
type Gen = fn(&Case) -> Vec<Case>;

/// The moves, in the order they are tried in each round.
const GENERATORS: [Gen; 12] = [
    gen_dce,
    gen_drop_results,
    gen_retarget,
    gen_inline_branch,
    gen_new_constructs,
    gen_delete,
    gen_replace_var,
    gen_inline_scalar,
    gen_sexp,
    gen_atoms,
    gen_inputs,
    gen_params,
];

struct Reducer<'a> {
    fails: &'a mut dyn FnMut(&Case) -> bool,
    tries: usize,
    max_tries: usize,
    deadline: Option<std::time::Instant>,
    /// Hashes of candidates already rejected (ill-typed or not failing).
    seen: HashSet<u64>,
    cur: Case,
    cur_measure: Measure,
}

impl Reducer<'_> {
    fn exhausted(&self) -> bool {
        self.tries >= self.max_tries
            || self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
    }

    fn run(&mut self) {
        loop {
            let start = self.cur_measure;
            for g in GENERATORS {
                let mut cands = self.candidates(g);
                let mut i = 0;
                while i < cands.len() {
                    if self.exhausted() {
                        return;
                    }
                    let (m, c) = &cands[i];
                    if *m < self.cur_measure && self.attempt(c, *m) {
                        // The accepted candidate replaces the current case;
                        // the moves of this kind are regenerated and the
                        // scan goes on from the same position.
                        cands = self.candidates(g);
                    } else {
                        i += 1;
                    }
                }
            }
            if self.cur_measure == start {
                return;
            }
        }
    }

    /// The candidates of one generator that are smaller than the current
    /// case, smallest (largest reduction) first; ties keep generation order.
    fn candidates(&self, g: Gen) -> Vec<(Measure, Case)> {
        let mut v: Vec<(Measure, Case)> = g(&self.cur)
            .into_iter()
            .map(|c| (measure(&c), c))
            .filter(|(m, _)| *m < self.cur_measure)
            .collect();
        v.sort_by_key(|a| a.0);
        v
    }

    /// Tries one candidate; true when it was accepted.
    fn attempt(&mut self, c: &Case, m: Measure) -> bool {
        let h = case_hash(c);
        if !self.seen.insert(h) {
            return false;
        }
        if check_program(&c.program).is_err() {
            return false;
        }
        self.tries += 1;
        if (self.fails)(c) {
            self.cur = c.clone();
            self.cur_measure = m;
            true
        } else {
            false
        }
    }
}

fn case_hash(c: &Case) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    c.program.hash(&mut h);
    for v in &c.inputs {
        match v {
            Value::Scalar(k) => {
                0u8.hash(&mut h);
                k.hash(&mut h);
            }
            Value::Array(a) => {
                1u8.hash(&mut h);
                a.shape.hash(&mut h);
                a.data.prim().hash(&mut h);
                for w in a.data.words() {
                    w.hash(&mut h);
                }
            }
        }
    }
    h.finish()
}

// ---------------------------------------------------------------------------
// The order that reductions descend.

/// How big a case is; compared lexicographically, field by field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Measure {
    stms: usize,
    weight: u64,
    literals: u64,
    input_elems: u64,
    input_mag: u64,
}

fn measure(c: &Case) -> Measure {
    let mut lits = 0u64;
    let p = &c.program;
    let mut weight = 0u64;
    for q in &p.params {
        weight = weight.saturating_add(pat_weight(q, &mut lits));
    }
    weight = weight.saturating_add(body_weight(&p.body, &mut lits));
    let mut input_elems = 0u64;
    let mut input_mag = 0u64;
    for v in &c.inputs {
        match v {
            Value::Scalar(k) => input_mag = input_mag.saturating_add(magnitude(*k)),
            Value::Array(a) => {
                input_elems = input_elems.saturating_add(a.data.len() as u64);
                for k in a.data.iter() {
                    input_mag = input_mag.saturating_add(magnitude(k));
                }
            }
        }
    }
    Measure {
        stms: size(p),
        weight,
        literals: lits,
        input_elems,
        input_mag,
    }
}

fn atom_weight(a: &Atom, lits: &mut u64) -> u64 {
    match a {
        Atom::Var(_) => 3,
        Atom::Int(0, _) => 1,
        Atom::Int(k, _) => {
            *lits = lits.saturating_add(k.unsigned_abs());
            2
        }
        Atom::Const(c, _) => {
            *lits = lits.saturating_add(magnitude(*c));
            2
        }
    }
}

fn sexp_weight(e: &SExp, lits: &mut u64) -> u64 {
    match e {
        SExp::Atom(a) => atom_weight(a, lits),
        SExp::Bin(_, l, r, _) => 1u64
            .saturating_add(sexp_weight(l, lits))
            .saturating_add(sexp_weight(r, lits)),
        SExp::Un(_, x, _) => 1u64.saturating_add(sexp_weight(x, lits)),
    }
}

fn type_weight(t: &Type, lits: &mut u64) -> u64 {
    match t {
        Type::Prim(..) | Type::Mem(_) => 1,
        Type::Array(a, _) => {
            let mut w = 1u64;
            for s in &a.shape {
                w = w.saturating_add(atom_weight(s, lits));
            }
            if let Some(m) = &a.mem {
                w = w.saturating_add(3);
                match &m.lmad {
                    LmadSyn::RowMajor(sh, _) => {
                        for s in sh {
                            w = w.saturating_add(atom_weight(s, lits));
                        }
                    }
                    LmadSyn::Explicit { offset, dims, .. } => {
                        w = w.saturating_add(sexp_weight(offset, lits));
                        for (n, s) in dims {
                            w = w
                                .saturating_add(atom_weight(n, lits))
                                .saturating_add(sexp_weight(s, lits));
                        }
                    }
                }
            }
            w
        }
    }
}

fn pat_weight(p: &Pat, lits: &mut u64) -> u64 {
    3u64.saturating_add(type_weight(&p.ty, lits))
}

fn exp_weight(e: &Exp, lits: &mut u64) -> u64 {
    let mut w = 0u64;
    let mut add = |x: u64| w = w.saturating_add(x);
    match &e.kind {
        ExpKind::Loop(ps, init, form, b) => {
            add(5);
            for p in ps {
                add(pat_weight(p, lits));
            }
            for a in init {
                add(atom_weight(a, lits));
            }
            if let LoopForm::For(_, n) = form {
                add(atom_weight(n, lits));
            }
            add(body_weight(b, lits));
        }
        ExpKind::Update(_, is, v) => {
            add(5);
            for i in is {
                for a in i.atoms() {
                    add(atom_weight(a, lits));
                }
            }
            add(atom_weight(v, lits));
        }
        ExpKind::Concat(..) => add(5),
        ExpKind::Reduce(op, ne, _) | ExpKind::Scan(op, ne, _) => {
            add(5);
            add(atom_weight(ne, lits));
            if let RedOp::Lambda(l) = op {
                for p in &l.params {
                    add(pat_weight(p, lits));
                }
                add(body_weight(&l.body, lits));
            }
        }
        ExpKind::Replicate(n, v) => {
            add(1);
            add(atom_weight(n, lits));
            add(atom_weight(v, lits));
        }
        ExpKind::Scalar(se) => add(sexp_weight(se, lits)),
        ExpKind::Alloc(se, _) => add(1u64.saturating_add(sexp_weight(se, lits))),
        ExpKind::Index(_, idx) => {
            add(5);
            for a in idx {
                add(atom_weight(a, lits));
            }
        }
        ExpKind::Slice(_, sl) => {
            add(5);
            for (o, n) in sl {
                add(atom_weight(o, lits));
                add(atom_weight(n, lits));
            }
        }
        ExpKind::Transpose(_) | ExpKind::Copy(_) => add(5),
        ExpKind::Iota(n) => add(1u64.saturating_add(atom_weight(n, lits))),
        ExpKind::If(_, t, el) => {
            add(5);
            add(body_weight(t, lits));
            add(body_weight(el, lits));
        }
        ExpKind::Kernel(_, n, b) => {
            add(5);
            add(atom_weight(n, lits));
            add(body_weight(b, lits));
        }
    }
    w
}

fn body_weight(b: &Body, lits: &mut u64) -> u64 {
    let mut w = (b.result.len() as u64).saturating_mul(3);
    for s in &b.stms {
        w = w.saturating_add(1);
        for p in &s.pats {
            w = w.saturating_add(pat_weight(p, lits));
        }
        w = w.saturating_add(exp_weight(&s.exp, lits));
    }
    w
}

// ---------------------------------------------------------------------------
// Finding places in a program.

/// A body inside a program: from the program's body, the statement index
/// and which of its bodies (0: a kernel's or loop's body or the `then` branch, 1: the
/// `else` branch), level by level.
type Path = Vec<(usize, u8)>;

fn body_at<'a>(mut b: &'a Body, path: &[(usize, u8)]) -> Option<&'a Body> {
    for &(j, w) in path {
        b = match (&b.stms.get(j)?.exp.kind, w) {
            (ExpKind::Kernel(_, _, kb), 0) | (ExpKind::Loop(_, _, _, kb), 0) => kb,
            (ExpKind::If(_, t, _), 0) => t,
            (ExpKind::If(_, _, e), 1) => e,
            _ => return None,
        };
    }
    Some(b)
}

fn body_at_mut<'a>(mut b: &'a mut Body, path: &[(usize, u8)]) -> Option<&'a mut Body> {
    for &(j, w) in path {
        b = match (&mut b.stms.get_mut(j)?.exp.kind, w) {
            (ExpKind::Kernel(_, _, kb), 0) | (ExpKind::Loop(_, _, _, kb), 0) => kb,
            (ExpKind::If(_, t, _), 0) => t,
            (ExpKind::If(_, _, e), 1) => e,
            _ => return None,
        };
    }
    Some(b)
}

/// Every body of the program, outer ones first.
fn body_paths(b: &Body, path: &mut Path, out: &mut Vec<Path>) {
    out.push(path.clone());
    for (j, s) in b.stms.iter().enumerate() {
        let kids: Vec<(u8, &Body)> = match &s.exp.kind {
            ExpKind::Kernel(_, _, kb) | ExpKind::Loop(_, _, _, kb) => vec![(0, kb)],
            ExpKind::If(_, t, e) => vec![(0, t), (1, e)],
            _ => Vec::new(),
        };
        for (w, kb) in kids {
            path.push((j, w));
            body_paths(kb, path, out);
            path.pop();
        }
    }
}

/// Every statement of the program as (its body, its index), in reverse
/// program order: later statements (and inner ones) before the statements
/// they depend on.
fn stm_sites(p: &Program) -> Vec<(Path, usize)> {
    let mut paths = Vec::new();
    body_paths(&p.body, &mut Vec::new(), &mut paths);
    let mut sites = Vec::new();
    for path in paths {
        if let Some(b) = body_at(&p.body, &path) {
            for j in 0..b.stms.len() {
                sites.push((path.clone(), j));
            }
        }
    }
    sites.reverse();
    sites
}

/// The statement at a site.
fn stm_at<'a>(p: &'a Program, path: &[(usize, u8)], j: usize) -> Option<&'a Stm> {
    body_at(&p.body, path)?.stms.get(j)
}

/// A copy of the case with the body at `path` edited by `f`; `None` when
/// the body is missing or `f` declines.
fn edit_body(c: &Case, path: &[(usize, u8)], f: impl FnOnce(&mut Body) -> bool) -> Option<Case> {
    let mut n = c.clone();
    let b = body_at_mut(&mut n.program.body, path)?;
    if f(b) {
        Some(n)
    } else {
        None
    }
}

/// The names visible at the end of the body at `path`, in binding order,
/// with their types.
fn scope_at_end(p: &Program, path: &[(usize, u8)]) -> Vec<(Name, Type)> {
    scope_at(p, path, usize::MAX)
}

/// The names visible before statement `upto` of the body at `path` (all
/// of them at its end for `usize::MAX`), in binding order, with their
/// types.
fn scope_at(p: &Program, path: &[(usize, u8)], upto: usize) -> Vec<(Name, Type)> {
    let mut out: Vec<(Name, Type)> = p
        .params
        .iter()
        .map(|q| (q.name.name.clone(), q.ty.clone()))
        .collect();
    let mut b = &p.body;
    for &(j, w) in path {
        for s in b.stms.iter().take(j) {
            out.extend(s.pats.iter().map(|q| (q.name.name.clone(), q.ty.clone())));
        }
        let Some(s) = b.stms.get(j) else { return out };
        b = match (&s.exp.kind, w) {
            (ExpKind::Kernel(i, _, kb), 0) => {
                out.push((i.name.clone(), Type::int(Span::DUMMY)));
                kb
            }
            (ExpKind::Loop(ps, _, form, kb), 0) => {
                out.extend(ps.iter().map(|q| (q.name.name.clone(), q.ty.clone())));
                if let LoopForm::For(i, _) = form {
                    out.push((i.name.clone(), Type::int(Span::DUMMY)));
                }
                kb
            }
            (ExpKind::If(_, t, _), 0) => t,
            (ExpKind::If(_, _, e), 1) => e,
            _ => return out,
        };
    }
    for s in b.stms.iter().take(upto) {
        out.extend(s.pats.iter().map(|q| (q.name.name.clone(), q.ty.clone())));
    }
    out
}

/// What kind of value a type describes: a scalar of its type, `mem`, or
/// an array of its rank and element type.
fn kind_of(t: &Type) -> (u8, usize, Option<Prim>) {
    match t {
        Type::Prim(p, _) => (0, 0, Some(*p)),
        Type::Mem(_) => (1, 0, None),
        Type::Array(a, _) => (2, a.shape.len(), Some(a.elem)),
    }
}

/// The scalar type of a type, if it is one.
fn prim_of(t: &Type) -> Option<Prim> {
    match t {
        Type::Prim(p, _) => Some(*p),
        Type::Mem(_) | Type::Array(..) => None,
    }
}

/// The literal `c` as an atom.
fn const_atom(c: Const) -> Atom {
    Atom::lit(c, Span::DUMMY)
}

fn lit(k: i64) -> Atom {
    Atom::Int(k, Span::DUMMY)
}

fn ident(x: &Name) -> Ident {
    Ident {
        name: x.clone(),
        span: Span::DUMMY,
    }
}

/// Applies a substitution to the statements after `j` and to the result of
/// a body.
fn subst_rest(b: &mut Body, j: usize, s: &Subst) {
    for st in b.stms.iter_mut().skip(j) {
        *st = s.stm(st);
    }
    b.result = b.result.iter().map(|x| s.ident(x)).collect();
}

// ---------------------------------------------------------------------------
// Dead code.

/// Removes every statement none of whose names is used, repeatedly; true
/// when something was removed. Conservative where a name is bound in two
/// sibling scopes.
fn dce(p: &mut Program) -> bool {
    let mut any = false;
    loop {
        let mut counts: HashMap<Name, usize> = HashMap::new();
        program_names(p, &mut |x| *counts.entry(x.name.clone()).or_default() += 1);
        if !dce_body(&mut p.body, &counts) {
            return any;
        }
        any = true;
    }
}

fn dce_body(b: &mut Body, counts: &HashMap<Name, usize>) -> bool {
    let mut changed = false;
    for s in &mut b.stms {
        match &mut s.exp.kind {
            ExpKind::Kernel(_, _, kb) | ExpKind::Loop(_, _, _, kb) => {
                changed |= dce_body(kb, counts)
            }
            ExpKind::If(_, t, e) => {
                changed |= dce_body(t, counts);
                changed |= dce_body(e, counts);
            }
            _ => {}
        }
    }
    let before = b.stms.len();
    b.stms.retain(|s| !stm_dead(s, counts));
    changed || b.stms.len() != before
}

/// A statement is dead when its names occur nowhere but in its own pattern.
fn stm_dead(s: &Stm, counts: &HashMap<Name, usize>) -> bool {
    let mut local: HashMap<&Name, usize> = HashMap::new();
    for q in &s.pats {
        *local.entry(&q.name.name).or_default() += 1;
        type_names(&q.ty, &mut |x| *local.entry(&x.name).or_default() += 1);
    }
    s.pats
        .iter()
        .all(|q| counts.get(&q.name.name) == local.get(&q.name.name))
}

// ---------------------------------------------------------------------------
// The moves.

/// Removes all dead statements at once.
fn gen_dce(c: &Case) -> Vec<Case> {
    let mut n = c.clone();
    if dce(&mut n.program) {
        vec![n]
    } else {
        Vec::new()
    }
}

/// Removes one program result (with and without removing what became
/// dead); at least one stays.
fn gen_drop_results(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    let r = &c.program.body.result;
    if r.len() < 2 {
        return out;
    }
    for k in 0..r.len() {
        let mut n = c.clone();
        n.program.body.result.remove(k);
        let mut d = n.clone();
        out.push(n);
        if dce(&mut d.program) {
            out.push(d);
        }
    }
    out
}

/// A cheap expression producing a value of the pattern's type.
fn cheap_exp(s: &Stm) -> Option<ExpKind> {
    let [q] = s.pats.as_slice() else { return None };
    let e = match &q.ty {
        Type::Prim(t, _) => ExpKind::Scalar(SExp::Atom(const_atom(t.zero()))),
        Type::Mem(_) => ExpKind::Alloc(SExp::int(0), Prim::I64),
        Type::Array(a, _) => match a.shape.as_slice() {
            [n] if a.elem == Prim::I64 => ExpKind::Iota(n.clone()),
            [n] => ExpKind::Replicate(n.clone(), const_atom(a.elem.zero())),
            _ => return None,
        },
    };
    (e != s.exp.kind).then_some(e)
}

/// Deletes a statement, or replaces it by a cheap binding.
fn gen_delete(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for (path, j) in stm_sites(&c.program) {
        if let Some(n) = edit_body(c, &path, |b| {
            b.stms.remove(j);
            true
        }) {
            out.push(n);
        }
        if let Some(n) = eliminate(c, &path, j) {
            out.push(n);
        }
        let Some(s) = stm_at(&c.program, &path, j) else {
            continue;
        };
        if let Some(e) = cheap_exp(s) {
            if let Some(n) = edit_body(c, &path, |b| {
                b.stms[j].exp.kind = e;
                true
            }) {
                out.push(n);
            }
        }
    }
    out
}

/// Removes the statement at `j` of the body at `path`, which binds one
/// name x: each body in x's scope that returns x returns instead the nearest
/// other visible name of the same kind (the program's body: of any kind),
/// and x's uses as an `int` operand become `0`. `None` when that is not
/// possible; uses of x elsewhere are left for the type checker to reject.
fn eliminate(c: &Case, path: &[(usize, u8)], j: usize) -> Option<Case> {
    let s = stm_at(&c.program, path, j)?;
    let [q] = s.pats.as_slice() else { return None };
    let x = &q.name.name;
    let kind = kind_of(&q.ty);
    let mut paths = Vec::new();
    body_paths(&c.program.body, &mut Vec::new(), &mut paths);
    let mut n = c.clone();
    for p in paths {
        let in_scope = p.len() >= path.len()
            && p[..path.len()] == *path
            && p.get(path.len()).is_none_or(|&(k, _)| k > j);
        if !in_scope {
            continue;
        }
        let Some(b) = body_at(&c.program.body, &p) else {
            continue;
        };
        if !b.result.iter().any(|r| r.name == *x) {
            continue;
        }
        let scope = scope_at_end(&c.program, &p);
        let other = |same_kind: bool| {
            scope
                .iter()
                .rev()
                .find(|(y, t)| y != x && (!same_kind || kind_of(t) == kind))
                .map(|(y, _)| y.clone())
        };
        let y = other(true).or_else(|| if p.is_empty() { other(false) } else { None })?;
        let b = body_at_mut(&mut n.program.body, &p)?;
        for r in &mut b.result {
            if r.name == *x {
                *r = ident(&y);
            }
        }
    }
    let b = body_at_mut(&mut n.program.body, path)?;
    if let Some(t) = prim_of(&q.ty) {
        subst_rest(b, j + 1, &Subst::one(x, const_atom(t.zero())));
    }
    b.stms.remove(j);
    Some(n)
}

/// Replaces an `if` by one branch's statements; what follows uses that
/// branch's results for the pattern's names.
fn gen_inline_branch(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for (path, j) in stm_sites(&c.program) {
        let Some(s) = stm_at(&c.program, &path, j) else {
            continue;
        };
        let ExpKind::If(_, t, e) = &s.exp.kind else {
            continue;
        };
        for branch in [t, e] {
            if branch.result.len() != s.pats.len() {
                continue;
            }
            let sub = Subst(
                s.pats
                    .iter()
                    .zip(&branch.result)
                    .map(|(q, r)| (q.name.name.clone(), Atom::Var(r.clone())))
                    .collect(),
            );
            let stms = branch.stms.clone();
            if let Some(n) = edit_body(c, &path, |b| {
                subst_rest(b, j + 1, &sub);
                b.stms.splice(j..=j, stms);
                true
            }) {
                out.push(n);
            }
        }
    }
    out
}

/// The substitution of `vals` for the names of `pats`, and for each int
/// name a binding `let (q: int) = a`, for where a literal cannot replace
/// the name (a condition, a result). `None` when an array's value is not
/// a name.
fn bind_values(pats: &[Pat], vals: &[Atom]) -> Option<(Subst, Vec<Stm>)> {
    let mut binds = Vec::new();
    let mut sub = Subst::default();
    for (q, a) in pats.iter().zip(vals) {
        match (&q.ty, a) {
            (Type::Prim(t, _), _) => binds.push(scalar_binding(&q.name, *t, a.clone())),
            (_, Atom::Var(_)) => {}
            _ => return None,
        }
        sub.0.insert(q.name.name.clone(), a.clone());
    }
    Some((sub, binds))
}

/// `let (x: t) = a`.
fn scalar_binding(x: &Ident, t: Prim, a: Atom) -> Stm {
    Stm {
        pats: vec![Pat {
            name: x.clone(),
            ty: Type::Prim(t, Span::DUMMY),
            unique: false,
            span: Span::DUMMY,
        }],
        exp: Exp {
            kind: ExpKind::Scalar(SExp::Atom(a)),
            span: Span::DUMMY,
        },
        span: Span::DUMMY,
    }
}

/// Inserts at `j` those of the bindings whose names `b` still uses.
fn keep_needed(b: &mut Body, j: usize, binds: Vec<Stm>) {
    let mut used: HashSet<Name> = HashSet::new();
    body_names(b, &mut |x| {
        used.insert(x.name.clone());
    });
    let needed: Vec<Stm> = binds
        .into_iter()
        .filter(|s| used.contains(&s.pats[0].name.name))
        .collect();
    b.stms.splice(j..j, needed);
}

/// Moves on loops, in-place updates, `concat`, `replicate` and kernels
/// with several results:
///
/// - a `for` loop's bound to `0` or `1`;
/// - a loop to its initial values (the pattern bound to them);
/// - a loop to its body once (the parameters bound to the initial values,
///   a `for` index to `0`, the pattern to the body's results);
/// - `y = x with [...] = v` to `x` (y replaced by x);
/// - `c = concat x y` to `x` or `y` (its size name replaced by theirs);
/// - a kernel with several results to one without result `k` (when
///   nothing uses it).
fn gen_new_constructs(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for (path, j) in stm_sites(&c.program) {
        let Some(s) = stm_at(&c.program, &path, j) else {
            continue;
        };
        match &s.exp.kind {
            ExpKind::Loop(ps, init, form, lb) => {
                if let LoopForm::For(_, n) = form {
                    for v in [0, 1] {
                        if *n != lit(v) {
                            out.extend(edit_body(c, &path, |b| {
                                if let ExpKind::Loop(_, _, LoopForm::For(_, n), _) =
                                    &mut b.stms[j].exp.kind
                                {
                                    *n = lit(v);
                                }
                                true
                            }));
                        }
                    }
                }
                // To its initial values.
                if let Some((sub, binds)) = bind_values(&s.pats, init) {
                    out.extend(edit_body(c, &path, |b| {
                        subst_rest(b, j + 1, &sub);
                        b.stms.remove(j);
                        keep_needed(b, j, binds);
                        true
                    }));
                }
                // To its body, once.
                if let Some((mut sub, mut binds)) = bind_values(ps, init) {
                    if let LoopForm::For(i, _) = form {
                        sub.0.insert(i.name.clone(), lit(0));
                        binds.push(scalar_binding(i, Prim::I64, lit(0)));
                    }
                    let once = sub.body(lb);
                    let to_results = Subst(
                        s.pats
                            .iter()
                            .zip(&once.result)
                            .map(|(q, r)| (q.name.name.clone(), Atom::Var(r.clone())))
                            .collect(),
                    );
                    out.extend(edit_body(c, &path, |b| {
                        subst_rest(b, j + 1, &to_results);
                        b.stms.splice(j..=j, once.stms);
                        keep_needed(b, j, binds);
                        true
                    }));
                }
            }
            ExpKind::Update(x, _, _) => {
                let [q] = s.pats.as_slice() else { continue };
                out.extend(bind_away(
                    c,
                    &path,
                    j,
                    &q.name.name,
                    Atom::Var(ident(&x.name)),
                ));
            }
            ExpKind::Concat(x, y) => {
                let [q] = s.pats.as_slice() else { continue };
                let scope = scope_at(&c.program, &path, j);
                let outer = |t: &Type| t.as_array().and_then(|a| a.shape.first().cloned());
                for z in [x, y] {
                    let Some((_, zt)) = scope.iter().rev().find(|(n, _)| *n == z.name) else {
                        continue;
                    };
                    let mut sub = Subst::one(&q.name.name, Atom::Var(ident(&z.name)));
                    if let (Some(Atom::Var(m)), Some(n)) = (outer(&q.ty), outer(zt)) {
                        sub.0.insert(m.name.clone(), n);
                    }
                    out.extend(edit_body(c, &path, |b| {
                        subst_rest(b, j + 1, &sub);
                        b.stms.remove(j);
                        true
                    }));
                }
            }
            ExpKind::Reduce(op, ne, xs) | ExpKind::Scan(op, ne, xs) => {
                let scan = matches!(s.exp.kind, ExpKind::Scan(..));
                let [q] = s.pats.as_slice() else { continue };
                // A reduce to its neutral element; a scan to a copy of its
                // operand or to its neutral element replicated.
                let simpler = if scan {
                    let n = q.ty.as_array().and_then(|a| a.shape.first().cloned());
                    let mut v = vec![ExpKind::Copy(xs.clone())];
                    v.extend(n.map(|n| ExpKind::Replicate(n, ne.clone())));
                    v
                } else {
                    vec![ExpKind::Scalar(SExp::Atom(ne.clone()))]
                };
                for kind in simpler {
                    out.extend(edit_body(c, &path, |b| {
                        b.stms[j].exp.kind = kind;
                        true
                    }));
                }
                // A lambda to a builtin operator (the type checker keeps
                // those that fit the element type).
                if let RedOp::Lambda(_) = op {
                    for bop in RedOp::BUILTIN {
                        out.extend(edit_body(c, &path, |b| {
                            match &mut b.stms[j].exp.kind {
                                ExpKind::Reduce(op, ..) | ExpKind::Scan(op, ..) => {
                                    *op = RedOp::Bin(bop, Span::DUMMY);
                                }
                                _ => {}
                            }
                            true
                        }));
                    }
                }
            }
            ExpKind::Kernel(..) if s.pats.len() > 1 => {
                for k in 0..s.pats.len() {
                    out.extend(edit_body(c, &path, |b| {
                        let st = &mut b.stms[j];
                        st.pats.remove(k);
                        if let ExpKind::Kernel(_, _, kb) = &mut st.exp.kind {
                            kb.result.remove(k);
                        }
                        true
                    }));
                }
            }
            _ => {}
        }
    }
    out
}

/// Most names of one kind offered as a new result of a body.
const RETARGET_NEAR: usize = 8;
const RETARGET_FAR: usize = 4;

/// Makes a body return another visible name of the same kind (the
/// program's body: of any kind), then removes what became dead.
fn gen_retarget(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    let mut paths = Vec::new();
    body_paths(&c.program.body, &mut Vec::new(), &mut paths);
    for path in paths {
        let Some(b) = body_at(&c.program.body, &path) else {
            continue;
        };
        let scope = scope_at_end(&c.program, &path);
        for (k, r) in b.result.iter().enumerate() {
            let Some((_, rt)) = scope.iter().rev().find(|(x, _)| *x == r.name) else {
                continue;
            };
            // The program's results may be of any kind.
            let kind = kind_of(rt);
            let top = path.is_empty();
            let same: Vec<&Name> = scope
                .iter()
                .filter(|(x, t)| (top || kind_of(t) == kind) && *x != r.name)
                .map(|(x, _)| x)
                .collect();
            let mut names: Vec<&Name> = same.iter().rev().take(RETARGET_NEAR).copied().collect();
            for x in same.iter().take(RETARGET_FAR) {
                if !names.contains(x) {
                    names.push(x);
                }
            }
            for x in names {
                let Some(n) = edit_body(c, &path, |b| {
                    b.result[k] = ident(x);
                    true
                }) else {
                    continue;
                };
                // Only the statement that bound the old result, if dead now.
                if let Some(m) = remove_binding_if_dead(&n, &path, &r.name) {
                    out.push(m);
                }
                // Everything that became dead.
                let mut d = n;
                if dce(&mut d.program) {
                    out.push(d);
                }
            }
        }
    }
    out
}

/// Removes the statement of the body at `path` that binds `x`, when none of
/// its names is used any more.
fn remove_binding_if_dead(c: &Case, path: &[(usize, u8)], x: &Name) -> Option<Case> {
    let b = body_at(&c.program.body, path)?;
    let j = b
        .stms
        .iter()
        .position(|s| s.pats.iter().any(|q| q.name.name == *x))?;
    let mut counts: HashMap<Name, usize> = HashMap::new();
    program_names(&c.program, &mut |y| {
        *counts.entry(y.name.clone()).or_default() += 1
    });
    if !stm_dead(&b.stms[j], &counts) {
        return None;
    }
    edit_body(c, path, |b| {
        b.stms.remove(j);
        true
    })
}

/// Most names offered in place of one bound name.
const REPLACE_NEAR: usize = 6;

/// Removes a statement binding one name `y` and uses in its place another
/// name `x` of the same kind visible there (nearest first): a needless
/// `copy`, a slice of the whole array, a kernel that rebuilds an input
/// all go this way. The type checker rejects the candidates whose types
/// differ.
fn gen_replace_var(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for (path, j) in stm_sites(&c.program) {
        let Some(s) = stm_at(&c.program, &path, j) else {
            continue;
        };
        let [q] = s.pats.as_slice() else { continue };
        let kind = kind_of(&q.ty);
        let scope = scope_at(&c.program, &path, j);
        let others = scope
            .iter()
            .rev()
            .filter(|(x, t)| *x != q.name.name && kind_of(t) == kind)
            .take(REPLACE_NEAR);
        for (x, _) in others {
            out.extend(bind_away(c, &path, j, &q.name.name, Atom::Var(ident(x))));
        }
    }
    out
}

/// Removes statement `j` of the body at `path`, which binds `x`, and uses
/// `a` for `x` in what follows.
fn bind_away(c: &Case, path: &[(usize, u8)], j: usize, x: &Name, a: Atom) -> Option<Case> {
    let sub = Subst::one(x, a);
    edit_body(c, path, |b| {
        subst_rest(b, j + 1, &sub);
        b.stms.remove(j);
        true
    })
}

/// Inlines `let (x: int) = a` for an atom `a`.
fn gen_inline_scalar(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for (path, j) in stm_sites(&c.program) {
        let Some(s) = stm_at(&c.program, &path, j) else {
            continue;
        };
        let ([q], ExpKind::Scalar(SExp::Atom(a))) = (s.pats.as_slice(), &s.exp.kind) else {
            continue;
        };
        if !matches!(q.ty, Type::Prim(..)) {
            continue;
        }
        out.extend(bind_away(c, &path, j, &q.name.name, a.clone()));
    }
    out
}

/// Most variants of one scalar expression.
const MAX_SEXP_VARIANTS: usize = 64;

/// Every scalar expression obtained by replacing one part of `e` by `0`,
/// `1` (of that part's type, `ty`) or one of that part's operands (a
/// conversion by its operand); outer parts first.
fn sexp_variants(e: &SExp, ty: &dyn Fn(&SExp) -> Prim, out: &mut Vec<SExp>) {
    if out.len() >= MAX_SEXP_VARIANTS {
        return;
    }
    let t = ty(e);
    let mut here = vec![
        SExp::Atom(const_atom(t.zero())),
        SExp::Atom(const_atom(one(t))),
    ];
    match e {
        SExp::Atom(_) => {}
        SExp::Bin(_, l, r, _) => {
            here.push((**l).clone());
            here.push((**r).clone());
        }
        SExp::Un(_, x, _) => here.push((**x).clone()),
    }
    for v in here {
        if v != *e && !out.contains(&v) {
            out.push(v);
        }
    }
    match e {
        SExp::Atom(_) => {}
        SExp::Bin(op, l, r, sp) => {
            let mut ls = Vec::new();
            sexp_variants(l, ty, &mut ls);
            for lv in ls {
                out.push(SExp::Bin(*op, Box::new(lv), r.clone(), *sp));
            }
            let mut rs = Vec::new();
            sexp_variants(r, ty, &mut rs);
            for rv in rs {
                out.push(SExp::Bin(*op, l.clone(), Box::new(rv), *sp));
            }
        }
        SExp::Un(op, x, sp) => {
            let mut xs = Vec::new();
            sexp_variants(x, ty, &mut xs);
            for xv in xs {
                out.push(SExp::Un(*op, Box::new(xv), *sp));
            }
        }
    }
    out.truncate(MAX_SEXP_VARIANTS);
}

/// Simplifies a scalar expression (or an `alloc`'s size).
fn gen_sexp(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for (path, j) in stm_sites(&c.program) {
        let Some(s) = stm_at(&c.program, &path, j) else {
            continue;
        };
        let (se, alloc) = match &s.exp.kind {
            ExpKind::Scalar(se) => (se, None),
            ExpKind::Alloc(se, t) => (se, Some(*t)),
            _ => continue,
        };
        let env: HashMap<Name, Prim> = scope_at(&c.program, &path, j)
            .into_iter()
            .filter_map(|(x, t)| prim_of(&t).map(|p| (x, p)))
            .collect();
        let ty = |e: &SExp| {
            funmem_lang::check::sexp_type(e, &|x| {
                Ok(env.get(&x.name).copied().unwrap_or(Prim::I64))
            })
            .unwrap_or(Prim::I64)
        };
        let mut vs = Vec::new();
        sexp_variants(se, &ty, &mut vs);
        for v in vs {
            let kind = match alloc {
                Some(t) => ExpKind::Alloc(v, t),
                None => ExpKind::Scalar(v),
            };
            if let Some(n) = edit_body(c, &path, |b| {
                b.stms[j].exp.kind = kind;
                true
            }) {
                out.push(n);
            }
        }
    }
    out
}

/// Replaces `from` by `to` everywhere in a type.
fn replace_atom_in_type(t: &Type, from: &Atom, to: &Atom) -> Type {
    let at = |a: &Atom| if a == from { to.clone() } else { a.clone() };
    let Type::Array(a, sp) = t else {
        return t.clone();
    };
    Type::Array(
        ArrayType {
            shape: a.shape.iter().map(at).collect(),
            elem: a.elem,
            mem: a.mem.as_ref().map(|m| MemAnn {
                block: m.block.clone(),
                lmad: match &m.lmad {
                    LmadSyn::RowMajor(sh, s) => LmadSyn::RowMajor(sh.iter().map(at).collect(), *s),
                    LmadSyn::Explicit { offset, dims, span } => LmadSyn::Explicit {
                        offset: replace_atom_in_sexp(offset, from, to),
                        dims: dims
                            .iter()
                            .map(|(n, s)| (at(n), replace_atom_in_sexp(s, from, to)))
                            .collect(),
                        span: *span,
                    },
                },
            }),
        },
        *sp,
    )
}

fn replace_atom_in_sexp(e: &SExp, from: &Atom, to: &Atom) -> SExp {
    match e {
        SExp::Atom(a) if a == from => SExp::Atom(to.clone()),
        SExp::Atom(_) => e.clone(),
        SExp::Bin(op, l, r, sp) => SExp::Bin(
            *op,
            Box::new(replace_atom_in_sexp(l, from, to)),
            Box::new(replace_atom_in_sexp(r, from, to)),
            *sp,
        ),
        SExp::Un(op, x, sp) => SExp::Un(*op, Box::new(replace_atom_in_sexp(x, from, to)), *sp),
    }
}

/// 1 of type `t` (`true` for `bool`).
fn one(t: Prim) -> Const {
    match t {
        Prim::Bool => Const::Bool(true),
        Prim::I32 => Const::I32(1),
        Prim::I64 => Const::I64(1),
        Prim::F32 => Const::f32(1.0),
        Prim::F64 => Const::f64(1.0),
    }
}

/// How far a constant is from 0 (`false`, `0`, `0.0`), for the order
/// reductions descend: an integer's magnitude, a float's absolute value's
/// bits (so NaN and the infinities are far).
fn magnitude(c: Const) -> u64 {
    match c {
        Const::Bool(b) => u64::from(b),
        Const::I32(k) => u64::from(k.unsigned_abs()),
        Const::I64(k) => k.unsigned_abs(),
        Const::F32(b) => u64::from(b & 0x7fff_ffff),
        Const::F64(b) => b & 0x7fff_ffff_ffff_ffff,
    }
}

/// Constants nearer 0 than `c` of its type: 0, half of it, one step
/// toward 0 (integers), its integer part (floats).
fn toward_zero(c: Const) -> Vec<Const> {
    let mut out: Vec<Const> = Vec::new();
    let mut add = |d: Const| {
        if magnitude(d) < magnitude(c) && !out.contains(&d) {
            out.push(d);
        }
    };
    add(c.prim().zero());
    match c {
        Const::Bool(_) => {}
        Const::I32(k) => {
            add(Const::I32(k / 2));
            add(Const::I32(k - k.signum()));
        }
        Const::I64(k) => {
            add(Const::I64(k / 2));
            add(Const::I64(k - k.signum()));
        }
        Const::F32(b) => {
            let x = f32::from_bits(b);
            add(Const::f32(x.trunc()));
            add(Const::f32(x / 2.0));
        }
        Const::F64(b) => {
            let x = f64::from_bits(b);
            add(Const::f64(x.trunc()));
            add(Const::f64(x / 2.0));
        }
    }
    out
}

/// Small literals for index atoms.
const INDEX_LITERALS: [i64; 2] = [0, 1];
/// Small literals for sizes.
const SIZE_LITERALS: [i64; 3] = [0, 1, 2];

/// Replaces index atoms and slice offsets by small literals; shrinks kernel
/// bounds, `iota` lengths and slice sizes to small literals together with
/// the pattern's type.
fn gen_atoms(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for (path, j) in stm_sites(&c.program) {
        let Some(s) = stm_at(&c.program, &path, j) else {
            continue;
        };
        // Plain atom positions: (position, literal).
        let mut plain: Vec<(usize, i64)> = Vec::new();
        // Size positions, changed together with the pattern's type.
        let mut sizes: Vec<(usize, Atom, i64)> = Vec::new();
        match &s.exp.kind {
            ExpKind::Index(_, idx) => {
                for (k, a) in idx.iter().enumerate() {
                    for v in INDEX_LITERALS {
                        if *a != lit(v) {
                            plain.push((k, v));
                        }
                    }
                }
            }
            ExpKind::Slice(_, sl) => {
                for (k, (o, n)) in sl.iter().enumerate() {
                    for v in INDEX_LITERALS {
                        if *o != lit(v) {
                            plain.push((2 * k, v));
                        }
                    }
                    for v in SIZE_LITERALS {
                        if *n != lit(v) {
                            sizes.push((2 * k + 1, n.clone(), v));
                        }
                    }
                }
            }
            ExpKind::Kernel(_, n, _) | ExpKind::Iota(n) | ExpKind::Replicate(n, _) => {
                for v in SIZE_LITERALS {
                    if *n != lit(v) {
                        sizes.push((0, n.clone(), v));
                    }
                }
            }
            _ => continue,
        }
        let set = |kind: &mut ExpKind, pos: usize, v: i64| match kind {
            ExpKind::Index(_, idx) => {
                if let Some(a) = idx.get_mut(pos) {
                    *a = lit(v);
                }
            }
            ExpKind::Slice(_, sl) => {
                if let Some((o, n)) = sl.get_mut(pos / 2) {
                    *(if pos.is_multiple_of(2) { o } else { n }) = lit(v);
                }
            }
            ExpKind::Kernel(_, n, _) | ExpKind::Iota(n) | ExpKind::Replicate(n, _) => *n = lit(v),
            _ => {}
        };
        for (pos, v) in plain {
            if let Some(n) = edit_body(c, &path, |b| {
                set(&mut b.stms[j].exp.kind, pos, v);
                true
            }) {
                out.push(n);
            }
        }
        for (pos, from, v) in sizes {
            if let Some(n) = edit_body(c, &path, |b| {
                let st = &mut b.stms[j];
                set(&mut st.exp.kind, pos, v);
                for q in &mut st.pats {
                    q.ty = replace_atom_in_type(&q.ty, &from, &lit(v));
                }
                true
            }) {
                out.push(n);
            }
        }
    }
    out
}

/// The input index of parameter `k`, if it takes one (`mem` ones do not).
fn input_index(p: &Program, k: usize) -> Option<usize> {
    let q = p.params.get(k)?;
    if matches!(q.ty, Type::Mem(_)) {
        return None;
    }
    Some(
        p.params[..k]
            .iter()
            .filter(|q| !matches!(q.ty, Type::Mem(_)))
            .count(),
    )
}

/// Removes an unused parameter (and its input); turns an `int` parameter
/// into the literal of its input.
fn gen_params(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    let p = &c.program;
    let mut counts: HashMap<Name, usize> = HashMap::new();
    program_names(p, &mut |x| *counts.entry(x.name.clone()).or_default() += 1);
    for k in 0..p.params.len() {
        let q = &p.params[k];
        let ii = input_index(p, k);
        if ii.is_some_and(|i| i >= c.inputs.len()) {
            continue;
        }
        if counts.get(&q.name.name) == Some(&1) {
            let mut n = c.clone();
            n.program.params.remove(k);
            if let Some(i) = ii {
                n.inputs.remove(i);
            }
            out.push(n);
        } else if let (Type::Prim(t, _), Some(i)) = (&q.ty, ii) {
            let Some(Value::Scalar(v)) = c.inputs.get(i) else {
                continue;
            };
            if v.prim() != *t {
                continue;
            }
            let sub = Subst::one(&q.name.name, const_atom(*v));
            let mut n = c.clone();
            n.program.params.remove(k);
            n.inputs.remove(i);
            n.program.params = n.program.params.iter().map(|q| sub.pat(q)).collect();
            n.program.body = sub.body(&n.program.body);
            out.push(n);
        }
    }
    out
}

/// The part of `a` of the given shape (each dimension at most as long as
/// before) that starts at index `start`.
fn truncate(a: &ArrayValue, shape: &[usize], start: &[usize]) -> ArrayValue {
    let total = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    let Some(total) = total else {
        return a.clone();
    };
    if total > a.data.len() || shape.len() != a.shape.len() || start.len() != shape.len() {
        return a.clone();
    }
    let mut strides = vec![1usize; a.shape.len()];
    for d in (0..a.shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].saturating_mul(a.shape[d + 1]);
    }
    let p = a.data.prim();
    let mut data = Elems::with_capacity(p, total);
    for flat in 0..total {
        let mut rest = flat;
        let mut off = 0usize;
        for d in (0..shape.len()).rev() {
            let dim = shape[d].max(1);
            let i = (rest % dim).saturating_add(start[d]);
            rest /= dim;
            off = off.saturating_add(i.saturating_mul(strides.get(d).copied().unwrap_or(0)));
        }
        data.push(if off < a.data.len() {
            a.data.get(off)
        } else {
            p.zero()
        });
    }
    ArrayValue {
        shape: shape.to_vec(),
        data,
    }
}

/// Most element groups zeroed one at a time in one array.
const MAX_ZERO_CHUNKS: usize = 32;

/// Shrinks inputs: integers toward 0 (with the arrays they are sizes of),
/// array elements to 0.
fn gen_inputs(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    let p = &c.program;
    for k in 0..p.params.len() {
        let Some(i) = input_index(p, k) else { continue };
        match c.inputs.get(i) {
            Some(Value::Scalar(Const::I64(v))) => {
                let v = *v;
                let mut news: Vec<i64> = Vec::new();
                for w in [0, v / 2, v - v.signum()] {
                    if w != v && !news.contains(&w) {
                        news.push(w);
                    }
                }
                let name = &p.params[k].name.name;
                for w in news {
                    for from_end in [false, true] {
                        let mut n = c.clone();
                        n.inputs[i] = Value::Scalar(Const::I64(w));
                        let cut =
                            w >= 0 && shrink_arrays_sized_by(&mut n, name, w as u64, from_end);
                        if !from_end || cut {
                            out.push(n);
                        }
                    }
                }
            }
            Some(Value::Array(a)) => {
                let len = a.data.len();
                if len == 0 {
                    continue;
                }
                let mut chunk = len;
                loop {
                    let mut start = 0;
                    while start < len {
                        let end = start.saturating_add(chunk).min(len);
                        let zero = a.data.prim().zero();
                        if (start..end).any(|k| a.data.get(k) != zero) {
                            let mut b = a.clone();
                            let mut data = Elems::with_capacity(zero.prim(), len);
                            for (k, e) in a.data.iter().enumerate() {
                                data.push(if (start..end).contains(&k) { zero } else { e });
                            }
                            b.data = data;
                            let mut n = c.clone();
                            n.inputs[i] = Value::Array(b);
                            out.push(n);
                        }
                        start = end;
                    }
                    if chunk == 1 || len / chunk >= MAX_ZERO_CHUNKS {
                        break;
                    }
                    chunk = chunk.div_ceil(2);
                }
            }
            Some(Value::Scalar(v)) => {
                for w in toward_zero(*v) {
                    let mut n = c.clone();
                    n.inputs[i] = Value::Scalar(w);
                    out.push(n);
                }
            }
            None => {}
        }
    }
    out
}

/// Cuts every array input whose type has the size `n` to `w` along those
/// dimensions, keeping the first elements (or the last ones); true when an
/// array was cut.
fn shrink_arrays_sized_by(c: &mut Case, n: &Name, w: u64, from_end: bool) -> bool {
    let w = usize::try_from(w).unwrap_or(usize::MAX);
    let mut any = false;
    for k in 0..c.program.params.len() {
        let Some(i) = input_index(&c.program, k) else {
            continue;
        };
        let Type::Array(at, _) = &c.program.params[k].ty else {
            continue;
        };
        let Some(Value::Array(a)) = c.inputs.get(i) else {
            continue;
        };
        if at.shape.len() != a.shape.len() {
            continue;
        }
        let mut shape = a.shape.clone();
        let mut start = vec![0; shape.len()];
        let mut changed = false;
        for (d, s) in at.shape.iter().enumerate() {
            if s.var() == Some(n) && shape[d] > w {
                if from_end {
                    start[d] = shape[d] - w;
                }
                shape[d] = w;
                changed = true;
            }
        }
        if changed {
            let t = truncate(a, &shape, &start);
            c.inputs[i] = Value::Array(t);
            any = true;
        }
    }
    any
}
