//! The interference graph of memory blocks (Serup's thesis §6.3, fig.
//! 6.5, and its interference exceptions, §6.4 and §5.9).
//!
//! Two blocks *interfere* when they may hold live data at the same time:
//! their live points ([`crate::liveness`]) meet. Blocks that interfere
//! must not share memory; blocks that do not may. Liveness already works
//! on roots (every use through an existential block counts for each block
//! it may be), so an edge is never lost through an alias.
//!
//! **Exceptions.** Liveness is coarse inside a kernel: a block used in a
//! kernel is alive during all of it. Two blocks whose only meeting is one
//! kernel may still share when the kernel's iterations keep them apart,
//! which the thesis decides syntactically ("the same index function, read
//! then written at the same slice") and we state as proof obligations:
//!
//! 1. *In each iteration, one block is done before the other starts*: the
//!    accesses of the earlier block (the one alive before the kernel, or
//!    not after it) all come before those of the later one in the body
//!    (a loop inside the body counts as one step; the kernel's own result
//!    is copied into its row when the iteration ends, reading the body's
//!    result as it writes, so a block that copy writes is in use from the
//!    body's result on). This is checked on the program's order.
//! 2. *Iterations do not meet*: every place one iteration `i` accesses in
//!    one block is disjoint from every place another iteration `j != i`
//!    accesses in the other, where one of the two accesses writes: one
//!    `disjoint` obligation per pair, over the LMADs of the accesses
//!    ([`crate::access::walk_accesses`]), with iteration `j`'s names renamed
//!    apart. Blocks whose elements differ in size are refused here (their
//!    LMADs count different units).
//!
//! The classic case (thesis fig. 6.6): `ys = map (+ k) xs`, which reads
//! `xs[i]` and writes `ys[i]` in iteration `i`, may build `ys` in `xs`'s
//! block. The same rule covers arrays made inside a kernel body in blocks
//! from outside it (after coalescing or expansion): they share when each
//! iteration's places are its own (thesis §5.9's "data race
//! interferences").
//!
//! **Element sizes inside kernels.** Blocks allocated inside a kernel body
//! are per-iteration blocks that memory expansion will interleave, each by
//! its element size (`a -> a*n + i`, in elements): a block holding
//! elements of two sizes would give iteration `i`'s 8-byte elements and
//! iteration `i+1`'s 4-byte elements overlapping bytes. So two such blocks
//! of different element sizes interfere (expansion refuses a mixed block).

use crate::access::{lmad_exps, walk_accesses, Access};
use crate::aliases::MemAliases;
use crate::liveness::{Liveness, Via};
use crate::names::Names;
use crate::obligation::{Claim, Fact, Obligation, Outcome, Prover, Verdict};
use funmem_lang::ast::*;
use funmem_lang::subst::Subst;
use funmem_lang::Name;
use rustc_hash::FxHashSet as HashSet;

/// The interference graph of a program's blocks (indices of
/// [`Liveness::roots`]).
#[derive(Clone, Debug, Default)]
pub struct Interference {
    adj: Vec<Vec<u64>>,
    /// Each edge, with why.
    pub edges: Vec<(usize, usize, String)>,
    /// Each pair alive together that an exception separates, with why.
    pub exceptions: Vec<(usize, usize, String)>,
}

/// What the exceptions need to prove their obligations.
pub struct Provers<'a> {
    /// The prover.
    pub prover: &'a dyn Prover,
    /// Fresh names (iteration `j`'s copies).
    pub names: &'a mut Names,
    /// The obligations stated, with their verdicts.
    pub obligations: &'a mut Vec<(Obligation, Verdict)>,
}

