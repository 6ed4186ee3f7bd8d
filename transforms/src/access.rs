//! Memory accesses and what is known where they happen: the analyses
//! that the memory passes share. [`Scope`] tracks, along a chain of
//! bodies, the arrays (block, LMAD, element type), the integer
//! definitions, the ranges of kernel and loop indices and the binding
//! order; [`walk_accesses`] lists every read and write of memory that a
//! statement makes, nested bodies included, each as an LMAD of its block
//! with the facts known there (so a pass can state "these places are
//! disjoint" as a proof obligation); [`MemClasses`] is the may-alias
//! relation of blocks (an `if`'s or a loop's block stands for every
//! block that flows into it). Coalescing (C3) and reuse (the interference
//! exceptions) are both built on these.

use crate::writes::update_part;
use funmem_lang::ast::*;
use funmem_lang::lmad::{Dim, Lmad};
use funmem_lang::obligation::Fact;
use funmem_lang::Name;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// What is known in a scope: the arrays (block, LMAD, element type), the
/// integer definitions, the ranges of kernel and loop indices, the names
/// that are array sizes, and every name bound.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    pub(crate) arrays: HashMap<Name, Place>,
    pub(crate) defs: HashMap<Name, SExp>,
    pub(crate) ranges: HashMap<Name, SExp>,
    pub(crate) sizes: HashSet<Name>,
    pub(crate) bound: HashSet<Name>,
    /// The order names were bound in (along the chain of scopes: a name
    /// bound before another has a smaller number in every later scope).
    pub(crate) order: HashMap<Name, usize>,
    pub(crate) next: usize,
    /// The blocks bound by `alloc` (each run of it makes a new block).
    pub(crate) allocs: HashSet<Name>,
}

/// Where an array lives.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) block: Ident,
    pub(crate) lmad: Lmad<SExp>,
    pub(crate) elem: Prim,
    pub(crate) shape: Vec<Atom>,
}

pub(crate) fn place_of(t: &Type) -> Option<Place> {
    let Type::Array(a, _) = t else { return None };
    let m = a.mem.as_ref()?;
    Some(Place {
        block: m.block.clone(),
        lmad: m.lmad.to_lmad(),
        elem: a.elem,
        shape: a.shape.clone(),
    })
}

pub(crate) fn atom_sexp(a: &Atom) -> SExp {
    SExp::Atom(a.clone())
}

impl Scope {
    pub(crate) fn bind_pat(&mut self, p: &Pat) {
        self.bound.insert(p.name.name.clone());
        self.order.insert(p.name.name.clone(), self.next);
        self.next += 1;
        if let Type::Array(a, _) = &p.ty {
            for s in &a.shape {
                if let Atom::Var(x) = s {
                    self.sizes.insert(x.name.clone());
                }
            }
        }
        if let Some(pl) = place_of(&p.ty) {
            self.arrays.insert(p.name.name.clone(), pl);
        }
    }

    /// Binds a statement's patterns (and an integer definition).
    pub(crate) fn bind_stm(&mut self, s: &Stm) {
        for p in &s.pats {
            self.bind_pat(p);
        }
        if let (ExpKind::Alloc(..), [p]) = (&s.exp.kind, &s.pats[..]) {
            self.allocs.insert(p.name.name.clone());
        }
        if let (ExpKind::Scalar(e), [p]) = (&s.exp.kind, &s.pats[..]) {
            if p.ty.is_int() {
                self.defs.insert(p.name.name.clone(), e.clone());
            }
        }
    }

    /// The facts about the variables of `exps` (and, transitively, of
    /// their definitions): definitions, index ranges, sizes non-negative.
    pub(crate) fn facts_for(&self, exps: &[&SExp]) -> Vec<Fact> {
        facts_about(exps, &self.defs, |x, _, out| {
            let v = SExp::var(x);
            let mut follow = Vec::new();
            if let Some(n) = self.ranges.get(x) {
                out.push(Fact::new(
                    SExp::bin(BinOp::Le, SExp::int(0), v.clone()),
                    "index",
                ));
                out.push(Fact::new(
                    SExp::bin(BinOp::Lt, v.clone(), n.clone()),
                    "bound",
                ));
                follow.push(n.clone());
            }
            if self.sizes.contains(x) {
                out.push(Fact::new(
                    SExp::bin(BinOp::Ge, v, SExp::int(0)),
                    "array size",
                ));
            }
            follow
        })
    }
}

