//! First and last uses of memory blocks, and where each block is alive
//! (Serup's thesis §6.2, the blog post's `InUse`/`LastUsed` sets).
//!
//! The program's statements are numbered in order, outside in: a
//! statement gets a *point* where it starts (its own operands are read
//! there), the statements of its nested bodies come next, and a compound
//! statement (`if`, loop, kernel) gets a second point, its *join*, where
//! its pattern is bound. A body's result is a point of its own. Points in
//! the two branches of one `if` are *exclusive*: no run passes through
//! both.
//!
//! A block is *touched* where an array in it is created (its first use:
//! allocation is not a use, so that hoisted allocations do not lengthen
//! lifetimes) and wherever an array in it, or a name that may alias it
//! ([`crate::aliases`]), is used, the body results included (thesis
//! fig. 6.1: a block returned by a body is used there). Three rules widen
//! the touches:
//!
//! - **Loops and kernels.** A block made outside a loop or a kernel and
//!   touched inside it is touched at the loop's (kernel's) start and join:
//!   alive during all of it, since a later iteration (or another thread,
//!   running at the same time) may use it again (thesis fig. 6.3).
//! - **Carried blocks.** A block allocated in a loop's body that the body
//!   returns (so the next iteration's parameter holds it) is alive during
//!   the whole loop.
//! - **Branches.** No widening: a block last used in one branch of an `if`
//!   is dead in the other branch and after the `if` (the blog's rule), and
//!   a block made in one branch is not alive in the other.
//!
//! A block is alive at a point when it is touched at or before the point
//! and at or after it, on a run through the point (touches in the other
//! branch of an `if` the point is in do not count). Two blocks whose live
//! points meet interfere ([`crate::interference`]).
//!
//! Invariant: binders are distinct (see [`crate::aliases`]).

use crate::access::Scope;
use crate::aliases::MemAliases;
use funmem_lang::ast::*;
use funmem_lang::prim::Prim;
use funmem_lang::Name;
use rustc_hash::FxHashMap as HashMap;

/// How a block is made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootKind {
    /// `let m = alloc size elem`.
    Alloc(SExp),
    /// A program parameter of type `mem`; `unique` when an array in it is
    /// a unique (`*`) parameter, which the program may overwrite; `cap` its
    /// room in elements (of the parameter array's type) when known.
    Param {
        /// The program may overwrite it.
        unique: bool,
        /// Its room, in elements.
        cap: Option<SExp>,
    },
}

/// A block: an allocation or a `mem` parameter.
#[derive(Clone, Debug)]
pub struct Root {
    /// Its name.
    pub name: Ident,
    /// How it is made.
    pub kind: RootKind,
    /// The element type its size counts.
    pub elem: Prim,
    /// The body holding the allocation (0: the program's body).
    pub body: usize,
    /// The allocation's point (0 for parameters).
    pub point: usize,
}

impl Root {
    /// Whether the program allocates it.
    pub fn is_alloc(&self) -> bool {
        matches!(self.kind, RootKind::Alloc(_))
    }
}

/// How a body is entered from its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// The program's body.
    Top,
    /// A branch of an `if`.
    Branch,
    /// A loop's body.
    Loop,
    /// A kernel's body.
    Kernel,
}

/// A body.
#[derive(Clone, Debug)]
pub struct BodyInfo {
    /// The enclosing body.
    pub parent: Option<usize>,
    /// How it is entered.
    pub via: Via,
    /// The statement that holds it (an index into [`Liveness::compounds`]).
    pub compound: Option<usize>,
}

/// A point of the program.
#[derive(Clone, Debug)]
pub struct Point {
    /// The body it is in.
    pub body: usize,
    /// What happens there, for messages.
    pub label: String,
    /// The `if`s it is inside: (the `if`'s start point, branch 0 or 1).
    pub ifs: Vec<(usize, u8)>,
    /// The loops and kernels it is inside, outermost first (indices into
    /// [`Liveness::compounds`]).
    pub enclosing: Vec<usize>,
}

/// A statement with nested bodies.
#[derive(Clone, Debug)]
pub struct Compound {
    /// Its start point.
    pub start: usize,
    /// Its join point (where its pattern is bound).
    pub join: usize,
    /// How its bodies are entered.
    pub via: Via,
    /// Its nested bodies.
    pub bodies: Vec<usize>,
    /// The statement (kernels only: the interference exceptions read it).
    pub stm: Option<Stm>,
    /// The scope before it (kernels only).
    pub(crate) scope: Option<Box<Scope>>,
}

