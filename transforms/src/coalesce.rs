//! Memory block coalescing (array short-circuiting): the pass `coalesce`.
//!
//! Serup's thesis (Memory Block Merging in Futhark, DIKU 2017, ch. 5, 7
//! and 8) and the short-circuiting that later Futhark built from it: an
//! array that is only made in order to be copied somewhere is built there
//! in the first place. At a *root statement* a source array `x` is copied
//! into a destination:
//!
//! - `let y = copy x`: x goes to y's block and LMAD;
//! - `let y = concat x1 x2`: each part goes to its rows of y (the LMAD of
//!   y sliced at the part's running offset);
//! - `let y = z with [idx] = x`: x goes to the part of z the indices
//!   select (`update_part` of y's LMAD);
//! - `kernel i < n do ... in (r)`: iteration i copies its result r into
//!   row i of the kernel's array (the E-MEM-KERNEL memcopy), so r goes to
//!   the kernel's LMAD indexed at i.
//!
//! When the safety conditions hold, x's pattern is given the destination's
//! block and the composed LMAD, and so are the views of x (indexing,
//! slicing, transposing x: their LMADs are recomputed from x's new one).
//! The root then copies x onto itself: memcopy of a place onto the same
//! place, which the simplifier drops for `copy` and the IMP translation
//! and the OpenCL backend emit no code for (updates, concats, kernel
//! results). The pass ends by simplifying, so the copies made no-ops and
//! the blocks no longer used are gone from its output.
//!
//! **Safety** (thesis §5.2; each condition is a function below, with its
//! number): C1 [`c1_last_use`], C2 [`c2_destination_first`], C3
//! [`c3_destination_unused`], C4 [`c4_fresh_source`], C5
//! [`c5_in_scope`]. Where the thesis decides C3 syntactically ("the
//! destination block is not used between the source's creation and the
//! root"), we state one obligation per access of the destination's block
//! in that stretch: the accessed LMAD and the source's new LMAD are
//! disjoint (docs/obligations.md), and the rewrite is applied only when
//! every obligation is proved. Accesses inside a kernel are stated per
//! iteration: when the source is one of a kernel's results, the other
//! iterations' accesses must miss this iteration's row, and the
//! iteration's own reads may touch it (they come before the end of the
//! iteration, where its row is written). That is what lets LUD's rows
//! coalesce, where the thesis's syntactic check refused (its §10.4).
//! Concat parts do not overlap for the same reason: the part coalesced
//! second sees the first's creation as a write to its destination block.
//!
//! Write sets must be exact (Futhark bug #1927 was a missing one): the
//! accesses come from every statement kind, writes from
//! [`crate::writes::writes`]'s cases, reads from the operands' types.
//! Blocks that an `if` or a loop may return under another name are one
//! block here (may-alias classes), so an access through such a name
//! counts.
//!
//! **Errors stay errors** (Futhark #1930). An update `z with [i] = x`
//! checks its indices at the root; once x is built in place, x's creation
//! writes where the indices point *before* that check. When the provers
//! cannot show the indices in bounds, the pass inserts the check before
//! x's creation: a slice of z at the indices, which goes wrong (out of
//! bounds) exactly when the update would, so the coalesced program never
//! writes outside z's part. A concat's parts are placed only when the sizes
//! are proved to fit (`n1 + n2 <= n`).
//!
//! **Order.** Allocation hoisting (`hoist-allocs`) runs first, so that
//! destination blocks exist before their sources (C2). Each body is
//! processed from its last statement to its first, so a chain
//! `b = copy a; c = copy b` coalesces c's source first and then a into
//! where b now lives (the thesis's chains, without a second pass). The
//! statements nested in kernels, branches and loops are processed after
//! their body's own roots, kernel results first.
//!
//! **Not yet** (refused, with the reason, under `--explain`): sources made
//! by an `if` or a loop (the thesis's existential blocks and actual
//! variables), sources that are themselves in-place updates, and
//! destinations of a different element type.

use crate::access::{
    atom_sexp, lmad_exps, own_reads, place_of, walk_accesses, Access, MemClasses, Place, Scope,
};
use crate::names::Names;
use crate::obligation::{Claim, Fact, Obligation, Outcome, Prover, Verdict};
use crate::pass::{Counts, PassOutput};
use crate::walk;
use crate::writes::update_part;
use funmem_lang::ast::*;
use funmem_lang::diag::Diagnostic;
use funmem_lang::lmad::{Lmad, Num};
use funmem_lang::obligation::lmad_string;
use funmem_lang::{Name, Span};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// The counts the pass reports.
pub const CANDIDATES: &str = "candidates";
/// Sources moved into their destination.
pub const COALESCED: &str = "coalesced";
/// Candidates refused by a condition or an unproved obligation.
pub const REFUSED: &str = "refused";
/// `copy` roots made copies onto themselves, removed.
pub const COPIES_REMOVED: &str = "copies removed";
/// Bounds checks inserted before a coalesced source (errors stay errors).
pub const CHECKS: &str = "bounds checks inserted";

/// The pass `coalesce`.
pub fn coalesce_pass(p: &Program, prover: &dyn Prover) -> Result<PassOutput, Diagnostic> {
    let hoisted = crate::hoist::hoist_pass(p, prover)?.program;
    let mut c = Coalescer {
        prover,
        names: Names::of_program(&hoisted),
        aliases: MemClasses::of(&hoisted),
        obligations: Vec::new(),
        counts: Counts::default(),
        explain: Vec::new(),
    };
    c.counts.add(CANDIDATES, 0);
    c.counts.add(COALESCED, 0);
    let mut sc = Scope::default();
    for q in &hoisted.params {
        sc.bind_pat(q);
    }
    let body = c.body(&hoisted.body, &sc, &[]);
    let out = Program { body, ..hoisted };
    // The copies now onto themselves and the blocks no longer used go.
    let simple = crate::simplify::simplify_pass(&out, prover)?;
    Ok(PassOutput {
        program: simple.program,
        obligations: c.obligations,
        counts: c.counts,
        explain: c.explain,
    })
}

/// A root's destination for one source.
struct Dest {
    /// How to name the root in messages: `b = copy a`.
    root: String,
    block: Ident,
    /// The source's new LMAD (over the destination block).
    lmad: Lmad<SExp>,
    elem: Prim,
    /// Obligations that must hold for the destination to be valid
    /// (concat sizes): refused unless proved.
    sizes: Vec<(SExp, SExp)>,
    /// An update's bounds: proved, or checked before the source.
    bounds: Option<Bounds>,
}

impl Dest {
    /// The same place, for another root (a branch's, a loop's body's):
    /// no sizes to prove, no bounds to check.
    fn again(&self, root: String) -> Dest {
        Dest {
            root,
            block: self.block.clone(),
            lmad: self.lmad.clone(),
            elem: self.elem,
            sizes: Vec::new(),
            bounds: None,
        }
    }
}

/// The results without the one at `k` (a branch's or a loop body's
/// block, which goes with the array coalesced there).
fn without(result: &[Ident], k: usize) -> Vec<Ident> {
    result
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != k)
        .map(|(_, r)| r.clone())
        .collect()
}

/// An update's indices, to be proved in bounds or checked.
#[derive(Clone)]
struct Bounds {
    base: Ident,
    idx: Vec<UpdIdx>,
}

/// Why a candidate was refused.
struct Refusal {
    cond: &'static str,
    why: String,
}

fn refuse<T>(cond: &'static str, why: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal {
        cond,
        why: why.into(),
    })
}

