//! Memory expansion (MemoryExpand, IFL 2022 §5): the passes `expand-cpu`
//! and `expand-gpu`.
//!
//! A GPU kernel cannot allocate efficiently, so every `alloc` inside a
//! kernel body is hoisted out of the kernel, into one block with room for
//! every iteration, and the index functions of the arrays in the block are
//! rewritten so that iteration `i` of `n` uses its own part. The rewrite is
//! an affine map of addresses, applied to every LMAD of the block (so
//! slices, transposes and copies of the arrays follow):
//!
//! - `expand-cpu`, iteration-major: `a ↦ i*M + a`. Iteration `i` owns the
//!   contiguous part `[i*M, (i+1)*M)`: good locality for one thread.
//! - `expand-gpu`, iteration-innermost: `a ↦ a*n + i`, so an LMAD
//!   `o + {(k : s) ...}` becomes `o*n + i + {(k : s*n) ...}`. Consecutive
//!   iterations (threads) touch consecutive addresses: coalesced access.
//!   The paper's formula (`se' + x + {(k : s*y)}`) leaves the offset
//!   unscaled; an array at a non-zero offset of its block then overlaps
//!   another thread's part (papers/ifl2022/errata.md, erratum 12).
//!
//! `M` is the allocation's size when it is the same in every iteration
//! (the paper's case). When the size depends on the kernel index (after
//! inlining the body's scalar definitions), `M = max(se(0), se(n-1))` is
//! computed before the kernel. Either way the pass emits the obligation
//! that `se(i) <= M` for every iteration (each member of a class fits its
//! part): by construction for an invariant size, but proved, not assumed,
//! so that a wrong `M` skips the rewrite instead of overlapping the parts.
//!
//! Data-dependent sizes. A size that depends on data read in the kernel
//! (or a variant size whose obligation the provers cannot settle) gets its
//! maximum over the iterations computed before the kernel by the *slice*
//! of the body it depends on: the top-level statements it needs, which
//! bind only scalars or views and read only what is bound outside the
//! kernel ([`slice_stm`]). Every iteration runs them before the
//! allocation, so running them first gets stuck only where the kernel
//! would. At host level the slice is a kernel writing each iteration's
//! size, followed by `reduce (max) floor sizes`; inside an enclosing
//! kernel (no block may be allocated there) a loop keeping the running
//! maximum, which the enclosing kernel's expansion can slice in turn. The
//! obligation `se(i) <= M` carries the fact that `M` is that maximum: it
//! holds by construction, and the provers prove it from the fact.
//!
//! Kernels are processed innermost first, so an allocation nested several
//! kernels deep is hoisted out of each in turn and ends up before the
//! outermost kernel, expanded by every kernel's iteration count.
//! Allocations inside an `if` of the body are hoisted too, with size
//! `max(se, 0)`: hoisting one out of a branch not taken must not make the
//! program stuck. Blocks that an `if`
//! returns are expanded together with the `if`'s own block (its pattern's
//! LMAD is mapped the same way); in the CPU layout they share one `M`.
//!
//! Loops. A loop's block parameters and the block of its pattern join the
//! class of the blocks that flow into them (the initial block, each
//! iteration's returned block), as an `if`'s results do, and their
//! existential LMADs are mapped with the class. An allocation inside a
//! loop of a kernel body is hoisted out of the kernel (and so out of the
//! loop: every iteration of the loop in kernel iteration `i` reuses part
//! `i`, with size `max(se, 0)`, as the loop may run no iteration) only when
//! its size is the same in every iteration of the loop (it mentions no
//! loop parameter nor loop index, after inlining), and its block is not
//! carried to the next iteration (it is in the class of none of the loop
//! body's results): an array that lives only within one iteration is dead
//! before the next one allocates, so the iterations can share the part. A
//! loop-variant size is left (`left, size varies with a loop`), as is a
//! carried block (`left, block carried around a loop`; sharing it would
//! make an iteration overwrite what it reads). Allocations in loops at
//! host level are never moved: kernels inside such a loop are expanded in
//! the loop body, and what they hoist stays in it.
//!
//! For each expanded block the pass emits the obligations the rewrite
//! relies on: each member fits its part, the parts of two iterations are
//! disjoint, and every part lies inside the new block; it applies the
//! rewrite only when all are proved. It counts what it did ([`COUNTS`]).
//! [`allocs_in_kernels`] lists the allocations left inside kernels.
//!
//! **Sizes never wrap.** The hoisted block has `M * n` cells, a product the
//! source never computes: with a huge `M` from a branch that is not taken,
//! or a kernel of zero iterations, plain 64-bit arithmetic would wrap to a
//! negative size (stuck) or a small one (a wrong layout) where the source
//! runs. So the total is the saturating product
//! `min(M, n_cap) * n` with `n_cap = 9223372036854775807 / max(n, 1)`
//! ([`saturating_mul`]), and `M >= -1` (a part's size is `max(se, 0)` in a
//! branch and `max(se, -1)` outside one: a negative size stays negative, so
//! the hoisted allocation gets stuck as the first iteration's did). For
//! `M >= -1` and `n >= 0` it is exact when `M * n` fits in 64 bits, and
//! otherwise lies in `(i64::MAX - n, i64::MAX]`, at least 2^62: an
//! allocation that any heap limit below 2^62 cells refuses (a resource
//! limit, not a behaviour).
//! Nested saturating products keep this: when the exact product fits, so
//! does every factor that matters and each is exact; when it does not, the
//! result is at least 2^62 (a factor 0 gives 0, exactly). (A negative `n`
//! is not saturated: the kernel right after the hoisted statements gets
//! stuck on it.) The alternative, an obligation `M * n <= i64::MAX`, could
//! rarely be proved: sizes are program inputs with no upper bound.
//!
//! The addresses inside the kernel need no saturation: when the total
//! fits, every address of iteration `i` is below it, and so is every
//! intermediate (`i*M + a` with `a < M`, `i < n`, is below `M*n`; `a*n + i`
//! likewise, and a stride `s*n` of a dimension of two or more elements is
//! at most `(M - 1) * n`). When it does not fit, the kernel never runs.
//! Obligations are stated over the exact products (the pass keeps them
//! beside the saturated ones, for blocks hoisted again out of an enclosing
//! kernel), which is what the provers reason about.

use crate::names::Names;
use crate::obligation::{Claim, Fact, Obligation, Outcome, Prover, Verdict};
use crate::pass::{Counts, PassOutput};
use crate::walk;
use funmem_lang::ast::*;
use funmem_lang::diag::Diagnostic;
use funmem_lang::lmad::{Dim, Lmad, Num};
use funmem_lang::prim::Prim;
use funmem_lang::subst::Subst;
use funmem_lang::{Name, Span};
use std::collections::{HashMap, HashSet};

/// Where each iteration's part goes in the expanded block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Iteration-major: part `i` is `[i*M, (i+1)*M)`.
    Cpu,
    /// Iteration-innermost: part `i` is `{i, i+n, i+2n, ...}`.
    Gpu,
}

impl Layout {
    fn pass_name(self) -> &'static str {
        match self {
            Layout::Cpu => "expand-cpu",
            Layout::Gpu => "expand-gpu",
        }
    }
}

/// The `expand-cpu` pass.
pub fn expand_cpu_pass(p: &Program, prover: &dyn Prover) -> Result<PassOutput, Diagnostic> {
    Ok(expand(p, Layout::Cpu, prover))
}

/// The `expand-gpu` pass.
pub fn expand_gpu_pass(p: &Program, prover: &dyn Prover) -> Result<PassOutput, Diagnostic> {
    Ok(expand(p, Layout::Gpu, prover))
}