/// The facts about the names of `exps`, followed through their integer
/// definitions (`defs`): each name's definition, and what `more` says of
/// it (`more(x, seen, out)` adds facts about `x` and returns expressions
/// whose names are followed too; `seen` holds the names met so far).
pub(crate) fn facts_about(
    exps: &[&SExp],
    defs: &HashMap<Name, SExp>,
    mut more: impl FnMut(&Name, &HashSet<Name>, &mut Vec<Fact>) -> Vec<SExp>,
) -> Vec<Fact> {
    let mut todo: Vec<Name> = Vec::new();
    let mut seen: HashSet<Name> = HashSet::default();
    let push = |e: &SExp, todo: &mut Vec<Name>, seen: &mut HashSet<Name>| {
        e.for_each_var(&mut |x| {
            if seen.insert(x.name.clone()) {
                todo.push(x.name.clone());
            }
        })
    };
    for e in exps {
        push(e, &mut todo, &mut seen);
    }
    let mut out: Vec<Fact> = Vec::new();
    while let Some(x) = todo.pop() {
        if let Some(d) = defs.get(&x) {
            out.push(Fact::new(
                SExp::bin(BinOp::Eq, SExp::var(&x), d.clone()),
                "definition",
            ));
            push(d, &mut todo, &mut seen);
        }
        for e in more(&x, &seen, &mut out) {
            push(&e, &mut todo, &mut seen);
        }
    }
    out
}

/// The expressions of an LMAD.
pub(crate) fn lmad_exps(l: &Lmad<SExp>) -> Vec<&SExp> {
    let mut v = vec![&l.offset];
    for d in &l.dims {
        v.push(&d.elems);
        v.push(&d.stride);
    }
    v
}

/// May-alias classes of blocks: an `if`'s block results and a loop's
/// block parameters and results are one class with every block that
/// flows into them.
#[derive(Clone, Default)]
pub(crate) struct MemClasses {
    pub(crate) parent: HashMap<Name, Name>,
}

impl MemClasses {
    pub(crate) fn of(p: &Program) -> MemClasses {
        let mut m = MemClasses::default();
        m.body(&p.body);
        m
    }

    pub(crate) fn find(&self, x: &Name) -> Name {
        let mut x = x.clone();
        while let Some(p) = self.parent.get(&x) {
            if *p == x {
                break;
            }
            x = p.clone();
        }
        x
    }

    pub(crate) fn union(&mut self, a: &Name, b: &Name) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(ra, rb);
        }
    }

    pub(crate) fn same(&self, a: &Name, b: &Name) -> bool {
        a == b || self.find(a) == self.find(b)
    }

    pub(crate) fn body(&mut self, b: &Body) {
        for s in &b.stms {
            match &s.exp.kind {
                ExpKind::If(_, t, e) => {
                    for (k, p) in s.pats.iter().enumerate() {
                        if matches!(p.ty, Type::Mem(_)) {
                            for r in [t.result.get(k), e.result.get(k)].into_iter().flatten() {
                                self.union(&p.name.name, &r.name);
                            }
                        }
                    }
                    self.body(t);
                    self.body(e);
                }
                ExpKind::Loop(ps, init, _, body) => {
                    for (k, q) in ps.iter().enumerate() {
                        if matches!(q.ty, Type::Mem(_)) {
                            if let Some(Atom::Var(x)) = init.get(k) {
                                self.union(&q.name.name, &x.name);
                            }
                            if let Some(r) = body.result.get(k) {
                                self.union(&q.name.name, &r.name);
                            }
                            if let Some(p) = s.pats.get(k) {
                                self.union(&p.name.name, &q.name.name);
                            }
                        }
                    }
                    self.body(body);
                }
                ExpKind::Kernel(_, _, body) => self.body(body),
                _ => {}
            }
        }
    }
}

/// One access of memory: a read or a write of the elements of a block at
/// an LMAD, with the facts known where it happens.
pub(crate) struct Access {
    pub(crate) block: Name,
    pub(crate) lmad: Lmad<SExp>,
    pub(crate) elem: Prim,
    pub(crate) write: bool,
    /// The statement it belongs to, for messages.
    pub(crate) what: String,
    /// When the block's name was bound (see [`Scope::order`]).
    pub(crate) block_order: Option<usize>,
    /// The index of the kernel iteration it happens in, when it is inside
    /// the kernel that creates the source.
    pub(crate) iteration: Option<Name>,
    pub(crate) facts: Vec<Fact>,
}

impl Access {
    /// An access of `pl`'s block at `lmad`, in scope `sc` (which knows
    /// when the block was bound), in kernel iteration `iteration`.
    pub(crate) fn of(
        pl: &Place,
        lmad: Lmad<SExp>,
        write: bool,
        what: String,
        sc: &Scope,
        iteration: Option<&Name>,
    ) -> Access {
        Access {
            block: pl.block.name.clone(),
            lmad,
            elem: pl.elem,
            write,
            what,
            block_order: sc.order.get(&pl.block.name).copied(),
            iteration: iteration.cloned(),
            facts: Vec::new(),
        }
    }
}

/// The region of an array variable, read whole.
pub(crate) fn read_of(
    sc: &Scope,
    x: &Name,
    what: &str,
    out: &mut Vec<Access>,
    iteration: Option<&Name>,
) {
    if let Some(pl) = sc.arrays.get(x) {
        out.push(Access::of(
            pl,
            pl.lmad.clone(),
            false,
            what.to_string(),
            sc,
            iteration,
        ));
    }
}

pub(crate) fn stm_label(s: &Stm) -> String {
    match s.pats.first() {
        Some(p) => format!("`{}`'s statement", p.name.name),
        None => "a statement".into(),
    }
}