struct Coalescer<'a> {
    prover: &'a dyn Prover,
    names: Names,
    aliases: MemClasses,
    obligations: Vec<(Obligation, Verdict)>,
    counts: Counts,
    explain: Vec<String>,
}

/// Whether a statement (at any depth) makes a view of `x`: a row, a
/// slice or a transpose, whose type names `x`'s block.
fn has_views(stms: &[Stm], x: &Name) -> bool {
    stms.iter().any(|s| match &s.exp.kind {
        ExpKind::Index(w, _) | ExpKind::Slice(w, _) | ExpKind::Transpose(w) => {
            &w.name == x && s.pats.iter().any(|p| place_of(&p.ty).is_some())
        }
        ExpKind::If(_, t, e) => has_views(&t.stms, x) || has_views(&e.stms, x),
        ExpKind::Kernel(_, _, b) | ExpKind::Loop(_, _, _, b) => has_views(&b.stms, x),
        _ => false,
    })
}

/// The names bound by a statement (its patterns).
fn binds(s: &Stm, x: &Name) -> bool {
    s.pats.iter().any(|p| &p.name.name == x)
}

/// Whether `x` occurs anywhere in the statements or the names.
fn occurs_in(stms: &[Stm], result: &[Ident], x: &Name) -> bool {
    let mut found = false;
    for s in stms {
        walk::stm_names(s, &mut |y| found |= &y.name == x);
    }
    found || result.iter().any(|y| &y.name == x)
}

/// How often `x` occurs in a statement.
fn count_in(s: &Stm, x: &Name) -> usize {
    let mut k = 0;
    walk::stm_names(s, &mut |y| k += usize::from(&y.name == x));
    k
}

fn lmad_syn(shape: &[Atom], l: &Lmad<SExp>) -> LmadSyn {
    LmadSyn::Explicit {
        offset: l.offset.clone(),
        dims: shape
            .iter()
            .cloned()
            .zip(l.dims.iter().map(|d| d.stride.clone()))
            .collect(),
        span: Span::DUMMY,
    }
}

impl Coalescer<'_> {
    /// Processes a body: its own roots from last to first, then the
    /// bodies nested in its statements.
    fn body(&mut self, b: &Body, outer: &Scope, kernel_dests: &[Option<Dest>]) -> Body {
        let mut stms = b.stms.clone();
        let mut result = b.result.clone();
        // Kernel results first: they are the body's last roots.
        for (k, d) in kernel_dests.iter().enumerate() {
            let (Some(d), Some(r)) = (d, b.result.get(k).cloned()) else {
                continue;
            };
            let d = d.again(d.root.clone());
            let n = stms.len();
            self.candidate(&mut stms, &mut result, outer, n, &r.name, d);
        }
        let mut k = stms.len();
        while k > 0 {
            k -= 1;
            for (src, d) in self.roots_at(&stms, k, outer) {
                let before = stms.len();
                let gone = self.candidate(&mut stms, &mut result, outer, k, &src, d);
                // Checks inserted and blocks removed before the root shift
                // it; a root that went leaves its place to the statement
                // after it.
                k = (k + stms.len() + usize::from(gone)).saturating_sub(before);
                if gone {
                    break;
                }
            }
        }
        // Nested bodies, each in the scope of the statements before it.
        let mut sc = outer.clone();
        for s in &mut stms {
            self.nested(s, &sc);
            sc.bind_stm(s);
        }
        Body {
            stms,
            result,
            span: b.span,
        }
    }

    fn nested(&mut self, s: &mut Stm, sc: &Scope) {
        let pats = s.pats.clone();
        match &mut s.exp.kind {
            ExpKind::Kernel(i, n, body) => {
                let mut inner = sc.clone();
                inner.bound.insert(i.name.clone());
                inner.ranges.insert(i.name.clone(), atom_sexp(n));
                let dests: Vec<Option<Dest>> = pats
                    .iter()
                    .map(|p| {
                        let pl = place_of(&p.ty)?;
                        (pl.lmad.rank() >= 2).then(|| Dest {
                            root: format!("the result of the kernel of `{}`", p.name.name),
                            block: pl.block.clone(),
                            lmad: pl.lmad.index(&SExp::var(&i.name)),
                            elem: pl.elem,
                            sizes: Vec::new(),
                            bounds: None,
                        })
                    })
                    .collect();
                *body = self.body(body, &inner, &dests);
            }
            ExpKind::If(_, t, e) => {
                *t = self.body(t, sc, &[]);
                *e = self.body(e, sc, &[]);
            }
            ExpKind::Loop(ps, _, form, body) => {
                let mut inner = sc.clone();
                for p in ps.iter() {
                    inner.bind_pat(p);
                }
                if let LoopForm::For(i, n) = form {
                    inner.bound.insert(i.name.clone());
                    inner.ranges.insert(i.name.clone(), atom_sexp(n));
                }
                *body = self.body(body, &inner, &[]);
            }
            _ => {}
        }
    }

    /// The candidates a statement is the root of: each source with its
    /// destination (the source's new LMAD over the destination block).
    fn roots_at(&self, stms: &[Stm], k: usize, outer: &Scope) -> Vec<(Name, Dest)> {
        let s = &stms[k];
        let Some(p) = s.pats.first() else {
            return Vec::new();
        };
        let Some(pl) = place_of(&p.ty) else {
            return Vec::new();
        };
        let y = &p.name.name;
        let dest = |root: String, lmad: Lmad<SExp>| Dest {
            root,
            block: pl.block.clone(),
            lmad,
            elem: pl.elem,
            sizes: Vec::new(),
            bounds: None,
        };
        match &s.exp.kind {
            ExpKind::Copy(x) => vec![(
                x.name.clone(),
                dest(format!("`{y} = copy {}`", x.name), pl.lmad.clone()),
            )],
            ExpKind::Concat(a, b) => {
                // The operands' outer sizes, from their types.
                let mut sc = outer.clone();
                for t in &stms[..k] {
                    sc.bind_stm(t);
                }
                let outer_size = |x: &Ident| {
                    sc.arrays
                        .get(&x.name)
                        .and_then(|pl| pl.shape.first().map(atom_sexp))
                };
                let (Some(na), Some(nb)) = (outer_size(a), outer_size(b)) else {
                    return Vec::new();
                };
                let Some(n) = pl.lmad.dims.first().map(|d| d.elems.clone()) else {
                    return Vec::new();
                };
                let root = format!("`{y} = concat {} {}`", a.name, b.name);
                let sum = na.add(&nb);
                let mut da = dest(root.clone(), pl.lmad.slice(&[(SExp::int(0), na.clone())]));
                da.sizes.push((sum.clone(), n.clone()));
                let mut db = dest(root, pl.lmad.slice(&[(na, nb)]));
                db.sizes.push((sum, n));
                // The second part first: sources are taken last to first.
                let mut v = vec![(b.name.clone(), db)];
                if a.name != b.name {
                    v.push((a.name.clone(), da));
                }
                v
            }
            // An array value (a scalar's part has rank 0).
            ExpKind::Update(z, idx, Atom::Var(x)) if update_part(&pl.lmad, idx).rank() > 0 => {
                let mut d = dest(
                    format!("`{y} = {} with [..] = {}`", z.name, x.name),
                    update_part(&pl.lmad, idx),
                );
                d.bounds = Some(Bounds {
                    base: z.clone(),
                    idx: idx.clone(),
                });
                vec![(x.name.clone(), d)]
            }
            _ => Vec::new(),
        }
    }

    /// Examines one candidate: source `src`, copied at statement `k` of
    /// `stms` (`k == stms.len()` for a kernel body's result), into `d`.
    /// Applies it when every condition holds and every obligation is
    /// proved; says why not otherwise.
    fn candidate(
        &mut self,
        stms: &mut Vec<Stm>,
        result: &mut [Ident],
        outer: &Scope,
        k: usize,
        src: &Name,
        d: Dest,
    ) -> bool {
        self.counts.add(CANDIDATES, 1);
        // A `copy` root becomes a copy onto itself: it goes, and its
        // result is the source (when their types agree on the shape).
        let copy_root = stms.get(k).and_then(|s| match (&s.exp.kind, &s.pats[..]) {
            (ExpKind::Copy(x), [p]) if &x.name == src => Some(p.clone()),
            _ => None,
        });
        // A refused loop leaves the classes as they were (its check joins
        // the parameter's block with the destination's).
        let classes = self.aliases.clone();
        match self.check(stms, result, outer, k, src, &d) {
            Ok(plan) => {
                self.apply(stms, plan, &d);
                self.counts.add(COALESCED, 1);
                self.explain.push(format!(
                    "{}: `{src}` built in `{}` at {}: applied",
                    d.root,
                    d.block.name,
                    lmad_string(&d.lmad)
                ));
                let Some(y) = copy_root else {
                    return false;
                };
                let Some(at) = stms.iter().position(|s| binds(s, &y.name.name)) else {
                    return false;
                };
                // The source's type must be the result's: the same shape,
                // and the same block name when the result has views (an
                // `if` or a loop keeps binding its own block, which the
                // views' types do not name).
                let viewed = has_views(&stms[at + 1..], &y.name.name);
                let same_shape = stms[..at].iter().any(|s| {
                    s.pats.iter().any(|p| {
                        &p.name.name == src
                            && matches!((&p.ty, &y.ty), (Type::Array(a, _), Type::Array(b, _))
                                if a.shape == b.shape
                                    && (!viewed
                                        || a.mem.as_ref().map(|m| &m.block.name)
                                            == b.mem.as_ref().map(|m| &m.block.name)))
                    })
                });
                // An array that an update or a loop consumes later keeps
                // its copy (a no-op now): the renamed source may alias
                // what the uniqueness rules say it must not.
                if !same_shape || walk::consumed_in(&stms[at + 1..], &y.name.name) {
                    return false;
                }
                stms.remove(at);
                let sub = funmem_lang::subst::Subst::one(
                    &y.name.name,
                    Atom::Var(Ident {
                        name: src.clone(),
                        span: y.name.span,
                    }),
                );
                for s in &mut stms[at..] {
                    *s = sub.stm(s);
                }
                for r in result.iter_mut() {
                    *r = sub.ident(r);
                }
                self.counts.add(COPIES_REMOVED, 1);
                true
            }
            Err(r) => {
                self.aliases = classes;
                self.counts.add(REFUSED, 1);
                self.explain.push(format!(
                    "{}: `{src}` into `{}`: refused, {}: {}",
                    d.root, d.block.name, r.cond, r.why
                ));
                false
            }
        }
    }
}