/// Memory expansion of a FUNMEM program in the given layout.
pub fn expand(p: &Program, layout: Layout, prover: &dyn Prover) -> PassOutput {
    let mut ex = Expander {
        layout,
        prover,
        names: Names::of_program(p),
        obligations: Vec::new(),
        plain: HashMap::new(),
        counts: Counts::default(),
        depth: 0,
    };
    let mut facts = Vec::new();
    for q in &p.params {
        size_facts(&q.ty, &mut facts);
    }
    let body = ex.body(&p.body, &facts);
    PassOutput {
        program: Program { body, ..p.clone() },
        obligations: ex.obligations,
        counts: ex.counts,
        explain: Vec::new(),
    }
}

/// Every `alloc` inside a kernel body: the allocated block and where.
pub fn allocs_in_kernels(p: &Program) -> Vec<(Name, Span)> {
    fn walk(b: &Body, in_kernel: bool, out: &mut Vec<(Name, Span)>) {
        for s in &b.stms {
            match &s.exp.kind {
                ExpKind::Alloc(..) if in_kernel => {
                    out.push((s.pats[0].name.name.clone(), s.span));
                }
                ExpKind::Kernel(_, _, kb) => walk(kb, true, out),
                ExpKind::If(_, b1, b2) => {
                    walk(b1, in_kernel, out);
                    walk(b2, in_kernel, out);
                }
                ExpKind::Loop(_, _, _, lb) => walk(lb, in_kernel, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(&p.body, false, &mut out);
    out
}

/// The facts `0 <= i` and `i < n` of a kernel index.
fn index_facts(i: &SExp, n: &SExp) -> [Fact; 2] {
    [
        Fact::new(
            SExp::bin(BinOp::Le, SExp::int(0), i.clone()),
            "kernel index",
        ),
        Fact::new(SExp::bin(BinOp::Lt, i.clone(), n.clone()), "kernel bound"),
    ]
}

/// `x >= 0` for every variable that is the size of an array of this type.
fn size_facts(t: &Type, out: &mut Vec<Fact>) {
    if let Type::Array(a, _) = t {
        for s in &a.shape {
            if let Atom::Var(x) = s {
                let f = SExp::bin(BinOp::Ge, SExp::var(&x.name), SExp::int(0));
                if !out.iter().any(|g: &Fact| g.exp == f) {
                    out.push(Fact {
                        exp: f,
                        origin: "array size".into(),
                        span: x.span,
                    });
                }
            }
        }
    }
}

struct Expander<'a> {
    layout: Layout,
    prover: &'a dyn Prover,
    names: Names,
    obligations: Vec<(Obligation, Verdict)>,
    /// The exact (unsaturated) value of each size this pass computes: the
    /// part sizes and the hoisted blocks' sizes, by name. Obligations about
    /// a block hoisted again out of an enclosing kernel are stated over
    /// these, so that the provers reason about plain products.
    plain: HashMap<Name, SExp>,
    /// What the pass did: per kernel an allocation is found in, whether it
    /// was hoisted out of it or why not ([`COUNTS`]).
    counts: Counts,
    /// How many kernels enclose the body being expanded.
    depth: usize,
}

/// The names of the pass's counts, each counted once per kernel an
/// allocation is found in (an allocation hoisted out of two nested kernels
/// counts twice): found, hoisted, and why one was not.
pub const COUNTS: [&str; 12] = [
    KERNEL_ALLOCATIONS,
    EXPANDED,
    VARIANT,
    VARIANT_EXPANDED,
    DATA,
    DATA_EXPANDED,
    LEFT_UNKNOWN_SIZE,
    LEFT_LOOP_VARIANT,
    LEFT_SHARED,
    LEFT_LOOP_CARRIED,
    LEFT_MIXED,
    LEFT_UNPROVED,
];
/// Allocations found in a kernel body.
pub const KERNEL_ALLOCATIONS: &str = "kernel allocations";
/// Of those, hoisted out of the kernel.
pub const EXPANDED: &str = "expanded";
/// Allocations whose size depends on the kernel index.
pub const VARIANT: &str = "variant sizes";
/// Of those, hoisted out of the kernel.
pub const VARIANT_EXPANDED: &str = "variant sizes expanded";
/// Allocations whose size depends on data read in the kernel (their
/// maximum is computed before it).
pub const DATA: &str = "data-dependent sizes";
/// Of those, hoisted out of the kernel.
pub const DATA_EXPANDED: &str = "data-dependent sizes expanded";
/// Left: the size is not known before the kernel (it depends on data read
/// in the kernel, or may divide by zero).
pub const LEFT_UNKNOWN_SIZE: &str = "left, size unknown before the kernel";
/// Left: the allocation is in a loop of the kernel body and its size
/// depends on the loop's parameters or index (it may differ between the
/// loop's iterations; no bound on it is known before the kernel).
pub const LEFT_LOOP_VARIANT: &str = "left, size varies with a loop";
/// Left: the block holds arrays (or the class allocations) whose elements
/// have different sizes: a part counted in elements of one type would not
/// separate the iterations' arrays of another.
pub const LEFT_MIXED: &str = "left, element types of different sizes";
/// Left: the allocation is in a loop of the kernel body and its block is
/// carried to the next iteration (a body result): one part per kernel
/// iteration would make consecutive loop iterations share it.
pub const LEFT_LOOP_CARRIED: &str = "left, block carried around a loop";
/// Left: the block shares an `if` result with a block not allocated in the
/// kernel.
pub const LEFT_SHARED: &str = "left, block shared with another";
/// Left: an obligation was not proved.
pub const LEFT_UNPROVED: &str = "left, obligation not proved";

/// An allocation found in a kernel body.
struct Found {
    /// The block.
    block: Name,
    /// Its size as written.
    size: SExp,
    /// Conditions of the `if` branches it is in (empty: unconditional).
    conds: Vec<SExp>,
    /// Inside a loop of the kernel body (which may run no iteration).
    in_loop: bool,
    /// The element type the size counts (the hoisted block counts it too).
    elem: Prim,
    span: Span,
}

impl Expander<'_> {
    /// Expands the kernels of a body; `facts` hold what is known there.
    fn body(&mut self, b: &Body, facts: &[Fact]) -> Body {
        let mut facts = facts.to_vec();
        let mut stms = Vec::with_capacity(b.stms.len());
        for s in &b.stms {
            match &s.exp.kind {
                ExpKind::Kernel(i, n, kb) => {
                    let mut inner_facts = facts.clone();
                    // The facts point at the kernel's index and bound.
                    let [mut lo, mut hi] = index_facts(&SExp::var(&i.name), &SExp::Atom(n.clone()));
                    lo.span = i.span;
                    hi.span = n.span();
                    inner_facts.extend([lo, hi]);
                    // Inner kernels first: their allocations land in this
                    // body. Then the names bound inside this kernel are
                    // those of the body as it now is.
                    self.depth += 1;
                    let kb2 = self.body(kb, &inner_facts);
                    self.depth -= 1;
                    let inside = bound_in(&kb2);
                    let (pre, k2) = self.hoist(s, i, n, &kb2, &facts, &inside);
                    stms.extend(pre);
                    stms.push(k2);
                }
                ExpKind::If(c, b1, b2) => {
                    let mut f1 = facts.clone();
                    f1.push(Fact::new(
                        SExp::bin(BinOp::Ne, SExp::var(&c.name), SExp::int(0)),
                        "branch condition",
                    ));
                    let mut f2 = facts.clone();
                    f2.push(Fact::new(
                        SExp::bin(BinOp::Eq, SExp::var(&c.name), SExp::int(0)),
                        "branch condition",
                    ));
                    let n1 = self.body(b1, &f1);
                    let n2 = self.body(b2, &f2);
                    stms.push(Stm {
                        exp: Exp {
                            kind: ExpKind::If(c.clone(), n1, n2),
                            span: s.exp.span,
                        },
                        ..s.clone()
                    });
                }
                ExpKind::Loop(ps, init, form, lb) => {
                    // The kernels of a loop body are expanded in it: what
                    // they hoist stays inside the loop (allocations at host
                    // level are never moved out of a loop).
                    let mut lf = facts.clone();
                    if let LoopForm::For(i, n) = form {
                        let [mut lo, mut hi] =
                            index_facts(&SExp::var(&i.name), &SExp::Atom(n.clone()));
                        lo.origin = "loop index".into();
                        hi.origin = "loop bound".into();
                        lf.extend([lo, hi]);
                    }
                    for p in ps {
                        size_facts(&p.ty, &mut lf);
                    }
                    let lb2 = self.body(lb, &lf);
                    stms.push(Stm {
                        exp: Exp {
                            kind: ExpKind::Loop(ps.clone(), init.clone(), form.clone(), lb2),
                            span: s.exp.span,
                        },
                        ..s.clone()
                    });
                }
                _ => stms.push(s.clone()),
            }
            for p in &s.pats {
                size_facts(&p.ty, &mut facts);
            }
        }
        Body {
            stms,
            result: b.result.clone(),
            span: b.span,
        }
    }

    /// Hoists the allocations of kernel body `kb` (kernel `i < n`, the
    /// statement `s`) that can be expanded; returns the statements to put
    /// before the kernel and the new kernel statement.
    fn hoist(
        &mut self,
        s: &Stm,
        i: &Ident,
        n: &Atom,
        kb: &Body,
        facts: &[Fact],
        inside: &HashSet<Name>,
    ) -> (Vec<Stm>, Stm) {
        let rebuild = |kb: Body| Stm {
            exp: Exp {
                kind: ExpKind::Kernel(i.clone(), n.clone(), kb),
                span: s.exp.span,
            },
            ..s.clone()
        };
        // Scalar definitions of the body, to inline into sizes.
        let mut defs: HashMap<Name, SExp> = HashMap::new();
        scalar_defs(kb, &mut defs);
        let mut found = Vec::new();
        find_allocs(kb, &[], false, &mut found);
        if found.is_empty() {
            return (Vec::new(), rebuild(kb.clone()));
        }
        // Blocks returned by ifs join the classes of the blocks they alias.
        let candidates: HashSet<Name> = found.iter().map(|f| f.block.clone()).collect();
        let mut classes = Classes::default();
        let mut tainted: HashSet<Name> = HashSet::new();
        if_aliases(kb, &candidates, &mut classes, &mut tainted);
        // Blocks allocated in a loop and returned by its body.
        let mut carried: HashSet<Name> = HashSet::new();
        loop_carried(kb, &mut classes, &mut carried);
        // The names a loop of the body binds (parameters, index).
        let mut loop_names: HashSet<Name> = HashSet::new();
        loop_bound(kb, false, &mut loop_names);

        let mut pre = Vec::new();
        let mut maps: HashMap<Name, AddrMap> = HashMap::new();
        let mut renames = Subst::default();
        let mut removed: HashSet<Name> = HashSet::new();
        // Group found allocations by class.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut group_of: HashMap<Name, usize> = HashMap::new();
        for (k, f) in found.iter().enumerate() {
            let root = classes.find(&f.block);
            match group_of.get(&root) {
                Some(&g) => groups[g].push(k),
                None => {
                    group_of.insert(root, groups.len());
                    groups.push(vec![k]);
                }
            }
        }
        let ivar = SExp::var(&i.name);
        let nexp = SExp::Atom(n.clone());
        // `i64::MAX / max(n, 1)`, bound once before the kernel when a block
        // is hoisted: the cap of the parts' sizes in saturating products.
        let mut cap: Option<SExp> = None;
        // A class whose obligations are not proved (a size of the kernel
        // index beyond the provers) is tried again with its sizes treated
        // as data-dependent: a maximum computed before the kernel bounds
        // them by construction.
        let mut work: Vec<(Vec<usize>, bool)> = groups.into_iter().map(|g| (g, false)).collect();
        let mut next = 0;
        while let Some((g, force)) = work.get(next).cloned() {
            next += 1;
            let saved = (self.counts.clone(), self.obligations.len());
            let members: Vec<&Found> = g.iter().map(|&k| &found[k]).collect();
            let class_names = classes.members(&members[0].block);
            // Every size over names bound outside the kernel and the kernel
            // index, and free of division (a size evaluated before a kernel
            // of no iterations must not divide by zero where the source
            // does not).
            // The plain sizes (of the blocks and parts this pass made, the
            // products before saturation) are what obligations speak of.
            let mut plain_defs = defs.clone();
            for (x, e) in plain_defs.iter_mut() {
                if let Some(p) = self.plain.get(x) {
                    *e = p.clone();
                }
            }
            let count = members.len() as u64;
            self.counts.add(KERNEL_ALLOCATIONS, count);
            if class_names.iter().any(|m| carried.contains(m)) {
                self.counts.add(LEFT_LOOP_CARRIED, count);
                continue;
            }
            if class_names.iter().any(|m| tainted.contains(m)) {
                self.counts.add(LEFT_SHARED, count);
                continue;
            }
            // Parts and LMADs count elements: the mapping of a block's
            // arrays is right only when every array in it and every
            // allocation of the class has elements of one size (an f32
            // array in an i64 block would move by half a part).
            let mut widths: Vec<u64> = members.iter().map(|f| f.elem.size()).collect();
            elem_sizes_in(kb, &class_names, &mut widths);
            if widths.iter().any(|w| *w != widths[0]) {
                self.counts.add(LEFT_MIXED, count);
                continue;
            }
            // The statements that compute data-dependent maxima (emitted
            // only if the class is expanded), and for each such member the
            // fact that its size is at most that maximum.
            let mut pre_g = Vec::new();
            let mut data_facts: HashMap<usize, Fact> = HashMap::new();
            let mut sizes: Option<Vec<(SExp, SExp)>> = Some(Vec::new());
            for (k, f) in members.iter().enumerate() {
                let known = outer_size(&f.size, &defs, inside, &i.name)
                    .filter(|se| !force && !crate::simplify::sexp_may_fail(se))
                    .and_then(|code| {
                        let plain = self.plain.get(&f.block).unwrap_or(&f.size);
                        Some((code, outer_size(plain, &plain_defs, inside, &i.name)?))
                    });
                let got = match known {
                    Some(pair) => Some(pair),
                    None => {
                        self.data_max(f, kb, i, n, &defs, inside, &mut pre_g)
                            .map(|(m, fact)| {
                                data_facts.insert(k, fact);
                                (SExp::var(&m.name), SExp::var(&m.name))
                            })
                    }
                };
                match (got, sizes.as_mut()) {
                    (Some(pair), Some(v)) => v.push(pair),
                    _ => sizes = None,
                }
            }
            self.counts.add(DATA, data_facts.len() as u64);
            let Some(sizes) = sizes else {
                // Would it be known if the loops' names were not local?
                let not_loop: HashSet<Name> = inside.difference(&loop_names).cloned().collect();
                let loop_variant = members
                    .iter()
                    .any(|f| f.in_loop && outer_size(&f.size, &defs, &not_loop, &i.name).is_some());
                let why = if loop_variant {
                    LEFT_LOOP_VARIANT
                } else {
                    LEFT_UNKNOWN_SIZE
                };
                self.counts.add(why, count);
                continue;
            };
            // Each member's per-iteration maximum, as an expression before
            // the kernel (and its plain value), and its obligations.
            let mut maxes = Vec::new();
            let mut obls = Vec::new();
            let mut variants = 0;
            // Each member's size in iteration `i` (plain), and the facts
            // known there: the fits-its-part obligations speak of them.
            let mut in_iteration = Vec::new();
            // On the retry, the sizes of the kernel index (variant sizes
            // whose obligations were not proved) still count as variant
            // sizes, but not as variant sizes expanded: their maximum is
            // computed like a data-dependent one, which costs a pass over
            // the iterations before the kernel (what `--baseline` shows).
            let demoted = if force {
                members
                    .iter()
                    .filter(|f| {
                        outer_size(&f.size, &defs, inside, &i.name)
                            .is_some_and(|se| se.mentions(i.name.as_str()))
                    })
                    .count() as u64
            } else {
                0
            };
            for (k, (f, (se, plain))) in members.iter().zip(sizes).enumerate() {
                // Out of a branch, a negative size must not get stuck when
                // the branch is not taken: hoist max(se, 0). (When it is
                // taken, the array of negative size built next gets stuck,
                // as the allocation did.) Unconditionally, a negative size
                // gets stuck in the first iteration, and the hoisted
                // allocation must get stuck too: max(se, -1) keeps it
                // negative and keeps the product with `n` from wrapping.
                // A loop may run no iteration: like a branch not taken.
                let floor = if f.conds.is_empty() && !f.in_loop {
                    -1
                } else {
                    0
                };
                let variant = !data_facts.contains_key(&k)
                    && (se.mentions(i.name.as_str()) || plain.mentions(i.name.as_str()));
                let mut kfacts = facts.to_vec();
                kfacts.extend(index_facts(&ivar, &nexp));
                for c in &f.conds {
                    kfacts.push(Fact::new(c.clone(), "branch condition"));
                }
                // A data-dependent size: the obligation speaks of the size
                // as the iteration computes it, and the maximum computed
                // before the kernel bounds it by construction.
                let plain = match data_facts.get(&k) {
                    Some(fact) => {
                        kfacts.push(fact.clone());
                        f.size.clone()
                    }
                    None => plain,
                };
                let known_m = data_facts.get(&k).map(|_| se.clone());
                let ends = |e: &SExp| {
                    let first = subst_var(e, &i.name, &SExp::int(0));
                    #[cfg(feature = "planted-faults")]
                    if crate::fault::active(crate::fault::Fault::ExpandFirstIteration) {
                        return first;
                    }
                    let last = subst_var(
                        e,
                        &i.name,
                        &SExp::bin(BinOp::Sub, nexp.clone(), SExp::int(1)),
                    );
                    SExp::bin(BinOp::Max, first, last)
                };
                let (m, m_plain) = if let Some(m) = known_m {
                    // At least the floor: the reduction starts from it.
                    (m.clone(), m)
                } else if variant {
                    variants += 1;
                    (
                        at_least(ends(&se), floor, facts),
                        at_least(ends(&plain), floor, facts),
                    )
                } else {
                    (
                        at_least(se, floor, facts),
                        at_least(plain.clone(), floor, facts),
                    )
                };
                maxes.push((m, m_plain));
                in_iteration.push((plain, kfacts));
            }
            self.counts.add(VARIANT, variants + demoted);
            // The per-iteration size of the parts: own maximum (GPU), or
            // the class's common maximum (CPU).
            let mut size_names = Vec::new();
            let class_max = |k: fn(&(SExp, SExp)) -> &SExp| {
                maxes
                    .iter()
                    .map(k)
                    .cloned()
                    .reduce(|a, b| SExp::bin(BinOp::Max, a, b))
                    .unwrap_or_else(|| SExp::int(0))
            };
            let mut plain_g = Vec::new();
            let cpu_m = if self.layout == Layout::Cpu {
                let m = self.names.fresh(&format!("{}_part", members[0].block));
                pre_g.push(scalar_stm(&m, class_max(|x| &x.0)));
                plain_g.push((m.name.clone(), class_max(|x| &x.1)));
                Some(m)
            } else {
                None
            };
            for (f, (m, m_plain)) in members.iter().zip(&maxes) {
                let part = match &cpu_m {
                    Some(c) => c.clone(),
                    None => {
                        let p = self.names.fresh(&format!("{}_part", f.block));
                        pre_g.push(scalar_stm(&p, m.clone()));
                        plain_g.push((p.name.clone(), m_plain.clone()));
                        p
                    }
                };
                size_names.push(part);
            }
            // Each member fits its part in every iteration: what the
            // rewrite relies on, proved rather than assumed from how `M`
            // was computed.
            let class_plain = class_max(|x| &x.1);
            for ((f, (size, kfacts)), (_, m_plain)) in members.iter().zip(in_iteration).zip(&maxes)
            {
                let part = match self.layout {
                    Layout::Cpu => class_plain.clone(),
                    Layout::Gpu => m_plain.clone(),
                };
                obls.push(Obligation::new(
                    self.layout.pass_name(),
                    format!("{}: size in every iteration at most its part", f.block),
                    Claim::AtMost(size, part),
                    kfacts,
                    f.span,
                ));
            }
            // Obligations on the parts of two iterations.
            let (i1, i2) = (self.names.fresh("i1"), self.names.fresh("i2"));
            for (f, part) in members.iter().zip(&size_names) {
                let pm = SExp::var(&part.name);
                let part_of = |it: &SExp| -> Lmad<SExp> {
                    match self.layout {
                        Layout::Cpu => Lmad {
                            offset: SExp::bin(BinOp::Mul, it.clone(), pm.clone()),
                            dims: vec![Dim {
                                elems: pm.clone(),
                                stride: SExp::int(1),
                            }],
                        },
                        Layout::Gpu => Lmad {
                            offset: it.clone(),
                            dims: vec![Dim {
                                elems: pm.clone(),
                                stride: nexp.clone(),
                            }],
                        },
                    }
                };
                let (v1, v2) = (SExp::var(&i1.name), SExp::var(&i2.name));
                let mut pf = facts.to_vec();
                for v in [&v1, &v2] {
                    pf.extend(index_facts(v, &nexp));
                }
                pf.push(Fact::new(
                    SExp::bin(BinOp::Ne, v1.clone(), v2.clone()),
                    "two iterations",
                ));
                obls.push(Obligation::new(
                    self.layout.pass_name(),
                    format!("{}: parts of two iterations disjoint", f.block),
                    Claim::Disjoint(part_of(&v1), part_of(&v2)),
                    pf,
                    f.span,
                ));
                let mut bf = facts.to_vec();
                bf.extend(index_facts(&ivar, &nexp));
                obls.push(Obligation::new(
                    self.layout.pass_name(),
                    format!("{}: part inside the new block", f.block),
                    Claim::InBounds(
                        part_of(&ivar),
                        SExp::bin(BinOp::Mul, pm.clone(), nexp.clone()),
                    ),
                    bf,
                    f.span,
                ));
            }
            let mut all = true;
            for o in obls {
                let v = self.prover.prove(&o);
                all &= v.outcome == Outcome::Proved;
                self.obligations.push((o, v));
            }
            if !all {
                if !force {
                    self.counts = saved.0;
                    self.obligations.truncate(saved.1);
                    work.push((g, true));
                    continue;
                }
                self.counts.add(LEFT_UNPROVED, count);
                continue;
            }
            self.counts.add(EXPANDED, count);
            self.counts.add(VARIANT_EXPANDED, variants);
            self.counts.add(DATA_EXPANDED, data_facts.len() as u64);
            // Apply: allocate outside, map the class's LMADs.
            for (f, part) in members.iter().zip(&size_names) {
                let total = match (&cap, n) {
                    (_, Atom::Int(..) | Atom::Const(..)) => {
                        saturating_mul(SExp::var(&part.name), nexp.clone())
                    }
                    (Some(c), _) => capped_mul(SExp::var(&part.name), c.clone(), nexp.clone()),
                    (None, Atom::Var(x)) => {
                        let c = self.names.fresh(&format!("{}_cap", x.name));
                        pre_g.push(scalar_stm(&c, cap_of(nexp.clone())));
                        let c = SExp::var(&c.name);
                        cap = Some(c.clone());
                        capped_mul(SExp::var(&part.name), c, nexp.clone())
                    }
                };
                let fresh = self.names.fresh(f.block.as_str());
                let alloc = Stm {
                    pats: vec![Pat {
                        unique: false,
                        name: fresh.clone(),
                        ty: Type::Mem(Span::DUMMY),
                        span: Span::DUMMY,
                    }],
                    exp: Exp {
                        kind: ExpKind::Alloc(total, f.elem),
                        span: f.span,
                    },
                    span: f.span,
                };
                pre_g.push(alloc);
                plain_g.push((
                    fresh.name.clone(),
                    SExp::bin(BinOp::Mul, SExp::var(&part.name), nexp.clone()),
                ));
                renames.0.insert(f.block.clone(), Atom::Var(fresh.clone()));
                removed.insert(f.block.clone());
            }
            for m in &class_names {
                let part = match &cpu_m {
                    Some(c) => c.clone(),
                    None => size_names[0].clone(),
                };
                maps.insert(
                    m.clone(),
                    AddrMap {
                        layout: self.layout,
                        i: i.name.clone(),
                        n: n.clone(),
                        part: part.name.clone(),
                    },
                );
            }
            pre.extend(pre_g);
            self.plain.extend(plain_g);
        }
        if removed.is_empty() {
            return (Vec::new(), rebuild(kb.clone()));
        }
        let kb2 = rewrite_body(kb, &removed, &maps);
        let kb3 = renames.body(&kb2);
        (pre, rebuild(kb3))
    }
}

impl Expander<'_> {
    /// A data-dependent size: the largest value `f`'s size takes over the
    /// iterations of kernel `i < n` (body `kb`), computed before the kernel
    /// by the slice of the body the size depends on. The slice is made of
    /// statements at the body's top level that bind only scalars (scalar
    /// expressions, element reads, reductions, and `if`s and loops binding
    /// only scalars) and read only what is bound outside the kernel; every
    /// iteration of the kernel runs them before the allocation, so running
    /// them beforehand gets stuck only where the kernel would. At host
    /// level it is a kernel writing each iteration's size and a `reduce
    /// (max)` over them; inside a kernel (where no block may be allocated)
    /// a loop keeping the running maximum. The statements go to `pre`;
    /// returns the maximum's name and the fact that bounds the size in
    /// iteration `i`.
    #[allow(clippy::too_many_arguments)]
    fn data_max(
        &mut self,
        f: &Found,
        kb: &Body,
        i: &Ident,
        n: &Atom,
        defs: &HashMap<Name, SExp>,
        inside: &HashSet<Name>,
        pre: &mut Vec<Stm>,
    ) -> Option<(Ident, Fact)> {
        // Scalar definitions inlined as far as they go (those of branches
        // included); what remains must come from the top level.
        let top: HashMap<Name, usize> = kb
            .stms
            .iter()
            .enumerate()
            .flat_map(|(k, s)| s.pats.iter().map(move |p| (p.name.name.clone(), k)))
            .collect();
        let size = inline_local(&f.size, defs, &top, 0)?;
        if crate::simplify::sexp_may_fail(&size) || size.depth_within(MAX_INLINE).is_none() {
            return None;
        }
        let mut slice: Vec<usize> = Vec::new();
        let mut work: Vec<Name> = Vec::new();
        size.for_each_var(&mut |x| work.push(x.name.clone()));
        let mut seen: HashSet<Name> = HashSet::new();
        while let Some(x) = work.pop() {
            if x == i.name || !inside.contains(&x) || !seen.insert(x.clone()) {
                continue;
            }
            let k = *top.get(&x)?;
            let st = &kb.stms[k];
            if !slice_stm(st) {
                return None;
            }
            if !slice.contains(&k) {
                slice.push(k);
                let own = stm_binders(st);
                walk::stm_names(st, &mut |y| {
                    if !own.contains(&y.name) {
                        work.push(y.name.clone());
                    }
                });
            }
        }
        slice.sort_unstable();
        let floor = if f.conds.is_empty() && !f.in_loop {
            -1
        } else {
            0
        };
        let m = self.names.fresh(&format!("{}_max", f.block));
        let sz = self.names.fresh(&format!("{}_size", f.block));
        // The floor as a name: a literal atom cannot be negative.
        let fl = self.names.fresh(&format!("{}_floor", f.block));
        pre.push(scalar_stm(&fl, SExp::int(floor)));
        let floor = Atom::Var(fl);
        let mut stms: Vec<Stm> = slice.iter().map(|&k| kb.stms[k].clone()).collect();
        stms.push(scalar_stm(&sz, size.clone()));
        let int_pat = |x: &Ident| Pat {
            unique: false,
            name: x.clone(),
            ty: Type::int(Span::DUMMY),
            span: Span::DUMMY,
        };
        let stm = |pats: Vec<Pat>, kind: ExpKind| Stm {
            pats,
            exp: Exp { kind, span: f.span },
            span: f.span,
        };
        if self.depth == 0 {
            // let (b_sizes_mem: mem) = alloc max(n, 0)
            // let (b_sizes: [n]int @ b_sizes_mem -> R(n)) = kernel i < n do
            //     slice; let (b_size: int) = se in (b_size)
            // let (b_max: int) = reduce (max) floor b_sizes
            let arr = self.names.fresh(&format!("{}_sizes", f.block));
            let blk = self.names.fresh(&format!("{}_sizes_mem", f.block));
            let count = match n {
                Atom::Var(_) => SExp::bin(BinOp::Max, SExp::Atom(n.clone()), SExp::int(0)),
                _ => SExp::Atom(n.clone()),
            };
            pre.push(stm(
                vec![Pat {
                    unique: false,
                    name: blk.clone(),
                    ty: Type::Mem(Span::DUMMY),
                    span: Span::DUMMY,
                }],
                ExpKind::Alloc(count, Prim::I64),
            ));
            let arr_pat = Pat {
                unique: false,
                name: arr.clone(),
                ty: Type::Array(
                    ArrayType {
                        shape: vec![n.clone()],
                        elem: Prim::I64,
                        mem: Some(MemAnn {
                            block: blk,
                            lmad: LmadSyn::RowMajor(vec![n.clone()], Span::DUMMY),
                        }),
                    },
                    Span::DUMMY,
                ),
                span: Span::DUMMY,
            };
            let body = Body {
                stms,
                result: vec![sz],
                span: kb.span,
            };
            pre.push(stm(
                vec![arr_pat],
                ExpKind::Kernel(i.clone(), n.clone(), body),
            ));
            pre.push(stm(
                vec![int_pat(&m)],
                ExpKind::Reduce(RedOp::Bin(BinOp::Max, Span::DUMMY), floor, arr),
            ));
        } else {
            // let (b_max: int) = loop (b_acc: int) = (floor) for i < n do
            //     slice; let (b_size: int) = se
            //     let (b_next: int) = max(b_acc, b_size) in (b_next)
            let acc = self.names.fresh(&format!("{}_acc", f.block));
            let next = self.names.fresh(&format!("{}_next", f.block));
            stms.push(scalar_stm(
                &next,
                SExp::bin(BinOp::Max, SExp::var(&acc.name), SExp::var(&sz.name)),
            ));
            let body = Body {
                stms,
                result: vec![next],
                span: kb.span,
            };
            pre.push(stm(
                vec![int_pat(&m)],
                ExpKind::Loop(
                    vec![int_pat(&acc)],
                    vec![floor],
                    LoopForm::For(i.clone(), n.clone()),
                    body,
                ),
            ));
        }
        let fact = Fact {
            exp: SExp::bin(BinOp::Le, f.size.clone(), SExp::var(&m.name)),
            origin: "the maximum of the sizes, computed before the kernel".into(),
            span: f.span,
        };
        Some((m, fact))
    }
}

/// Whether a statement may be part of a size's slice: a view (an index,
/// a slice, a transpose: no memory of its own; its block must then be bound
/// outside the kernel, which the slice's closure checks), or a statement
/// that binds only scalars, at any depth, and contains no kernel,
/// allocation or update.
fn slice_stm(s: &Stm) -> bool {
    let scalar = |p: &Pat| matches!(p.ty, Type::Prim(..));
    if matches!(
        s.exp.kind,
        ExpKind::Index(..) | ExpKind::Slice(..) | ExpKind::Transpose(_)
    ) {
        return true;
    }
    if !s.pats.iter().all(scalar) {
        return false;
    }
    let nested = |b: &Body| {
        let mut ok = true;
        b.for_each_pat(&mut |p| ok &= scalar(p));
        ok
    };
    match &s.exp.kind {
        ExpKind::Scalar(_) => true,
        ExpKind::Reduce(op, ..) => match op {
            RedOp::Bin(..) => true,
            RedOp::Lambda(l) => nested(&l.body),
        },
        ExpKind::If(_, b1, b2) => nested(b1) && nested(b2),
        ExpKind::Loop(ps, _, _, b) => ps.iter().all(scalar) && nested(b),
        _ => false,
    }
}

/// Every name a statement binds, at any depth (its pattern, the names
/// bound in its branches, loop and lambda bodies, loop parameters and
/// indices, lambda parameters).
fn stm_binders(s: &Stm) -> HashSet<Name> {
    let mut out: HashSet<Name> = s.pats.iter().map(|p| p.name.name.clone()).collect();
    let body = Body {
        stms: vec![s.clone()],
        result: Vec::new(),
        span: s.span,
    };
    body.for_each_pat(&mut |p| {
        out.insert(p.name.name.clone());
    });
    if let ExpKind::Loop(_, _, LoopForm::For(i, _), _) = &s.exp.kind {
        out.insert(i.name.clone());
    }
    out.extend(bound_in(&body));
    out
}

/// `e` with the scalar definitions of names not bound at the kernel body's
/// top level inlined (at most [`MAX_INLINE`] deep); `None` when too deep.
fn inline_local(
    e: &SExp,
    defs: &HashMap<Name, SExp>,
    top: &HashMap<Name, usize>,
    depth: usize,
) -> Option<SExp> {
    if depth > MAX_INLINE {
        return None;
    }
    e.try_replace_vars(&mut |x| {
        if top.contains_key(&x.name) {
            return Ok(None);
        }
        match defs.get(&x.name) {
            Some(d) => inline_local(d, defs, top, depth + 1).map(Some).ok_or(()),
            None => Ok(None),
        }
    })
    .ok()
}

/// The address map of an expanded block.
#[derive(Clone, Debug)]
struct AddrMap {
    layout: Layout,
    i: Name,
    n: Atom,
    part: Name,
}

impl AddrMap {
    /// The LMAD an array of the block gets.
    fn apply(&self, l: &LmadSyn) -> LmadSyn {
        let (offset, dims) = explicit(l);
        let i = SExp::var(&self.i);
        let n = SExp::Atom(self.n.clone());
        // `Num`'s operations fold the literals 0 and 1.
        let (offset, dims) = match self.layout {
            Layout::Cpu => {
                let part = SExp::var(&self.part);
                #[cfg(feature = "planted-faults")]
                let part = if crate::fault::active(crate::fault::Fault::ExpandOverlap) {
                    SExp::int(1)
                } else {
                    part
                };
                (offset.add(&i.mul(&part)), dims)
            }
            Layout::Gpu => (
                offset.mul(&n).add(&i),
                dims.into_iter().map(|(k, s)| (k, s.mul(&n))).collect(),
            ),
        };
        LmadSyn::Explicit {
            offset,
            dims,
            span: l.span(),
        }
    }
}

/// An LMAD in explicit form, its element counts kept as atoms.
fn explicit(l: &LmadSyn) -> (SExp, Vec<(Atom, SExp)>) {
    let counts = match l {
        LmadSyn::Explicit { dims, .. } => dims.iter().map(|(n, _)| n.clone()).collect(),
        LmadSyn::RowMajor(shape, _) => shape.clone(),
    };
    let e = l.to_lmad();
    let dims = counts
        .into_iter()
        .zip(e.dims)
        .map(|(n, d)| (n, d.stride))
        .collect();
    (e.offset, dims)
}

fn scalar_stm(x: &Ident, e: SExp) -> Stm {
    Stm {
        pats: vec![Pat {
            unique: false,
            name: x.clone(),
            ty: Type::int(Span::DUMMY),
            span: Span::DUMMY,
        }],
        exp: Exp {
            kind: ExpKind::Scalar(e),
            span: Span::DUMMY,
        },
        span: Span::DUMMY,
    }
}

/// Removes the hoisted allocations and maps the LMADs of the expanded
/// blocks' arrays, at any depth of the body (nested kernels included).
fn rewrite_body(b: &Body, removed: &HashSet<Name>, maps: &HashMap<Name, AddrMap>) -> Body {
    let mut stms = Vec::with_capacity(b.stms.len());
    for s in &b.stms {
        if let ExpKind::Alloc(..) = s.exp.kind {
            if removed.contains(&s.pats[0].name.name) {
                continue;
            }
        }
        let pats = s.pats.iter().map(|p| rewrite_pat(p, maps)).collect();
        let kind = match &s.exp.kind {
            ExpKind::If(c, b1, b2) => ExpKind::If(
                c.clone(),
                rewrite_body(b1, removed, maps),
                rewrite_body(b2, removed, maps),
            ),
            ExpKind::Kernel(i, n, kb) => {
                ExpKind::Kernel(i.clone(), n.clone(), rewrite_body(kb, removed, maps))
            }
            ExpKind::Loop(ps, init, form, lb) => ExpKind::Loop(
                ps.iter().map(|p| rewrite_pat(p, maps)).collect(),
                init.clone(),
                form.clone(),
                rewrite_body(lb, removed, maps),
            ),
            k => k.clone(),
        };
        stms.push(Stm {
            pats,
            exp: Exp {
                kind,
                span: s.exp.span,
            },
            span: s.span,
        });
    }
    Body {
        stms,
        result: b.result.clone(),
        span: b.span,
    }
}

/// The sizes of the elements of the arrays of `b` (its patterns, loop
/// parameters, nested bodies) that live in one of `blocks`.
fn elem_sizes_in(b: &Body, blocks: &[Name], out: &mut Vec<u64>) {
    let pat = |p: &Pat, out: &mut Vec<u64>| {
        if let Type::Array(a, _) = &p.ty {
            if a.mem
                .as_ref()
                .is_some_and(|m| blocks.contains(&m.block.name))
            {
                out.push(a.elem.size());
            }
        }
    };
    for s in &b.stms {
        for p in &s.pats {
            pat(p, out);
        }
        match &s.exp.kind {
            ExpKind::If(_, b1, b2) => {
                elem_sizes_in(b1, blocks, out);
                elem_sizes_in(b2, blocks, out);
            }
            ExpKind::Kernel(_, _, kb) => elem_sizes_in(kb, blocks, out),
            ExpKind::Loop(ps, _, _, lb) => {
                for p in ps {
                    pat(p, out);
                }
                elem_sizes_in(lb, blocks, out);
            }
            _ => {}
        }
    }
}

fn rewrite_pat(p: &Pat, maps: &HashMap<Name, AddrMap>) -> Pat {
    let Type::Array(a, sp) = &p.ty else {
        return p.clone();
    };
    let Some(m) = &a.mem else {
        return p.clone();
    };
    let Some(map) = maps.get(&m.block.name) else {
        return p.clone();
    };
    Pat {
        ty: Type::Array(
            ArrayType {
                shape: a.shape.clone(),
                elem: a.elem,
                mem: Some(MemAnn {
                    block: m.block.clone(),
                    lmad: map.apply(&m.lmad),
                }),
            },
            *sp,
        ),
        ..p.clone()
    }
}

/// The allocations of a body, of its `if` branches and of its loops' bodies
/// (not of nested kernels), with the branch conditions they are under.
fn find_allocs(b: &Body, conds: &[SExp], in_loop: bool, out: &mut Vec<Found>) {
    for s in &b.stms {
        match &s.exp.kind {
            ExpKind::Alloc(se, t) => out.push(Found {
                block: s.pats[0].name.name.clone(),
                size: se.clone(),
                conds: conds.to_vec(),
                in_loop,
                elem: *t,
                span: s.span,
            }),
            ExpKind::If(c, b1, b2) => {
                let mut c1 = conds.to_vec();
                c1.push(SExp::bin(BinOp::Ne, SExp::var(&c.name), SExp::int(0)));
                find_allocs(b1, &c1, in_loop, out);
                let mut c2 = conds.to_vec();
                c2.push(SExp::bin(BinOp::Eq, SExp::var(&c.name), SExp::int(0)));
                find_allocs(b2, &c2, in_loop, out);
            }
            ExpKind::Loop(_, _, _, lb) => find_allocs(lb, conds, true, out),
            _ => {}
        }
    }
}

/// The parameters and indices of the loops of a body (at any depth, not in
/// nested kernels unless `deep`).
fn loop_bound(b: &Body, deep: bool, out: &mut HashSet<Name>) {
    for s in &b.stms {
        match &s.exp.kind {
            ExpKind::If(_, b1, b2) => {
                loop_bound(b1, deep, out);
                loop_bound(b2, deep, out);
            }
            ExpKind::Kernel(_, _, kb) if deep => loop_bound(kb, deep, out),
            ExpKind::Loop(ps, _, form, lb) => {
                out.extend(ps.iter().map(|p| p.name.name.clone()));
                if let LoopForm::For(i, _) = form {
                    out.insert(i.name.clone());
                }
                loop_bound(lb, deep, out);
            }
            _ => {}
        }
    }
}

/// The blocks allocated in a loop's body (within its `if`s and inner
/// loops, not nested kernels) whose class (after [`if_aliases`]) holds one
/// of the body's results: they are carried to the next iteration.
fn loop_carried(b: &Body, classes: &mut Classes, out: &mut HashSet<Name>) {
    for s in &b.stms {
        match &s.exp.kind {
            ExpKind::If(_, b1, b2) => {
                loop_carried(b1, classes, out);
                loop_carried(b2, classes, out);
            }
            ExpKind::Loop(_, _, _, lb) => {
                let mut inner = Vec::new();
                find_allocs(lb, &[], true, &mut inner);
                let results: HashSet<Name> =
                    lb.result.iter().map(|r| classes.find(&r.name)).collect();
                for f in inner {
                    if results.contains(&classes.find(&f.block)) {
                        out.insert(f.block);
                    }
                }
                loop_carried(lb, classes, out);
            }
            _ => {}
        }
    }
}

/// The scalar definitions `let (x: int) = se` of a body and its branches.
fn scalar_defs(b: &Body, out: &mut HashMap<Name, SExp>) {
    for s in &b.stms {
        match &s.exp.kind {
            ExpKind::Scalar(se) if s.pats.len() == 1 => {
                out.insert(s.pats[0].name.name.clone(), se.clone());
            }
            ExpKind::If(_, b1, b2) => {
                scalar_defs(b1, out);
                scalar_defs(b2, out);
            }
            ExpKind::Loop(_, _, _, lb) => scalar_defs(lb, out),
            _ => {}
        }
    }
}

/// Deepest inlining of definitions, and deepest inlined size.
const MAX_INLINE: usize = 64;

/// A size with the body's scalar definitions inlined, if it then mentions
/// only names bound outside the kernel and the kernel index.
fn outer_size(
    se: &SExp,
    defs: &HashMap<Name, SExp>,
    inside: &HashSet<Name>,
    index: &Name,
) -> Option<SExp> {
    fn go(
        e: &SExp,
        defs: &HashMap<Name, SExp>,
        inside: &HashSet<Name>,
        index: &Name,
        depth: usize,
    ) -> Option<SExp> {
        if depth > MAX_INLINE {
            return None;
        }
        e.try_replace_vars(&mut |x| {
            if &x.name == index || !inside.contains(&x.name) {
                return Ok(None);
            }
            let d = defs.get(&x.name).ok_or(())?;
            go(d, defs, inside, index, depth + 1).map(Some).ok_or(())
        })
        .ok()
    }
    // The inlined size is bounded like the trees the parser accepts.
    go(se, defs, inside, index, 0).filter(|e| e.depth_within(MAX_INLINE).is_some())
}

/// The largest value of `i64`, the cap of saturating products.
const I64_MAX: i64 = i64::MAX;

/// `a * b` for `a >= -1` and `b >= 0` without wrapping:
/// `min(a, 9223372036854775807 / max(b, 1)) * b`, exact when the product
/// fits in 64 bits and otherwise between `i64::MAX - b` and `i64::MAX`
/// (at least 2^62). Folded when the factors are literals.
pub fn saturating_mul(a: SExp, b: SExp) -> SExp {
    match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) => SExp::int(saturating_value(x, y)),
        (_, Some(0)) | (Some(0), _) => SExp::int(0),
        (_, Some(1)) => a,
        (Some(1), _) => b,
        _ => capped_mul(a, cap_of(b.clone()), b),
    }
}