/// The reads of a statement's own expression (not of nested bodies),
/// of arrays other than those in `skip`.
pub(crate) fn own_reads(
    s: &Stm,
    sc: &Scope,
    out: &mut Vec<Access>,
    skip: &HashSet<Name>,
    iteration: Option<&Name>,
) {
    let what = stm_label(s);
    let read = |x: &Ident, out: &mut Vec<Access>| {
        if !skip.contains(&x.name) {
            read_of(sc, &x.name, &what, out, iteration);
        }
    };
    match &s.exp.kind {
        ExpKind::Index(x, idx) => {
            let Some(pl) = sc.arrays.get(&x.name) else {
                return;
            };
            if idx.len() == pl.lmad.rank() && !skip.contains(&x.name) {
                // One element.
                let mut l = pl.lmad.clone();
                for i in idx {
                    l = l.index(&atom_sexp(i));
                }
                l.dims.push(Dim {
                    elems: SExp::int(1),
                    stride: SExp::int(1),
                });
                out.push(Access::of(pl, l, false, what, sc, iteration));
            }
        }
        ExpKind::Copy(x) => read(x, out),
        ExpKind::Concat(x, y) => {
            read(x, out);
            read(y, out);
        }
        ExpKind::Replicate(_, Atom::Var(v)) | ExpKind::Update(_, _, Atom::Var(v)) => read(v, out),
        ExpKind::Reduce(_, _, xs) | ExpKind::Scan(_, _, xs) => read(xs, out),
        _ => {}
    }
}

/// Every access of statement `s` in scope `sc`, nested bodies included.
/// `skip`: the source's family, whose own reads and writes are left out.
/// `top_kernel`: `s` is the kernel that makes the source, so the accesses
/// in its body are tagged with its index (compared per iteration); `tag`
/// is the tag the accesses inherit from an enclosing such kernel.
pub(crate) fn walk_accesses(
    s: &Stm,
    sc: &Scope,
    out: &mut Vec<Access>,
    skip: &HashSet<Name>,
    tag: Option<&Name>,
    top_kernel: bool,
) {
    let start = out.len();
    own_reads(s, sc, out, skip, tag);
    // Writes.
    let what = stm_label(s);
    let write_region = |p: &Pat, l: Lmad<SExp>, out: &mut Vec<Access>| {
        if let Some(pl) = place_of(&p.ty) {
            out.push(Access::of(&pl, l, true, what.clone(), sc, tag));
        }
    };
    match &s.exp.kind {
        ExpKind::Iota(_)
        | ExpKind::Copy(_)
        | ExpKind::Replicate(..)
        | ExpKind::Concat(..)
        | ExpKind::Scan(..)
        | ExpKind::Kernel(..) => {
            for p in &s.pats {
                if skip.contains(&p.name.name) {
                    continue;
                }
                if let Some(pl) = place_of(&p.ty) {
                    write_region(p, pl.lmad, out);
                }
            }
        }
        ExpKind::Update(_, idx, _) => {
            for p in &s.pats {
                if skip.contains(&p.name.name) {
                    continue;
                }
                if let Some(pl) = place_of(&p.ty) {
                    write_region(p, update_part(&pl.lmad, idx), out);
                }
            }
        }
        _ => {}
    }
    // Nested bodies.
    match &s.exp.kind {
        ExpKind::Kernel(i, n, b) => {
            let mut inner = sc.clone();
            inner.bound.insert(i.name.clone());
            inner.ranges.insert(i.name.clone(), atom_sexp(n));
            let tag = if top_kernel { Some(&i.name) } else { tag };
            body_accesses(b, &inner, out, skip, tag, true);
        }
        ExpKind::If(_, t, e) => {
            body_accesses(t, sc, out, skip, tag, false);
            body_accesses(e, sc, out, skip, tag, false);
        }
        ExpKind::Loop(ps, _, form, b) => {
            let mut inner = sc.clone();
            for p in ps {
                inner.bind_pat(p);
            }
            if let LoopForm::For(i, n) = form {
                inner.bound.insert(i.name.clone());
                inner.ranges.insert(i.name.clone(), atom_sexp(n));
            }
            body_accesses(b, &inner, out, skip, tag, false);
        }
        _ => {}
    }
    // The facts known where each access happens (its scope's, for the
    // variables of its LMAD).
    for a in &mut out[start..] {
        if a.facts.is_empty() {
            a.facts = sc.facts_for(&lmad_exps(&a.lmad));
        }
    }
}

pub(crate) fn body_accesses(
    b: &Body,
    sc: &Scope,
    out: &mut Vec<Access>,
    skip: &HashSet<Name>,
    tag: Option<&Name>,
    kernel: bool,
) {
    let mut sc = sc.clone();
    for s in &b.stms {
        walk_accesses(s, &sc, out, skip, tag, false);
        sc.bind_stm(s);
    }
    // A kernel iteration ends by copying its array results into its rows
    // (E-MEM-KERNEL's memcopy): a read of each, in the iteration.
    if kernel {
        for r in &b.result {
            if !skip.contains(&r.name) {
                read_of(&sc, &r.name, "a kernel's result copy", out, tag);
            }
        }
    }
}