/// The liveness of a program's blocks.
#[derive(Clone, Debug, Default)]
pub struct Liveness {
    /// Every block, in order of allocation (parameters first).
    pub roots: Vec<Root>,
    /// A block's index in `roots`, by name.
    pub index: HashMap<Name, usize>,
    /// Every point.
    pub points: Vec<Point>,
    /// Every body.
    pub bodies: Vec<BodyInfo>,
    /// Every compound statement, in order.
    pub compounds: Vec<Compound>,
    /// Per block: the points it is touched at, as written (not widened).
    pub raw: Vec<Vec<usize>>,
    /// Per block: the points it is touched at, widened by the rules above.
    pub touches: Vec<Vec<usize>>,
    /// Per block: the points it is alive at, a bit set.
    pub live: Vec<Vec<u64>>,
    /// Where each name is bound: (body, point).
    pub bound: HashMap<Name, (usize, usize)>,
    /// The integer definitions (`let x = se`), by name.
    pub defs: HashMap<Name, SExp>,
}

struct Ctx {
    body: usize,
    ifs: Vec<(usize, u8)>,
    enclosing: Vec<usize>,
}

impl Liveness {
    /// The liveness of `p`'s blocks (binders distinct).
    pub fn of(p: &Program, aliases: &MemAliases) -> Liveness {
        let mut lv = Liveness::default();
        let mut blocks: HashMap<Name, Name> = HashMap::default();
        lv.bodies.push(BodyInfo {
            parent: None,
            via: Via::Top,
            compound: None,
        });
        let top = Ctx {
            body: 0,
            ifs: Vec::new(),
            enclosing: Vec::new(),
        };
        let start = lv.point(&top, "the parameters".into());
        let mut sc = Scope::default();
        for q in &p.params {
            sc.bind_pat(q);
            lv.bound.insert(q.name.name.clone(), (0, start));
        }
        // Parameter blocks: unique when a unique array lives in them.
        for q in &p.params {
            if let Type::Mem(_) = q.ty {
                let arrays: Vec<&Pat> = p
                    .params
                    .iter()
                    .filter(|a| {
                        a.ty.as_array()
                            .and_then(|t| t.mem.as_ref())
                            .is_some_and(|m| m.block.name == q.name.name)
                    })
                    .collect();
                let unique = !arrays.is_empty() && arrays.iter().all(|a| a.unique);
                let (cap, elem) = match arrays.as_slice() {
                    [a] => {
                        let t = a.ty.as_array().expect("an array");
                        let cap = match &t.mem.as_ref().expect("in memory").lmad {
                            LmadSyn::RowMajor(sh, _) => {
                                Some(sh.iter().fold(SExp::int(1), |acc, d| {
                                    SExp::bin(BinOp::Mul, acc, SExp::Atom(d.clone()))
                                }))
                            }
                            LmadSyn::Explicit { .. } => None,
                        };
                        (cap, t.elem)
                    }
                    _ => (None, Prim::I64),
                };
                lv.add_root(
                    q.name.clone(),
                    RootKind::Param { unique, cap },
                    elem,
                    0,
                    start,
                );
            }
        }
        for q in &p.params {
            if let Some(m) = q.ty.as_array().and_then(|t| t.mem.as_ref()) {
                blocks.insert(q.name.name.clone(), m.block.name.clone());
                lv.touch_block(aliases, &m.block.name, start);
            }
        }
        lv.body(&p.body, &top, &sc, aliases, &mut blocks);
        lv.widen(aliases, p);
        lv.compute_live();
        lv
    }

    fn point(&mut self, cx: &Ctx, label: String) -> usize {
        self.points.push(Point {
            body: cx.body,
            label,
            ifs: cx.ifs.clone(),
            enclosing: cx.enclosing.clone(),
        });
        self.points.len() - 1
    }

    fn add_root(&mut self, name: Ident, kind: RootKind, elem: Prim, body: usize, point: usize) {
        self.index.insert(name.name.clone(), self.roots.len());
        self.roots.push(Root {
            name,
            kind,
            elem,
            body,
            point,
        });
        self.raw.push(Vec::new());
    }

