//! The migration graph and its minimum vertex cut (Børgesen, MSc thesis
//! DIKU 2022, §4.1–4.3).
//!
//! Migration (`migrate.rs`) asks which host statements to run on the device
//! so that the fewest synchronous device-to-host reads remain. The thesis
//! casts that as a graph problem: the vertices are the host's scalar
//! variables; an edge `a -> b` says "if a lives on the device, b must be
//! computed there too, or a must be read back"; a *source* is a synthetic
//! vertex standing for a value that lives on the device (an element read
//! on the host, a reduce's result) with an edge to the variable it feeds;
//! a vertex *connected to a sink* is one the host must have (a size, an
//! index, a program result). A solution partitions the vertices into a
//! device set D, holding every source, and a host set H, holding every
//! sink, such that the *cut* C, the vertices of D with an edge into H (or
//! to a sink), is as small as possible (each is one read), and among those
//! D is smallest (the fewest statements moved). The thesis's Lemma 2:
//! that solution is unique.
//!
//! A minimum vertex cut is a maximum flow on the *split* graph, where each
//! vertex v becomes `v_in -> v_out` with capacity one. The thesis's
//! algorithm (Algorithm 1–3) is Ford–Fulkerson specialised to this graph,
//! and so is ours:
//!
//! - **The split graph is never built.** Routes (augmenting paths that
//!   carried flow) share no vertex, so a vertex carries at most one unit:
//!   its `pred` (the vertex its flow comes from) and `succ` (the vertex or
//!   the sink it goes to) say everything. Which residual edges leave
//!   `v_in` or `v_out` follows from them (`step`): from `v_in`, the
//!   internal edge if v carries nothing, else only back to its
//!   predecessor's `out`; from `v_out`, back to `v_in` if v carries flow,
//!   to v's sink if v has one that is unused, and along every edge
//!   `v -> w` that does not carry v's flow.
//! - **Sinks are marks.** A vertex connected to a sink has no other
//!   out-edge that matters (thesis §4.1: its value must be read anyway),
//!   so the sink is a flag on the vertex and a search ends when it reaches
//!   a marked vertex's `out` whose sink edge is unused.
//! - **Failures are remembered** (the thesis's exhausted edges). A search
//!   that backtracks out of a set of split nodes that cannot reach a sink
//!   marks them *dead*, and no later search enters them. The thesis tracks
//!   the depth of cycles to know when a set is closed; we use Tarjan's
//!   low-links, which say the same thing: when a node finishes and no node
//!   it reached is older than itself on the stack, everything found after
//!   it is closed. A closed set without a sink never gains one (every edge
//!   that could be added to it is the reversal of an edge some successful
//!   search crossed, and no search crosses a set that cannot reach a
//!   sink), so a dead node stays dead (the thesis's Theorem 3). Every
//!   search is then O(E) and the whole solve O(E·|C|).
//! - **Resolve** (Algorithm 2): D is every vertex whose `in` node a source
//!   reaches in the final residual graph, C those of them whose `out` node
//!   it does not reach.
//!
//! Loops (thesis §4.5) need their own sources routed before the loop's
//! results are connected to the rest of the program; `migrate.rs` does
//! that with [`Graph::route_many`], then *closes* the edges from the
//! loop's free variables into it (they no longer take part in routing,
//! but RESOLVE still follows them) and adds *bypass* edges around it
//! ([`Graph::add_bypass`]).
//!
//! The tests check the solver against petgraph's general max-flow on the
//! explicit split graph, and the partition against a brute force over all
//! partitions on small graphs (minimum cut, then minimum D, unique).

use std::fmt::Write as _;

/// A vertex of the migration graph.
pub type V = usize;

/// Where a vertex's unit of flow goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Succ {
    /// It carries no flow.
    Nothing,
    /// Along the edge to this vertex.
    To(V),
    /// Into its own sink.
    Sink,
}

/// What an edge is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EdgeKind {
    /// A dependence: routing and RESOLVE follow it.
    Plain,
    /// Closed by loop isolation: RESOLVE follows it, routing does not.
    Closed,
    /// A loop's bypass: routing follows it, RESOLVE does not need it.
    Bypass,
}

/// One step of a search from a split node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// A residual edge to this split node.
    Node(usize),
    /// The residual edge into the vertex's sink.
    Sink,
    /// Nothing at this position; try the next.
    Skip,
    /// No more edges.
    End,
}