impl Interference {
    /// The interference graph of `lv`'s blocks.
    pub fn of(lv: &Liveness, aliases: &MemAliases, pv: &mut Provers<'_>) -> Interference {
        let n = lv.roots.len();
        let mut g = Interference {
            adj: vec![vec![0; n.div_ceil(64)]; n],
            ..Interference::default()
        };
        for a in 0..n {
            for b in a + 1..n {
                if let Some(why) = elem_rule(lv, a, b) {
                    g.add(a, b, why);
                    continue;
                }
                let mut ov = lv.overlap(a, b);
                if let Some(s) = exclusive(lv, a, b) {
                    // After the `if`, at most one of the two was made.
                    ov.retain(|&x| x < s);
                }
                let Some(&first) = ov.first() else {
                    continue;
                };
                let alive = format!("both alive at {}", lv.points[first].label);
                match one_kernel(lv, a, b, &ov) {
                    Some(k) => match exception(lv, aliases, k, a, b, pv) {
                        Ok(why) => g.exceptions.push((a, b, why)),
                        Err(why) => g.add(a, b, format!("{alive} ({why})")),
                    },
                    None => g.add(a, b, alive),
                }
            }
        }
        g
    }

    fn add(&mut self, a: usize, b: usize, why: String) {
        self.adj[a][b / 64] |= 1 << (b % 64);
        self.adj[b][a / 64] |= 1 << (a % 64);
        self.edges.push((a.min(b), a.max(b), why));
    }

    /// Whether blocks `a` and `b` interfere.
    pub fn interferes(&self, a: usize, b: usize) -> bool {
        self.adj
            .get(a)
            .and_then(|r| r.get(b / 64))
            .is_some_and(|w| w & (1 << (b % 64)) != 0)
    }

    /// The graph, one line per edge and per exception.
    pub fn lines(&self, lv: &Liveness) -> Vec<String> {
        let name = |k: usize| lv.roots[k].name.name.to_string();
        let mut out: Vec<String> = self
            .edges
            .iter()
            .map(|(a, b, why)| format!("interference: `{}` - `{}`: {why}", name(*a), name(*b)))
            .collect();
        out.extend(self.exceptions.iter().map(|(a, b, why)| {
            format!(
                "interference: `{}` - `{}` do not interfere: {why}",
                name(*a),
                name(*b)
            )
        }));
        out
    }
}

/// When blocks `a` and `b` are allocated in the two branches of one `if`,
/// its join: from there on, at most one of them was made by that run of
/// the `if` (an earlier run's block, alive around a loop, is alive before
/// the join too, where the overlap still counts).
fn exclusive(lv: &Liveness, a: usize, b: usize) -> Option<usize> {
    let (pa, pb) = (
        &lv.points[lv.roots[a].point].ifs,
        &lv.points[lv.roots[b].point].ifs,
    );
    let (s, _) = pa
        .iter()
        .rev()
        .find(|(s, k)| pb.iter().any(|(t, l)| s == t && k != l))?;
    lv.compounds.iter().find(|c| c.start == *s).map(|c| c.join)
}

/// Whether a block's allocation is inside a kernel.
fn in_kernel(lv: &Liveness, k: usize) -> bool {
    lv.points[lv.roots[k].point]
        .enclosing
        .iter()
        .any(|&c| lv.compounds[c].via == Via::Kernel)
}

/// Blocks allocated inside kernels, of elements of different sizes.
fn elem_rule(lv: &Liveness, a: usize, b: usize) -> Option<String> {
    #[cfg(feature = "planted-faults")]
    if crate::fault::active(crate::fault::Fault::ReuseNoElemSize) {
        return None;
    }
    let (ea, eb) = (lv.roots[a].elem, lv.roots[b].elem);
    (ea.size() != eb.size() && in_kernel(lv, a) && in_kernel(lv, b)).then(|| {
        format!(
            "blocks of a kernel body with elements of {} and {} bytes (expansion interleaves each block by its element size)",
            ea.size(),
            eb.size()
        )
    })
}

/// The outermost kernel that holds every point where `a` and `b` are
/// both alive, when neither block is allocated inside it.
fn one_kernel(lv: &Liveness, a: usize, b: usize, ov: &[usize]) -> Option<usize> {
    let (pa, pb) = (lv.roots[a].point, lv.roots[b].point);
    let (lo, hi) = (*ov.first()?, *ov.last()?);
    // Compounds are numbered outside in, so the first that fits is the
    // outermost.
    (0..lv.compounds.len()).find(|&c| {
        let k = &lv.compounds[c];
        k.via == Via::Kernel
            && k.start <= lo
            && hi <= k.join
            && !lv.contains(c, pa)
            && !lv.contains(c, pb)
    })
}