    fn touch_block(&mut self, aliases: &MemAliases, m: &Name, at: usize) {
        #[cfg(feature = "planted-faults")]
        if crate::fault::active(crate::fault::Fault::ReuseNoAliases) && aliases.is_existential(m) {
            return;
        }
        for r in aliases.roots(m) {
            if let Some(&k) = self.index.get(r) {
                if self.raw[k].last() != Some(&at) {
                    self.raw[k].push(at);
                }
            }
        }
    }

    fn touch_name(
        &mut self,
        aliases: &MemAliases,
        blocks: &HashMap<Name, Name>,
        x: &Name,
        at: usize,
    ) {
        match blocks.get(x) {
            Some(m) => {
                let m = m.clone();
                self.touch_block(aliases, &m, at)
            }
            None => self.touch_block(aliases, x, at),
        }
    }

    fn body(
        &mut self,
        b: &Body,
        cx: &Ctx,
        outer: &Scope,
        aliases: &MemAliases,
        blocks: &mut HashMap<Name, Name>,
    ) {
        let mut sc = outer.clone();
        for s in &b.stms {
            let label = stm_label(s);
            let at = self.point(cx, label.clone());
            for x in own_uses(&s.exp) {
                self.touch_name(aliases, blocks, &x.name, at);
            }
            let mut def_at = at;
            let nested: Vec<(&Body, Via, Option<u8>)> = match &s.exp.kind {
                ExpKind::If(_, t, e) => vec![(t, Via::Branch, Some(0)), (e, Via::Branch, Some(1))],
                ExpKind::Loop(_, _, _, lb) => vec![(lb, Via::Loop, None)],
                ExpKind::Kernel(_, _, kb) => vec![(kb, Via::Kernel, None)],
                _ => Vec::new(),
            };
            if !nested.is_empty() {
                let c = self.compounds.len();
                let via = nested[0].1;
                let kernel = via == Via::Kernel;
                self.compounds.push(Compound {
                    start: at,
                    join: at,
                    via,
                    bodies: Vec::new(),
                    stm: kernel.then(|| s.clone()),
                    scope: kernel.then(|| Box::new(sc.clone())),
                });
                let mut inner = sc.clone();
                match &s.exp.kind {
                    ExpKind::Loop(ps, _, form, _) => {
                        for q in ps {
                            inner.bind_pat(q);
                            self.bound
                                .insert(q.name.name.clone(), (self.bodies.len(), at));
                            if let Some(m) = q.ty.as_array().and_then(|t| t.mem.as_ref()) {
                                blocks.insert(q.name.name.clone(), m.block.name.clone());
                            }
                        }
                        if let LoopForm::For(i, n) = form {
                            inner.bound.insert(i.name.clone());
                            inner.ranges.insert(i.name.clone(), SExp::Atom(n.clone()));
                            self.bound.insert(i.name.clone(), (self.bodies.len(), at));
                        }
                    }
                    ExpKind::Kernel(i, n, _) => {
                        inner.bound.insert(i.name.clone());
                        inner.ranges.insert(i.name.clone(), SExp::Atom(n.clone()));
                        self.bound.insert(i.name.clone(), (self.bodies.len(), at));
                    }
                    _ => {}
                }
                for (nb, v, branch) in nested {
                    let id = self.bodies.len();
                    self.bodies.push(BodyInfo {
                        parent: Some(cx.body),
                        via: v,
                        compound: Some(c),
                    });
                    self.compounds[c].bodies.push(id);
                    let mut ifs = cx.ifs.clone();
                    let mut enclosing = cx.enclosing.clone();
                    match branch {
                        Some(k) => ifs.push((at, k)),
                        None => enclosing.push(c),
                    }
                    let inner_cx = Ctx {
                        body: id,
                        ifs,
                        enclosing,
                    };
                    self.body(nb, &inner_cx, &inner, aliases, blocks);
                }
                def_at = self.point(cx, format!("{label} (its result)"));
                self.compounds[c].join = def_at;
            }
            for q in &s.pats {
                self.bound.insert(q.name.name.clone(), (cx.body, def_at));
                if let (ExpKind::Alloc(size, elem), Type::Mem(_)) = (&s.exp.kind, &q.ty) {
                    self.add_root(
                        q.name.clone(),
                        RootKind::Alloc(size.clone()),
                        *elem,
                        cx.body,
                        at,
                    );
                }
                if let (ExpKind::Scalar(e), true) = (&s.exp.kind, q.ty.is_int()) {
                    self.defs.insert(q.name.name.clone(), e.clone());
                }
            }
            for q in &s.pats {
                if let Some(m) = q.ty.as_array().and_then(|t| t.mem.as_ref()) {
                    blocks.insert(q.name.name.clone(), m.block.name.clone());
                    self.touch_block(aliases, &m.block.name, def_at);
                }
            }
            sc.bind_stm(s);
        }
        let at = self.point(cx, "the body's result".into());
        #[cfg(feature = "planted-faults")]
        if crate::fault::active(crate::fault::Fault::ReuseNoResultUse) {
            return;
        }
        for r in &b.result {
            self.touch_name(aliases, blocks, &r.name, at);
        }
    }