/// `9223372036854775807 / max(b, 1)`, the largest `a` with `a * b`
/// fitting when `b >= 1` (a literal when `b` is one).
fn cap_of(b: SExp) -> SExp {
    match b.as_int() {
        Some(y) => SExp::int(I64_MAX.wrapping_div(y.max(1))),
        None => SExp::bin(
            BinOp::Div,
            SExp::int(I64_MAX),
            SExp::bin(BinOp::Max, b, SExp::int(1)),
        ),
    }
}

/// `min(a, cap) * b`, with `cap` the [`cap_of`] `b`.
fn capped_mul(a: SExp, cap: SExp, b: SExp) -> SExp {
    SExp::bin(BinOp::Mul, SExp::bin(BinOp::Min, a, cap), b)
}

/// What [`saturating_mul`]'s expression evaluates to, in 64-bit wrapping
/// arithmetic as the semantics evaluates it.
pub fn saturating_value(a: i64, b: i64) -> i64 {
    a.min(I64_MAX.wrapping_div(b.max(1))).wrapping_mul(b)
}

/// `max(e, floor)`, or `e` when it is known to be at least `floor` (a
/// literal, a `max` with such a side, a variable with a fact `x >= k`).
fn at_least(e: SExp, floor: i64, facts: &[Fact]) -> SExp {
    if known_at_least(&e, floor, facts) {
        e
    } else {
        SExp::bin(BinOp::Max, e, SExp::int(floor))
    }
}

