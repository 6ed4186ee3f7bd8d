//! Memory block reuse: the passes `reuse`, `reuse-first-fit` and
//! `reuse-optimal` (Serup's thesis, ch. 5 "memory block reuse", ch. 6 and
//! §9.2; the blog post on reuse across `if`s, loops and kernels).
//!
//! An allocation whose block is never alive at the same time as an
//! earlier block's can use that block instead: the allocation goes, its
//! arrays keep their LMADs in the earlier block. The analyses each have a
//! module: [`crate::aliases`] (which blocks an `if`'s or a loop's block
//! may be), [`crate::liveness`] (first and last uses, with the `if`, loop
//! and kernel rules) and [`crate::interference`] (the graph, its
//! exceptions stated as obligations). This module decides which blocks
//! share and rewrites the program.
//!
//! **Who may share** (a block `m` joins a block `h` allocated earlier):
//!
//! - `m` and `h` do not interfere, nor does `m` with any block already
//!   sharing `h`;
//! - `h` is in scope where `m` is allocated, across branches and loops but
//!   not kernels (a kernel body's block is one per iteration), and not out
//!   of a loop whose body returns `m` (one block per iteration is then
//!   alive at once);
//! - `m` fits: the sizes are the same expression, also once the names'
//!   integer definitions are put in (with elements of the same size), or `h`'s allocation grows to the maximum of both (the max
//!   trick, thesis §5.7: every name of `m`'s size must be bound where `h`
//!   is allocated; `hoist-allocs` runs first and moves sizes up, the
//!   thesis's allocation-size hoisting), or `m`'s size in bytes is proved
//!   at most `h`'s (an `at-most` obligation; the only way into a unique
//!   parameter's block, whose size is the caller's). Blocks of different
//!   element types share in bytes: the grown allocation counts elements
//!   of the smaller type. A block that goes must not hide an error: its
//!   size is proved non-negative (an allocation of a negative size is
//!   stuck), unless it equals the kept block's, and so is the kept
//!   block's before the max trick grows it. The facts: definitions, array
//!   sizes, and the sizes of allocations made before (they succeeded).
//!
//! **Which blocks share** is a colouring of the interference graph under
//! these rules; the strategies differ in how they search:
//!
//! - `reuse-first-fit`, the thesis's linear scan (fig. 5.18): blocks in
//!   allocation order, each joins the first earlier block it may;
//! - `reuse`, size-aware colouring: greedy colourings in three orders
//!   (blocks from the largest down, then by where their lives start; by
//!   where their lives start, which colours straight-line code with the
//!   fewest blocks; the program's order), each block joining the group
//!   it makes grow least (a block that fits an existing group costs
//!   nothing); the least total size wins. On the interference of the
//!   thesis's fig. 9.6 it needs 2 blocks where the linear scan needs 3;
//! - `reuse-optimal`: an exact branch-and-bound search for the least total
//!   allocated size (then the fewest blocks), seeded with the colouring,
//!   within a budget of [`OPTIMAL_BUDGET`] search steps; it says whether
//!   it proved its result optimal.
//!
//! Sizes are compared at a valuation: each name's integer definition is
//! followed, and a name with none (a parameter, a value read from an
//! array) counts as [`DEFAULT_SIZE`]. The decisions are the same for
//! every valuation where the names' order of magnitude is the same.
//!
//! **Scopes.** Blocks allocated in one kernel body share with each other
//! only (the kernel-level reuse that Futhark ships, done before memory
//! expansion so that expansion hoists one block where there were
//! several); program-level blocks share across branches and loops. The
//! GPU pipeline runs `simplify, coalesce, reuse, expand-gpu`: coalescing
//! first (as Futhark runs short-circuiting before block merging), since
//! it removes copies and blocks and sharing a block first could only
//! take away a coalescing's destination; expansion last, since it hoists
//! a kernel's blocks into one block per kernel and reuse inside the
//! kernel body must happen before that, while each iteration's blocks
//! are still its own.

use crate::aliases::MemAliases;
use crate::interference::{Interference, Provers};
use crate::liveness::{Liveness, RootKind, Via};
use crate::names::Names;
use crate::obligation::{Claim, Fact, Obligation, Outcome, Prover, Verdict};
use crate::pass::{Counts, PassOutput};
use funmem_lang::ast::*;
use funmem_lang::diag::Diagnostic;
use funmem_lang::prim::Prim;
use funmem_lang::print::sexp_string;
use funmem_lang::subst::Subst;
use funmem_lang::Name;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Allocations in the program (program level and in kernels).
pub const BLOCKS: &str = "blocks";
/// Allocations removed: their arrays now live in an earlier block.
pub const REUSED: &str = "reused";
/// Allocations grown by the max trick.
pub const MAXED: &str = "max trick";
/// `reuse-optimal` proved its result optimal (1) or ran out of budget (0).
pub const OPTIMAL: &str = "proved optimal";