    /// Whether body `inner` is `outer` or nested in it.
    pub fn within(&self, inner: usize, outer: usize) -> bool {
        let mut b = Some(inner);
        while let Some(x) = b {
            if x == outer {
                return true;
            }
            b = self.bodies[x].parent;
        }
        false
    }

    /// Whether compound `c` contains point `x` (strictly inside it).
    pub fn contains(&self, c: usize, x: usize) -> bool {
        let c = &self.compounds[c];
        c.start < x && x < c.join
    }

    /// The widening rules: loops and kernels, carried blocks.
    fn widen(&mut self, aliases: &MemAliases, p: &Program) {
        let mut touches: Vec<Vec<usize>> = Vec::with_capacity(self.roots.len());
        for (k, r) in self.roots.iter().enumerate() {
            let mut out: Vec<usize> = Vec::new();
            for &x in &self.raw[k] {
                let lift = self.points[x]
                    .enclosing
                    .iter()
                    .find(|&&c| !self.contains(c, r.point))
                    .filter(|&&c| widens(self.compounds[c].via));
                match lift {
                    Some(&c) => {
                        out.push(self.compounds[c].start);
                        out.push(self.compounds[c].join);
                    }
                    None => out.push(x),
                }
            }
            touches.push(out);
        }
        // Carried blocks: allocated in a loop body that returns them.
        let loops: Vec<(usize, Vec<Name>)> = {
            let mut v = Vec::new();
            let mut k = 0;
            loop_results(&p.body, &mut k, &self.compounds, &mut v);
            v
        };
        #[cfg(feature = "planted-faults")]
        let loops = if crate::fault::active(crate::fault::Fault::ReuseNoCarried) {
            Vec::new()
        } else {
            loops
        };
        for (c, results) in loops {
            for m in &results {
                for r in aliases.roots(m) {
                    if let Some(&k) = self.index.get(r) {
                        if self.contains(c, self.roots[k].point) {
                            touches[k].push(self.compounds[c].start);
                            touches[k].push(self.compounds[c].join);
                        }
                    }
                }
            }
        }
        for t in &mut touches {
            t.sort_unstable();
            t.dedup();
        }
        self.touches = touches;
    }

    /// Whether points `a` and `b` may be on one run (not in the two
    /// branches of one `if`).
    pub fn compatible(&self, a: usize, b: usize) -> bool {
        let (pa, pb) = (&self.points[a].ifs, &self.points[b].ifs);
        !pa.iter()
            .any(|(s, k)| pb.iter().any(|(t, l)| s == t && k != l))
    }

    fn compute_live(&mut self) {
        let n = self.points.len();
        let words = n.div_ceil(64);
        self.live = Vec::with_capacity(self.roots.len());
        for t in &self.touches {
            let mut bits = vec![0u64; words];
            if let (Some(&lo), Some(&hi)) = (t.first(), t.last()) {
                for x in lo..=hi {
                    let before = t
                        .iter()
                        .take_while(|&&y| y <= x)
                        .any(|&y| self.compatible(y, x));
                    let after = t
                        .iter()
                        .rev()
                        .take_while(|&&y| y >= x)
                        .any(|&y| self.compatible(y, x));
                    if before && after {
                        bits[x / 64] |= 1 << (x % 64);
                    }
                }
            }
            self.live.push(bits);
        }
    }

    /// Whether block `k` is alive at point `x`.
    pub fn alive(&self, k: usize, x: usize) -> bool {
        self.live[k]
            .get(x / 64)
            .is_some_and(|w| w & (1 << (x % 64)) != 0)
    }