fn known_at_least(e: &SExp, floor: i64, facts: &[Fact]) -> bool {
    match e {
        SExp::Atom(Atom::Int(k, _)) => *k >= floor,
        SExp::Atom(Atom::Var(x)) => facts.iter().any(|f| match &f.exp {
            SExp::Bin(BinOp::Ge, v, k, _) | SExp::Bin(BinOp::Le, k, v, _) => {
                matches!(&**v, SExp::Atom(Atom::Var(y)) if y.name == x.name)
                    && k.as_int().is_some_and(|k| k >= floor)
            }
            _ => false,
        }),
        SExp::Bin(BinOp::Max, a, b, _) => {
            known_at_least(a, floor, facts) || known_at_least(b, floor, facts)
        }
        SExp::Bin(BinOp::Min, a, b, _) => {
            known_at_least(a, floor, facts) && known_at_least(b, floor, facts)
        }
        _ => false,
    }
}

/// `e` with the variable `x` replaced by `by`.
fn subst_var(e: &SExp, x: &Name, by: &SExp) -> SExp {
    let replaced = e.try_replace_vars(&mut |y| {
        Ok::<_, std::convert::Infallible>((&y.name == x).then(|| by.clone()))
    });
    match replaced {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

/// Every name bound in a body, at any depth.
fn bound_in(b: &Body) -> HashSet<Name> {
    let mut out = HashSet::new();
    fn go(b: &Body, out: &mut HashSet<Name>) {
        for s in &b.stms {
            for p in &s.pats {
                out.insert(p.name.name.clone());
            }
            match &s.exp.kind {
                ExpKind::If(_, b1, b2) => {
                    go(b1, out);
                    go(b2, out);
                }
                ExpKind::Kernel(i, _, kb) => {
                    out.insert(i.name.clone());
                    go(kb, out);
                }
                ExpKind::Loop(ps, _, form, lb) => {
                    out.extend(ps.iter().map(|p| p.name.name.clone()));
                    if let LoopForm::For(i, _) = form {
                        out.insert(i.name.clone());
                    }
                    go(lb, out);
                }
                _ => {}
            }
        }
    }
    go(b, &mut out);
    out
}

/// Union-find over mem names.
#[derive(Default)]
struct Classes {
    parent: HashMap<Name, Name>,
}

impl Classes {
    fn find(&mut self, x: &Name) -> Name {
        let mut r = x.clone();
        while let Some(p) = self.parent.get(&r) {
            if p == &r {
                break;
            }
            r = p.clone();
        }
        r
    }
    fn union(&mut self, a: &Name, b: &Name) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(ra, rb);
        }
    }
    /// Every name in the class of `x` that the union-find has seen, and `x`.
    fn members(&mut self, x: &Name) -> Vec<Name> {
        let r = self.find(x);
        let keys: Vec<Name> = self.parent.keys().cloned().collect();
        let mut out = vec![x.clone()];
        if !out.contains(&r) {
            out.push(r.clone());
        }
        for k in keys {
            if self.find(&k) == r && !out.contains(&k) {
                out.push(k);
            }
        }
        out
    }
}