/// What applying a candidate takes: where the source's family is made,
/// its block, the bounds checks to insert before it, and for an `if` the
/// plans of its branches.
struct Plan {
    /// The index of the statement that makes the family's first array.
    at: usize,
    /// The index of the source block's allocation, when it can go once
    /// unused (see [`droppable_alloc`]).
    alloc: Option<usize>,
    /// The source's block (before the rewrite).
    block: Name,
    /// The family (the arrays that move) and their views.
    family: HashSet<Name>,
    /// Bounds-check statements to insert before the creation.
    checks: Vec<Stm>,
    /// For an `if`: per branch (then, else), the plan of its result, the
    /// position of the block among the results, and whether the branch
    /// makes it (else it is made before the `if`, and its plan is over the
    /// statements around the `if`).
    branches: Vec<(Plan, usize, bool)>,
    /// For a loop: how its initial value, parameter and body move.
    looped: Option<Box<LoopPlan>>,
}

/// What coalescing a loop's result takes: the loop's initial value goes
/// to the place first (coalesced with the loop as its root), the
/// parameter lives there, and each iteration's result is either the
/// parameter updated in place or made in the body and coalesced there.
struct LoopPlan {
    /// The positions of the array and of its block among the loop's
    /// parameters (and results).
    pos: usize,
    mpos: usize,
    /// The plan of the initial value, and its destination.
    init: Plan,
    /// The body with the parameter (and its views) at the new place.
    body: Body,
    /// The plan of the body's result when the body makes it.
    result: Option<Plan>,
}

