//! Migration: the pass `migrate` (Børgesen, MSc thesis DIKU 2022, ch. 4).
//!
//! On a GPU, the statements outside kernels run on the host. A host read of
//! an array element (`let x = xs[i]`) or of a `reduce`'s result is a
//! synchronous device-to-host transfer: the host waits for the queue to
//! drain, the device idles. This pass moves scalar host statements into
//! single-iteration kernels (`kernel t < 1 do ... in (x)`, whose results
//! are one-element arrays) so that the worst-case number of such reads
//! that remain is least, and among such choices the fewest statements
//! move.
//!
//! **Why FUNMEM → FUNMEM.** Futhark runs its migration before memory is
//! introduced. Ours runs on FUNMEM so that it is one pass among the others
//! (`--passes`, the GPU pipeline), so that every stage it produces is
//! checked for validity by the heap semantics with race detection, and so
//! that the one-element blocks it adds are visible to reuse and expansion
//! like any other block. It adds only `alloc 1 t` blocks, kernels of one
//! iteration, reads of element 0, and loop and `if` results that carry a
//! block; nothing it emits needs a fact about LMADs, so it has no proof
//! obligations.
//!
//! **The model** (§4.1, §4.5; `mincut.rs` solves it). Vertices are the
//! host's scalar variables. Rules, numbered as in our docs (the thesis's
//! statement kinds, as they apply to our language):
//!
//! - R1 assignment and R2 scalar operations (`let x = se`): an edge from
//!   every variable of se to x. R3 (function application) has no
//!   counterpart: our functions (`sqrt`, conversions) are scalar
//!   operations.
//! - R4 element reads (`let x = xs[i, j]`, every dimension indexed): a
//!   source into x, and edges from the indices.
//! - R5 slices and row reads (`xs[i]` of fewer indices, `xs[o:n]`): their
//!   operands must be on the host (sinks): a view is free only where it
//!   is made, and a kernel would copy it.
//! - R6 element writes (`xs with [i] = v`): the indices are sinks; v is
//!   not: a migrated v is written from its one-element array as the
//!   update `xs with [i:1] = v'`, a device-to-device copy.
//! - R7 sub-array writes: the indices are sinks.
//! - R8 array literals: our language has none.
//! - R9 `if`: both branches are graphed as if they ran (the thesis's
//!   conservative model), each scalar result gets edges from the
//!   condition and from both branch results. An `if` that may move as a
//!   whole (only scalar work inside, only scalar results) moves when its
//!   condition would not be on the host; any other `if`'s condition is a
//!   sink.
//! - R10 loops: parameters get edges from their initial values and next
//!   values; the loop's own sources are routed before the loop is
//!   connected to the rest (a read inside runs every iteration and may
//!   only be traded for a use inside); results that a loop source reaches
//!   get sources of their own; free variables that could reach a sink
//!   inside become sinks, the others have their edges closed and bypass
//!   edges added to the results they reach; the condition (`for i < n`'s
//!   n, `while p`'s p) gets an edge to every result. A loop that may move
//!   as a whole does so when its condition would not be on the host;
//!   otherwise the condition is a sink (and for `while`, its next value
//!   too).
//! - R11 `copy`, R12 `iota`, R13 `replicate`: sizes are sinks; a migrated
//!   `replicate`d scalar is read in a kernel that replaces the replicate.
//! - R14 parallel kernels, `reduce` and `scan`: the bound, neutral
//!   elements and operator's free variables are sinks; a kernel body that
//!   uses a migrated variable reads it from its one-element array. A
//!   `reduce` is also a read: a source into its result. A migrated reduce
//!   becomes the device-result reduce `kernel t < 1 do let x = reduce ...
//!   in (x)`, which the OpenCL backend runs as the parallel reduce that
//!   leaves its result on the device.
//! - R15 single-iteration kernels already in the program are kernels like
//!   any other.
//! - Every other operand that the host must have is a sink: sizes and
//!   LMAD terms in types, `alloc` sizes, program results.
//!
//! **The rewrite** (§4.4). A statement whose variable is in D moves into a
//! kernel of one iteration; a variable in C is read back on the host
//! (`let x = x'[0]`) right after; kernels, updates and replicates that use
//! a migrated variable read its array. Reads and reduces in C whose
//! operands are on the host stay as they are (the same one read, no
//! kernel). Branch and loop results that are migrated become one-element
//! arrays with their blocks; a branch or iteration whose value is on the
//! host wraps it in a kernel. A `while` loop's condition parameter stays a
//! host scalar unless the whole loop moves: the host tests it before the
//! first iteration, so its initial and next values are read back when they
//! live on the device (papers/borgesen2022/errata.md).
//!
//! **The merge** (Algorithm 4): each body's statements are placed in
//! buckets that alternate host and device, each as early as its operands,
//! its consumptions and the order of statements that may go wrong allow;
//! the device statements of a bucket become one kernel, which reads each
//! migrated operand it does not compute once and returns only what later
//! statements use.

use crate::mincut::{Graph, Solution, V};
use crate::names::Names;
use crate::obligation::Prover;
use crate::pass::{Counts, PassOutput};
use crate::walk;
use funmem_lang::ast::*;
use funmem_lang::count::host_reads;
use funmem_lang::diag::Diagnostic;
use funmem_lang::{Name, Span};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// The migration graph of a FUNMEM program, solved: every source routed,
/// and the partition. (What `migrate` decides by; the tests check it.)
pub fn solve(p: &Program) -> (Graph, Solution) {
    let b = build(p);
    let sol = b.g.resolve();
    (b.g, sol)
}

fn build(p: &Program) -> Builder {
    let mut b = Builder::default();
    for q in &p.params {
        b.bind(q, None);
    }
    b.graph_body(&p.body);
    for x in &p.body.result {
        b.sink_name(&x.name);
    }
    let rest: Vec<V> =
        b.g.sources()
            .into_iter()
            .filter(|&s| !b.routed.contains(&s))
            .collect();
    b.g.route_many(&rest);
    b
}