/// The migration graph: vertices, edges, sources and sink marks, and the
/// flow found so far.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    labels: Vec<String>,
    source: Vec<bool>,
    sink: Vec<bool>,
    out: Vec<Vec<(V, EdgeKind)>>,
    pred: Vec<Option<V>>,
    succ: Vec<Succ>,
    /// Split nodes (`2v` is `v_in`, `2v + 1` is `v_out`) from which no sink
    /// can be reached, now or later.
    dead: Vec<bool>,
}

/// The partition a solved graph gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// D: the vertices to compute on the device.
    pub device: Vec<bool>,
    /// C ⊆ D: those whose value the host still reads (one read each).
    pub cut: Vec<bool>,
}

impl Solution {
    /// |C|: the reads that remain.
    pub fn cut_size(&self) -> usize {
        self.cut.iter().filter(|&&c| c).count()
    }

    /// |D|.
    pub fn device_size(&self) -> usize {
        self.device.iter().filter(|&&d| d).count()
    }
}

fn vin(v: V) -> usize {
    2 * v
}

fn vout(v: V) -> usize {
    2 * v + 1
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Graph {
        Graph::default()
    }

    /// The number of vertices.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// A new vertex named `label` (for printing).
    pub fn add_vertex(&mut self, label: impl Into<String>) -> V {
        self.labels.push(label.into());
        self.source.push(false);
        self.sink.push(false);
        self.out.push(Vec::new());
        self.pred.push(None);
        self.succ.push(Succ::Nothing);
        self.dead.push(false);
        self.dead.push(false);
        self.labels.len() - 1
    }

    /// A new source vertex: a value that lives on the device.
    pub fn add_source(&mut self, label: impl Into<String>) -> V {
        let s = self.add_vertex(label);
        self.source[s] = true;
        s
    }

    /// The vertex's name.
    pub fn label(&self, v: V) -> &str {
        &self.labels[v]
    }

    /// Whether `v` is a source.
    pub fn is_source(&self, v: V) -> bool {
        self.source[v]
    }

    /// Whether `v` is connected to a sink.
    pub fn has_sink(&self, v: V) -> bool {
        self.sink[v]
    }

    /// The sources, in the order they were added.
    pub fn sources(&self) -> Vec<V> {
        (0..self.len()).filter(|&v| self.source[v]).collect()
    }

    fn add(&mut self, a: V, b: V, kind: EdgeKind) {
        if a == b || self.out[a].iter().any(|&(w, k)| w == b && k == kind) {
            return;
        }
        self.out[a].push((b, kind));
    }

    /// The edge `a -> b`: if a lives on the device, b must too (or a be
    /// read). Self-edges and repeated edges are dropped.
    pub fn add_edge(&mut self, a: V, b: V) {
        self.add(a, b, EdgeKind::Plain);
    }

    /// A loop's bypass edge `a -> b` (thesis §4.5, loop isolation): routing
    /// may use it; it stands for paths through a loop whose own edges are
    /// closed.
    pub fn add_bypass(&mut self, a: V, b: V) {
        self.add(a, b, EdgeKind::Bypass);
    }

    /// Closes the plain edges from `a` to vertices `inside` accepts:
    /// routing no longer follows them, RESOLVE still does.
    pub fn close_edges(&mut self, a: V, inside: impl Fn(V) -> bool) {
        // A bypass into the loop stood for an inner loop's paths; the
        // outer loop's own bypasses replace it.
        self.out[a].retain(|e| !(e.1 == EdgeKind::Bypass && inside(e.0)));
        for e in &mut self.out[a] {
            if e.1 == EdgeKind::Plain && inside(e.0) {
                e.1 = EdgeKind::Closed;
            }
        }
    }

    /// Connects `v` to a sink: the host needs its value. Its other
    /// out-edges no longer matter (thesis §4.1).
    pub fn connect_sink(&mut self, v: V) {
        self.sink[v] = true;
    }

    /// The plain and closed out-edges of `v` (the dependences), in order.
    pub fn edges(&self, v: V) -> impl Iterator<Item = V> + '_ {
        self.out[v]
            .iter()
            .filter(|e| e.1 != EdgeKind::Bypass)
            .map(|e| e.0)
    }

    /// The out-edges of `v` that routing follows (plain and bypass).
    pub fn routing_edges(&self, v: V) -> impl Iterator<Item = V> + '_ {
        self.out[v]
            .iter()
            .filter(|e| e.1 != EdgeKind::Closed)
            .map(|e| e.0)
    }

    fn carries(&self, v: V) -> bool {
        self.succ[v] != Succ::Nothing
    }

    /// The `k`-th residual edge out of split node `n`; `closed` says
    /// whether closed edges count (RESOLVE) or not (routing).
    fn step(&self, n: usize, k: usize, routing: bool) -> Step {
        let v = n / 2;
        if n.is_multiple_of(2) {
            // v_in
            return match (k, self.carries(v)) {
                (0, false) => Step::Node(vout(v)),
                (0, true) => match self.pred[v] {
                    Some(p) => Step::Node(vout(p)),
                    None => Step::End,
                },
                _ => Step::End,
            };
        }
        // v_out
        match k {
            0 => {
                if self.carries(v) {
                    Step::Node(vin(v))
                } else {
                    Step::Skip
                }
            }
            1 => {
                if self.sink[v] && self.succ[v] != Succ::Sink {
                    Step::Sink
                } else {
                    Step::Skip
                }
            }
            _ => {
                if self.sink[v] {
                    return Step::End;
                }
                match self.out[v].get(k - 2) {
                    None => Step::End,
                    Some(&(w, kind)) => {
                        let usable = match kind {
                            EdgeKind::Plain => true,
                            EdgeKind::Closed => !routing,
                            EdgeKind::Bypass => routing,
                        };
                        if usable && self.succ[v] != Succ::To(w) {
                            Step::Node(vin(w))
                        } else {
                            Step::Skip
                        }
                    }
                }
            }
        }
    }

    /// ROUTE (Algorithm 1): one search from source `s` for an unused sink,
    /// reversing the path if one is found. Returns whether a route formed.
    pub fn route(&mut self, s: V) -> bool {
        const UNSEEN: usize = usize::MAX;
        let start = vin(s);
        if !self.source[s] || self.dead[start] {
            return false;
        }
        let nodes = self.dead.len();
        // Discovery index and low-link of the nodes this search touched.
        let mut index = vec![UNSEEN; nodes];
        let mut low = vec![UNSEEN; nodes];
        let mut pending = vec![false; nodes];
        let mut tarjan: Vec<usize> = Vec::new();
        let mut stack: Vec<(usize, usize)> = Vec::new();
        let mut counter = 0;
        let mut enter = |n: usize,
                         index: &mut Vec<usize>,
                         low: &mut Vec<usize>,
                         pending: &mut Vec<bool>,
                         tarjan: &mut Vec<usize>,
                         stack: &mut Vec<(usize, usize)>| {
            index[n] = counter;
            low[n] = counter;
            counter += 1;
            pending[n] = true;
            tarjan.push(n);
            stack.push((n, 0));
        };
        enter(
            start,
            &mut index,
            &mut low,
            &mut pending,
            &mut tarjan,
            &mut stack,
        );
        while let Some(&(n, k)) = stack.last() {
            if let Some(top) = stack.last_mut() {
                top.1 += 1;
            }
            match self.step(n, k, true) {
                Step::Skip => {}
                Step::Node(m) => {
                    if self.dead[m] {
                        continue;
                    }
                    if index[m] == UNSEEN {
                        enter(
                            m,
                            &mut index,
                            &mut low,
                            &mut pending,
                            &mut tarjan,
                            &mut stack,
                        );
                    } else if pending[m] {
                        low[n] = low[n].min(index[m]);
                    }
                }
                Step::Sink => {
                    let path: Vec<usize> = stack.iter().map(|&(n, _)| n).collect();
                    self.augment(&path);
                    return true;
                }
                Step::End => {
                    stack.pop();
                    if low[n] == index[n] {
                        // n roots a closed set: nothing found after it
                        // reaches a sink.
                        while let Some(&m) = tarjan.last() {
                            if index[m] < index[n] {
                                break;
                            }
                            tarjan.pop();
                            pending[m] = false;
                            self.dead[m] = true;
                        }
                    }
                    if let Some(&(parent, _)) = stack.last() {
                        low[parent] = low[parent].min(low[n]);
                    }
                }
            }
        }
        false
    }

    /// Reverses the residual path `path` (split nodes from a source's `in`
    /// to a vertex's `out` whose sink edge ends it).
    fn augment(&mut self, path: &[usize]) {
        for w in path.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (x, y) = (a / 2, b / 2);
            if x == y {
                continue; // an internal edge: the neighbours say it all
            }
            if !a.is_multiple_of(2) {
                // x_out -> y_in: new flow along x -> y.
                self.succ[x] = Succ::To(y);
                self.pred[y] = Some(x);
            } else {
                // y_in... here a is x_in and b is y_out: cancels y -> x.
                if self.succ[y] == Succ::To(x) {
                    self.succ[y] = Succ::Nothing;
                }
                if self.pred[x] == Some(y) {
                    self.pred[x] = None;
                }
            }
        }
        if let Some(&last) = path.last() {
            self.succ[last / 2] = Succ::Sink;
        }
    }

    /// ROUTE-MANY: one routing attempt from each of `sources`; returns
    /// how many routes formed.
    pub fn route_many(&mut self, sources: &[V]) -> usize {
        sources.iter().filter(|&&s| self.route(s)).count()
    }

    /// The split nodes reachable in the residual graph from `starts`
    /// through vertices `allowed` accepts (RESOLVE's traversal when
    /// `routing` is false: closed edges followed, bypasses not), and
    /// whether an unused sink was reached.
    pub fn reach(
        &self,
        starts: &[usize],
        allowed: impl Fn(V) -> bool,
        routing: bool,
    ) -> (Vec<bool>, bool) {
        let mut seen = vec![false; self.dead.len()];
        let mut sink = false;
        let mut work: Vec<usize> = Vec::new();
        for &n in starts {
            if !seen[n] {
                seen[n] = true;
                work.push(n);
            }
        }
        while let Some(n) = work.pop() {
            let mut k = 0;
            loop {
                match self.step(n, k, routing) {
                    Step::End => break,
                    Step::Skip => {}
                    Step::Sink => sink = true,
                    Step::Node(m) => {
                        if !seen[m] && allowed(m / 2) {
                            seen[m] = true;
                            work.push(m);
                        }
                    }
                }
                k += 1;
            }
        }
        (seen, sink)
    }

    /// RESOLVE (Algorithm 2): D and C from the flow found. Call it once
    /// every source has been routed.
    pub fn resolve(&self) -> Solution {
        let starts: Vec<usize> = self.sources().into_iter().map(vin).collect();
        let (seen, _) = self.reach(&starts, |_| true, false);
        let device: Vec<bool> = (0..self.len()).map(|v| seen[vin(v)]).collect();
        // C by its definition: the vertices of D that the host needs (a
        // sink, or an edge into H). On a graph routed to a maximum flow
        // this is D less the vertices whose `out` node a source reaches;
        // stating it by the definition keeps every value the host needs
        // read back even where a loop's final edges (thesis §4.5, the
        // condition's edges to the results, added after the loop was
        // routed) leave a path the routing did not take.
        let cut = (0..self.len())
            .map(|v| device[v] && (self.sink[v] || self.edges(v).any(|w| !device[w])))
            .collect();
        Solution { device, cut }
    }

    /// SOLVE (Algorithm 3): route every source not routed yet, then
    /// RESOLVE.
    pub fn solve(&mut self) -> Solution {
        let s = self.sources();
        self.route_many(&s);
        self.resolve()
    }

    /// `in` node of a vertex, for [`Graph::reach`].
    pub fn in_node(v: V) -> usize {
        vin(v)
    }

    /// `out` node of a vertex, for [`Graph::reach`].
    pub fn out_node(v: V) -> usize {
        vout(v)
    }

    /// The cut of a partition (`device[v]`: v in D): how many vertices of
    /// D have a sink or an edge into H; `None` when a source is in H.
    pub fn cut_of(&self, device: &[bool]) -> Option<usize> {
        let mut c = 0;
        for v in 0..self.len() {
            if self.source[v] && !device[v] {
                return None;
            }
            if device[v] && (self.sink[v] || self.edges(v).any(|w| !device[w])) {
                c += 1;
            }
        }
        Some(c)
    }

    /// Every partition of a graph of at most 20 vertices: the least cut,
    /// the least |D| among partitions with that cut, and how many
    /// partitions have both (the thesis's Lemma 2 says one). `None` for a
    /// larger graph.
    pub fn brute_force(&self) -> Option<(usize, usize, usize)> {
        let n = self.len();
        if n > 20 {
            return None;
        }
        let mut best = (usize::MAX, usize::MAX, 0);
        for mask in 0u32..(1 << n) {
            let dev: Vec<bool> = (0..n).map(|v| mask >> v & 1 == 1).collect();
            let Some(c) = self.cut_of(&dev) else { continue };
            let d = dev.iter().filter(|&&x| x).count();
            if (c, d) < (best.0, best.1) {
                best = (c, d, 1);
            } else if (c, d) == (best.0, best.1) {
                best.2 += 1;
            }
        }
        Some(best)
    }

    /// Whether any edge was closed or bypassed (a loop was isolated): the
    /// routed flow is then the thesis's per-loop solution, not a
    /// maximum flow of the whole graph.
    pub fn has_loop_edges(&self) -> bool {
        self.out.iter().flatten().any(|e| e.1 != EdgeKind::Plain)
    }

    /// The graph in Graphviz's DOT language: sources as triangles, sink
    /// marks as an edge to a `t` box, bypass edges dashed, closed edges
    /// dotted; with a solution, D filled, C outlined in red.
    pub fn to_dot(&self, sol: Option<&Solution>) -> String {
        let mut s =
            String::from("digraph migration {\n  rankdir=LR;\n  node [fontname=\"monospace\"];\n");
        for v in 0..self.len() {
            let shape = if self.source[v] {
                "triangle"
            } else {
                "ellipse"
            };
            let mut attrs = format!(
                "label=\"{}\", shape={shape}",
                self.labels[v].replace('"', "'")
            );
            if let Some(sol) = sol {
                if sol.device[v] {
                    attrs.push_str(", style=filled, fillcolor=\"#cfe2ff\"");
                }
                if sol.cut[v] {
                    attrs.push_str(", color=red, penwidth=2");
                }
            }
            let _ = writeln!(s, "  v{v} [{attrs}];");
            if self.sink[v] {
                let _ = writeln!(s, "  t{v} [label=\"t\", shape=box];\n  v{v} -> t{v};");
            }
        }
        for v in 0..self.len() {
            for &(w, kind) in &self.out[v] {
                let style = match kind {
                    EdgeKind::Plain => "",
                    EdgeKind::Closed => " [style=dotted]",
                    EdgeKind::Bypass => " [style=dashed]",
                };
                let _ = writeln!(s, "  v{v} -> v{w}{style};");
            }
        }
        s.push_str("}\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use petgraph::algo::ford_fulkerson;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng as StdRng;

    /// A random graph: `n` vertices, the first `ns` of them sources (each
    /// with no in-edges), some sink marks, random edges.
    fn random_graph(rng: &mut StdRng, n: usize, ns: usize, p_edge: f64, p_sink: f64) -> Graph {
        let mut g = Graph::new();
        for v in 0..n {
            if v < ns {
                g.add_source(format!("s{v}"));
            } else {
                g.add_vertex(format!("v{v}"));
            }
        }
        for a in 0..n {
            for b in ns..n {
                if a != b && rng.random_bool(p_edge) {
                    g.add_edge(a, b);
                }
            }
        }
        for v in ns..n {
            if rng.random_bool(p_sink) {
                g.connect_sink(v);
            }
        }
        g
    }

    /// The max flow of the explicit split graph, by petgraph: a super
    /// source into every source's `in`, every sink-marked `out` into a
    /// super sink, unit internal edges, plain edges with a large capacity
    /// (a vertex cut cuts vertices, never edges).
    fn general_max_flow(g: &Graph) -> u32 {
        let mut pg = petgraph::Graph::<(), u32>::new();
        let nodes: Vec<_> = (0..2 * g.len()).map(|_| pg.add_node(())).collect();
        let ss = pg.add_node(());
        let tt = pg.add_node(());
        let big = 1_000;
        for v in 0..g.len() {
            pg.add_edge(nodes[vin(v)], nodes[vout(v)], 1);
            if g.source[v] {
                pg.add_edge(ss, nodes[vin(v)], big);
            }
            if g.sink[v] {
                pg.add_edge(nodes[vout(v)], tt, big);
            } else {
                for &(w, kind) in &g.out[v] {
                    if kind != EdgeKind::Closed {
                        pg.add_edge(nodes[vout(v)], nodes[vin(w)], big);
                    }
                }
            }
        }
        ford_fulkerson(&pg, ss, tt).0
    }

    #[test]
    fn the_thesis_fig5_add_saves_one_of_two_reads() {
        // a = A[0]; b = A[1]; c = a + b; d = c + x; result d.
        let mut g = Graph::new();
        let s1 = g.add_source("s1");
        let s2 = g.add_source("s2");
        let a = g.add_vertex("a");
        let b = g.add_vertex("b");
        let c = g.add_vertex("c");
        let d = g.add_vertex("d");
        g.add_edge(s1, a);
        g.add_edge(s2, b);
        g.add_edge(a, c);
        g.add_edge(b, c);
        g.add_edge(c, d);
        g.connect_sink(d);
        let sol = g.solve();
        assert_eq!(sol.cut_size(), 1);
        // c is read back and d computed on the host: the same one read as
        // moving d too, with one statement fewer on the device.
        assert!(sol.cut[c]);
        assert!(sol.device[a] && sol.device[b] && sol.device[c] && !sol.device[d]);
    }

    #[test]
    fn an_unneeded_read_migrates_and_a_needed_one_stays() {
        // x = A[0] used only by kernels: no sink, x migrates, no read.
        let mut g = Graph::new();
        let s = g.add_source("s");
        let x = g.add_vertex("x");
        g.add_edge(s, x);
        let sol = g.clone().solve();
        assert_eq!(sol.cut_size(), 0);
        assert!(sol.device[x] && !sol.cut[x]);
        // used as a size: x stays a host read (s is the cut, not x: the
        // read of s is x's statement itself).
        g.connect_sink(x);
        let sol = g.solve();
        assert_eq!(sol.cut_size(), 1);
    }

    #[test]
    fn agrees_with_general_max_flow_and_brute_force_on_random_graphs() {
        let mut rng = StdRng::seed_from_u64(24);
        for round in 0..3000 {
            let n = rng.random_range(2..=11);
            let ns = rng.random_range(1..=n.min(4));
            let p_edge = rng.random_range(0.05..0.45);
            let p_sink = rng.random_range(0.0..0.5);
            let mut g = random_graph(&mut rng, n, ns, p_edge, p_sink);
            let flow = general_max_flow(&g);
            // route the sources in a random order: the result must not
            // depend on it (the thesis's Lemma 3).
            let mut srcs = g.sources();
            for i in (1..srcs.len()).rev() {
                let j = rng.random_range(0..=i);
                srcs.swap(i, j);
            }
            let routes = g.route_many(&srcs);
            assert_eq!(routes as u32, flow, "round {round}: {}", g.to_dot(None));
            let sol = g.resolve();
            assert_eq!(sol.cut_size() as u32, flow, "round {round}");
            let (c, d, count) = g.brute_force().unwrap();
            assert_eq!(
                (sol.cut_size(), sol.device_size()),
                (c, d),
                "round {round}: {}",
                g.to_dot(Some(&sol))
            );
            assert_eq!(count, 1, "round {round}: the solution is unique (Lemma 2)");
            assert_eq!(g.cut_of(&sol.device), Some(c));
        }
    }

    #[test]
    fn large_random_graphs_agree_with_general_max_flow() {
        let mut rng = StdRng::seed_from_u64(2022);
        for _ in 0..40 {
            let n = rng.random_range(50..400);
            let ns = rng.random_range(1..n / 3);
            let p = 3.0 / n as f64;
            let mut g = random_graph(&mut rng, n, ns, p, 0.1);
            let flow = general_max_flow(&g);
            let sol = g.solve();
            assert_eq!(sol.cut_size() as u32, flow);
            assert_eq!(g.cut_of(&sol.device), Some(sol.cut_size()));
        }
    }

    #[test]
    fn a_second_attempt_from_a_source_changes_nothing() {
        let mut g = Graph::new();
        let s = g.add_source("s");
        let x = g.add_vertex("x");
        g.add_edge(s, x);
        g.connect_sink(x);
        assert!(g.route(s));
        assert!(!g.route(s));
        assert_eq!(g.resolve().cut_size(), 1);
    }

    #[test]
    fn dot_names_sources_sinks_and_the_cut() {
        let mut g = Graph::new();
        let s = g.add_source("s_x");
        let x = g.add_vertex("x");
        g.add_edge(s, x);
        g.connect_sink(x);
        let sol = g.solve();
        let dot = g.to_dot(Some(&sol));
        assert!(dot.starts_with("digraph migration {"));
        assert!(dot.contains("shape=triangle") && dot.contains("v1 -> t1"));
        assert!(dot.contains("color=red"), "{dot}");
    }
}