impl Coalescer<'_> {
    #[allow(clippy::too_many_arguments)]
    fn check(
        &mut self,
        stms: &[Stm],
        result: &[Ident],
        outer: &Scope,
        k: usize,
        src: &Name,
        d: &Dest,
    ) -> Result<Plan, Refusal> {
        let Some(xj) = stms[..k].iter().position(|s| binds(s, src)) else {
            return refuse(
                "C4 (fresh source)",
                format!("`{src}` is not created in this body"),
            );
        };
        let source = c4_fresh_source(stms, result, xj, src)?;
        let j = source.base;
        c1_last_use(stms, result, k, &source.family, src)?;
        // The scope where the source is created.
        let mut at_j = outer.clone();
        for s in &stms[..j] {
            at_j.bind_stm(s);
        }
        c2_destination_first(&at_j, &d.block)?;
        let x_place = stms[xj]
            .pats
            .iter()
            .find(|p| &p.name.name == src)
            .and_then(|p| place_of(&p.ty))
            .ok_or_else(|| Refusal {
                cond: "C4 (fresh source)",
                why: format!("`{src}` has no memory"),
            })?;
        if x_place.elem != d.elem {
            return refuse(
                "types",
                format!(
                    "`{src}` holds {} and the destination {}",
                    x_place.elem, d.elem
                ),
            );
        }
        if x_place.lmad.rank() != d.lmad.rank() {
            return refuse(
                "types",
                format!(
                    "`{src}` has rank {} and its destination {}",
                    x_place.lmad.rank(),
                    d.lmad.rank()
                ),
            );
        }
        let mut needs: Vec<Name> = Vec::new();
        for e in lmad_exps(&d.lmad) {
            e.for_each_var(&mut |x| needs.push(x.name.clone()));
        }
        if let Some(b) = &d.bounds {
            needs.push(b.base.name.clone());
            for i in &b.idx {
                for a in i.atoms() {
                    if let Atom::Var(x) = a {
                        needs.push(x.name.clone());
                    }
                }
            }
        }
        c5_in_scope(&at_j, &needs)?;
        // Sizes of concat parts, proved.
        for (lhs, rhs) in &d.sizes {
            let o = Obligation::new(
                "coalesce",
                format!("{}: the parts fit the result", d.root),
                Claim::AtMost(lhs.clone(), rhs.clone()),
                at_j.facts_for(&[lhs, rhs]),
                stms[j].span,
            );
            if let Some(r) = self.prove(o) {
                return refuse("sizes", r);
            }
        }
        // A loop's result is written first by its initial value's
        // creation: the bounds are checked there (see `loop_rule`).
        let checks = match (&d.bounds, source.made) {
            (Some(b), Made::Fresh | Made::If) => self.bounds(&at_j, b, stms[j].span)?,
            _ => Vec::new(),
        };
        self.c3(stms, outer, j, k, &source, d)?;
        let looped = match source.made {
            Made::Loop => Some(Box::new(
                self.loop_rule(stms, result, outer, &at_j, j, src, &source, d)?,
            )),
            _ => None,
        };
        // An `if`: each branch's result goes to the same place, checked
        // in its branch as a result copied at the branch's end.
        let mut branches = Vec::new();
        if let (Made::If, ExpKind::If(_, t, e)) = (source.made, &stms[j].exp.kind) {
            let Some(pos) = stms[j].pats.iter().position(|p| &p.name.name == src) else {
                return refuse("C4 (fresh source)", format!("`{src}` is not the `if`'s"));
            };
            let Some(mpos) = stms[j]
                .pats
                .iter()
                .position(|p| p.name.name == source.block)
            else {
                return refuse("C4 (fresh source)", "the `if` does not bind the block");
            };
            for (k, (which, br)) in [("then", t), ("else", e)].into_iter().enumerate() {
                let Some(r) = br.result.get(pos) else {
                    return refuse("C4 (fresh source)", "a branch has too few results");
                };
                let bd = d.again(format!("{} (the `{which}` branch)", d.root));
                let inside = br.stms.iter().any(|t| binds(t, &r.name));
                let plan = if inside {
                    let n = br.stms.len();
                    // The branch returns its result's block for the `if`'s:
                    // that occurrence goes with the result.
                    let others = without(&br.result, mpos);
                    self.check(&br.stms, &others, &at_j, n, &r.name, &bd)
                } else {
                    // An array made before the `if` (fig. 5.22): it goes to
                    // the place with the `if` as its root, the branch's
                    // occurrence of its block with it.
                    let mut stms2 = stms.to_vec();
                    if let ExpKind::If(_, t2, e2) = &mut stms2[j].exp.kind {
                        let b2 = if k == 0 { t2 } else { e2 };
                        if let Some(m) = b2.result.get_mut(mpos) {
                            *m = d.block.clone();
                        }
                    }
                    let bd = Dest {
                        bounds: d.bounds.clone(),
                        ..bd
                    };
                    self.check(&stms2, result, outer, j, &r.name, &bd)
                        .and_then(|plan| {
                            // Its block must be one it is given: a loop's
                            // or an `if`'s result keeps the block the loop
                            // (`if`) binds, which the branch would return
                            // where the destination is expected.
                            if plan.looped.is_some() || !plan.branches.is_empty() {
                                refuse(
                                    "if rule",
                                    format!("`{}`, made before the `if`, is a loop's or an `if`'s result, in a block of its own making", r.name),
                                )
                            } else {
                                Ok(plan)
                            }
                        })
                }
                .map_err(|e| Refusal {
                    cond: e.cond,
                    why: format!("in the `{which}` branch: {}", e.why),
                })?;
                branches.push((plan, mpos, inside));
            }
            // The thesis's if rule: at least one branch makes its result.
            if branches.iter().all(|b| !b.2) {
                return refuse(
                    "if rule",
                    "no branch makes its result inside (both are made before the `if`)",
                );
            }
        }
        let alloc = match source.made {
            Made::Fresh => droppable_alloc(stms, j, &source.block, &x_place, &at_j),
            Made::If | Made::Loop => None,
        };
        Ok(Plan {
            at: j,
            alloc,
            block: source.block,
            family: source.family,
            checks,
            branches,
            looped,
        })
    }

    /// The loop rule: `x` is a loop's result, in the block the loop binds.
    /// It goes to the destination when (1) the initial value coalesces
    /// into the same place, with the loop as its root; (2) the parameter's
    /// shape is the same in every iteration, so every iteration's array
    /// has the one place (the per-iteration index functions agree, which
    /// lets a loop coalesce into a place that is not row-major, a case
    /// the thesis disabled); (3) each iteration's result is the parameter
    /// updated in place, or an array the body makes and that coalesces
    /// there in its turn (checked against the body with the parameter at
    /// the new place: reading the parameter after its successor's
    /// creation is then a C3 refusal, as in a ping-pong stencil); (4)
    /// nothing else in the body touches the place (C3 over the body).
    #[allow(clippy::too_many_arguments)]
    fn loop_rule(
        &mut self,
        stms: &[Stm],
        result: &[Ident],
        outer: &Scope,
        at_j: &Scope,
        j: usize,
        src: &Name,
        source: &Source,
        d: &Dest,
    ) -> Result<LoopPlan, Refusal> {
        const C: &str = "loop rule";
        let s = &stms[j];
        let ExpKind::Loop(ps, init, form, body) = &s.exp.kind else {
            return refuse(C, "not a loop");
        };
        let (Some(pos), Some(mpos)) = (
            s.pats.iter().position(|p| &p.name.name == src),
            s.pats.iter().position(|p| p.name.name == source.block),
        ) else {
            return refuse(C, "the loop does not bind the source and its block");
        };
        let (Some(p), Some(mp)) = (ps.get(pos), ps.get(mpos)) else {
            return refuse(C, "the loop has too few parameters");
        };
        let mp_name = mp.name.name.clone();
        if place_of(&p.ty).is_none_or(|pl| pl.block.name != mp_name)
            || ps
                .iter()
                .filter(|q| place_of(&q.ty).is_some_and(|pl| pl.block.name == mp_name))
                .count()
                != 1
        {
            return refuse(C, "the parameter's block holds other parameters too");
        }
        // (2) The same shape in every iteration.
        if let Type::Array(a, _) = &p.ty {
            if a.shape.iter().any(|x| match x {
                Atom::Var(v) => !at_j.bound.contains(&v.name),
                _ => false,
            }) {
                return refuse(
                    C,
                    "the parameter's shape changes from iteration to iteration",
                );
            }
        }
        let (Some(Atom::Var(x0)), Some(Atom::Var(_))) = (init.get(pos), init.get(mpos)) else {
            return refuse(C, "the initial value is not an array of this body");
        };
        // (1) The initial value, with the loop as its root.
        let d0 = Dest {
            bounds: d.bounds.clone(),
            ..d.again(format!("{} (the loop's initial value)", d.root))
        };
        // The loop hands the initial value's block to its parameter: that
        // occurrence becomes the destination's.
        let mut stms2 = stms.to_vec();
        if let ExpKind::Loop(_, init2, ..) = &mut stms2[j].exp.kind {
            init2[mpos] = Atom::Var(d.block.clone());
        }
        let init_plan = self
            .check(&stms2, result, outer, j, &x0.name, &d0)
            .map_err(|e| Refusal {
                cond: e.cond,
                why: format!("the initial value `{}`: {}", x0.name, e.why),
            })?;
        // The body as it will be: the parameter (and its views) at the
        // new place, its block one with the destination's.
        self.aliases.union(&mp_name, &d.block.name);
        self.aliases.union(&source.block, &d.block.name);
        let mut body2 = body.clone();
        let mut moved: HashMap<Name, Lmad<SExp>> = HashMap::default();
        moved.insert(p.name.name.clone(), d.lmad.clone());
        rewrite_views(&mut body2.stms, &mp_name, &mp.name, &mut moved);
        let mut inner = at_j.clone();
        for (k, q) in ps.iter().enumerate() {
            let mut q = q.clone();
            if k == pos {
                set_place(&mut q, &mp.name, &d.lmad);
            }
            inner.bind_pat(&q);
        }
        if let LoopForm::For(i, n) = form {
            inner.bound.insert(i.name.clone());
            inner.ranges.insert(i.name.clone(), atom_sexp(n));
        }
        // (4) Nothing but the parameter's family touches the place.
        let mut family: HashSet<Name> = HashSet::default();
        family.insert(p.name.name.clone());
        let (mut named, mut other) = (0usize, None);
        walk_family(&body2.stms, &mp_name, &mut family, &mut named, &mut other);
        // The parameter's block holds only the family, and goes nowhere
        // but to the body's block result (C4 for the parameter): handed
        // to an inner loop or returned elsewhere, the index function
        // that goes with it would no longer be the one written there.
        let uses: usize = body2
            .stms
            .iter()
            .map(|t| count_in(t, &mp_name))
            .sum::<usize>()
            + body2
                .result
                .iter()
                .enumerate()
                .filter(|(i, r)| *i != mpos && r.name == mp_name)
                .count();
        if let Some(o) = other {
            return refuse(C, format!("the parameter's block also holds `{o}`"));
        }
        if uses != named {
            return refuse(C, "the parameter's block is passed on in the body");
        }
        // Each iteration's result: the parameter updated in place, or an
        // array the body makes.
        let in_place = body2
            .result
            .get(pos)
            .is_some_and(|r| family.contains(&r.name));
        // The array each iteration makes (in the block the body returns)
        // is checked in (3), against the parameter's new place.
        if let (false, Some(r), Some(mb)) =
            (in_place, body2.result.get(pos), body2.result.get(mpos))
        {
            if mb.name != mp_name {
                let mut made: HashSet<Name> = HashSet::default();
                made.insert(r.name.clone());
                let (mut n2, mut o2) = (0usize, None);
                walk_family(&body2.stms, &mb.name, &mut made, &mut n2, &mut o2);
                family.extend(made);
            }
        }
        let mut acc = Vec::new();
        let mut sc = inner.clone();
        for t in &body2.stms {
            walk_accesses(t, &sc, &mut acc, &family, None, false);
            sc.bind_stm(t);
        }
        self.clear_of(acc, &inner, d, None, src.as_str(), s.span)?;
        // (3) Each iteration's result.
        let Some(r) = body2.result.get(pos).cloned() else {
            return refuse(C, "the body has too few results");
        };
        let result_plan = if in_place {
            if body2.result.get(mpos).is_none_or(|m| m.name != mp_name) {
                return refuse(C, "the body returns the parameter in another block");
            }
            None
        } else {
            let others = without(&body2.result, mpos);
            let bd = d.again(format!("{} (each iteration's result)", d.root));
            let n = body2.stms.len();
            Some(
                self.check(&body2.stms, &others, &inner, n, &r.name, &bd)
                    .map_err(|e| Refusal {
                        cond: e.cond,
                        why: format!("the body's result `{}`: {}", r.name, e.why),
                    })?,
            )
        };
        Ok(LoopPlan {
            pos,
            mpos,
            init: init_plan,
            body: body2,
            result: result_plan,
        })
    }

    /// Proves an obligation; `None` when proved, else why not.
    fn prove(&mut self, o: Obligation) -> Option<String> {
        let v = self.prover.prove(&o);
        let why = match &v.outcome {
            Outcome::Proved => None,
            other => Some(format!(
                "obligation `{}` {} ({})",
                claim_string(&o.claim),
                other.word(),
                v.prover
            )),
        };
        self.obligations.push((o, v));
        why
    }

    /// An update's indices: proved in bounds of the updated array, or a
    /// check (a slice of it at the indices) to run before the source.
    fn bounds(&mut self, sc: &Scope, b: &Bounds, span: Span) -> Result<Vec<Stm>, Refusal> {
        let Some(zt) = sc.arrays.get(&b.base.name).cloned() else {
            return refuse(
                "C5 (in scope)",
                format!("`{}` is not an array in scope", b.base.name),
            );
        };
        let shape: Vec<SExp> = zt.lmad.dims.iter().map(|d| d.elems.clone()).collect();
        let mut claims = Vec::new();
        let mut pairs: Vec<(Atom, Atom)> = Vec::new();
        for (k, i) in b.idx.iter().enumerate() {
            let Some(n) = shape.get(k) else {
                return refuse("types", "more indices than dimensions");
            };
            let (o, len) = match i {
                UpdIdx::Elem(a) => (a.clone(), Atom::Int(1, Span::DUMMY)),
                UpdIdx::Range(o, l) => (o.clone(), l.clone()),
            };
            claims.push((SExp::int(0), atom_sexp(&o)));
            claims.push((SExp::int(0), atom_sexp(&len)));
            claims.push((atom_sexp(&o).add(&atom_sexp(&len)), n.clone()));
            pairs.push((o, len));
        }
        let mut all = true;
        for (l, r) in claims {
            let o = Obligation::new(
                "coalesce",
                format!("update of `{}`: index in bounds", b.base.name),
                Claim::AtMost(l.clone(), r.clone()),
                sc.facts_for(&[&l, &r]),
                span,
            );
            all &= self.prove(o).is_none();
        }
        #[cfg(feature = "planted-faults")]
        if crate::fault::active(crate::fault::Fault::CoalesceNoBoundsCheck) {
            all = true;
        }
        if all {
            return Ok(Vec::new());
        }
        // The check: `z[o : n, ...]`, every dimension given.
        for n in zt.shape.iter().skip(pairs.len()) {
            pairs.push((Atom::Int(0, Span::DUMMY), n.clone()));
        }
        let lm = zt.lmad.slice(
            &pairs
                .iter()
                .map(|(o, n)| (atom_sexp(o), atom_sexp(n)))
                .collect::<Vec<_>>(),
        );
        let shape: Vec<Atom> = pairs.iter().map(|(_, n)| n.clone()).collect();
        let name = self.names.fresh(&format!("{}_check", b.base.name));
        self.counts.add(CHECKS, 1);
        Ok(vec![Stm {
            pats: vec![Pat {
                name,
                ty: Type::Array(
                    ArrayType {
                        shape: shape.clone(),
                        elem: zt.elem,
                        mem: Some(MemAnn {
                            block: zt.block.clone(),
                            lmad: lmad_syn(&shape, &lm),
                        }),
                    },
                    Span::DUMMY,
                ),
                unique: false,
                span: Span::DUMMY,
            }],
            exp: Exp {
                kind: ExpKind::Slice(b.base.clone(), pairs),
                span,
            },
            span,
        }])
    }
}