    /// The points where blocks `a` and `b` are both alive.
    pub fn overlap(&self, a: usize, b: usize) -> Vec<usize> {
        let mut out = Vec::new();
        for (w, (x, y)) in self.live[a].iter().zip(&self.live[b]).enumerate() {
            let mut both = x & y;
            while both != 0 {
                let bit = both.trailing_zeros() as usize;
                out.push(w * 64 + bit);
                both &= both - 1;
            }
        }
        out
    }

    /// A block's first and last uses, for `--explain`.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (k, r) in self.roots.iter().enumerate() {
            let t = &self.touches[k];
            let Some(&first) = t.first() else {
                out.push(format!("liveness: `{}` is never used", r.name.name));
                continue;
            };
            // Last uses: touches with no later touch on a run through them.
            let last: Vec<String> = t
                .iter()
                .filter(|&&x| !t.iter().any(|&y| y > x && self.compatible(x, y)))
                .map(|&x| self.points[x].label.clone())
                .collect();
            out.push(format!(
                "liveness: `{}` first used at {}, last used at {}",
                r.name.name,
                self.points[first].label,
                last.join(" or ")
            ));
        }
        out
    }
}

/// Whether the loop (kernel) rule widens touches inside such a compound
/// (always, but for the planted faults that switch it off).
fn widens(via: Via) -> bool {
    #[cfg(feature = "planted-faults")]
    {
        use crate::fault::{active, Fault};
        if (via == Via::Loop && active(Fault::ReuseNoLoopWiden))
            || (via == Via::Kernel && active(Fault::ReuseNoKernelWiden))
        {
            return false;
        }
    }
    let _ = via;
    true
}

/// For each loop (in the order of [`Liveness::compounds`]), the names its
/// body returns in its `mem` positions.
fn loop_results(
    b: &Body,
    k: &mut usize,
    compounds: &[Compound],
    out: &mut Vec<(usize, Vec<Name>)>,
) {
    for s in &b.stms {
        match &s.exp.kind {
            ExpKind::If(_, t, e) => {
                *k += 1;
                loop_results(t, k, compounds, out);
                loop_results(e, k, compounds, out);
            }
            ExpKind::Loop(ps, _, _, lb) => {
                let me = *k;
                *k += 1;
                let names: Vec<Name> = ps
                    .iter()
                    .zip(&lb.result)
                    .filter(|(q, _)| matches!(q.ty, Type::Mem(_)))
                    .map(|(_, r)| r.name.clone())
                    .collect();
                debug_assert_eq!(compounds.get(me).map(|c| c.via), Some(Via::Loop));
                out.push((me, names));
                loop_results(lb, k, compounds, out);
            }
            ExpKind::Kernel(_, _, kb) => {
                *k += 1;
                loop_results(kb, k, compounds, out);
            }
            _ => {}
        }
    }
}

/// How a statement is named in messages.
pub fn stm_label(s: &Stm) -> String {
    match s
        .pats
        .iter()
        .find(|p| !matches!(p.ty, Type::Mem(_)))
        .or(s.pats.first())
    {
        Some(p) => format!("`{}`", p.name.name),
        None => "a statement".into(),
    }
}

/// The names a statement's expression uses, its nested bodies left out.
pub fn own_uses(e: &Exp) -> Vec<&Ident> {
    let mut out: Vec<&Ident> = Vec::new();
    fn atom(a: &Atom) -> Option<&Ident> {
        match a {
            Atom::Var(x) => Some(x),
            _ => None,
        }
    }
    match &e.kind {
        ExpKind::Index(x, _)
        | ExpKind::Slice(x, _)
        | ExpKind::Transpose(x)
        | ExpKind::Copy(x)
        | ExpKind::Reduce(_, _, x)
        | ExpKind::Scan(_, _, x) => out.push(x),
        ExpKind::Update(x, _, v) => {
            out.push(x);
            out.extend(atom(v));
        }
        ExpKind::Concat(x, y) => {
            out.push(x);
            out.push(y);
        }
        ExpKind::Replicate(_, v) => out.extend(atom(v)),
        ExpKind::Loop(_, init, _, _) => out.extend(init.iter().filter_map(atom)),
        _ => {}
    }
    out
}