/// The names bound inside a body (patterns, loop parameters and indices,
/// kernel indices).
fn bound_in(b: &Body, out: &mut Vec<Name>) {
    for s in &b.stms {
        out.extend(s.pats.iter().map(|p| p.name.name.clone()));
        match &s.exp.kind {
            ExpKind::If(_, t, e) => {
                bound_in(t, out);
                bound_in(e, out);
            }
            ExpKind::Loop(ps, _, form, lb) => {
                out.extend(ps.iter().map(|p| p.name.name.clone()));
                if let LoopForm::For(i, _) = form {
                    out.push(i.name.clone());
                }
                bound_in(lb, out);
            }
            ExpKind::Kernel(i, _, kb) => {
                out.push(i.name.clone());
                bound_in(kb, out);
            }
            _ => {}
        }
    }
}

/// The exception at kernel `c` for blocks `a` and `b` (see the module
/// doc): `Ok(why)` when it separates them, `Err(why not)` otherwise.
fn exception(
    lv: &Liveness,
    aliases: &MemAliases,
    c: usize,
    a: usize,
    b: usize,
    pv: &mut Provers<'_>,
) -> Result<String, String> {
    let k = &lv.compounds[c];
    let (Some(stm), Some(scope)) = (&k.stm, &k.scope) else {
        return Err("no kernel".into());
    };
    let ExpKind::Kernel(i, n, kb) = &stm.exp.kind else {
        return Err("no kernel".into());
    };
    let side = |r: usize| {
        let before = (0..k.start).any(|x| lv.alive(r, x));
        let after = (k.join + 1..lv.points.len()).any(|x| lv.alive(r, x));
        (before, after)
    };
    let ((ab, aa), (bb, ba)) = (side(a), side(b));
    if (ab && aa) || (bb && ba) {
        return Err("one is alive before and after the kernel".into());
    }
    // In-iteration steps: touches inside the kernel, a nested loop or
    // kernel counted as one step.
    let steps = |r: usize| -> Vec<usize> {
        lv.raw[r]
            .iter()
            .filter(|&&x| k.start < x && x <= k.join)
            .map(|&x| {
                let chain = &lv.points[x].enclosing;
                let inner = chain
                    .iter()
                    .position(|&d| d == c)
                    .and_then(|p| chain.get(p + 1));
                match inner {
                    Some(&d) => lv.compounds[d].join,
                    None => x,
                }
            })
            .collect()
    };
    // The kernel's own result is copied into its row as the iteration
    // ends, reading the body's result while it writes: a block written by
    // that copy is in use from the body's result on.
    let result_point = k.join.saturating_sub(1);
    let ordered = |e: usize, l: usize| -> bool {
        let (se, mut sl) = (steps(e), steps(l));
        if sl.contains(&k.join) {
            sl.push(result_point);
        }
        match (se.iter().max(), sl.iter().min()) {
            (Some(x), Some(y)) => x < y,
            _ => true,
        }
    };
    let (earlier, later) = if ab || ba {
        (a, b)
    } else if bb || aa {
        (b, a)
    } else if ordered(a, b) {
        (a, b)
    } else {
        (b, a)
    };
    if !ordered(earlier, later) {
        return Err(format!(
            "in an iteration, `{}` is used after `{}` is",
            lv.roots[earlier].name.name, lv.roots[later].name.name
        ));
    }
    // The accesses of the kernel, per iteration; its own result rows.
    let mut acc: Vec<Access> = Vec::new();
    walk_accesses(stm, scope, &mut acc, &HashSet::default(), None, true);
    acc.retain(|x| x.iteration.is_some());
    let mut inner = (**scope).clone();
    inner.bound.insert(i.name.clone());
    inner.ranges.insert(i.name.clone(), SExp::Atom(n.clone()));
    for p in &stm.pats {
        if let Some(pl) = crate::access::place_of(&p.ty) {
            let row = pl.lmad.index(&SExp::var(&i.name));
            let mut x = Access::of(
                &pl,
                row,
                true,
                "the kernel's result row".into(),
                &inner,
                Some(&i.name),
            );
            x.facts = inner.facts_for(&lmad_exps(&x.lmad));
            acc.push(x);
        }
    }
    let of = |r: usize| -> Vec<&Access> {
        let name = &lv.roots[r].name.name;
        acc.iter()
            .filter(|x| aliases.roots(&x.block).contains(name))
            .collect()
    };
    let (ae, al) = (of(earlier), of(later));
    // Iteration j's names, renamed apart.
    let mut bound = vec![i.name.clone()];
    bound_in(kb, &mut bound);
    let mut ren = Subst::default();
    for x in &bound {
        let y = pv.names.fresh(&format!("{x}_j"));
        ren.0.insert(x.clone(), Atom::Var(y));
    }
    let j = match ren.0.get(&i.name) {
        Some(Atom::Var(j)) => j.name.clone(),
        _ => return Err("no iteration index".into()),
    };
    let mut proved = 0usize;
    let mut seen: Vec<(Lmad, Lmad)> = Vec::new();
    for x in &ae {
        for y in &al {
            if !x.write && !y.write {
                continue;
            }
            if x.elem.size() != y.elem.size() {
                return Err(format!(
                    "{} and {} use elements of {} and {} bytes",
                    x.what,
                    y.what,
                    x.elem.size(),
                    y.elem.size()
                ));
            }
            let other = y.lmad.map(|e| ren.sexp(e));
            if seen.iter().any(|(p, q)| *p == x.lmad && *q == other) {
                continue;
            }
            seen.push((x.lmad.clone(), other.clone()));
            let jv = SExp::var(&j);
            let mut facts = vec![
                Fact::new(SExp::bin(BinOp::Le, SExp::int(0), jv.clone()), "index"),
                Fact::new(
                    SExp::bin(BinOp::Lt, jv.clone(), SExp::Atom(n.clone())),
                    "bound",
                ),
                Fact::new(
                    SExp::bin(BinOp::Ne, jv, SExp::var(&i.name)),
                    "two iterations",
                ),
            ];
            for f in x.facts.iter().chain(
                &y.facts
                    .iter()
                    .map(|f| Fact::new(ren.sexp(&f.exp), f.origin.clone()))
                    .collect::<Vec<_>>(),
            ) {
                if !facts.iter().any(|g| g.exp == f.exp) {
                    facts.push(f.clone());
                }
            }
            let o = Obligation::new(
                "reuse",
                format!(
                    "kernel {}: {} of `{}` (iteration {}) clear of {} of `{}` (iteration {})",
                    crate::liveness::stm_label(stm),
                    x.what,
                    lv.roots[earlier].name.name,
                    i.name,
                    y.what,
                    lv.roots[later].name.name,
                    j
                ),
                Claim::Disjoint(x.lmad.clone(), other),
                facts,
                stm.span,
            );
            #[cfg(feature = "planted-faults")]
            if crate::fault::active(crate::fault::Fault::ReuseNoExceptionProof) {
                proved += 1;
                continue;
            }
            let v = pv.prover.prove(&o);
            let outcome = v.outcome.clone();
            let claim = crate::coalesce::claim_string(&o.claim);
            let prover = v.prover;
            pv.obligations.push((o, v));
            if !matches!(outcome, Outcome::Proved) {
                return Err(format!(
                    "obligation `{claim}` {} ({prover})",
                    outcome.word()
                ));
            }
            proved += 1;
        }
    }
    Ok(format!(
        "they meet only in kernel {}, where each iteration is done with `{}` before it uses `{}` and no two iterations' places meet ({proved} obligations proved)",
        crate::liveness::stm_label(stm),
        lv.roots[earlier].name.name,
        lv.roots[later].name.name
    ))
}

type Lmad = funmem_lang::lmad::Lmad<SExp>;