/// The index of the allocation of the source's block `mx`, when it may go
/// once the source lives elsewhere: removing it must not change how the
/// program goes wrong. That holds when its size is evidently non-negative
/// (it cannot get stuck), and when it is the number of the source's
/// elements with no kernel between it and the source's creation: a
/// negative count means a negative dimension, on which the creation gets
/// stuck in its turn, with nothing that could race in between (the
/// criterion `hoist-allocs` moves allocations by).
fn droppable_alloc(stms: &[Stm], j: usize, mx: &Name, x: &Place, at_j: &Scope) -> Option<usize> {
    let a = stms[..j]
        .iter()
        .position(|s| binds(s, mx) && matches!(s.exp.kind, ExpKind::Alloc(..)))?;
    let ExpKind::Alloc(se, _) = &stms[a].exp.kind else {
        return None;
    };
    let mut known = at_j.sizes.clone();
    known.extend(at_j.ranges.keys().cloned());
    if crate::hoist::non_negative(se, &known) {
        return Some(a);
    }
    let count = x
        .shape
        .iter()
        .fold(funmem_lang::poly::Poly::constant(1), |p, d| {
            p.mul(&funmem_lang::poly::Poly::atom(d))
        });
    let quiet = stms[a + 1..j]
        .iter()
        .all(|s| !crate::hoist::has_kernel(&s.exp));
    (funmem_lang::poly::Poly::from_sexp(se) == count && quiet).then_some(a)
}