/// The pass `migrate`.
pub fn migrate_pass(p: &Program, _: &dyn Prover) -> Result<PassOutput, Diagnostic> {
    let before = host_reads(&p.body);
    let mut b = build(p);
    let sol = b.g.resolve();
    let mut explain = vec![format!(
        "migrate: graph: {} vertices, {} sources, {} host reads before",
        b.g.len(),
        b.g.sources().len(),
        before
    )];
    explain.push("migrate: graph (DOT, for Graphviz):".into());
    explain.extend(b.g.to_dot(Some(&sol)).lines().map(|l| format!("  {l}")));
    let cut: Vec<&str> = (0..b.g.len())
        .filter(|&v| sol.cut[v])
        .map(|v| b.g.label(v))
        .collect();
    explain.push(format!(
        "migrate: cut C ({}): {}",
        cut.len(),
        if cut.is_empty() {
            "empty".to_string()
        } else {
            cut.join(", ")
        }
    ));
    explain.append(&mut b.explain);
    let mut r = Rewriter {
        site: b.site,
        sol,
        names: Names::of_program(p),
        cur: HashMap::default(),
        dev: HashMap::default(),
        prim: HashMap::default(),
        explain: Vec::new(),
        counts: Counts::default(),
    };
    let mut host: HashSet<Name> = HashSet::default();
    for q in &p.params {
        host.insert(q.name.name.clone());
        if let Type::Prim(t, _) = q.ty {
            r.prim.insert(q.name.name.clone(), t);
        }
    }
    let body = r.body(&p.body, &mut host);
    let program = Program { body, ..p.clone() };
    let after = host_reads(&program.body);
    explain.extend(r.explain);
    explain.push(format!(
        "migrate: host reads (read sites outside kernels): {before} before, {after} after"
    ));
    let mut counts = r.counts;
    counts.add("host reads", before as u64);
    counts.add("host reads removed", before.saturating_sub(after) as u64);
    Ok(PassOutput {
        program,
        obligations: Vec::new(),
        counts,
        explain,
    })
}

fn is_scalar(pats: &[Pat]) -> bool {
    pats.len() == 1 && matches!(pats[0].ty, Type::Prim(..))
}

fn prim_of(p: &Pat) -> Option<Prim> {
    p.ty.as_prim()
}

/// Whether a body may run inside a kernel of one iteration: scalar
/// statements, element reads, and `if`s and loops of such bodies, binding
/// only scalars (the thesis's blocking rules: no host-only statement, no
/// size, no array result).
fn device_ok(b: &Body) -> bool {
    b.stms.iter().all(|s| {
        s.pats.iter().all(|p| prim_of(p).is_some())
            && match &s.exp.kind {
                ExpKind::Scalar(_) => true,
                ExpKind::Index(..) => true,
                ExpKind::If(_, t, e) => device_ok(t) && device_ok(e),
                ExpKind::Loop(ps, _, _, lb) => {
                    ps.iter().all(|p| prim_of(p).is_some()) && device_ok(lb)
                }
                _ => false,
            }
    })
}

/// Whether an `if` or loop statement may move as a whole.
fn whole_ok(s: &Stm) -> bool {
    s.pats.iter().all(|p| prim_of(p).is_some())
        && match &s.exp.kind {
            ExpKind::If(_, t, e) => device_ok(t) && device_ok(e),
            ExpKind::Loop(ps, _, _, b) => ps.iter().all(|p| prim_of(p).is_some()) && device_ok(b),
            _ => false,
        }
}

/// A statement, named by what it binds, for `--explain`.
struct Where<'a>(&'a Stm);

impl std::fmt::Display for Where<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.0.pats.iter().map(|p| p.name.name.as_str()).collect();
        write!(f, "`let {}`", names.join(" "))
    }
}

fn site(p: &Pat) -> usize {
    p as *const Pat as usize
}

/// Builds the migration graph of a program's host part.
#[derive(Default)]
struct Builder {
    g: Graph,
    /// The vertex of each visible host scalar.
    vert: HashMap<Name, V>,
    /// The vertex of each scalar binding, by the binding's address.
    site: HashMap<usize, V>,
    routed: HashSet<V>,
    explain: Vec<String>,
}

impl Builder {
    fn bind(&mut self, p: &Pat, v: Option<V>) -> Option<V> {
        self.sink_type(&p.ty);
        if prim_of(p).is_none() {
            self.vert.remove(&p.name.name);
            return None;
        }
        let v = v.unwrap_or_else(|| self.g.add_vertex(p.name.name.as_str()));
        self.vert.insert(p.name.name.clone(), v);
        self.site.insert(site(p), v);
        Some(v)
    }

    fn var(&self, x: &Name) -> Option<V> {
        self.vert.get(x).copied()
    }

    fn edge_atom(&mut self, a: &Atom, to: V) {
        if let Some(v) = a.var().and_then(|x| self.var(x)) {
            self.g.add_edge(v, to);
        }
    }

    fn sink_name(&mut self, x: &Name) {
        if let Some(v) = self.var(x) {
            self.g.connect_sink(v);
        }
    }

    fn sink_atom(&mut self, a: &Atom) {
        if let Some(x) = a.var() {
            self.sink_name(x);
        }
    }

    fn sink_type(&mut self, t: &Type) {
        let mut names = Vec::new();
        walk::type_names(t, &mut |x| names.push(x.name.clone()));
        for x in names {
            self.sink_name(&x);
        }
    }

    /// Every visible host scalar a nested body mentions becomes a sink
    /// (a reduce operator's free variables).
    fn sink_mentions(&mut self, b: &Body) {
        let mut names = Vec::new();
        walk::body_names(b, &mut |x| names.push(x.name.clone()));
        for x in names {
            self.sink_name(&x);
        }
    }

    fn graph_body(&mut self, b: &Body) {
        for s in &b.stms {
            self.graph_stm(s);
        }
    }

    fn graph_stm(&mut self, s: &Stm) {
        match &s.exp.kind {
            ExpKind::If(c, t, e) => {
                self.graph_body(t);
                self.graph_body(e);
                let ok = whole_ok(s);
                for (i, p) in s.pats.iter().enumerate() {
                    if let Some(x) = self.bind(p, None) {
                        self.edge_atom(&Atom::Var(c.clone()), x);
                        self.edge_atom(&Atom::Var(t.result[i].clone()), x);
                        self.edge_atom(&Atom::Var(e.result[i].clone()), x);
                    }
                }
                if !ok {
                    self.sink_name(&c.name);
                }
            }
            ExpKind::Loop(ps, init, form, body) => self.graph_loop(s, ps, init, form, body),
            _ => self.graph_simple(s),
        }
    }