/// The size a name without a definition counts as when sizes are compared.
pub const DEFAULT_SIZE: i64 = 1000;
/// The search steps `reuse-optimal` may take.
pub const OPTIMAL_BUDGET: u64 = 2_000_000;

/// How blocks are chosen to share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// The thesis's linear scan.
    FirstFit,
    /// Size-aware colouring.
    Colour,
    /// Exact search.
    Optimal,
}

/// The pass `reuse` (colouring).
pub fn reuse_pass(p: &Program, prover: &dyn Prover) -> Result<PassOutput, Diagnostic> {
    run(p, prover, Strategy::Colour)
}

/// The pass `reuse-first-fit`.
pub fn reuse_first_fit_pass(p: &Program, prover: &dyn Prover) -> Result<PassOutput, Diagnostic> {
    run(p, prover, Strategy::FirstFit)
}

/// The pass `reuse-optimal`.
pub fn reuse_optimal_pass(p: &Program, prover: &dyn Prover) -> Result<PassOutput, Diagnostic> {
    run(p, prover, Strategy::Optimal)
}

/// How a block fits the block it joins.
#[derive(Clone, Debug)]
enum Fit {
    /// The same size.
    Same,
    /// The kept block grows to the maximum.
    Max,
    /// Proved to fit.
    Proved,
}

struct Reuser<'a> {
    lv: Liveness,
    ig: Interference,
    prover: &'a dyn Prover,
    obligations: Vec<(Obligation, Verdict)>,
    legal: HashMap<(usize, usize), Result<Fit, String>>,
    /// Per block: its size proved not negative, or why not.
    sizes_ok: HashMap<usize, Result<(), String>>,
    /// Blocks a loop body returns.
    carried: HashSet<usize>,
    /// Names used as sizes of arrays, and the first point where one is.
    dims: HashMap<Name, usize>,
    bytes: Vec<i64>,
    /// Per block: its place among the allocations as the program states
    /// them (before hoisting).
    stated: Vec<usize>,
}

/// Runs the pass with a strategy.
pub fn run(p: &Program, prover: &dyn Prover, strategy: Strategy) -> Result<PassOutput, Diagnostic> {
    // Names distinct first, so that the order the program states its
    // allocations in (the linear scan's order) survives hoisting.
    let named = distinct(p);
    let mut stated: Vec<Name> = Vec::new();
    named.body.for_each_pat(&mut |q| {
        if matches!(q.ty, Type::Mem(_)) {
            stated.push(q.name.name.clone());
        }
    });
    let q = crate::hoist::hoist_pass(&named, prover)?.program;
    let aliases = MemAliases::of(&q);
    let lv = Liveness::of(&q, &aliases);
    let mut names = Names::of_program(&q);
    let mut obligations = Vec::new();
    let ig = Interference::of(
        &lv,
        &aliases,
        &mut Provers {
            prover,
            names: &mut names,
            obligations: &mut obligations,
        },
    );
    let mut explain: Vec<String> = Vec::new();
    explain.extend(aliases.lines());
    explain.extend(lv.lines());
    explain.extend(ig.lines(&lv));
    let mut r = Reuser {
        carried: carried(&q, &lv, &aliases),
        dims: dims(&q, &lv),
        bytes: Vec::new(),
        stated: Vec::new(),
        lv,
        ig,
        prover,
        obligations,
        legal: HashMap::default(),
        sizes_ok: HashMap::default(),
    };
    r.bytes = (0..r.lv.roots.len()).map(|k| r.cost_of(k)).collect();
    r.stated =
        r.lv.roots
            .iter()
            .map(|x| {
                stated
                    .iter()
                    .position(|n| *n == x.name.name)
                    .unwrap_or(usize::MAX)
            })
            .collect();
    let (classes, optimal) = match strategy {
        Strategy::FirstFit => (r.first_fit(), None),
        Strategy::Colour => (r.colour(), None),
        Strategy::Optimal => {
            let seed = r.colour();
            let (c, proved) = r.optimal(seed);
            (c, Some(proved))
        }
    };
    let mut counts = Counts::default();
    let allocs = r.lv.roots.iter().filter(|x| x.is_alloc()).count() as u64;
    counts.add(BLOCKS, allocs);
    counts.add(REUSED, 0);
    counts.add(MAXED, 0);
    if let Some(proved) = optimal {
        counts.add(OPTIMAL, proved as u64);
        explain.push(format!(
            "reuse: total allocated size {} bytes at the default valuation, {}",
            r.total(&classes),
            if proved {
                "proved least".to_string()
            } else {
                format!("the least found in {OPTIMAL_BUDGET} search steps (not proved least)")
            }
        ));
    }
    let out = r.rewrite(&q, &classes, &mut counts, &mut explain);
    Ok(PassOutput {
        program: out,
        obligations: r.obligations,
        counts,
        explain,
    })
}