pub(crate) fn claim_string(c: &Claim) -> String {
    match c {
        Claim::Disjoint(a, b) => format!("disjoint {} {}", lmad_string(a), lmad_string(b)),
        Claim::Injective(a) => format!("injective {}", lmad_string(a)),
        Claim::InBounds(a, n) => format!(
            "in-bounds {} {}",
            lmad_string(a),
            funmem_lang::print::sexp_string(n)
        ),
        Claim::AtMost(a, b) => format!(
            "{} <= {}",
            funmem_lang::print::sexp_string(a),
            funmem_lang::print::sexp_string(b)
        ),
    }
}

/// How the source is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Made {
    /// By a statement that writes a new array into a block allocated in
    /// this body (statement `base`, possibly followed by in-place updates
    /// of it: the family).
    Fresh,
    /// By an `if`, in the block it binds (existential memory): each branch
    /// makes its result, and each is coalesced in its branch.
    If,
    /// By a loop, in the block it binds: the initial value, the parameter
    /// and each iteration's result all go to the one place.
    Loop,
}

/// What C4 found: where the source (its family's first array) is made,
/// its block, and the family and its views.
struct Source {
    made: Made,
    /// The statement that makes the family's first array.
    base: usize,
    block: Name,
    /// The source, the arrays it was updated from, and the views of them.
    family: HashSet<Name>,
}

/// C4, the source is fresh (thesis §5.2, condition 4): `x` is made by a
/// statement that writes a new array (iota, replicate, copy, concat,
/// scan, a kernel) into a block allocated in this body, possibly followed
/// by in-place updates (`x = w with [..] = v`, in w's block: the family
/// moves together, as the thesis's figs. 7.3-7.5 move the array an update
/// writes into), or by an `if` that binds its block (then each branch must
/// make its result: checked branch by branch). The block holds nothing but
/// the family and its views (slices, rows, transposes), and does not
/// escape through a branch, a loop or a result.
fn c4_fresh_source(stms: &[Stm], result: &[Ident], j: usize, x: &Name) -> Result<Source, Refusal> {
    const C: &str = "C4 (fresh source)";
    // Back through the updates to the family's first array.
    let mut base = j;
    let mut first = x.clone();
    loop {
        let s = &stms[base];
        match &s.exp.kind {
            ExpKind::Update(w, ..) => {
                let Some(b) = stms[..base].iter().position(|t| binds(t, &w.name)) else {
                    return refuse(
                        C,
                        format!("`{first}` updates `{}`, not made in this body", w.name),
                    );
                };
                first = w.name.clone();
                base = b;
            }
            // A loop whose array stays in its initial value's block (the
            // simplifier made the block loop-invariant): the family goes
            // on through the initial value.
            ExpKind::Loop(_, init, ..) => {
                let Some(q) = s.pats.iter().position(|p| p.name.name == first) else {
                    break;
                };
                let own = place_of(&s.pats[q].ty).is_some_and(|pl| binds(s, &pl.block.name));
                if own {
                    break;
                }
                let Some(Atom::Var(w)) = init.get(q) else {
                    return refuse(C, format!("`{first}` starts from a literal"));
                };
                let Some(b) = stms[..base].iter().position(|t| binds(t, &w.name)) else {
                    return refuse(
                        C,
                        format!(
                            "`{first}` is a loop over `{}`, not made in this body",
                            w.name
                        ),
                    );
                };
                first = w.name.clone();
                base = b;
            }
            _ => break,
        }
    }
    let s = &stms[base];
    let made = match &s.exp.kind {
        ExpKind::Iota(_)
        | ExpKind::Replicate(..)
        | ExpKind::Copy(_)
        | ExpKind::Concat(..)
        | ExpKind::Scan(..)
        | ExpKind::Kernel(..) => Made::Fresh,
        ExpKind::If(..) => Made::If,
        ExpKind::Loop(..) => Made::Loop,
        _ => return refuse(C, format!("`{first}` is a view of another array")),
    };
    let Some(p) = s.pats.iter().find(|p| p.name.name == first) else {
        return refuse(C, format!("`{first}` is not bound here"));
    };
    let Some(pl) = place_of(&p.ty) else {
        return refuse(C, format!("`{first}` has no memory"));
    };
    let mx = pl.block.name.clone();
    // Where the block is bound: an allocation before, or the `if` itself.
    let a = match made {
        Made::Fresh => {
            let Some(a) = stms[..base]
                .iter()
                .position(|s| matches!(s.exp.kind, ExpKind::Alloc(..)) && binds(s, &mx))
            else {
                return refuse(
                    C,
                    format!("`{first}`'s block `{mx}` is not allocated in this body"),
                );
            };
            a
        }
        Made::If | Made::Loop => {
            let what = if made == Made::If { "`if`" } else { "loop" };
            if !binds(s, &mx) {
                return refuse(
                    C,
                    format!("`{first}`'s block `{mx}` is not the {what}'s own"),
                );
            }
            if s.pats
                .iter()
                .filter(|q| place_of(&q.ty).is_some_and(|pl| pl.block.name == mx))
                .count()
                > 1
            {
                return refuse(C, format!("the {what} returns two arrays in `{mx}`"));
            }
            base
        }
    };
    // The family and its views, and every other use of the block.
    let mut family: HashSet<Name> = HashSet::default();
    family.insert(first.clone());
    let mut named = 0usize;
    let mut other: Option<String> = None;
    walk_family(&stms[a..], &mx, &mut family, &mut named, &mut other);
    let src = Source {
        made,
        base,
        block: mx.clone(),
        family,
    };
    #[cfg(feature = "planted-faults")]
    if crate::fault::active(crate::fault::Fault::CoalesceNoC4) {
        return Ok(src);
    }
    if let Some(o) = other {
        return refuse(C, format!("`{x}`'s block `{mx}` also holds `{o}`"));
    }
    if !src.family.contains(x) {
        return refuse(C, format!("`{x}` is not in its block's family"));
    }
    // Every occurrence of the block: its binding and the types of the
    // family and its views; anything else (a result, a loop's initial
    // value, a branch's result) lets it escape.
    let mut total = 0usize;
    for s in &stms[a..] {
        total += count_in(s, &mx);
    }
    total += result.iter().filter(|r| r.name == mx).count();
    if total != 1 + named {
        return refuse(
            C,
            format!("`{x}`'s block `{mx}` escapes (returned or passed on)"),
        );
    }
    Ok(src)
}

/// The family of a block's arrays: every array of `stms` (at any depth)
/// in block `mx` that is a view or an update of a member joins it;
/// `named` counts the arrays in `mx`, `other` names the first that is not
/// a member.
fn walk_family(
    stms: &[Stm],
    mx: &Name,
    family: &mut HashSet<Name>,
    named: &mut usize,
    other: &mut Option<String>,
) {
    let in_mx = |t: &Type| place_of(t).is_some_and(|pl| &pl.block.name == mx);
    for s in stms {
        // A loop over a member, in the member's block: its parameter, the
        // body's updates of it and the loop's result are members.
        let mut carried: Vec<usize> = Vec::new();
        if let ExpKind::Loop(ps, init, _, b) = &s.exp.kind {
            for (q, p) in ps.iter().enumerate() {
                if in_mx(&p.ty) {
                    *named += 1;
                    match init.get(q) {
                        Some(Atom::Var(w)) if family.contains(&w.name) => {
                            family.insert(p.name.name.clone());
                            carried.push(q);
                        }
                        _ => {
                            other.get_or_insert_with(|| p.name.name.to_string());
                        }
                    }
                }
            }
            walk_family(&b.stms, mx, family, named, other);
        }
        let src = match &s.exp.kind {
            ExpKind::Index(w, _)
            | ExpKind::Slice(w, _)
            | ExpKind::Transpose(w)
            | ExpKind::Update(w, ..) => Some(&w.name),
            _ => None,
        };
        for (q, p) in s.pats.iter().enumerate() {
            if in_mx(&p.ty) {
                *named += 1;
                if src.is_some_and(|w| family.contains(w)) || carried.contains(&q) {
                    family.insert(p.name.name.clone());
                } else if !family.contains(&p.name.name) && other.is_none() {
                    *other = Some(p.name.name.to_string());
                }
            }
        }
        match &s.exp.kind {
            ExpKind::If(_, t, e) => {
                walk_family(&t.stms, mx, family, named, other);
                walk_family(&e.stms, mx, family, named, other);
            }
            ExpKind::Kernel(_, _, b) => walk_family(&b.stms, mx, family, named, other),
            _ => {}
        }
    }
}