    fn graph_simple(&mut self, s: &Stm) {
        // Operands first: they are visible before the statement binds.
        let mut edges_from: Vec<Atom> = Vec::new();
        let mut source = false;
        match &s.exp.kind {
            ExpKind::Scalar(se) => se.for_each_var(&mut |x| edges_from.push(Atom::Var(x.clone()))),
            ExpKind::Index(_, idx) => {
                if is_scalar(&s.pats) {
                    source = true;
                    edges_from.extend(idx.iter().cloned());
                } else {
                    idx.iter().for_each(|a| self.sink_atom(a));
                }
            }
            ExpKind::Slice(_, sl) => {
                for (o, n) in sl {
                    self.sink_atom(o);
                    self.sink_atom(n);
                }
            }
            ExpKind::Iota(n) => self.sink_atom(n),
            ExpKind::Replicate(n, _) => self.sink_atom(n),
            ExpKind::Alloc(se, _) => {
                let mut xs = Vec::new();
                se.for_each_var(&mut |x| xs.push(x.name.clone()));
                xs.iter().for_each(|x| self.sink_name(x));
            }
            ExpKind::Update(_, idx, _) => {
                for i in idx {
                    i.atoms().into_iter().for_each(|a| self.sink_atom(a));
                }
            }
            ExpKind::Reduce(op, ne, _) | ExpKind::Scan(op, ne, _) => {
                self.sink_atom(ne);
                if let RedOp::Lambda(l) = op {
                    self.sink_mentions(&l.body);
                }
                source = matches!(s.exp.kind, ExpKind::Reduce(..));
            }
            ExpKind::Kernel(_, n, _) => self.sink_atom(n),
            ExpKind::Transpose(_) | ExpKind::Copy(_) | ExpKind::Concat(..) => {}
            // Graphed by `graph_stm`.
            ExpKind::If(..) | ExpKind::Loop(..) => {}
        }
        for p in &s.pats {
            if let Some(x) = self.bind(p, None) {
                for a in &edges_from {
                    self.edge_atom(a, x);
                }
                if source {
                    let src = self.g.add_source(format!("read {}", p.name.name));
                    self.g.add_edge(src, x);
                }
            }
        }
    }

    fn graph_loop(&mut self, s: &Stm, ps: &[Pat], init: &[Atom], form: &LoopForm, body: &Body) {
        let start = self.g.len();
        let mut ys: Vec<Option<V>> = Vec::new();
        for (p, o) in ps.iter().zip(init) {
            let y = self.bind(p, None);
            if let Some(y) = y {
                self.edge_atom(o, y);
            }
            ys.push(y);
        }
        self.graph_body(body);
        let ok = whole_ok(s);
        let cond_index = match form {
            LoopForm::While(c) => ps.iter().position(|p| p.name.name == c.name),
            LoopForm::For(..) => None,
        };
        if !ok {
            match form {
                LoopForm::For(_, n) => self.sink_atom(n),
                LoopForm::While(c) => {
                    self.sink_name(&c.name);
                    if let Some(i) = cond_index {
                        self.sink_name(&body.result[i].name);
                    }
                }
            }
        }
        for (i, y) in ys.iter().enumerate() {
            if let (Some(y), Some(z)) = (y, self.var(&body.result[i].name)) {
                self.g.add_edge(z, *y);
            }
        }
        let end = self.g.len();
        let inside = move |v: V| v >= start && v < end;
        let loop_sources: Vec<V> = (start..end)
            .filter(|&v| self.g.is_source(v) && !self.routed.contains(&v))
            .collect();
        let routes = self.g.route_many(&loop_sources);
        self.routed.extend(loop_sources.iter().copied());
        // The loop's results, each from its parameter.
        let cond = match form {
            LoopForm::For(_, n) => n.var().and_then(|x| self.var(x)),
            LoopForm::While(c) => self.var(&c.name),
        };
        let mut xs: Vec<V> = Vec::new();
        for (i, p) in s.pats.iter().enumerate() {
            if let Some(x) = self.bind(p, None) {
                if let Some(y) = ys.get(i).copied().flatten() {
                    self.g.add_edge(y, x);
                }
                xs.push(x);
            }
        }
        let is_x = |v: V| xs.contains(&v);
        // Post-loop reduction: results a loop source reaches may live on
        // the device after the loop.
        let starts: Vec<usize> = loop_sources.iter().map(|&s| Graph::in_node(s)).collect();
        let (seen, _) = self.g.reach(&starts, |v| inside(v) || is_x(v), false);
        for &x in &xs {
            if seen[Graph::in_node(x)] {
                let src = self.g.add_source(format!("after loop {}", self.g.label(x)));
                self.g.add_edge(src, x);
            }
        }
        // Loop isolation.
        let mut free: Vec<V> = Vec::new();
        for v in 0..start {
            if !self.g.has_sink(v) && self.g.routing_edges(v).any(inside) {
                free.push(v);
            }
        }
        let mut sinks = 0;
        for v in free {
            let starts: Vec<usize> = self
                .g
                .routing_edges(v)
                .filter(|&w| inside(w))
                .map(Graph::in_node)
                .collect();
            let (seen, sink) = self.g.reach(&starts, |w| inside(w) || is_x(w), true);
            if sink {
                self.g.connect_sink(v);
                sinks += 1;
            } else {
                self.g.close_edges(v, inside);
                for &x in &xs {
                    if seen[Graph::in_node(x)] {
                        self.g.add_bypass(v, x);
                    }
                }
            }
        }
        if let Some(c) = cond {
            for &x in &xs {
                self.g.add_edge(c, x);
            }
        }
        self.explain.push(format!(
            "migrate: loop {}: {} sources inside, {} routed inside; {} free variables made sinks{}",
            Where(s),
            loop_sources.len(),
            routes,
            sinks,
            if ok {
                "; may move as a whole"
            } else {
                "; stays on the host (its condition is a sink)"
            }
        ));
    }
}