/// The blocks that a loop body returns (carried to the next iteration),
/// allocated in that body.
fn carried(p: &Program, lv: &Liveness, aliases: &MemAliases) -> HashSet<usize> {
    fn walk(b: &Body, out: &mut Vec<Name>) {
        for s in &b.stms {
            match &s.exp.kind {
                ExpKind::If(_, t, e) => {
                    walk(t, out);
                    walk(e, out);
                }
                ExpKind::Loop(ps, _, _, lb) => {
                    for (q, r) in ps.iter().zip(&lb.result) {
                        if matches!(q.ty, Type::Mem(_)) {
                            out.push(r.name.clone());
                        }
                    }
                    walk(lb, out);
                }
                ExpKind::Kernel(_, _, kb) => walk(kb, out),
                _ => {}
            }
        }
    }
    let mut names = Vec::new();
    walk(&p.body, &mut names);
    names
        .iter()
        .flat_map(|m| aliases.roots(m).iter())
        .filter_map(|r| lv.index.get(r).copied())
        .collect()
}

/// The names used as array sizes, with the first point an array of that
/// size is bound at.
fn dims(p: &Program, lv: &Liveness) -> HashMap<Name, usize> {
    let mut out: HashMap<Name, usize> = HashMap::default();
    let mut note = |pat: &Pat| {
        if let Some(a) = pat.ty.as_array() {
            if let Some(&(_, at)) = lv.bound.get(&pat.name.name) {
                for d in &a.shape {
                    if let Atom::Var(x) = d {
                        let e = out.entry(x.name.clone()).or_insert(at);
                        *e = (*e).min(at);
                    }
                }
            }
        }
    };
    p.params.iter().for_each(&mut note);
    p.body.for_each_pat(&mut note);
    out
}

/// `p` with every binder distinct: a name bound again in a sibling scope
/// is renamed (the analyses key blocks and arrays by name).
pub fn distinct(p: &Program) -> Program {
    let mut names = Names::of_program(p);
    let mut seen: HashSet<Name> = p.params.iter().map(|q| q.name.name.clone()).collect();
    let mut body = p.body.clone();
    distinct_body(&mut body, &mut seen, &mut names);
    Program { body, ..p.clone() }
}

fn rename(x: &mut Ident, seen: &mut HashSet<Name>, names: &mut Names, sub: &mut Subst) {
    if !seen.insert(x.name.clone()) {
        let mut y = names.fresh(x.name.as_str());
        y.span = x.span;
        seen.insert(y.name.clone());
        sub.0.insert(x.name.clone(), Atom::Var(y.clone()));
        *x = y;
    }
}

fn distinct_body(b: &mut Body, seen: &mut HashSet<Name>, names: &mut Names) {
    for k in 0..b.stms.len() {
        match &mut b.stms[k].exp.kind {
            ExpKind::If(_, t, e) => {
                distinct_body(t, seen, names);
                distinct_body(e, seen, names);
            }
            ExpKind::Loop(ps, _, form, lb) => {
                let mut sub = Subst::default();
                for q in ps.iter_mut() {
                    rename(&mut q.name, seen, names, &mut sub);
                }
                if let LoopForm::For(i, _) = form {
                    rename(i, seen, names, &mut sub);
                }
                if !sub.is_empty() {
                    for q in ps.iter_mut() {
                        q.ty = sub.ty(&q.ty);
                    }
                    if let LoopForm::While(c) = form {
                        *c = sub.ident(c);
                    }
                    *lb = sub.body(lb);
                }
                distinct_body(lb, seen, names);
            }
            ExpKind::Kernel(i, _, kb) => {
                let mut sub = Subst::default();
                rename(i, seen, names, &mut sub);
                if !sub.is_empty() {
                    *kb = sub.body(kb);
                }
                distinct_body(kb, seen, names);
            }
            _ => {}
        }
        let mut sub = Subst::default();
        for q in b.stms[k].pats.iter_mut() {
            rename(&mut q.name, seen, names, &mut sub);
        }
        if !sub.is_empty() {
            for q in b.stms[k].pats.iter_mut() {
                q.ty = sub.ty(&q.ty);
            }
            for s in b.stms[k + 1..].iter_mut() {
                *s = sub.stm(s);
            }
            b.result = b.result.iter().map(|r| sub.ident(r)).collect();
        }
    }
}

/// Whether the planted fault that forgets carried blocks is on.
fn no_carried_rule() -> bool {
    #[cfg(feature = "planted-faults")]
    if crate::fault::active(crate::fault::Fault::ReuseNoCarried) {
        return true;
    }
    false
}

/// `se` at the default valuation (definitions followed).
fn value(se: &SExp, defs: &HashMap<Name, SExp>, depth: usize) -> i64 {
    match se {
        SExp::Atom(Atom::Int(k, _)) => *k,
        SExp::Atom(Atom::Var(x)) => match defs.get(&x.name) {
            Some(d) if depth < 32 => value(d, defs, depth + 1),
            _ => DEFAULT_SIZE,
        },
        SExp::Atom(Atom::Const(..)) => DEFAULT_SIZE,
        SExp::Bin(op, a, b, _) => {
            let (x, y) = (value(a, defs, depth), value(b, defs, depth));
            match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::Div => x.checked_div(y).unwrap_or(0),
                BinOp::Rem => x.checked_rem(y).unwrap_or(0),
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                _ => DEFAULT_SIZE,
            }
        }
        SExp::Un(..) => DEFAULT_SIZE,
    }
}