/// C1, last use (thesis §5.2, condition 1): after the root, neither the
/// source nor any view of it is used, and the root uses it once (as the
/// source). For a kernel body's result (`k == stms.len()`), the source is
/// one result and nothing else of the body's results is a view of it.
fn c1_last_use(
    stms: &[Stm],
    result: &[Ident],
    k: usize,
    views: &HashSet<Name>,
    x: &Name,
) -> Result<(), Refusal> {
    #[cfg(feature = "planted-faults")]
    if crate::fault::active(crate::fault::Fault::CoalesceNoC1) {
        return Ok(());
    }
    const C: &str = "C1 (last use)";
    for v in views {
        if occurs_in(stms.get(k + 1..).unwrap_or(&[]), &[], v) {
            return refuse(C, format!("`{v}` is used after the root"));
        }
        let in_results = result.iter().filter(|r| &r.name == v).count();
        let allowed = usize::from(k == stms.len() && v == x);
        if in_results > allowed {
            return refuse(C, format!("`{v}` is a result of the body"));
        }
        if let Some(root) = stms.get(k) {
            let uses = count_in(root, v);
            if uses > usize::from(v == x) {
                return refuse(C, format!("the root uses `{v}` more than once"));
            }
        }
    }
    Ok(())
}

/// C2, the destination block exists first (thesis §5.2, condition 2): the
/// destination's block is allocated (bound) before the source is created.
/// Allocation hoisting, run before, makes this hold as often as sizes
/// allow.
fn c2_destination_first(at_j: &Scope, block: &Ident) -> Result<(), Refusal> {
    #[cfg(feature = "planted-faults")]
    if crate::fault::active(crate::fault::Fault::CoalesceNoC2) {
        return Ok(());
    }
    if at_j.bound.contains(&block.name) {
        Ok(())
    } else {
        refuse(
            "C2 (destination first)",
            format!(
                "the block `{}` is allocated after the source is created",
                block.name
            ),
        )
    }
}

/// C5, in scope (thesis §5.2, condition 5): every name the source's new
/// LMAD (and an update's indices and array) reads is bound where the
/// source is created.
fn c5_in_scope(at_j: &Scope, needs: &[Name]) -> Result<(), Refusal> {
    #[cfg(feature = "planted-faults")]
    if crate::fault::active(crate::fault::Fault::CoalesceNoC5) {
        return Ok(());
    }
    match needs.iter().find(|x| !at_j.bound.contains(*x)) {
        None => Ok(()),
        Some(x) => refuse(
            "C5 (in scope)",
            format!("`{x}` is bound after the source is created"),
        ),
    }
}