/// Where a scalar lives after migration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Host,
    /// Moved; the host no longer has it.
    Device,
    /// Moved and read back (in the cut).
    Both,
}

/// A migrated scalar's one-element array and its block.
#[derive(Clone, Debug)]
struct DevArr {
    mem: Name,
    arr: Name,
    prim: Prim,
}

/// A statement of a body before the merge.
enum Item {
    /// Host statements, kept together.
    Host(Vec<Stm>),
    /// Scalar statements to run in a kernel of one iteration, and the
    /// scalars they define.
    Gpu(Vec<Stm>, Vec<Name>),
}

struct Rewriter {
    site: HashMap<usize, V>,
    sol: Solution,
    names: Names,
    /// The vertex of each visible host scalar.
    cur: HashMap<Name, V>,
    /// The device array of each migrated scalar.
    dev: HashMap<Name, DevArr>,
    prim: HashMap<Name, Prim>,
    explain: Vec<String>,
    counts: Counts,
}

fn ident(x: &Name) -> Ident {
    Ident {
        name: x.clone(),
        span: Span::DUMMY,
    }
}

fn pat(x: &Name, ty: Type) -> Pat {
    Pat {
        name: ident(x),
        ty,
        unique: false,
        span: Span::DUMMY,
    }
}

fn stm(pats: Vec<Pat>, kind: ExpKind, span: Span) -> Stm {
    Stm {
        pats,
        exp: Exp { kind, span },
        span,
    }
}

fn one_arr_type(t: Prim, mem: &Name) -> Type {
    Type::Array(
        ArrayType {
            shape: vec![Atom::Int(1, Span::DUMMY)],
            elem: t,
            mem: Some(MemAnn {
                block: ident(mem),
                lmad: LmadSyn::RowMajor(vec![Atom::Int(1, Span::DUMMY)], Span::DUMMY),
            }),
        },
        Span::DUMMY,
    )
}

/// `let (x: t) = arr[0]`.
fn read_stm(x: &Name, d: &DevArr, span: Span) -> Stm {
    stm(
        vec![pat(x, Type::Prim(d.prim, Span::DUMMY))],
        ExpKind::Index(ident(&d.arr), vec![Atom::Int(0, Span::DUMMY)]),
        span,
    )
}

/// The names a statement mentions that it does not bind (its free
/// names: names are never rebound where visible).
fn free_names(stms: &[Stm]) -> HashSet<Name> {
    let mut all: HashSet<Name> = HashSet::default();
    let mut bound: HashSet<Name> = HashSet::default();
    for s in stms {
        walk::stm_names(s, &mut |x| {
            all.insert(x.name.clone());
        });
        for p in &s.pats {
            bound.insert(p.name.name.clone());
        }
        let mut inner = Vec::new();
        collect_binders(&s.exp, &mut inner);
        bound.extend(inner);
    }
    all.retain(|x| !bound.contains(x));
    all
}

fn collect_binders(e: &Exp, out: &mut Vec<Name>) {
    // Each binder once: a statement's own, then those of its nested
    // bodies (`Body::for_each_pat` would list the nested ones again at
    // every level).
    let body = |b: &Body, out: &mut Vec<Name>| {
        for s in &b.stms {
            out.extend(s.pats.iter().map(|p| p.name.name.clone()));
            collect_binders(&s.exp, out);
        }
    };
    match &e.kind {
        ExpKind::If(_, t, el) => {
            body(t, out);
            body(el, out);
        }
        ExpKind::Kernel(i, _, b) => {
            out.push(i.name.clone());
            body(b, out);
        }
        ExpKind::Loop(ps, _, form, b) => {
            ps.iter().for_each(|p| out.push(p.name.name.clone()));
            if let LoopForm::For(i, _) = form {
                out.push(i.name.clone());
            }
            body(b, out);
        }
        ExpKind::Reduce(RedOp::Lambda(l), _, _) | ExpKind::Scan(RedOp::Lambda(l), _, _) => {
            l.params.iter().for_each(|p| out.push(p.name.name.clone()));
            body(&l.body, out);
        }
        _ => {}
    }
}

/// Whether running the statements may go wrong (anything but scalar
/// arithmetic without division): such statements keep their order.
fn may_fail(stms: &[Stm]) -> bool {
    stms.iter().any(|s| match &s.exp.kind {
        ExpKind::Scalar(se) => se.divides(),
        _ => true,
    })
}

impl Rewriter {
    fn place_of(&self, x: &Name) -> Place {
        match self.cur.get(x) {
            Some(&v) if self.sol.device[v] => {
                if self.sol.cut[v] {
                    Place::Both
                } else {
                    Place::Device
                }
            }
            _ => Place::Host,
        }
    }

    /// Records a binding: its vertex, its type.
    fn bind(&mut self, p: &Pat) {
        if let Some(t) = prim_of(p) {
            self.prim.insert(p.name.name.clone(), t);
        }
        match self.site.get(&site(p)) {
            Some(&v) => {
                self.cur.insert(p.name.name.clone(), v);
            }
            None => {
                self.cur.remove(&p.name.name);
            }
        }
        self.dev.remove(&p.name.name);
    }

    fn new_dev(&mut self, x: &Name, t: Prim) -> DevArr {
        let arr = self.names.fresh(&format!("{x}_dev")).name;
        let mem = self.names.fresh(&format!("{x}_dev_mem")).name;
        let d = DevArr { mem, arr, prim: t };
        self.dev.insert(x.clone(), d.clone());
        d
    }

    /// Rewrites a body: its statements to items, the merge, the items to
    /// statements. `host` holds the scalars and arrays the host has (grows
    /// with the body's bindings, restored by the caller's clone).
    fn body(&mut self, b: &Body, host: &mut HashSet<Name>) -> Body {
        let mut items: Vec<Item> = Vec::new();
        for s in &b.stms {
            self.stm(s, &mut items, host);
        }
        let stms = self.emit(items, host, &b.result);
        Body {
            stms,
            result: b.result.clone(),
            span: b.span,
        }
    }