fn times(se: &SExp, k: u64) -> SExp {
    if k == 1 {
        se.clone()
    } else {
        SExp::bin(BinOp::Mul, se.clone(), SExp::int(k as i64))
    }
}

impl Reuser<'_> {
    /// A block's size in bytes at the default valuation (0 for a
    /// parameter's: the program does not allocate it).
    fn cost_of(&self, k: usize) -> i64 {
        let r = &self.lv.roots[k];
        match &r.kind {
            RootKind::Alloc(se) => value(se, &self.lv.defs, 0)
                .max(0)
                .saturating_mul(r.elem.size() as i64),
            RootKind::Param { .. } => 0,
        }
    }

    /// Whether block `k` may keep others (an allocation, or a unique
    /// parameter's block of known size).
    fn may_keep(&self, k: usize) -> bool {
        match &self.lv.roots[k].kind {
            RootKind::Alloc(_) => true,
            RootKind::Param { unique, cap } => *unique && cap.is_some(),
        }
    }

    /// The facts about the names of `exps` known at point `at`.
    fn facts(&self, exps: &[&SExp], at: usize) -> Vec<Fact> {
        crate::access::facts_about(exps, &self.lv.defs, |x, _, out| {
            let mut follow = Vec::new();
            if let Some(&p) = self.dims.get(x) {
                if p <= at && self.lv.compatible(p, at) {
                    out.push(Fact::new(
                        SExp::bin(BinOp::Ge, SExp::var(x), SExp::int(0)),
                        "array size",
                    ));
                }
            }
            // An allocation made before this point, on a run through it,
            // did not get stuck: its size is not negative.
            for r in &self.lv.roots {
                let RootKind::Alloc(size) = &r.kind else {
                    continue;
                };
                if r.point >= at || !self.lv.compatible(r.point, at) || !size.mentions(x.as_str()) {
                    continue;
                }
                let fact = SExp::bin(BinOp::Ge, size.clone(), SExp::int(0));
                if !out.iter().any(|f| f.exp == fact) {
                    out.push(Fact::new(fact, "allocated before"));
                    follow.push(size.clone());
                }
            }
            follow
        })
    }

    fn prove(
        &mut self,
        name: String,
        claim: Claim,
        at: usize,
        span: funmem_lang::Span,
    ) -> Result<(), String> {
        let exps: Vec<&SExp> = match &claim {
            Claim::AtMost(a, b) => vec![a, b],
            _ => Vec::new(),
        };
        let facts = self.facts(&exps, at);
        let o = Obligation::new("reuse", name, claim, facts, span);
        let v = self.prover.prove(&o);
        let r = match &v.outcome {
            Outcome::Proved => Ok(()),
            other => Err(format!(
                "obligation `{}` {} ({})",
                crate::coalesce::claim_string(&o.claim),
                other.word(),
                v.prover
            )),
        };
        self.obligations.push((o, v));
        r
    }

    /// Whether body `inner` reaches body `outer` across branches and loops
    /// only (not kernels), and not out of a loop that carries block `m`.
    fn reaches(&self, m: usize, inner: usize, outer: usize) -> Result<(), String> {
        let mut b = inner;
        while b != outer {
            let info = &self.lv.bodies[b];
            match info.via {
                Via::Branch => {}
                Via::Loop if !self.carried.contains(&m) || no_carried_rule() => {}
                Via::Loop => return Err("it is carried around a loop the other is outside of (one block per iteration is alive)".into()),
                Via::Kernel => return Err("it is allocated in a kernel the other is outside of (one block per iteration)".into()),
                Via::Top => return Err("the other is not in scope where it is allocated".into()),
            }
            match info.parent {
                Some(p) => b = p,
                None => return Err("the other is not in scope where it is allocated".into()),
            }
        }
        Ok(())
    }

    /// Whether name `x` is bound before point `at`, in body `body` or one
    /// enclosing it.
    fn in_scope(&self, x: &Name, body: usize, at: usize) -> bool {
        self.lv
            .bound
            .get(x)
            .is_some_and(|&(b, p)| p < at && self.lv.within(body, b))
    }

    /// `se` with the integer definitions of its names put in (to compare
    /// two sizes that are the same value under different names).
    fn inline(&self, se: &SExp, depth: usize) -> SExp {
        if depth > 16 {
            return se.clone();
        }
        let r = se.try_replace_vars(&mut |x| {
            Ok::<_, std::convert::Infallible>(
                self.lv.defs.get(&x.name).map(|d| self.inline(d, depth + 1)),
            )
        });
        match r {
            Ok(e) => e,
            Err(never) => match never {},
        }
    }

    /// Block `k`'s size is proved not negative (once per block: the facts
    /// are those of its allocation's point).
    fn not_negative(&mut self, k: usize) -> Result<(), String> {
        if let Some(r) = self.sizes_ok.get(&k) {
            return r.clone();
        }
        let r = self.lv.roots[k].clone();
        let res = match &r.kind {
            RootKind::Alloc(se) => self.prove(
                format!(
                    "`{}`: its size is not negative (else its allocation is stuck)",
                    r.name.name
                ),
                Claim::AtMost(SExp::int(0), se.clone()),
                r.point,
                r.name.span,
            ),
            RootKind::Param { .. } => Ok(()),
        };
        self.sizes_ok.insert(k, res.clone());
        res
    }

    /// Whether block `m` may live in block `h`, and how it fits.
    fn legal(&mut self, m: usize, h: usize) -> Result<Fit, String> {
        if let Some(r) = self.legal.get(&(m, h)) {
            return r.clone();
        }
        let r = self.decide(m, h);
        self.legal.insert((m, h), r.clone());
        r
    }

    fn decide(&mut self, m: usize, h: usize) -> Result<Fit, String> {
        let (rm, rh) = (self.lv.roots[m].clone(), self.lv.roots[h].clone());
        let RootKind::Alloc(sm) = &rm.kind else {
            return Err("a parameter's block".into());
        };
        if !self.may_keep(h) || rh.point >= rm.point {
            return Err("not allocated before it".into());
        }
        self.reaches(m, rm.body, rh.body)?;
        let (em, eh) = (rm.elem.size(), rh.elem.size());
        let bytes_m = times(sm, em);
        #[cfg(feature = "planted-faults")]
        if crate::fault::active(crate::fault::Fault::ReuseNoSizeCheck) {
            return Ok(Fit::Same);
        }
        let what = |s: &str| format!("`{}` in `{}`: {s}", rm.name.name, rh.name.name);
        let nonneg = |me: &mut Self| me.not_negative(m);
        match &rh.kind {
            RootKind::Alloc(sh) => {
                if em == eh && (sh == sm || self.inline(sh, 0) == self.inline(sm, 0)) {
                    return Ok(Fit::Same);
                }
                let mut vars: Vec<Name> = Vec::new();
                sm.for_each_var(&mut |x| vars.push(x.name.clone()));
                if vars.iter().all(|x| self.in_scope(x, rh.body, rh.point)) {
                    nonneg(self)?;
                    // Growing the kept block must not hide its own error.
                    self.not_negative(h)?;
                    return Ok(Fit::Max);
                }
                nonneg(self)?;
                self.prove(
                    what("fits"),
                    Claim::AtMost(bytes_m, times(sh, eh)),
                    rm.point,
                    rm.name.span,
                )
                .map_err(|e| {
                    format!(
                        "its size is not in scope at `{}`'s allocation, and {e}",
                        rh.name.name
                    )
                })?;
                Ok(Fit::Proved)
            }
            RootKind::Param { cap: Some(cap), .. } => {
                nonneg(self)?;
                self.prove(
                    what("fits the parameter's block"),
                    Claim::AtMost(bytes_m, times(cap, eh)),
                    rm.point,
                    rm.name.span,
                )?;
                Ok(Fit::Proved)
            }
            RootKind::Param { .. } => Err("a parameter's block of unknown size".into()),
        }
    }

    /// The host of `class` plus `k` (the earliest), when `k` may join.
    fn join(&mut self, class: &[usize], k: usize) -> Result<usize, String> {
        for &x in class {
            if self.ig.interferes(x, k) {
                return Err(format!("interferes with `{}`", self.lv.roots[x].name.name));
            }
        }
        let host = class
            .iter()
            .copied()
            .chain([k])
            .min_by_key(|&x| self.lv.roots[x].point)
            .unwrap_or(k);
        for &x in class.iter().chain([&k]) {
            if x != host {
                self.legal(x, host).map_err(|e| {
                    format!(
                        "`{}` in `{}`: {e}",
                        self.lv.roots[x].name.name, self.lv.roots[host].name.name
                    )
                })?;
            }
        }
        Ok(host)
    }

    fn class_cost(&self, class: &[usize]) -> i64 {
        if class.iter().any(|&x| !self.lv.roots[x].is_alloc()) {
            return 0;
        }
        class.iter().map(|&x| self.bytes[x]).max().unwrap_or(0)
    }

    fn total(&self, classes: &[Vec<usize>]) -> i64 {
        classes
            .iter()
            .map(|c| self.class_cost(c))
            .fold(0i64, |a, b| a.saturating_add(b))
    }

    /// The unique parameters' blocks, each its own class.
    fn seeds(&self) -> Vec<Vec<usize>> {
        (0..self.lv.roots.len())
            .filter(|&k| !self.lv.roots[k].is_alloc() && self.may_keep(k))
            .map(|k| vec![k])
            .collect()
    }

    fn allocs(&self) -> Vec<usize> {
        (0..self.lv.roots.len())
            .filter(|&k| self.lv.roots[k].is_alloc())
            .collect()
    }

    /// The thesis's linear scan, in the order the program states its
    /// allocations.
    fn first_fit(&mut self) -> Vec<Vec<usize>> {
        let mut classes = self.seeds();
        let mut order = self.allocs();
        order.sort_by_key(|&k| (self.stated[k], self.lv.roots[k].point));
        for k in order {
            let fits = classes.iter().position(|c| self.join(c, k).is_ok());
            match fits {
                Some(c) => classes[c].push(k),
                None => classes.push(vec![k]),
            }
        }
        classes
    }

    /// Size-aware colouring: greedy colourings in three orders (largest
    /// first, then by where lives start; by where lives start; as the
    /// program states its allocations), each block into the group it
    /// makes grow least; the one of least total size (then fewest groups)
    /// is kept.
    fn colour(&mut self) -> Vec<Vec<usize>> {
        let start = |me: &Self, k: usize| {
            me.lv.touches[k]
                .first()
                .copied()
                .unwrap_or(me.lv.roots[k].point)
        };
        let mut orders: Vec<Vec<usize>> = Vec::new();
        let mut by_size = self.allocs();
        by_size.sort_by_key(|&k| {
            (
                std::cmp::Reverse(self.bytes[k]),
                start(self, k),
                self.lv.roots[k].point,
            )
        });
        orders.push(by_size);
        let mut by_start = self.allocs();
        by_start.sort_by_key(|&k| (start(self, k), self.lv.roots[k].point));
        orders.push(by_start);
        let mut stated = self.allocs();
        stated.sort_by_key(|&k| (self.stated[k], self.lv.roots[k].point));
        orders.push(stated);
        let mut best: Option<(i64, usize, Vec<Vec<usize>>)> = None;
        for order in orders {
            let classes = self.greedy(&order);
            let key = (self.total(&classes), classes.len());
            if best.as_ref().is_none_or(|(t, n, _)| key < (*t, *n)) {
                best = Some((key.0, key.1, classes));
            }
        }
        best.map(|b| b.2).unwrap_or_default()
    }

    /// One greedy colouring: each block, in `order`, into the group it
    /// makes grow least (a new group when none takes it).
    fn greedy(&mut self, order: &[usize]) -> Vec<Vec<usize>> {
        let mut classes = self.seeds();
        for &k in order {
            let mut best: Option<(i64, usize)> = None;
            for (c, class) in classes.iter().enumerate() {
                if self.join(class, k).is_err() {
                    continue;
                }
                let before = self.class_cost(class);
                let mut with = class.clone();
                with.push(k);
                let grow = self.class_cost(&with) - before;
                if best.is_none_or(|(g, _)| grow < g) {
                    best = Some((grow, c));
                }
            }
            match best {
                Some((_, c)) => classes[c].push(k),
                None => classes.push(vec![k]),
            }
        }
        classes
    }

    /// The exact search: blocks in allocation order, each into an earlier
    /// group or a new one; bound: the total so far.
    fn optimal(&mut self, seed: Vec<Vec<usize>>) -> (Vec<Vec<usize>>, bool) {
        let order = self.allocs();
        // Legality of every pair, up front (the search then only looks).
        for (a, &x) in order.iter().enumerate() {
            for &y in &order[..a] {
                if !self.ig.interferes(x, y) {
                    let _ = self.legal(x, y);
                }
            }
            for s in self.seeds() {
                if !self.ig.interferes(x, s[0]) {
                    let _ = self.legal(x, s[0]);
                }
            }
        }
        let mut best = (self.total(&seed), seed.len(), seed);
        let mut steps = 0u64;
        let mut classes = self.seeds();
        let complete = self.search(&order, 0, &mut classes, 0, &mut best, &mut steps);
        (best.2, complete)
    }

    #[allow(clippy::type_complexity)]
    fn search(
        &self,
        order: &[usize],
        at: usize,
        classes: &mut Vec<Vec<usize>>,
        cost: i64,
        best: &mut (i64, usize, Vec<Vec<usize>>),
        steps: &mut u64,
    ) -> bool {
        *steps += 1;
        if *steps > OPTIMAL_BUDGET {
            return false;
        }
        if cost > best.0 || (cost == best.0 && classes.len() >= best.1 && at < order.len()) {
            return true;
        }
        let Some(&k) = order.get(at) else {
            if (cost, classes.len()) < (best.0, best.1) {
                *best = (cost, classes.len(), classes.clone());
            }
            return true;
        };
        for c in 0..classes.len() {
            let host = classes[c][0];
            let ok = classes[c].iter().all(|&x| !self.ig.interferes(x, k))
                && matches!(self.legal.get(&(k, host)), Some(Ok(_)));
            if !ok {
                continue;
            }
            let before = self.class_cost(&classes[c]);
            classes[c].push(k);
            let after = self.class_cost(&classes[c]);
            let done = self.search(order, at + 1, classes, cost + after - before, best, steps);
            classes[c].pop();
            if !done {
                return false;
            }
        }
        classes.push(vec![k]);
        let done = self.search(order, at + 1, classes, cost + self.bytes[k], best, steps);
        classes.pop();
        done
    }

    /// Rewrites the program: each group's blocks become its first one.
    fn rewrite(
        &mut self,
        p: &Program,
        classes: &[Vec<usize>],
        counts: &mut Counts,
        explain: &mut Vec<String>,
    ) -> Program {
        let mut sub = Subst::default();
        let mut gone: HashSet<Name> = HashSet::default();
        let mut resize: HashMap<Name, (SExp, Prim)> = HashMap::default();
        let name = |lv: &Liveness, k: usize| lv.roots[k].name.name.clone();
        for class in classes {
            let Some(&host) = class.iter().min_by_key(|&&x| self.lv.roots[x].point) else {
                continue;
            };
            let hname = name(&self.lv, host);
            let mut maxed: Vec<usize> = Vec::new();
            for &m in class {
                if m == host {
                    continue;
                }
                let fit = self.legal(m, host).unwrap_or(Fit::Same);
                let how = match fit {
                    Fit::Same => "the same size".to_string(),
                    Fit::Max => {
                        maxed.push(m);
                        "the max trick".to_string()
                    }
                    Fit::Proved => "proved to fit".to_string(),
                };
                explain.push(format!(
                    "reuse: `{}` uses `{hname}`'s block ({how})",
                    name(&self.lv, m)
                ));
                counts.add(REUSED, 1);
                gone.insert(name(&self.lv, m));
                sub.0.insert(
                    name(&self.lv, m),
                    Atom::Var(Ident::synthetic(hname.as_str())),
                );
            }
            let mixed = class
                .iter()
                .any(|&x| self.lv.roots[x].elem.size() != self.lv.roots[host].elem.size());
            if let (RootKind::Alloc(sh), true) =
                (&self.lv.roots[host].kind, !maxed.is_empty() || mixed)
            {
                let unit = class
                    .iter()
                    .map(|&x| self.lv.roots[x].elem)
                    .min_by_key(|e| e.size())
                    .unwrap_or(self.lv.roots[host].elem);
                let scaled =
                    |k: usize, se: &SExp| times(se, self.lv.roots[k].elem.size() / unit.size());
                let mut terms = vec![scaled(host, sh)];
                for &m in &maxed {
                    if let RootKind::Alloc(sm) = &self.lv.roots[m].kind {
                        let t = scaled(m, sm);
                        if !terms.contains(&t) {
                            terms.push(t);
                        }
                    }
                }
                let mut terms = terms.into_iter();
                let first = terms.next().unwrap_or_else(|| SExp::int(0));
                let size = terms.fold(first, |a, t| SExp::bin(BinOp::Max, a, t));
                counts.add(MAXED, maxed.len() as u64);
                explain.push(format!(
                    "reuse: `{hname}` now allocates {} elements of {unit}",
                    sexp_string(&size)
                ));
                resize.insert(hname.clone(), (size, unit));
            }
        }
        for k in 0..self.lv.roots.len() {
            let r = self.lv.roots[k].clone();
            if r.is_alloc()
                && !gone.contains(&r.name.name)
                && !classes.iter().any(|c| c.len() > 1 && c.contains(&k))
            {
                let why = self.why_alone(k, classes);
                explain.push(format!("reuse: `{}` keeps its own block{why}", r.name.name));
            }
        }
        let mut body = p.body.clone();
        edit(&mut body, &gone, &resize);
        let body = if sub.is_empty() {
            body
        } else {
            sub.body(&body)
        };
        Program { body, ..p.clone() }
    }

    /// Why block `k` shares no other's: for each group that does not take
    /// it, the first reason.
    fn why_alone(&mut self, k: usize, classes: &[Vec<usize>]) -> String {
        let mut why: Vec<String> = Vec::new();
        for c in classes {
            if c.contains(&k) {
                continue;
            }
            let host = c
                .iter()
                .copied()
                .min_by_key(|&x| self.lv.roots[x].point)
                .unwrap_or(k);
            if let Err(e) = self.join(c, k) {
                why.push(format!("not `{}`: {e}", self.lv.roots[host].name.name));
            }
        }
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join("; "))
        }
    }
}