impl Coalescer<'_> {
    /// C3, the destination is not used meanwhile (thesis §5.2, condition
    /// 3), proved: every access of the destination's block (or a block
    /// that may be it) from the source's creation to the root, other than
    /// the source's own writes and the root's copy, is disjoint from the
    /// source's new place. When the source is a kernel's result, accesses
    /// in the kernel's body are compared with the rows of *other*
    /// iterations: an iteration may read its own row, before writing it.
    #[allow(clippy::too_many_arguments)]
    fn c3(
        &mut self,
        stms: &[Stm],
        outer: &Scope,
        j: usize,
        k: usize,
        source: &Source,
        d: &Dest,
    ) -> Result<(), Refusal> {
        #[cfg(feature = "planted-faults")]
        if crate::fault::active(crate::fault::Fault::CoalesceNoC3) {
            return Ok(());
        }
        let mut sc = outer.clone();
        for s in &stms[..j] {
            sc.bind_stm(s);
        }
        let at_j = sc.clone();
        let mut acc: Vec<Access> = Vec::new();
        // The creation: its reads, and its writes other than the source's.
        let creation = &stms[j];
        let kernel_index = match &creation.exp.kind {
            ExpKind::Kernel(i, _, _) => Some(i.name.clone()),
            _ => None,
        };
        let skip = &source.family;
        // An `if`'s branches are checked each from its result's creation
        // on (the branch-specific C3), as results copied at the branch's
        // end.
        if source.made == Made::Fresh {
            walk_accesses(creation, &sc, &mut acc, skip, None, kernel_index.is_some());
        }
        sc.bind_stm(creation);
        for s in &stms[j + 1..k.min(stms.len())] {
            walk_accesses(s, &sc, &mut acc, skip, None, false);
            sc.bind_stm(s);
        }
        if let Some(root) = stms.get(k) {
            // The root's reads other than the source; its write is the copy.
            own_reads(root, &sc, &mut acc, skip, None);
        }
        let src = stms[j]
            .pats
            .iter()
            .find(|p| skip.contains(&p.name.name))
            .map_or_else(|| "the source".to_string(), |p| p.name.name.to_string());
        let kernel = match (&kernel_index, &creation.exp.kind) {
            (Some(i), ExpKind::Kernel(_, n, _)) => Some((i.clone(), n.clone())),
            _ => None,
        };
        self.clear_of(acc, &at_j, d, kernel, &src, creation.span)
    }

    /// The part of C3 that states the obligations: every access of the
    /// destination's block (or a block that may be it) is clear of the
    /// source's new place. `kernel`: the index and size of the kernel that
    /// makes the source, whose body's accesses are compared with the
    /// other iterations' rows. `at_j`: the scope where the source is made.
    fn clear_of(
        &mut self,
        acc: Vec<Access>,
        at_j: &Scope,
        d: &Dest,
        kernel: Option<(Name, Atom)>,
        src: &str,
        span: Span,
    ) -> Result<(), Refusal> {
        const C: &str = "C3 (destination unused meanwhile)";
        // A block allocated here is new each time its `alloc` runs: no
        // block bound before it (a loop's parameter holding an earlier
        // iteration's block, say) can be it.
        let fresh_dest = at_j
            .allocs
            .contains(&d.block.name)
            .then(|| at_j.order.get(&d.block.name).copied())
            .flatten();
        let mut seen: Vec<(Lmad<SExp>, Option<Name>)> = Vec::new();
        for a in acc {
            if !self.aliases.same(&a.block, &d.block.name) {
                continue;
            }
            if let (Some(dest), Some(blk)) = (fresh_dest, a.block_order) {
                if a.block != d.block.name && blk < dest {
                    continue;
                }
            }
            if a.elem != d.elem {
                return refuse(
                    C,
                    format!(
                        "{} {} the block as {}, the source is {}",
                        a.what,
                        if a.write { "writes" } else { "reads" },
                        a.elem,
                        d.elem
                    ),
                );
            }
            if seen.iter().any(|(l, i)| *l == a.lmad && *i == a.iteration) {
                continue;
            }
            seen.push((a.lmad.clone(), a.iteration.clone()));
            let (mine, mut facts) = match (&a.iteration, &kernel) {
                (Some(i), Some((_, n))) => {
                    // Another iteration's row.
                    let other = self.names.fresh(&format!("{}_other", i));
                    let ov = SExp::var(&other.name);
                    let facts = vec![
                        Fact::new(SExp::bin(BinOp::Le, SExp::int(0), ov.clone()), "index"),
                        Fact::new(SExp::bin(BinOp::Lt, ov.clone(), atom_sexp(n)), "bound"),
                        Fact::new(
                            SExp::bin(BinOp::Ne, ov.clone(), SExp::var(i)),
                            "two iterations",
                        ),
                    ];
                    (d.lmad.index(&ov), facts)
                }
                _ => (d.lmad.clone(), Vec::new()),
            };
            // The destination's facts in the scope of the creation (its
            // names are bound there), the access's in its own scope.
            for f in at_j.facts_for(&lmad_exps(&d.lmad)) {
                if !facts.iter().any(|g| g.exp == f.exp) {
                    facts.push(f);
                }
            }
            for f in &a.facts {
                if !facts.iter().any(|g| g.exp == f.exp) {
                    facts.push(f.clone());
                }
            }
            let o = Obligation::new(
                "coalesce",
                format!(
                    "{}: {} {} `{}` clear of `{src}`",
                    d.root,
                    a.what,
                    if a.write { "writes" } else { "reads" },
                    a.block
                ),
                Claim::Disjoint(mine, a.lmad),
                facts,
                span,
            );
            if let Some(r) = self.prove(o) {
                return refuse(C, r);
            }
        }
        Ok(())
    }

    /// Rewrites the source's family (and its views) into the
    /// destination, with the bounds checks before its creation.
    fn apply(&mut self, stms: &mut Vec<Stm>, plan: Plan, d: &Dest) {
        let at = plan.at;
        let same = |root: &str| d.again(root.to_string());
        // An `if` or a loop keeps binding its own block, which is now the
        // destination; a fresh source is given the destination's block.
        let own = !plan.branches.is_empty() || plan.looped.is_some();
        let block = if own {
            self.aliases.union(&plan.block, &d.block.name);
            Ident {
                name: plan.block.clone(),
                span: Span::DUMMY,
            }
        } else {
            d.block.clone()
        };
        let dest_block = Ident {
            name: d.block.name.clone(),
            span: Span::DUMMY,
        };
        // A plan over the statements before this one (a loop's initial
        // value, an array a branch returns), applied last.
        let mut outer_plan = None;
        match &mut stms[at].exp.kind {
            // Each branch builds its result in place and returns the
            // destination block for the `if`'s own.
            ExpKind::If(_, t, e) if !plan.branches.is_empty() => {
                for (br, (bp, mpos, inside)) in [t, e].into_iter().zip(plan.branches) {
                    if inside {
                        self.apply(&mut br.stms, bp, &same(""));
                    } else {
                        outer_plan = Some(bp);
                    }
                    if let Some(r) = br.result.get_mut(mpos) {
                        *r = dest_block.clone();
                    }
                }
            }
            _ => {}
        }
        if let Some(lp) = plan.looped {
            let lp = *lp;
            if let ExpKind::Loop(ps, init, _, body) = &mut stms[at].exp.kind {
                let mp = ps[lp.mpos].name.clone();
                set_place(&mut ps[lp.pos], &mp, &d.lmad);
                init[lp.mpos] = Atom::Var(dest_block.clone());
                *body = lp.body;
                if let Some(bp) = lp.result {
                    self.apply(&mut body.stms, bp, &same(""));
                    if let Some(r) = body.result.get_mut(lp.mpos) {
                        *r = dest_block.clone();
                    }
                }
            }
            outer_plan = Some(lp.init);
        }
        let mut moved: HashMap<Name, Lmad<SExp>> = HashMap::default();
        for p in &mut stms[at].pats {
            if plan.family.contains(&p.name.name) {
                set_place(p, &block, &d.lmad);
                moved.insert(p.name.name.clone(), d.lmad.clone());
            }
        }
        rewrite_views(&mut stms[at + 1..], &plan.block, &block, &mut moved);
        for (k, c) in plan.checks.into_iter().enumerate() {
            stms.insert(at + k, c);
        }
        // The source's block, now unused (C4: it held only the family and
        // its views), goes.
        if let Some(a) = plan.alloc {
            stms.remove(a);
        }
        // A loop's initial value or a branch's outside array last: its
        // checks and its block's removal come before this statement.
        if let Some(ip) = outer_plan {
            self.apply(stms, ip, &same(""));
        }
    }
}

fn set_place(p: &mut Pat, block: &Ident, l: &Lmad<SExp>) {
    if let Type::Array(a, _) = &mut p.ty {
        a.mem = Some(MemAnn {
            block: block.clone(),
            lmad: lmad_syn(&a.shape, l),
        });
    }
}

/// The views of moved arrays get their LMAD from their source's new one.
fn rewrite_views(stms: &mut [Stm], old: &Name, new: &Ident, moved: &mut HashMap<Name, Lmad<SExp>>) {
    for s in stms {
        let derived = match &s.exp.kind {
            ExpKind::Index(w, idx) => moved.get(&w.name).map(|l| {
                let mut l = l.clone();
                for i in idx {
                    l = l.index(&atom_sexp(i));
                }
                l
            }),
            ExpKind::Slice(w, sl) => moved.get(&w.name).map(|l| {
                l.slice(
                    &sl.iter()
                        .map(|(o, n)| (atom_sexp(o), atom_sexp(n)))
                        .collect::<Vec<_>>(),
                )
            }),
            ExpKind::Transpose(w) => moved.get(&w.name).and_then(|l| l.transpose()),
            // An update of a moved array lives where its operand does.
            ExpKind::Update(w, ..) => moved.get(&w.name).cloned(),
            _ => None,
        };
        if let (Some(l), Some(p)) = (derived, s.pats.first_mut()) {
            if place_of(&p.ty).is_some_and(|pl| &pl.block.name == old) {
                set_place(p, new, &l);
                moved.insert(p.name.name.clone(), l);
            }
        }
        let Stm { pats, exp, .. } = s;
        match &mut exp.kind {
            ExpKind::If(_, t, e) => {
                rewrite_views(&mut t.stms, old, new, moved);
                rewrite_views(&mut e.stms, old, new, moved);
            }
            ExpKind::Kernel(_, _, b) => rewrite_views(&mut b.stms, old, new, moved),
            ExpKind::Loop(ps, init, _, b) => {
                // A parameter carrying a moved array in its block, and the
                // loop's result with it, move the same way.
                for (q, p) in ps.iter_mut().enumerate() {
                    let Some(Atom::Var(w)) = init.get(q) else {
                        continue;
                    };
                    let Some(l) = moved.get(&w.name).cloned() else {
                        continue;
                    };
                    if place_of(&p.ty).is_some_and(|pl| &pl.block.name == old) {
                        set_place(p, new, &l);
                        moved.insert(p.name.name.clone(), l.clone());
                        if let Some(r) = pats.get_mut(q) {
                            if place_of(&r.ty).is_some_and(|pl| &pl.block.name == old) {
                                set_place(r, new, &l);
                                moved.insert(r.name.name.clone(), l);
                            }
                        }
                    }
                }
                rewrite_views(&mut b.stms, old, new, moved);
            }
            _ => {}
        }
    }
}