    /// Reads back, on the host, every scalar the statements use that only
    /// the device has.
    fn ensure_host(
        &mut self,
        names: &HashSet<Name>,
        host: &HashSet<Name>,
        items: &mut Vec<Item>,
        span: Span,
    ) {
        let mut need: Vec<&Name> = names
            .iter()
            .filter(|x| !host.contains(*x) && self.dev.contains_key(*x))
            .collect();
        need.sort();
        for x in need {
            let d = self.dev[x].clone();
            items.push(Item::Host(vec![read_stm(x, &d, span)]));
            self.counts.add("reads added", 1);
        }
    }

    fn stm(&mut self, s: &Stm, items: &mut Vec<Item>, host: &mut HashSet<Name>) {
        match &s.exp.kind {
            ExpKind::If(c, t, e) => {
                if self.place_of(&c.name) == Place::Device && whole_ok(s) {
                    self.whole(s, items, host, "if");
                } else {
                    self.fine_if(s, c, t, e, items, host);
                }
            }
            ExpKind::Loop(ps, init, form, lb) => {
                let cond = match form {
                    LoopForm::For(_, n) => n.var().cloned(),
                    LoopForm::While(c) => Some(c.name.clone()),
                };
                // The loop's own bindings are made inside; a while's
                // condition is a parameter.
                for p in ps {
                    self.bind(p);
                }
                let moves = whole_ok(s)
                    && cond
                        .as_ref()
                        .is_some_and(|c| self.place_of(c) == Place::Device);
                if moves {
                    self.whole(s, items, host, "loop");
                } else {
                    self.fine_loop(s, ps, init, form, lb, items, host);
                }
            }
            ExpKind::Kernel(i, n, kb) => {
                // A kernel's body runs on the device: nothing in it moves;
                // it reads the migrated scalars it uses from their arrays
                // (once, before its statements; nested kernels see them).
                let mut fv: Vec<Name> = free_names(std::slice::from_ref(s)).into_iter().collect();
                fv.sort();
                let mut stms = Vec::new();
                for x in fv {
                    if !host.contains(&x) {
                        if let Some(d) = self.dev.get(&x).cloned() {
                            stms.push(read_stm(&x, &d, s.span));
                        }
                    }
                }
                if !stms.is_empty() {
                    self.counts.add("kernels reading migrated scalars", 1);
                }
                stms.extend(kb.stms.iter().cloned());
                let body = Body {
                    stms,
                    result: kb.result.clone(),
                    span: kb.span,
                };
                let new = Stm {
                    exp: Exp {
                        kind: ExpKind::Kernel(i.clone(), n.clone(), body),
                        span: s.exp.span,
                    },
                    ..s.clone()
                };
                self.host_item(new, items, host);
            }
            ExpKind::Replicate(n, Atom::Var(v))
                if !host.contains(&v.name) && self.dev.contains_key(&v.name) =>
            {
                let d = self.dev[&v.name].clone();
                let k = self.names.fresh("t");
                let w = self.names.fresh(v.name.as_str());
                let body = Body {
                    stms: vec![read_stm(&w.name, &d, s.span)],
                    result: vec![w],
                    span: s.span,
                };
                let new = stm(s.pats.clone(), ExpKind::Kernel(k, n.clone(), body), s.span);
                self.explain.push(format!(
                    "migrate: replicate {}: its value `{}` is read from the device in a kernel",
                    Where(s),
                    v.name
                ));
                self.host_item(new, items, host);
            }
            ExpKind::Update(x, idx, Atom::Var(v))
                if !host.contains(&v.name)
                    && self.dev.contains_key(&v.name)
                    && self.prim.contains_key(&v.name) =>
            {
                let d = self.dev[&v.name].clone();
                let mut idx = idx.clone();
                if let Some(UpdIdx::Elem(a)) = idx.last().cloned() {
                    let last = idx.len() - 1;
                    idx[last] = UpdIdx::Range(a, Atom::Int(1, Span::DUMMY));
                    let new = stm(
                        s.pats.clone(),
                        ExpKind::Update(x.clone(), idx, Atom::Var(ident(&d.arr))),
                        s.span,
                    );
                    self.explain.push(format!(
                        "migrate: update {}: writes `{}` from its device array (no host transfer)",
                        Where(s),
                        v.name
                    ));
                    self.host_item(new, items, host);
                } else {
                    self.host_item(s.clone(), items, host);
                }
            }
            ExpKind::Scalar(_) | ExpKind::Index(..) | ExpKind::Reduce(..) if is_scalar(&s.pats) => {
                self.scalar(s, items, host)
            }
            _ => self.host_item(s.clone(), items, host),
        }
    }

    /// A statement that stays on the host (its operands read back first
    /// where only the device has them).
    fn host_item(&mut self, s: Stm, items: &mut Vec<Item>, host: &mut HashSet<Name>) {
        let fv = free_names(std::slice::from_ref(&s));
        self.ensure_host(&fv, host, items, s.span);
        for p in &s.pats {
            self.bind(p);
            host.insert(p.name.name.clone());
        }
        items.push(Item::Host(vec![s]));
    }