/// Removes the allocations of `gone` and resizes those of `resize`.
fn edit(b: &mut Body, gone: &HashSet<Name>, resize: &HashMap<Name, (SExp, Prim)>) {
    b.stms.retain(|s| {
        !(matches!(s.exp.kind, ExpKind::Alloc(..))
            && s.pats.len() == 1
            && gone.contains(&s.pats[0].name.name))
    });
    for s in &mut b.stms {
        if let (ExpKind::Alloc(se, t), [p]) = (&mut s.exp.kind, &s.pats[..]) {
            if let Some((size, unit)) = resize.get(&p.name.name) {
                *se = size.clone();
                *t = *unit;
            }
        }
        match &mut s.exp.kind {
            ExpKind::If(_, t, e) => {
                edit(t, gone, resize);
                edit(e, gone, resize);
            }
            ExpKind::Loop(_, _, _, lb) => edit(lb, gone, resize),
            ExpKind::Kernel(_, _, kb) => edit(kb, gone, resize),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::obligation::NoProver;
    use funmem_lang::ast::Lang;
    use funmem_lang::parse::parse_program;

    /// The interference of the thesis's fig. 9.6 (xs0 with xs3, xs1 with
    /// xs2, xs2 with xs3), the blocks allocated in the order xs0..xs3 and
    /// the arrays made in the order xs1, xs2, xs3, xs0.
    const FIG_9_6: &str = "def main (n: int) (ns_mem: mem) (ns: [n]int @ ns_mem -> R(n)) =
  let (m0: mem) = alloc n
  let (m1: mem) = alloc n
  let (m2: mem) = alloc n
  let (m3: mem) = alloc n
  let (xs1: [n]int @ m1 -> R(n)) = kernel i < n do
    let (a: int) = ns[i]
    in (a)
  let (xs2: [n]int @ m2 -> R(n)) = kernel i < n do
    let (j: int) = n - 1 - i
    let (a: int) = xs1[j]
    in (a)
  let (xs3: [n]int @ m3 -> R(n)) = kernel i < n do
    let (j: int) = n - 1 - i
    let (a: int) = xs2[j]
    in (a)
  let (xs0: [n]int @ m0 -> R(n)) = kernel i < n do
    let (j: int) = n - 1 - i
    let (a: int) = xs3[j]
    in (a)
  in (xs0)";

    fn allocs_after(src: &str, s: Strategy) -> (usize, PassOutput) {
        let p = parse_program(src, Lang::FunMem).expect("parses");
        let out = run(&p, &NoProver, s).expect("runs");
        fn count(b: &Body) -> usize {
            b.stms
                .iter()
                .map(|s| match &s.exp.kind {
                    ExpKind::Alloc(..) => 1,
                    ExpKind::If(_, t, e) => count(t) + count(e),
                    ExpKind::Loop(_, _, _, lb) => count(lb),
                    ExpKind::Kernel(_, _, kb) => count(kb),
                    _ => 0,
                })
                .sum()
        }
        (count(&out.program.body), out)
    }

    #[test]
    fn fig_9_6_the_linear_scan_needs_three_blocks_colouring_two() {
        assert_eq!(allocs_after(FIG_9_6, Strategy::FirstFit).0, 3);
        assert_eq!(allocs_after(FIG_9_6, Strategy::Colour).0, 2);
        let (n, out) = allocs_after(FIG_9_6, Strategy::Optimal);
        assert_eq!(n, 2);
        assert_eq!(out.counts.get(OPTIMAL), 1);
        assert_eq!(out.counts.get(REUSED), 2);
        assert!(
            out.explain.iter().any(|l| l.contains("`m3` - `m0`")),
            "{:?}",
            out.explain
        );
    }

    #[test]
    fn a_block_last_used_in_one_branch_is_free_in_the_other_and_after() {
        let src = "def main (n: int) (c: int) =
  let (ma: mem) = alloc n
  let (a: [n]int @ ma -> R(n)) = iota n
  let (mr: mem) (r: [n]int @ mr -> R(n)) = if c then
    let (k: int) = a[0]
    let (mb: mem) = alloc n
    let (b: [n]int @ mb -> R(n)) = replicate n k
    in (mb, b)
  else
    let (mc: mem) = alloc n
    let (cc: [n]int @ mc -> R(n)) = iota n
    in (mc, cc)
  in (r)";
        let (n, out) = allocs_after(src, Strategy::Colour);
        // b and cc both take a's block: a is dead in the else branch, and
        // dead in the then branch once k is read.
        assert_eq!(n, 1, "{:?}", out.explain);
        assert_eq!(out.counts.get(REUSED), 2);
    }

    #[test]
    fn a_block_read_in_a_loop_is_alive_for_all_of_it() {
        let src = "def main (n: int) =
  let (ma: mem) = alloc n
  let (a: [n]int @ ma -> R(n)) = iota n
  let (mz: mem) = alloc 1
  let (z: [1]int @ mz -> R(1)) = iota 1
  let (mr: mem) (r: [1]int @ mr -> R(1)) = loop (mp: mem) (p: [1]int @ mp -> R(1)) = (mz, z) for i < n do
    let (mb: mem) = alloc n
    let (b: [n]int @ mb -> R(n)) = copy a
    let (v: int) = b[0]
    let (mq: mem) = alloc 1
    let (q: [1]int @ mq -> R(1)) = replicate 1 v
    in (mq, q)
  in (r)";
        let (_, out) = allocs_after(src, Strategy::Colour);
        let explain = out.explain.join("\n");
        assert!(explain.contains("`mb` keeps its own block"), "{explain}");
        assert!(explain.contains("interference: `ma` - `mb`"), "{explain}");
        // mq is carried to the next iteration: it shares nothing outside.
        assert!(explain.contains("`mq` keeps its own block"), "{explain}");
    }
}