/// Links each `mem` result of an `if` in the body to the blocks its
/// branches return; a result that some branch fills with a block that is
/// not a candidate taints the class.
fn if_aliases(b: &Body, cands: &HashSet<Name>, classes: &mut Classes, tainted: &mut HashSet<Name>) {
    if_aliases_in(b, b, cands, classes, tainted);
    // Taint spreads through a class.
    let names: Vec<Name> = classes.parent.keys().cloned().collect();
    let bad: Vec<Name> = tainted.iter().cloned().collect();
    for t in bad {
        let rt = classes.find(&t);
        for n in &names {
            if classes.find(n) == rt {
                tainted.insert(n.clone());
            }
        }
        tainted.insert(rt);
    }
}

/// `if_aliases` for the statements of `b`, a part of the kernel body
/// `top`; nested kernels included, since a block hoisted out of an inner
/// kernel keeps the `if`s that return it there.
fn if_aliases_in(
    top: &Body,
    b: &Body,
    cands: &HashSet<Name>,
    classes: &mut Classes,
    tainted: &mut HashSet<Name>,
) {
    for s in &b.stms {
        if let ExpKind::Kernel(_, _, kb) = &s.exp.kind {
            if_aliases_in(top, kb, cands, classes, tainted);
        }
        if let ExpKind::Loop(ps, init, _, lb) = &s.exp.kind {
            // A loop's block parameter and the pattern's block stand for
            // the initial block and each iteration's returned block: one
            // class, like an `if`'s result and its branches' blocks.
            if_aliases_in(top, lb, cands, classes, tainted);
            for (k, p) in ps.iter().enumerate() {
                if !matches!(p.ty, Type::Mem(_)) {
                    continue;
                }
                let m = &p.name.name;
                classes.union(m, m);
                if let Some(q) = s.pats.get(k) {
                    classes.union(m, &q.name.name);
                }
                for r in [
                    init.get(k).and_then(|a| a.var().cloned()),
                    lb.result.get(k).map(|r| r.name.clone()),
                ] {
                    match r {
                        Some(r) => {
                            classes.union(m, &r);
                            if !cands.contains(&r) && !is_if_mem(top, &r) {
                                tainted.insert(m.clone());
                                tainted.insert(r);
                            }
                        }
                        None => {
                            tainted.insert(m.clone());
                        }
                    }
                }
            }
        }
        if let ExpKind::If(_, b1, b2) = &s.exp.kind {
            if_aliases_in(top, b1, cands, classes, tainted);
            if_aliases_in(top, b2, cands, classes, tainted);
            for (k, p) in s.pats.iter().enumerate() {
                if !matches!(p.ty, Type::Mem(_)) {
                    continue;
                }
                let m = &p.name.name;
                classes.union(m, m);
                for br in [b1, b2] {
                    match br.result.get(k) {
                        Some(r) => {
                            classes.union(m, &r.name);
                            if !cands.contains(&r.name) && !is_if_mem(top, &r.name) {
                                tainted.insert(m.clone());
                                tainted.insert(r.name.clone());
                            }
                        }
                        None => {
                            tainted.insert(m.clone());
                        }
                    }
                }
            }
        }
    }
}

/// Whether `x` is the `mem` result of some `if` in the body (at any
/// depth).
fn is_if_mem(b: &Body, x: &Name) -> bool {
    b.stms.iter().any(|s| match &s.exp.kind {
        ExpKind::Kernel(_, _, kb) => is_if_mem(kb, x),
        // A loop's block parameters and pattern are existential too.
        ExpKind::Loop(ps, _, _, lb) => {
            ps.iter()
                .chain(&s.pats)
                .any(|p| matches!(p.ty, Type::Mem(_)) && &p.name.name == x)
                || is_if_mem(lb, x)
        }
        ExpKind::If(_, b1, b2) => {
            s.pats
                .iter()
                .any(|p| matches!(p.ty, Type::Mem(_)) && &p.name.name == x)
                || is_if_mem(b1, x)
                || is_if_mem(b2, x)
        }
        _ => false,
    })
}