    fn scalar(&mut self, s: &Stm, items: &mut Vec<Item>, host: &mut HashSet<Name>) {
        let p = &s.pats[0];
        let x = p.name.name.clone();
        self.bind(p);
        let place = self.place_of(&x);
        let t = prim_of(p).unwrap_or(Prim::I64);
        let fv = free_names(std::slice::from_ref(s));
        let operands_on_host = fv
            .iter()
            .all(|y| host.contains(y) || !self.prim.contains_key(y));
        let is_read = matches!(s.exp.kind, ExpKind::Index(..) | ExpKind::Reduce(..));
        match place {
            Place::Host => {
                self.ensure_host(&fv, host, items, s.span);
                host.insert(x);
                items.push(Item::Host(vec![s.clone()]));
            }
            Place::Both if is_read && operands_on_host => {
                self.explain.push(format!(
                    "migrate: {} stays a host read (in the cut, its operands on the host)",
                    Where(s)
                ));
                host.insert(x);
                items.push(Item::Host(vec![s.clone()]));
            }
            _ if matches!(s.exp.kind, ExpKind::Reduce(..)) => {
                // The device-result reduce: its own kernel.
                self.ensure_host(&fv, host, items, s.span);
                let d = self.new_dev(&x, t);
                let k = self.names.fresh("t");
                let alloc = stm(
                    vec![pat(&d.mem, Type::Mem(Span::DUMMY))],
                    ExpKind::Alloc(SExp::int(1), t),
                    s.span,
                );
                let kernel = stm(
                    vec![pat(&d.arr, one_arr_type(t, &d.mem))],
                    ExpKind::Kernel(
                        k,
                        Atom::Int(1, Span::DUMMY),
                        Body {
                            stms: vec![s.clone()],
                            result: vec![ident(&x)],
                            span: s.span,
                        },
                    ),
                    s.span,
                );
                self.explain.push(format!(
                    "migrate: reduce {}: its result stays on the device",
                    Where(s)
                ));
                self.counts.add("reduces kept on the device", 1);
                host.insert(d.mem.clone());
                host.insert(d.arr.clone());
                items.push(Item::Host(vec![alloc, kernel]));
                if place == Place::Both {
                    host.insert(x.clone());
                    items.push(Item::Host(vec![read_stm(&x, &d, s.span)]));
                }
            }
            _ => {
                self.new_dev(&x, t);
                self.explain.push(format!(
                    "migrate: {} moves to the device{}",
                    Where(s),
                    if place == Place::Both {
                        " and is read back (in the cut)"
                    } else {
                        ""
                    }
                ));
                self.counts.add("statements migrated", 1);
                items.push(Item::Gpu(vec![s.clone()], vec![x.clone()]));
                if place == Place::Both {
                    let d = self.dev[&x].clone();
                    host.insert(x.clone());
                    items.push(Item::Host(vec![read_stm(&x, &d, s.span)]));
                }
            }
        }
    }

    /// An `if` or loop that moves as a whole.
    fn whole(&mut self, s: &Stm, items: &mut Vec<Item>, host: &mut HashSet<Name>, what: &str) {
        let mut defs = Vec::new();
        let mut reads = Vec::new();
        for p in &s.pats {
            self.bind(p);
            let x = p.name.name.clone();
            let t = prim_of(p).unwrap_or(Prim::I64);
            let d = self.new_dev(&x, t);
            if self.place_of(&x) != Place::Device {
                host.insert(x.clone());
                reads.push(Item::Host(vec![read_stm(&x, &d, s.span)]));
            }
            defs.push(x);
        }
        self.explain.push(format!(
            "migrate: the whole {what} {} moves to the device (its condition is not on the host)",
            Where(s)
        ));
        self.counts.add(
            if what == "if" {
                "ifs migrated whole"
            } else {
                "loops migrated whole"
            },
            1,
        );
        items.push(Item::Gpu(vec![s.clone()], defs));
        items.extend(reads);
    }

    /// The pattern of an `if` or loop whose results `on_dev` says are
    /// carried on the device: each such result becomes a block and a
    /// one-element array (read back on the host after the statement when
    /// the host needs it, in the returned items); `say` explains each.
    fn results_on_device(
        &mut self,
        s: &Stm,
        on_dev: &[bool],
        host: &mut HashSet<Name>,
        say: impl Fn(&Name) -> String,
    ) -> (Vec<Pat>, Vec<Item>) {
        let mut pats = Vec::new();
        let mut reads = Vec::new();
        for (i, p) in s.pats.iter().enumerate() {
            self.bind(p);
            if !on_dev[i] {
                host.insert(p.name.name.clone());
                pats.push(p.clone());
                continue;
            }
            let x = p.name.name.clone();
            let d = self.new_dev(&x, prim_of(p).unwrap_or(Prim::I64));
            pats.push(pat(&d.mem, Type::Mem(Span::DUMMY)));
            pats.push(pat(&d.arr, one_arr_type(d.prim, &d.mem)));
            host.insert(d.mem.clone());
            host.insert(d.arr.clone());
            if self.place_of(&x) != Place::Device {
                host.insert(x.clone());
                reads.push(Item::Host(vec![read_stm(&x, &d, s.span)]));
            }
            self.explain.push(say(&x));
        }
        (pats, reads)
    }

    /// The result list of a branch or loop body whose results `on_dev`
    /// says are carried on the device (their types in `pats`): each such
    /// result as its block and one-element array (a host value wrapped in
    /// a kernel at the end of `items`), the others as they are (read back
    /// first where only the device has them).
    fn body_results(
        &mut self,
        result: &[Ident],
        on_dev: &[bool],
        pats: &[Pat],
        items: &mut Vec<Item>,
        host: &HashSet<Name>,
        span: Span,
    ) -> Vec<Ident> {
        let mut out = Vec::new();
        for (i, x) in result.iter().enumerate() {
            if on_dev[i] {
                let t = prim_of(&pats[i]).unwrap_or(Prim::I64);
                let d = self.on_device(&Atom::Var(x.clone()), t, items, span);
                out.push(ident(&d.mem));
                out.push(ident(&d.arr));
            } else {
                let xs: HashSet<Name> = [x.name.clone()].into_iter().collect();
                self.ensure_host(&xs, host, items, span);
                out.push(x.clone());
            }
        }
        out
    }

    /// Makes sure `x` (a scalar or literal) has a device array at the end
    /// of `items`, wrapping a host value in a kernel when it has none.
    fn on_device(&mut self, a: &Atom, t: Prim, items: &mut Vec<Item>, span: Span) -> DevArr {
        if let Some(x) = a.var() {
            if let Some(d) = self.dev.get(x) {
                return d.clone();
            }
        }
        let base = a.var().map_or("v".to_string(), |x| x.to_string());
        let w = self.names.fresh(&format!("{base}_w")).name;
        self.prim.insert(w.clone(), t);
        let d = self.new_dev(&w, t);
        let se = SExp::Atom(a.clone());
        items.push(Item::Gpu(
            vec![stm(
                vec![pat(&w, Type::Prim(t, Span::DUMMY))],
                ExpKind::Scalar(se),
                span,
            )],
            vec![w],
        ));
        self.counts.add("values wrapped for the device", 1);
        d
    }

    #[allow(clippy::too_many_arguments)]
    fn fine_if(
        &mut self,
        s: &Stm,
        c: &Ident,
        t: &Body,
        e: &Body,
        items: &mut Vec<Item>,
        host: &mut HashSet<Name>,
    ) {
        let cset: HashSet<Name> = [c.name.clone()].into_iter().collect();
        self.ensure_host(&cset, host, items, s.span);
        // Which results become one-element arrays.
        let mut to_dev: Vec<bool> = Vec::new();
        let saved_cur = self.cur.clone();
        for p in &s.pats {
            let on = prim_of(p).is_some()
                && self.site.get(&site(p)).is_some_and(|&v| self.sol.device[v]);
            to_dev.push(on);
        }
        let branch = |r: &mut Rewriter, b: &Body| -> Body {
            let mut h = host.clone();
            let mut bitems: Vec<Item> = Vec::new();
            for st in &b.stms {
                r.stm(st, &mut bitems, &mut h);
            }
            let result = r.body_results(&b.result, &to_dev, &s.pats, &mut bitems, &h, s.span);
            let stms = r.emit(bitems, &mut h, &result);
            Body {
                stms,
                result,
                span: b.span,
            }
        };
        let nt = branch(self, t);
        self.cur = saved_cur.clone();
        let ne = branch(self, e);
        self.cur = saved_cur;
        let (pats, reads) = self.results_on_device(s, &to_dev, host, |x| {
            format!(
                "migrate: if {}: result `{x}` is returned on the device",
                Where(s)
            )
        });
        items.push(Item::Host(vec![Stm {
            pats,
            exp: Exp {
                kind: ExpKind::If(c.clone(), nt, ne),
                span: s.exp.span,
            },
            span: s.span,
        }]));
        items.extend(reads);
    }

    #[allow(clippy::too_many_arguments)]
    fn fine_loop(
        &mut self,
        s: &Stm,
        ps: &[Pat],
        init: &[Atom],
        form: &LoopForm,
        lb: &Body,
        items: &mut Vec<Item>,
        host: &mut HashSet<Name>,
    ) {
        let cond = match form {
            LoopForm::While(c) => Some(c.name.clone()),
            LoopForm::For(..) => None,
        };
        if let LoopForm::For(_, Atom::Var(n)) = form {
            let ns: HashSet<Name> = [n.name.clone()].into_iter().collect();
            self.ensure_host(&ns, host, items, s.span);
        }
        let on_dev: Vec<bool> = ps
            .iter()
            .map(|p| {
                prim_of(p).is_some()
                    && Some(&p.name.name) != cond.as_ref()
                    && self.place_of(&p.name.name) != Place::Host
            })
            .collect();
        // Initial values.
        let mut new_ps = Vec::new();
        let mut new_init = Vec::new();
        let mut dev_ps: Vec<Option<DevArr>> = Vec::new();
        for (i, p) in ps.iter().enumerate() {
            if on_dev[i] {
                let t = prim_of(p).unwrap_or(Prim::I64);
                let d0 = self.on_device(&init[i], t, items, s.span);
                new_init.push(Atom::Var(ident(&d0.mem)));
                new_init.push(Atom::Var(ident(&d0.arr)));
                let ym = self.names.fresh(&format!("{}_dev_mem", p.name.name)).name;
                let ya = self.names.fresh(&format!("{}_dev", p.name.name)).name;
                new_ps.push(pat(&ym, Type::Mem(Span::DUMMY)));
                new_ps.push(pat(&ya, one_arr_type(t, &ym)));
                dev_ps.push(Some(DevArr {
                    mem: ym,
                    arr: ya,
                    prim: t,
                }));
            } else {
                if let Atom::Var(o) = &init[i] {
                    let os: HashSet<Name> = [o.name.clone()].into_iter().collect();
                    self.ensure_host(&os, host, items, s.span);
                }
                new_init.push(init[i].clone());
                new_ps.push(p.clone());
                dev_ps.push(None);
            }
        }
        // The body.
        let mut h = host.clone();
        let mut bitems: Vec<Item> = Vec::new();
        for (i, p) in ps.iter().enumerate() {
            match &dev_ps[i] {
                Some(d) => {
                    h.insert(d.mem.clone());
                    h.insert(d.arr.clone());
                    let x = p.name.name.clone();
                    let place = self.place_of(&x);
                    self.dev.insert(x.clone(), d.clone());
                    if place == Place::Both {
                        h.insert(x.clone());
                        bitems.push(Item::Host(vec![read_stm(&x, d, s.span)]));
                    }
                }
                None => {
                    h.insert(p.name.name.clone());
                }
            }
        }
        if let LoopForm::For(i, _) = form {
            h.insert(i.name.clone());
        }
        for st in &lb.stms {
            self.stm(st, &mut bitems, &mut h);
        }
        let result = self.body_results(&lb.result, &on_dev, ps, &mut bitems, &h, s.span);
        let stms = self.emit(bitems, &mut h, &result);
        let body = Body {
            stms,
            result,
            span: lb.span,
        };
        let (pats, reads) = self.results_on_device(s, &on_dev, host, |x| {
            format!("migrate: loop {}: `{x}` is carried on the device", Where(s))
        });
        items.push(Item::Host(vec![Stm {
            pats,
            exp: Exp {
                kind: ExpKind::Loop(new_ps, new_init, form.clone(), body),
                span: s.exp.span,
            },
            span: s.span,
        }]));
        items.extend(reads);
    }

    /// Algorithm 4 and the merge: places the items in alternating host
    /// and device buckets, each as early as it may go, and emits each
    /// device bucket as one kernel.
    fn emit(&mut self, items: Vec<Item>, host: &mut HashSet<Name>, result: &[Ident]) -> Vec<Stm> {
        if !items.iter().any(|i| matches!(i, Item::Gpu(..))) {
            return items
                .into_iter()
                .flat_map(|i| match i {
                    Item::Host(s) | Item::Gpu(s, _) => s,
                })
                .collect();
        }
        // What each item uses, binds, and whether it consumes or may fail.
        struct Info {
            uses: HashSet<Name>,
            binds: HashSet<Name>,
            consumes: bool,
            fails: bool,
        }
        let info_of = |r: &Rewriter, it: &Item| -> Info {
            match it {
                Item::Host(ss) => {
                    let mut binds = HashSet::default();
                    for s in ss {
                        binds.extend(s.pats.iter().map(|p| p.name.name.clone()));
                    }
                    let consumes = ss.iter().any(|s| {
                        matches!(
                            s.exp.kind,
                            ExpKind::Update(..) | ExpKind::Loop(..) | ExpKind::If(..)
                        )
                    });
                    Info {
                        uses: free_names(ss),
                        binds,
                        consumes,
                        fails: may_fail(ss),
                    }
                }
                Item::Gpu(ss, defs) => {
                    let mut uses = HashSet::default();
                    for x in free_names(ss) {
                        match r.dev.get(&x) {
                            Some(d) if !defs.contains(&x) => {
                                uses.insert(d.arr.clone());
                            }
                            _ => {
                                uses.insert(x);
                            }
                        }
                    }
                    let mut binds: HashSet<Name> = HashSet::default();
                    for x in defs {
                        binds.insert(x.clone());
                        if let Some(d) = r.dev.get(x) {
                            binds.insert(d.arr.clone());
                            binds.insert(d.mem.clone());
                        }
                    }
                    Info {
                        uses,
                        binds,
                        consumes: false,
                        fails: may_fail(ss),
                    }
                }
            }
        };
        let infos: Vec<Info> = items.iter().map(|i| info_of(self, i)).collect();
        let mut buckets: Vec<Vec<usize>> = vec![Vec::new()];
        let mut bucket_binds: Vec<HashSet<Name>> = vec![HashSet::default()];
        let mut bucket_fails: Vec<bool> = vec![false];
        for (k, it) in items.iter().enumerate() {
            let inf = &infos[k];
            let gpu = matches!(it, Item::Gpu(..));
            // The last bucket that holds something this item must follow.
            let blocker = (0..buckets.len()).rev().find(|&i| {
                !buckets[i].is_empty()
                    && (inf.consumes
                        || (inf.fails && bucket_fails[i])
                        || !bucket_binds[i].is_disjoint(&inf.uses))
            });
            let b = match (gpu, blocker) {
                (true, None) => 1,
                (true, Some(i)) if !i.is_multiple_of(2) => i,
                (true, Some(i)) => i + 1,
                (false, None) => 0,
                (false, Some(i)) if i.is_multiple_of(2) => i,
                (false, Some(i)) => i + 1,
            };
            while buckets.len() <= b {
                buckets.push(Vec::new());
                bucket_binds.push(HashSet::default());
                bucket_fails.push(false);
            }
            buckets[b].push(k);
            bucket_binds[b].extend(inf.binds.iter().cloned());
            // A host bucket's host bindings of scalars read back are
            // the device bucket's results too.
            bucket_fails[b] |= inf.fails;
        }
        // Which device arrays later statements (or the body's result) use.
        let mut used_later: Vec<HashSet<Name>> = vec![HashSet::default(); buckets.len() + 1];
        for i in (0..buckets.len()).rev() {
            let mut u = used_later[i + 1].clone();
            for &k in &buckets[i] {
                u.extend(infos[k].uses.iter().cloned());
            }
            used_later[i] = u;
        }
        let result_names: HashSet<Name> = result.iter().map(|x| x.name.clone()).collect();
        let mut items: Vec<Option<Item>> = items.into_iter().map(Some).collect();
        let mut out = Vec::new();
        for (i, bucket) in buckets.iter().enumerate() {
            if i.is_multiple_of(2) {
                for &k in bucket {
                    if let Some(Item::Host(ss)) = items[k].take() {
                        for s in &ss {
                            for p in &s.pats {
                                host.insert(p.name.name.clone());
                            }
                        }
                        out.extend(ss);
                    }
                }
                continue;
            }
            let mut stms: Vec<Stm> = Vec::new();
            let mut defs: Vec<Name> = Vec::new();
            let n_items = bucket.len();
            for &k in bucket {
                if let Some(Item::Gpu(ss, ds)) = items[k].take() {
                    stms.extend(ss);
                    defs.extend(ds);
                }
            }
            if n_items > 1 {
                self.counts.add("kernels merged away", (n_items - 1) as u64);
                self.explain.push(format!(
                    "migrate: merged {n_items} device statements into one kernel"
                ));
            }
            // Imports: migrated scalars the kernel uses but does not make.
            let mut imports: Vec<Name> = free_names(&stms)
                .into_iter()
                .filter(|x| !defs.contains(x) && !host.contains(x) && self.dev.contains_key(x))
                .collect();
            imports.sort();
            let mut body_stms: Vec<Stm> = imports
                .iter()
                .map(|x| read_stm(x, &self.dev[x], Span::DUMMY))
                .collect();
            body_stms.extend(stms);
            let later = &used_later[i + 1];
            let mut exports: Vec<Name> = defs
                .iter()
                .filter(|x| {
                    self.dev.get(*x).is_some_and(|d| {
                        later.contains(&d.arr)
                            || later.contains(&d.mem)
                            || result_names.contains(&d.arr)
                            || result_names.contains(&d.mem)
                    }) || (later.contains(*x) && !self.dev.contains_key(*x))
                })
                .cloned()
                .collect();
            if exports.is_empty() {
                // Nothing is used later: the kernel still runs (it may go
                // wrong); it returns its last scalar.
                if let Some(x) = defs.last() {
                    exports.push(x.clone());
                }
            }
            let k = self.names.fresh("t");
            let mut pats = Vec::new();
            let mut results = Vec::new();
            for x in &exports {
                let d = match self.dev.get(x) {
                    Some(d) => d.clone(),
                    None => {
                        let t = self.prim.get(x).copied().unwrap_or(Prim::I64);
                        self.new_dev(x, t)
                    }
                };
                out.push(stm(
                    vec![pat(&d.mem, Type::Mem(Span::DUMMY))],
                    ExpKind::Alloc(SExp::int(1), d.prim),
                    Span::DUMMY,
                ));
                host.insert(d.mem.clone());
                host.insert(d.arr.clone());
                pats.push(pat(&d.arr, one_arr_type(d.prim, &d.mem)));
                results.push(ident(x));
            }
            self.counts.add("kernels added", 1);
            out.push(stm(
                pats,
                ExpKind::Kernel(
                    k,
                    Atom::Int(1, Span::DUMMY),
                    Body {
                        stms: body_stms,
                        result: results,
                        span: Span::DUMMY,
                    },
                ),
                Span::DUMMY,
            ));
        }
        out
    }
}
