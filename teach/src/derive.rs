//! Derivation trees: a recorded run as the big-step derivation of the
//! IFL 2022 paper's rules (figs. 4, 10 and 12), as indented text and as
//! LaTeX (bussproofs).
//!
//! The steps of a [`Trace`] come in the order of the rules' premises, each
//! with the step that opened the statement it is inside (`parent`). From
//! them this module first rebuilds the statements' nesting: a statement,
//! its iterations (each with the statements of its body and, for a
//! FUNMEM kernel, the write of its result), an `if`'s branch. Then it
//! writes each node's judgement in the shape the paper gives it:
//!
//! - FUN (value semantics, fig. 4): `E ⊢ e ⇓ (v̄)`; a body is a chain of
//!   E-LET nodes (the expression, then the rest of the body under the
//!   extended environment) ending in E-IN; the root is E-PROG;
//! - FUNMEM (heap semantics, fig. 10): `E; H ⊢ s ⇓ E'; H'; ⟨R, W⟩` with
//!   the read and write sets of the statement; a sequence of statements is
//!   an E-STMS node; a kernel has one premise per iteration, each with the
//!   write of its result (the rule's memcopy) and the `racefree` side
//!   condition; the root is E-MEM-PROG;
//! - IMP (fig. 12): `H; E ⊢ s → H'; E'`, showing what changed; a sequence
//!   is an E-IMP-SEQ node (the paper's fig. 12 leaves its sequencing rule
//!   unnamed; `s1; s2; s3` is shown as one node with three premises, as
//!   sequencing is associative); the root is E-IMP-PROG.
//!
//! In every judgement `E` (and `H`) stand for the environment (heap) where
//! the judgement is made; a premise that extends it writes the new
//! bindings (`E, i ↦ 2`). Values longer than [`VALUE_WIDTH`] characters
//! are cut with an ellipsis. Side conditions that are cheap to show are
//! leaves without a rule: an `if`'s test, how an LMAD maps an index to an
//! address, a kernel's `racefree`, an input's binding.
//!
//! The derivation of a stuck run stops at the statement that got stuck,
//! with the error as its last premise.

use crate::record::{Effect, Step, StepKind, Trace};
use crate::session::Subject;
use crate::text::snippet;
use funmem_lang::ast::{Atom, Body, ExpKind, RedOp};
use funmem_lang::parse::{AnyProgram, Layer};
use funmem_lang::{Source, Span};
use funmem_semantics::run::Semantics;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// Most characters of a value in a judgement.
pub const VALUE_WIDTH: usize = 32;
/// Most characters of a statement in a judgement.
pub const CODE_WIDTH: usize = 44;
/// Most bindings an extended environment lists.
pub const BINDINGS_SHOWN: usize = 3;

/// The rules that are not statements' rules: how bodies and sequences of
/// statements are derived.
pub const STRUCTURAL_RULES: [&str; 4] = ["E-LET", "E-IN", "E-STMS", "E-IMP-SEQ"];

/// A piece of a judgement, so that LaTeX can set each kind its own way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Metavariables and symbols: `E`, `⊢`, `⇓`, `⟨R, W⟩`.
    Math(String),
    /// Program text and values.
    Code(String),
    /// Words.
    Text(String),
}

/// A node of a derivation: a judgement, the rule that concludes it, and
/// its premises. A side condition has no rule and no premises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The rule by the paper's name; `None` for a side condition.
    pub rule: Option<&'static str>,
    /// The judgement.
    pub judgement: Vec<Part>,
    /// The premises, in the rule's order.
    pub premises: Vec<Node>,
}

impl Node {
    /// The judgement as plain text.
    pub fn text(&self) -> String {
        self.judgement
            .iter()
            .map(|p| match p {
                Part::Math(s) | Part::Code(s) | Part::Text(s) => s.as_str(),
            })
            .collect()
    }

    /// How many nodes the tree has.
    pub fn size(&self) -> usize {
        1 + self.premises.iter().map(Node::size).sum::<usize>()
    }

    /// Calls `f` on every node, the conclusion before its premises.
    pub fn walk(&self, f: &mut impl FnMut(&Node)) {
        f(self);
        for p in &self.premises {
            p.walk(f);
        }
    }
}

fn part_len(p: &Part) -> usize {
    match p {
        Part::Math(s) | Part::Code(s) | Part::Text(s) => s.chars().count(),
    }
}

/// Judgements longer than this are set on several lines in LaTeX.
const LATEX_LINE: usize = 45;

/// A judgement as one line, or when long broken before its `⇓` (`→`) and
/// before its read and write sets.
fn judgement_lines(parts: &[Part]) -> Vec<Vec<Part>> {
    let total: usize = parts.iter().map(part_len).sum();
    if total <= LATEX_LINE {
        return vec![parts.to_vec()];
    }
    let mut lines: Vec<Vec<Part>> = vec![Vec::new()];
    for p in parts {
        let Part::Math(m) = p else {
            if let Some(l) = lines.last_mut() {
                l.push(p.clone());
            }
            continue;
        };
        let mut rest = m.as_str();
        loop {
            // IMP's `→ H'; E'`: the environment on a line of its own.
            let after_arrow: &[&str] = if lines.len() > 1 { &["; E"] } else { &[] };
            let at = [" ⇓ ", " → ", "; ⟨", "; R′"]
                .iter()
                .chain(after_arrow)
                .filter_map(|b| rest.find(b))
                .min();
            let started = lines.last().is_some_and(|l| !l.is_empty()) || at.is_some_and(|a| a > 0);
            match at {
                Some(at) if started => {
                    let (head, tail) = rest.split_at(at);
                    // A `;` stays at the end of the line before.
                    let (head, tail) = match tail.strip_prefix(';') {
                        Some(t) => (&rest[..at + 1], t),
                        None => (head, tail),
                    };
                    if let Some(l) = lines.last_mut() {
                        if !head.is_empty() {
                            l.push(Part::Math(head.to_string()));
                        }
                    }
                    lines.push(Vec::new());
                    rest = tail.trim_start();
                    // The symbol itself starts the next line.
                    let k = rest.char_indices().nth(1).map_or(rest.len(), |(k, _)| k);
                    if let Some(l) = lines.last_mut() {
                        l.push(Part::Math(rest[..k].to_string()));
                    }
                    rest = &rest[k..];
                }
                _ => {
                    if let Some(l) = lines.last_mut() {
                        if !rest.is_empty() {
                            l.push(Part::Math(rest.to_string()));
                        }
                    }
                    break;
                }
            }
        }
    }
    lines.retain(|l| !l.is_empty());
    lines
}

/// A derivation: its root and, for a stuck run, the error.
#[derive(Clone, Debug)]
pub struct Derivation {
    /// The program rule's node.
    pub root: Node,
    /// The error that stopped the run, if it got stuck.
    pub stuck: Option<String>,
}

// ---------------------------------------------------------------------
// The statements' nesting, from the steps.

/// A statement: its Rule step, its iterations, an `if`'s branch (or any
/// statements directly inside it), its Done step.
#[derive(Debug, Default)]
struct Stmt {
    step: usize,
    iters: Vec<Iter>,
    body: Vec<Stmt>,
    stuck: Option<usize>,
    /// The last step of the statement (its Done step when it has one).
    last: usize,
    done: Option<usize>,
}

/// An iteration: its step, its body's statements, its result's step.
#[derive(Debug, Default)]
struct Iter {
    step: usize,
    body: Vec<Stmt>,
    result: Option<usize>,
    /// The last step of the body (before the result's).
    last: usize,
}

impl Stmt {
    /// Whether the run got stuck inside this statement.
    fn stuck_inside(&self) -> bool {
        self.stuck.is_some()
            || self.body.iter().any(Stmt::stuck_inside)
            || self
                .iters
                .iter()
                .any(|it| it.body.iter().any(Stmt::stuck_inside))
    }
}

struct Nesting<'a> {
    steps: &'a [Step],
    pos: usize,
    stuck: Option<usize>,
}

fn same(a: Span, b: Span) -> bool {
    a.start == b.start && a.end == b.end
}

impl Nesting<'_> {
    /// Statements opened inside the statement of step `parent`.
    fn seq(&mut self, parent: Option<usize>) -> Vec<Stmt> {
        let mut out = Vec::new();
        while let Some(s) = self.steps.get(self.pos) {
            if s.kind == StepKind::Rule && s.parent == parent {
                out.push(self.stmt());
            } else {
                break;
            }
        }
        out
    }

    fn stmt(&mut self) -> Stmt {
        let k = self.pos;
        self.pos += 1;
        let mut n = Stmt {
            step: k,
            last: k,
            ..Stmt::default()
        };
        while let Some(s) = self.steps.get(self.pos) {
            match &s.kind {
                StepKind::Iteration { .. } if s.parent == Some(k) => {
                    let i = self.pos;
                    self.pos += 1;
                    let body = self.seq(Some(k));
                    let mut it = Iter {
                        step: i,
                        body,
                        result: None,
                        last: self.pos - 1,
                    };
                    if let Some(r) = self.steps.get(self.pos) {
                        if matches!(r.kind, StepKind::Result { .. }) && r.parent == Some(k) {
                            it.result = Some(self.pos);
                            self.pos += 1;
                        }
                    }
                    n.iters.push(it);
                }
                StepKind::Rule if s.parent == Some(k) => {
                    let b = self.seq(Some(k));
                    n.body.extend(b);
                }
                StepKind::Done
                    if same(s.span, self.steps[k].span) && s.parent == self.steps[k].parent =>
                {
                    n.done = Some(self.pos);
                    self.pos += 1;
                    break;
                }
                StepKind::Stuck { .. } => {
                    if self.stuck.is_none() {
                        n.stuck = Some(self.pos);
                        self.stuck = Some(self.pos);
                    }
                    break;
                }
                // A step of this statement that fits nowhere: skipped.
                _ if s.parent == Some(k) => self.pos += 1,
                _ => break,
            }
        }
        n.last = self.pos.saturating_sub(1).max(k);
        n
    }
}

// ---------------------------------------------------------------------
// What the program says about a statement: bodies' results, an if's test,
// an index's atoms.

#[derive(Debug, Default, Clone)]
struct StmInfo {
    /// The result names of each body (an if's two branches; a kernel's,
    /// loop's or lambda's body).
    results: Vec<Vec<String>>,
    /// An if's condition.
    cond: Option<String>,
    /// The expression (FUN, FUNMEM).
    exp: Option<Span>,
    /// An index `x[a, b]`: the array and the atoms.
    index: Option<(String, Vec<Atom>)>,
    /// A kernel's number of iterations.
    bound: Option<Atom>,
}

fn names(b: &Body) -> Vec<String> {
    b.result.iter().map(|x| x.name.to_string()).collect()
}

fn index_body(b: &Body, out: &mut HashMap<usize, StmInfo>) {
    for s in &b.stms {
        let mut info = StmInfo {
            exp: Some(s.exp.span),
            ..StmInfo::default()
        };
        match &s.exp.kind {
            ExpKind::If(c, t, e) => {
                info.cond = Some(c.name.to_string());
                info.results = vec![names(t), names(e)];
                index_body(t, out);
                index_body(e, out);
            }
            ExpKind::Kernel(_, n, body) => {
                info.results = vec![names(body)];
                info.bound = Some(n.clone());
                index_body(body, out);
            }
            ExpKind::Loop(_, _, _, body) => {
                info.results = vec![names(body)];
                index_body(body, out);
            }
            ExpKind::Reduce(RedOp::Lambda(l), _, _) | ExpKind::Scan(RedOp::Lambda(l), _, _) => {
                info.results = vec![names(&l.body)];
                index_body(&l.body, out);
            }
            ExpKind::Index(x, atoms) => {
                info.index = Some((x.name.to_string(), atoms.clone()));
            }
            _ => {}
        }
        out.insert(s.span.start, info);
    }
}

fn index_imp(body: &[funmem_lang::imp::Stmt], out: &mut HashMap<usize, StmInfo>) {
    use funmem_lang::imp::{ImpOp, StmtKind};
    for s in body {
        let mut info = StmInfo::default();
        match &s.kind {
            StmtKind::If(c, t, e) => {
                info.cond = Some(c.name.to_string());
                index_imp(t, out);
                index_imp(e, out);
            }
            StmtKind::While(c, b) => {
                info.cond = Some(c.name.to_string());
                index_imp(b, out);
            }
            StmtKind::Kernel(_, _, b) | StmtKind::For(_, _, b) => index_imp(b, out),
            StmtKind::Reduce(_, r) | StmtKind::Scan(r, _, _) => {
                index_imp(&r.body, out);
                if let ImpOp::Lambda(_, _, b, _) = &r.op {
                    index_imp(b, out);
                }
            }
            _ => {}
        }
        out.insert(s.span.start, info);
    }
}

// ---------------------------------------------------------------------
// Judgements.

/// A judgement being written.
#[derive(Default)]
struct J(Vec<Part>);

impl J {
    /// Appends `s` to the last part when it is of the same kind (`make`
    /// builds that kind), else as a new part.
    fn add(mut self, s: &str, make: fn(String) -> Part) -> J {
        let same = matches!(
            (self.0.last(), make(String::new())),
            (Some(Part::Math(_)), Part::Math(_))
                | (Some(Part::Code(_)), Part::Code(_))
                | (Some(Part::Text(_)), Part::Text(_))
        );
        match self.0.last_mut() {
            Some(Part::Math(t) | Part::Code(t) | Part::Text(t)) if same => t.push_str(s),
            _ => self.0.push(make(s.to_string())),
        }
        self
    }
    fn m(self, s: &str) -> J {
        self.add(s, Part::Math)
    }
    fn c(self, s: &str) -> J {
        self.add(s, Part::Code)
    }
    fn t(self, s: &str) -> J {
        self.add(s, Part::Text)
    }
    fn parts(mut self, ps: &[Part]) -> J {
        for p in ps {
            self = match p {
                Part::Math(s) => self.m(s),
                Part::Code(s) => self.c(s),
                Part::Text(s) => self.t(s),
            };
        }
        self
    }
    fn done(self) -> Vec<Part> {
        self.0
    }
}

/// `s` cut to `width` characters, an ellipsis marking the cut.
fn cut(s: &str, width: usize) -> String {
    if s.chars().count() > width {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    } else {
        s.to_string()
    }
}

fn leaf(j: J) -> Node {
    Node {
        rule: None,
        judgement: j.done(),
        premises: Vec::new(),
    }
}

/// Which judgements to write.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Value,
    Heap,
    Imp,
}

struct Ctx<'a> {
    src: &'a Source,
    steps: &'a [Step],
    info: HashMap<usize, StmInfo>,
}

/// The bindings among effects.
fn binds(effects: &[Effect]) -> Vec<(String, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Bind { name, value } => Some((name.to_string(), value.clone())),
            _ => None,
        })
        .collect()
}

/// `E, x ↦ 1, y ↦ 2` (at most [`BINDINGS_SHOWN`] bindings, then `…`).
fn env_with(base: &str, bs: &[(String, String)]) -> J {
    let mut j = J::default().m(base);
    for (k, (n, v)) in bs.iter().enumerate() {
        if k == BINDINGS_SHOWN {
            j = j.m(", …");
            break;
        }
        j = j.m(", ").c(n).m(" ↦ ").c(&cut(v, VALUE_WIDTH));
    }
    j
}

/// `x ↦ 1, y ↦ 2` for an input leaf (all of them).
fn bindings_list(bs: &[(String, String)]) -> J {
    let mut j = J::default();
    for (k, (n, v)) in bs.iter().enumerate() {
        if k > 0 {
            j = j.m(", ");
        }
        j = j.c(n).m(" ↦ ").c(&cut(v, VALUE_WIDTH));
    }
    if bs.is_empty() {
        j = j.m("•");
    }
    j
}

/// `(v1, v2)`.
fn tuple(vs: &[String]) -> J {
    let cs: Vec<String> = vs.iter().map(|v| cut(v, VALUE_WIDTH)).collect();
    J::default().c(&format!("({})", cs.join(", ")))
}

/// A set of heap locations, consecutive offsets of a block as a range:
/// `{(b0, 0..2), (b1, 5)}`, or `∅`.
fn locations(set: &BTreeMap<usize, Vec<i64>>) -> String {
    let mut parts = Vec::new();
    for (b, offs) in set {
        let mut offs = offs.clone();
        offs.sort_unstable();
        offs.dedup();
        let mut k = 0;
        while k < offs.len() {
            let mut e = k;
            while e + 1 < offs.len() && offs[e + 1] == offs[e] + 1 {
                e += 1;
            }
            if e == k {
                parts.push(format!("(b{b}, {})", offs[k]));
            } else {
                parts.push(format!("(b{b}, {}..{})", offs[k], offs[e]));
            }
            k = e + 1;
        }
    }
    if parts.is_empty() {
        "∅".to_string()
    } else if parts.len() > 4 {
        let n = parts.len();
        parts.truncate(3);
        format!("{{{}, … ({} more)}}", parts.join(", "), n - 3)
    } else {
        format!("{{{}}}", parts.join(", "))
    }
}

/// `R1 ∪ R′1, …, Rk ∪ R′k`: the sets of `k` iterations, for `racefree`.
fn sets(x: &str, k: usize) -> String {
    let one = |i: usize| format!("{x}{i} ∪ {x}′{i}");
    match k {
        0 => String::new(),
        1 => one(1),
        2 => format!("{}, {}", one(1), one(2)),
        _ => format!("{}, …, {}", one(1), one(k)),
    }
}

/// The leading integer of a value as the semantics shows it (`2i64`).
fn int_of(v: &str) -> Option<i64> {
    let end = v
        .char_indices()
        .find(|&(k, c)| !(c.is_ascii_digit() || (k == 0 && c == '-')))
        .map_or(v.len(), |(k, _)| k);
    v[..end].parse().ok()
}

/// The first line of the text at `span`, at most [`CODE_WIDTH`]
/// characters, ending in an ellipsis when cut or when the text goes on.
fn code_text(src: &Source, span: Span) -> String {
    let s = snippet(src, span, CODE_WIDTH);
    let whole = src
        .text
        .get(span.start..span.end.min(src.text.len()))
        .unwrap_or("")
        .trim();
    if !s.ends_with('…') && whole.len() > s.len() {
        format!("{s} …")
    } else {
        s
    }
}

/// `s …` unless `s` already ends in an ellipsis.
fn and_more(s: &str) -> String {
    if s.ends_with('…') {
        s.to_string()
    } else {
        format!("{s} …")
    }
}

impl Ctx<'_> {
    fn step(&self, k: usize) -> &Step {
        &self.steps[k]
    }

    /// Steps `from` to `to`, both included (none when out of order).
    fn range(&self, from: usize, to: usize) -> &[Step] {
        self.steps.get(from..=to).unwrap_or(&[])
    }

    fn effects(&self, from: usize, to: usize) -> impl Iterator<Item = &Effect> {
        self.range(from, to).iter().flat_map(|s| s.effects.iter())
    }

    /// The value of `name` in the environment before step `k`.
    fn value_before(&self, k: usize, name: &str) -> Option<String> {
        let st = &self.steps[k.checked_sub(1)?].state;
        st.env
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, b)| b.value.clone())
    }

    /// The values of `names` in the environment after step `k`.
    fn values_after(&self, k: usize, names: &[String]) -> Vec<String> {
        let env = &self.steps[k].state.env;
        names
            .iter()
            .map(|x| {
                env.iter()
                    .find(|(n, _)| n.as_str() == x)
                    .map_or_else(|| "?".to_string(), |(_, b)| b.value.clone())
            })
            .collect()
    }

    /// Statements directly inside a statement, split where they start
    /// again: each run of a reduction's operator (an if's branch runs
    /// once).
    fn applications<'s>(&self, body: &'s [Stmt]) -> Vec<&'s [Stmt]> {
        let mut out = Vec::new();
        let mut start = 0;
        for k in 1..body.len() {
            let first = self.step(body[start].step).span;
            if same(self.step(body[k].step).span, first) {
                out.push(&body[start..k]);
                start = k;
            }
        }
        if start < body.len() {
            out.push(&body[start..]);
        }
        out
    }

    fn info(&self, n: &Stmt) -> StmInfo {
        self.info
            .get(&self.step(n.step).span.start)
            .cloned()
            .unwrap_or_default()
    }

    /// The statement's own text: its first line, cut, an ellipsis when
    /// there is more.
    fn code(&self, n: &Stmt) -> String {
        code_text(self.src, self.step(n.step).span)
    }

    /// The expression's text (FUN), likewise.
    fn exp_code(&self, n: &Stmt) -> String {
        match self.info(n).exp {
            Some(s) => code_text(self.src, s),
            None => self.code(n),
        }
    }

    /// What the statement bound itself.
    fn own_binds(&self, n: &Stmt) -> Vec<(String, String)> {
        binds(&self.step(n.done.unwrap_or(n.step)).effects)
    }

    /// Reads and writes from step `from` to `to`.
    fn rw(&self, from: usize, to: usize) -> (String, String) {
        let mut r: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
        let mut w: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
        for e in self.effects(from, to) {
            match e {
                Effect::Read { block, offset, .. } => r.entry(*block).or_default().push(*offset),
                Effect::Write { block, offset, .. } => w.entry(*block).or_default().push(*offset),
                _ => {}
            }
        }
        (locations(&r), locations(&w))
    }

    /// The heap after steps `from` to `to`: `H`, with blocks allocated
    /// `H[b0 ↦ 24 bytes]` and elements written `H[b0[1] := 2, …]`.
    fn heap_after(&self, from: usize, to: usize) -> J {
        let mut allocs = Vec::new();
        let mut writes = Vec::new();
        for e in self.effects(from, to) {
            match e {
                Effect::Alloc { block, bytes } => allocs.push((*block, *bytes)),
                Effect::Write {
                    block,
                    offset,
                    value,
                    ..
                } => writes.push(format!("b{block}[{offset}] := {value}")),
                _ => {}
            }
        }
        let mut j = J::default().m("H");
        for (b, bytes) in allocs.iter().take(BINDINGS_SHOWN) {
            j = j
                .m("[")
                .c(&format!("b{b}"))
                .m(" ↦ ")
                .t(&format!("{bytes} bytes"))
                .m("]");
        }
        if allocs.len() > BINDINGS_SHOWN {
            j = j.m(&format!("[… ({} blocks)]", allocs.len()));
        }
        if !writes.is_empty() {
            let n = writes.len();
            let shown: Vec<String> = writes.into_iter().take(2).collect();
            let more = if n > 2 {
                format!(", … ({n} writes)")
            } else {
                String::new()
            };
            j = j.m("[").c(&shown.join(", ")).m(&more).m("]");
        }
        j
    }

    fn stuck_leaf(&self, k: usize) -> Node {
        let msg = match &self.step(k).kind {
            StepKind::Stuck { message, .. } => message.clone(),
            _ => String::new(),
        };
        leaf(J::default().t("stuck: ").c(&msg))
    }

    /// An if's test as a side condition.
    fn cond_leaf(&self, n: &Stmt, rule: &str) -> Option<Node> {
        let c = self.info(n).cond?;
        let v = self.value_before(n.step, &c)?;
        let truth = if rule.ends_with("TRUE") || rule.ends_with("-T") {
            " ≠ 0"
        } else if rule.ends_with("FALSE") || rule.ends_with("-F") {
            ""
        } else {
            return None;
        };
        Some(leaf(J::default().m("E(").c(&c).m(") = ").c(&v).m(truth)))
    }

    /// Which branch an if took: 0 then, 1 else.
    fn branch(rule: &str) -> usize {
        usize::from(rule.ends_with("FALSE") || rule.ends_with("-F"))
    }

    // -- FUN ------------------------------------------------------------

    /// A FUN body: E-LET nodes, then E-IN.
    fn fun_body(&self, stmts: &[Stmt], env: J, names: &[String], values: &[String]) -> Node {
        let Some((first, rest)) = stmts.split_first() else {
            let j = env
                .m(" ⊢ ")
                .c(&format!("in ({})", names.join(", ")))
                .m(" ⇓ ")
                .parts(&tuple(values).done());
            return Node {
                rule: Some("E-IN"),
                judgement: j.done(),
                premises: Vec::new(),
            };
        };
        let bs = self.own_binds(first);
        let env_parts = env.done();
        let outcome = if stmts.iter().any(Stmt::stuck_inside) {
            J::default().t("stuck")
        } else {
            tuple(values)
        };
        let j = J::default()
            .parts(&env_parts)
            .m(" ⊢ ")
            .c(&and_more(&self.code(first)))
            .m(" ⇓ ")
            .parts(&outcome.done());
        let e = self.fun_exp(first, J::default().parts(&env_parts));
        // E, x ↦ v: the environment here, extended (in the premise's own
        // premises, `E` is that extended environment).
        let rest_env = env_with("E", &bs);
        let mut premises = vec![e];
        if !first.stuck_inside() {
            premises.push(self.fun_body(rest, rest_env, names, values));
        }
        Node {
            rule: Some("E-LET"),
            judgement: j.done(),
            premises,
        }
    }

    /// A FUN statement's expression: `E ⊢ e ⇓ (v̄)`.
    fn fun_exp(&self, n: &Stmt, env: J) -> Node {
        let st = self.step(n.step);
        let rule = st.rule;
        let info = self.info(n);
        let vals: Vec<String> = self.own_binds(n).into_iter().map(|(_, v)| v).collect();
        let result = if n.stuck_inside() {
            J::default().t("stuck")
        } else {
            tuple(&vals)
        };
        let j = env
            .m(" ⊢ ")
            .c(&self.exp_code(n))
            .m(" ⇓ ")
            .parts(&result.done());
        let mut premises = Vec::new();
        if let Some(b) = self.bound_leaf(n) {
            premises.push(b);
        }
        if let Some(x) = self.value_index_leaf(n) {
            premises.push(x);
        }
        if let Some(c) = self.cond_leaf(n, rule) {
            premises.push(c);
        }
        if info.cond.is_some() && n.iters.is_empty() {
            let b = Self::branch(rule);
            let names = info.results.get(b).cloned().unwrap_or_default();
            // The branch's results are the pattern's values.
            premises.push(self.fun_body(&n.body, J::default().m("E"), &names, &vals));
        } else {
            // A reduction's operator, applied again and again.
            let names = info.results.first().cloned().unwrap_or_default();
            for app in self.applications(&n.body) {
                let last = app.last().map_or(n.step, |s| s.last);
                let values = self.values_after(last, &names);
                premises.push(self.fun_body(app, J::default().m("E"), &names, &values));
            }
        }
        for it in &n.iters {
            let names = info.results.first().cloned().unwrap_or_default();
            let values = self.values_after(it.last, &names);
            let env = env_with("E", &binds(&self.step(it.step).effects));
            premises.push(self.fun_body(&it.body, env, &names, &values));
        }
        if let Some(k) = n.stuck {
            premises.push(self.stuck_leaf(k));
        }
        Node {
            rule: Some(rule),
            judgement: j.done(),
            premises,
        }
    }

    // -- FUNMEM ---------------------------------------------------------

    /// E-STMS: `E; H ⊢ s̄ ⇓ E'; H'; ⟨R, W⟩` with the statements as premises.
    fn mem_seq(&self, stmts: &[Stmt], env: J, range: Option<(usize, usize)>) -> Node {
        let code = match stmts {
            [] => "•".to_string(),
            [one] => self.code(one),
            [first, ..] => and_more(&cut(&self.code(first), 30)),
        };
        let bs: Vec<(String, String)> = stmts.iter().flat_map(|s| self.own_binds(s)).collect();
        let (r, w, h) = match range {
            Some((from, to)) => {
                let (r, w) = self.rw(from, to);
                (r, w, self.heap_after(from, to))
            }
            None => ("∅".to_string(), "∅".to_string(), J::default().m("H")),
        };
        let after = if stmts.iter().any(Stmt::stuck_inside) {
            J::default().t("stuck")
        } else {
            env_with("E", &bs)
                .m("; ")
                .parts(&h.done())
                .m(&format!("; ⟨R = {r}, W = {w}⟩"))
        };
        let j = env.m("; H ⊢ ").c(&code).m(" ⇓ ").parts(&after.done());
        let premises: Vec<Node> = stmts.iter().map(|s| self.mem_stmt(s)).collect();
        Node {
            rule: Some("E-STMS"),
            judgement: j.done(),
            premises,
        }
    }

    /// A FUNMEM statement: `E; H ⊢ s ⇓ E'; H'; ⟨R, W⟩`.
    fn mem_stmt(&self, n: &Stmt) -> Node {
        let st = self.step(n.step);
        let rule = st.rule;
        let (r, w) = self.rw(n.step, n.last);
        let after = if n.stuck_inside() {
            J::default().t("stuck")
        } else {
            env_with("E", &self.own_binds(n))
                .m("; ")
                .parts(&self.heap_after(n.step, n.last).done())
                .m(&format!("; ⟨R = {r}, W = {w}⟩"))
        };
        let j = J::default()
            .m("E; H ⊢ ")
            .c(&self.code(n))
            .m(" ⇓ ")
            .parts(&after.done());
        let mut premises = Vec::new();
        if let Some(b) = self.bound_leaf(n) {
            premises.push(b);
        }
        if let Some(c) = self.cond_leaf(n, rule) {
            premises.push(c);
        }
        if let Some(x) = self.index_leaf(n).filter(|_| n.stuck.is_none()) {
            premises.push(x);
        }
        for app in self.applications(&n.body) {
            let from = app.first().map_or(n.step, |s| s.step);
            let to = app.last().map_or(from, |s| s.last);
            premises.push(self.mem_seq(app, J::default().m("E"), Some((from, to))));
        }
        let mut parallel = 0;
        for it in &n.iters {
            let StepKind::Iteration {
                parallel: par,
                index,
            } = self.step(it.step).kind
            else {
                continue;
            };
            if par {
                parallel += 1;
            }
            let env = env_with("E", &binds(&self.step(it.step).effects));
            let mut extra = Vec::new();
            // The result's write: its own step, or with an empty body the
            // iteration's step.
            let writes_here = self
                .step(it.step)
                .effects
                .iter()
                .any(|e| matches!(e, Effect::Write { .. }));
            let (memcopy, body_range) = match it.result {
                Some(r) => (Some(r), Some((it.step, it.last))),
                None if par && it.body.is_empty() && writes_here => (Some(it.step), None),
                None => (None, Some((it.step, it.last))),
            };
            if let Some(rs) = memcopy {
                let ws: Vec<String> = self
                    .step(rs)
                    .effects
                    .iter()
                    .filter_map(|e| match e {
                        Effect::Write {
                            block,
                            offset,
                            value,
                            ..
                        } => Some(format!("b{block}[{offset}] := {value}")),
                        _ => None,
                    })
                    .collect();
                let (r2, w2) = self.rw(rs, rs);
                let shown = if ws.len() > 2 {
                    format!("{}, …", ws[..2].join(", "))
                } else {
                    ws.join(", ")
                };
                extra.push(leaf(
                    J::default()
                        .t(&format!("memcopy of iteration {index}: "))
                        .c(&shown)
                        .m(&format!("; R′ = {r2}, W′ = {w2}")),
                ));
            }
            premises.push(self.mem_seq(&it.body, env, body_range));
            premises.extend(extra);
        }
        if parallel > 0 && !n.stuck_inside() {
            premises.push(leaf(J::default().t("racefree").m(&format!(
                "({}, {})",
                sets("R", parallel),
                sets("W", parallel)
            ))));
        }
        if let Some(k) = n.stuck {
            premises.push(self.stuck_leaf(k));
        }
        Node {
            rule: Some(rule),
            judgement: j.done(),
            premises,
        }
    }

    /// An atom's value before step `k`, as the semantics shows it.
    fn atom_value(&self, k: usize, a: &Atom) -> Option<String> {
        match a {
            Atom::Var(v) => self.value_before(k, v.name.as_str()),
            Atom::Int(i, _) => Some(i.to_string()),
            Atom::Const(c, _) => Some(c.to_string()),
        }
    }

    /// A kernel's number of iterations: `E(n) = 3i64`.
    fn bound_leaf(&self, n: &Stmt) -> Option<Node> {
        let Some(Atom::Var(x)) = self.info(n).bound else {
            return None;
        };
        let v = self.value_before(n.step, x.name.as_str())?;
        Some(leaf(
            J::default().m("E(").c(x.name.as_str()).m(") = ").c(&v),
        ))
    }

    /// E-INDEX's element: `index(E(xs), 1) = 2i64`.
    fn value_index_leaf(&self, n: &Stmt) -> Option<Node> {
        if n.stuck.is_some() {
            return None;
        }
        let (x, atoms) = self.info(n).index?;
        let ks: Option<Vec<String>> = atoms.iter().map(|a| self.atom_value(n.step, a)).collect();
        let v = self.own_binds(n).into_iter().next()?.1;
        Some(leaf(
            J::default()
                .c("index")
                .m("(E(")
                .c(&x)
                .m(&format!("), {}) = ", ks?.join(", ")))
                .c(&cut(&v, VALUE_WIDTH)),
        ))
    }

    /// E-MEM-INDEX's address: `k = L(1, 2) = 0 + 1·3 + 2·1 = 5`.
    fn index_leaf(&self, n: &Stmt) -> Option<Node> {
        let (x, atoms) = self.info(n).index?;
        let before = &self.steps[n.step.checked_sub(1)?].state;
        let place = before
            .env
            .iter()
            .find(|(m, _)| m.as_str() == x)
            .and_then(|(_, b)| b.place.clone())?;
        let mut idx = Vec::new();
        for a in &atoms {
            let k = match a {
                Atom::Var(v) => int_of(&self.value_before(n.step, v.name.as_str())?)?,
                Atom::Int(k, _) => *k,
                Atom::Const(..) => return None,
            };
            idx.push(k);
        }
        if idx.len() != place.lmad.dims.len() {
            return None;
        }
        let ks: Vec<String> = idx.iter().map(|k| k.to_string()).collect();
        Some(leaf(
            J::default()
                .m("k = ")
                .c(&format!("L_{x}({})", ks.join(", ")))
                .m(&format!(" = {}", place.explain(&idx))),
        ))
    }

    // -- IMP ------------------------------------------------------------

    /// A sequence: one statement's node, or E-IMP-SEQ over them.
    fn imp_seq(&self, stmts: &[Stmt], env: J) -> Node {
        match stmts {
            [] => leaf(J::default().t("no statements")),
            [one] => self.imp_stmt(one, env),
            [first, .., last] => {
                let after = if stmts.iter().any(Stmt::stuck_inside) {
                    J::default().t("stuck")
                } else {
                    self.heap_after(first.step, last.last)
                        .m("; ")
                        .parts(&env_with("E", &self.imp_binds(first.step, last.last)).done())
                };
                let j = J::default()
                    .m("H; ")
                    .parts(&env.done())
                    .m(" ⊢ ")
                    .c(&format!("{}; …", cut(&self.code(first), 30)))
                    .m(" → ")
                    .parts(&after.done());
                Node {
                    rule: Some("E-IMP-SEQ"),
                    judgement: j.done(),
                    premises: stmts
                        .iter()
                        .map(|s| self.imp_stmt(s, J::default().m("E")))
                        .collect(),
                }
            }
        }
    }

    /// What statements from step `from` to `to` assigned (not iteration
    /// indices), each name once with its last value.
    fn imp_binds(&self, from: usize, to: usize) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for s in self.range(from, to) {
            if s.kind != StepKind::Rule && s.kind != StepKind::Done {
                continue;
            }
            for (n, v) in binds(&s.effects) {
                if let Some(e) = out.iter_mut().find(|(m, _)| *m == n) {
                    e.1 = v;
                } else {
                    out.push((n, v));
                }
            }
        }
        out
    }

    /// An IMP statement: `H; E ⊢ s → H'; E'`.
    fn imp_stmt(&self, n: &Stmt, env: J) -> Node {
        let st = self.step(n.step);
        let rule = st.rule;
        let after = if n.stuck_inside() {
            J::default().t("stuck")
        } else {
            let bs = if rule == "E-IMP-KERNEL" {
                Vec::new()
            } else {
                self.imp_binds(n.step, n.last)
            };
            self.heap_after(n.step, n.last)
                .m("; ")
                .parts(&env_with("E", &bs).done())
        };
        let j = J::default()
            .m("H; ")
            .parts(&env.done())
            .m(" ⊢ ")
            .c(&self.code(n))
            .m(" → ")
            .parts(&after.done());
        let mut premises = Vec::new();
        if let Some(c) = self.cond_leaf(n, rule) {
            premises.push(c);
        }
        for app in self.applications(&n.body) {
            premises.push(self.imp_seq(app, J::default().m("E")));
        }
        for it in &n.iters {
            let env = env_with("E", &binds(&self.step(it.step).effects));
            premises.push(self.imp_seq(&it.body, env));
        }
        if let Some(k) = n.stuck {
            premises.push(self.stuck_leaf(k));
        }
        Node {
            rule: Some(rule),
            judgement: j.done(),
            premises,
        }
    }
}

/// The derivation of a recorded run of `subject`. The trace should be
/// complete (`trace.cut == 0`); a cut trace gives the derivation of the
/// steps kept.
pub fn derive(subject: &Subject, trace: &Trace) -> Derivation {
    let style = match (subject.layer, subject.semantics) {
        (Layer::Imp, _) => Style::Imp,
        (_, Semantics::Heap) => Style::Heap,
        _ => Style::Value,
    };
    let mut info = HashMap::new();
    let mut top_results = Vec::new();
    match &subject.program {
        AnyProgram::Fun(p) => {
            index_body(&p.body, &mut info);
            top_results = names(&p.body);
        }
        AnyProgram::Imp(p) => index_imp(&p.body, &mut info),
    }
    let steps = &trace.steps;
    let ctx = Ctx {
        src: &subject.source,
        steps,
        info,
    };
    let mut nest = Nesting {
        steps,
        pos: 1,
        stuck: None,
    };
    // The top level; steps that fit nowhere are skipped.
    let mut top = Vec::new();
    while nest.pos + 1 < steps.len() && nest.stuck.is_none() {
        let before = nest.pos;
        top.extend(nest.seq(None));
        if nest.pos == before {
            nest.pos += 1;
        }
    }
    let last = steps.last();
    let (results, stuck) = match last.map(|s| &s.kind) {
        Some(StepKind::Finish { results }) => (results.clone(), None),
        Some(StepKind::Stuck { message, .. }) => (Vec::new(), Some(message.clone())),
        _ => (Vec::new(), None),
    };
    let inputs = steps.first().map(|s| binds(&s.effects)).unwrap_or_default();
    let input_leaf = leaf(J::default().m("E = ").parts(&bindings_list(&inputs).done()));
    let outcome = if stuck.is_some() {
        J::default().t("stuck")
    } else {
        tuple(&results)
    };
    let body_to = top.last().map_or(0, |s| s.last);
    let (rule, conclusion, mut premises) = match style {
        Style::Value => {
            let node = ctx.fun_body(&top, J::default().m("E"), &top_results, &results);
            (
                "E-PROG",
                J::default().m("⊢ ").c("b").m(" ⇓ ").parts(&outcome.done()),
                vec![input_leaf, node],
            )
        }
        Style::Heap => {
            let from = top.first().map_or(0, |s| s.step);
            let node = ctx.mem_seq(&top, J::default().m("E"), Some((from, body_to)));
            (
                "E-MEM-PROG",
                J::default()
                    .m("⊢ ")
                    .c("b")
                    .m(" ⇓ ")
                    .parts(&outcome.done())
                    .m("; H"),
                vec![input_leaf, node],
            )
        }
        Style::Imp => {
            let node = ctx.imp_seq(&top, J::default().m("E"));
            (
                "E-IMP-PROG",
                J::default()
                    .m("⊢ ")
                    .c("p")
                    .m(" ⇓ ")
                    .parts(&outcome.done())
                    .m("; H"),
                vec![input_leaf, node],
            )
        }
    };
    // Stuck outside every statement (reading back the results).
    if nest.stuck.is_none() {
        if let Some(k) = steps
            .iter()
            .rposition(|s| matches!(s.kind, StepKind::Stuck { .. }))
        {
            premises.push(ctx.stuck_leaf(k));
        }
    }
    Derivation {
        root: Node {
            rule: Some(rule),
            judgement: conclusion.done(),
            premises,
        },
        stuck,
    }
}

// ---------------------------------------------------------------------
// Output.

/// Most levels of indentation of the text tree.
pub const TEXT_DEPTH: usize = 40;

/// The tree as text: a node per line, `[RULE] judgement` (a side
/// condition without the brackets), premises indented under their
/// conclusion.
pub fn text(d: &Derivation) -> Vec<String> {
    let mut out = Vec::new();
    fn go(n: &Node, depth: usize, out: &mut Vec<String>) {
        // Past TEXT_DEPTH levels the indentation stops growing and the
        // level is written instead (a long FUN body is a deep E-LET chain).
        let mut indent = "  ".repeat(depth.min(TEXT_DEPTH));
        if depth > TEXT_DEPTH {
            indent.push_str(&format!("({depth}) "));
        }
        match n.rule {
            Some(r) => out.push(format!("{indent}[{r}] {}", n.text())),
            None => out.push(format!("{indent}{}", n.text())),
        }
        for p in &n.premises {
            go(p, depth + 1, out);
        }
    }
    go(&d.root, 0, &mut out);
    out
}

/// LaTeX for a math part: symbols as commands, braces escaped.
fn latex_math(s: &str) -> String {
    let mut o = String::new();
    for ch in s.chars() {
        match ch {
            '⊢' => o.push_str("\\vdash "),
            '⇓' => o.push_str("\\Downarrow "),
            '↦' => o.push_str("\\mapsto "),
            '⟨' => o.push_str("\\langle "),
            '⟩' => o.push_str("\\rangle "),
            '∅' => o.push_str("\\emptyset "),
            '·' => o.push_str("\\cdot "),
            '→' => o.push_str("\\to "),
            '≠' => o.push_str("\\neq "),
            '∪' => o.push_str("\\cup "),
            '′' => o.push('\''),
            '…' => o.push_str("\\ldots "),
            '•' => o.push_str("\\bullet "),
            '{' => o.push_str("\\{"),
            '}' => o.push_str("\\}"),
            ' ' => o.push_str("\\ "),
            '_' | '#' | '%' | '&' | '$' | '^' | '~' | '\\' => {
                o.push_str(&latex_text(&ch.to_string()));
            }
            c if c.is_ascii() => o.push(c),
            _ => o.push('?'),
        }
    }
    o
}

/// LaTeX for program text (inside `\texttt`) or words: specials escaped,
/// the few symbols values and cuts use as math.
fn latex_text(s: &str) -> String {
    let mut o = String::new();
    for ch in s.chars() {
        match ch {
            '\\' => o.push_str("\\textbackslash{}"),
            '{' => o.push_str("\\{"),
            '}' => o.push_str("\\}"),
            '_' => o.push_str("\\_"),
            '#' => o.push_str("\\#"),
            '%' => o.push_str("\\%"),
            '&' => o.push_str("\\&"),
            '$' => o.push_str("\\$"),
            '^' => o.push_str("\\^{}"),
            '~' => o.push_str("\\~{}"),
            '…' => o.push_str("\\ldots{}"),
            '·' => o.push_str("$\\cdot$"),
            '↦' => o.push_str("$\\mapsto$"),
            '′' => o.push('\''),
            c if c.is_ascii() && !c.is_ascii_control() => o.push(c),
            _ => o.push('?'),
        }
    }
    o
}

/// A judgement in LaTeX (text mode), a long one on several lines.
pub fn latex_judgement(parts: &[Part]) -> String {
    let set: Vec<String> = judgement_lines(parts)
        .iter()
        .map(|l| latex_line(l))
        .collect();
    if set.len() == 1 {
        set.concat()
    } else {
        format!(
            "\\begin{{tabular}}{{@{{}}c@{{}}}}{}\\end{{tabular}}",
            set.join("\\\\")
        )
    }
}

fn latex_line(parts: &[Part]) -> String {
    let mut o = String::new();
    for p in parts {
        match p {
            Part::Math(s) => {
                let _ = write!(o, "${}$", latex_math(s));
            }
            Part::Code(s) => {
                let _ = write!(o, "\\texttt{{{}}}", latex_text(s));
            }
            Part::Text(s) => {
                let _ = write!(o, "\\textrm{{{}}}", latex_text(s));
            }
        }
    }
    o
}

/// Most levels of a tree set in one `prooftree`; deeper sub-derivations
/// are set on their own, referenced by a label.
pub const LATEX_DEPTH: usize = 4;
/// About how many characters wide one `prooftree` may be: premises wider
/// than their share are set on their own, referenced by a label.
pub const LATEX_WIDTH: usize = 230;
/// Most premises of one bussproofs inference.
const BUSSPROOFS_MAX: usize = 5;

struct Latex<'a> {
    /// Sub-derivations to set on their own: label number and node.
    queue: Vec<(usize, &'a Node)>,
    next: usize,
    /// Each node's width and height, computed once.
    metrics: HashMap<*const Node, (usize, usize)>,
}

/// Fills `m` with the width and height of `n` and its premises.
fn measure(n: &Node, m: &mut HashMap<*const Node, (usize, usize)>) -> (usize, usize) {
    let own = judgement_lines(&n.judgement)
        .iter()
        .map(|l| l.iter().map(part_len).sum::<usize>())
        .max()
        .unwrap_or(0);
    let mut above = 0;
    let mut height = 0;
    for p in &n.premises {
        let (w, h) = measure(p, m);
        above += w + 3;
        height = height.max(h);
    }
    let r = (own.max(above), height + 1);
    m.insert(n as *const Node, r);
    r
}

impl<'a> Latex<'a> {
    fn width(&self, n: &Node) -> usize {
        self.metrics.get(&(n as *const Node)).map_or(0, |m| m.0)
    }

    fn height(&self, n: &Node) -> usize {
        self.metrics.get(&(n as *const Node)).map_or(0, |m| m.1)
    }

    fn label(&mut self, n: &'a Node) -> usize {
        self.next += 1;
        self.queue.push((self.next, n));
        self.next
    }

    fn reference(&mut self, n: &'a Node, out: &mut String) {
        let k = self.label(n);
        let _ = writeln!(
            out,
            "\\AxiomC{{$\\mathcal{{D}}_{{{k}}}$}}\n\\noLine\n\\UnaryInfC{{{}}}",
            latex_judgement(&n.judgement)
        );
    }

    fn node(&mut self, n: &'a Node, depth: usize, room: usize, out: &mut String) {
        let j = latex_judgement(&n.judgement);
        let Some(rule) = n.rule else {
            let _ = writeln!(out, "\\AxiomC{{{j}}}");
            return;
        };
        let mut slots = 0;
        if n.premises.is_empty() {
            let _ = writeln!(out, "\\AxiomC{{}}");
            slots = 1;
        } else {
            // Groups of premises, one per bussproofs slot: past five,
            // neighbouring side conditions share a slot, one above the
            // other.
            let mut groups: Vec<Vec<&'a Node>> = n.premises.iter().map(|p| vec![p]).collect();
            while groups.len() > BUSSPROOFS_MAX {
                let leafy = |g: &Vec<&Node>| g.iter().all(|p| p.premises.is_empty());
                let Some(k) = (1..groups.len())
                    .rev()
                    .find(|&k| leafy(&groups[k]) && leafy(&groups[k - 1]))
                else {
                    break;
                };
                let g = groups.remove(k);
                groups[k - 1].extend(g);
            }
            let many = groups.len() > BUSSPROOFS_MAX;
            let inline = if many {
                BUSSPROOFS_MAX - 1
            } else {
                BUSSPROOFS_MAX
            };
            // Side conditions are set in place; the room left is shared by
            // the premises with premises of their own.
            let shown = &groups[..inline.min(groups.len())];
            let leafy_width: usize = shown
                .iter()
                .filter(|g| g.len() > 1 || g[0].premises.is_empty())
                .map(|g| g.iter().map(|p| self.width(p)).max().unwrap_or(0) + 3)
                .sum();
            let inner = shown
                .iter()
                .filter(|g| g.len() == 1 && !g[0].premises.is_empty())
                .count()
                + usize::from(many);
            let share = room.saturating_sub(leafy_width).max(room / 4) / inner.max(1);
            for g in groups.iter().take(inline) {
                if let [p] = g.as_slice() {
                    let fits = depth + self.height(p) <= LATEX_DEPTH && self.width(p) <= share;
                    if p.premises.is_empty() || fits {
                        self.node(p, depth + 1, share, out);
                    } else {
                        self.reference(p, out);
                    }
                } else {
                    let rows: Vec<String> =
                        g.iter().map(|p| latex_judgement(&p.judgement)).collect();
                    let _ = writeln!(
                        out,
                        "\\AxiomC{{\\begin{{tabular}}{{@{{}}c@{{}}}}{}\\end{{tabular}}}}",
                        rows.join("\\\\[2pt]")
                    );
                }
                slots += 1;
            }
            if many {
                let labels: Vec<String> = groups[inline..]
                    .iter()
                    .flatten()
                    .map(|p| format!("\\mathcal{{D}}_{{{}}}", self.label(p)))
                    .collect();
                let _ = writeln!(out, "\\AxiomC{{$\\cdots\\ {}$}}", labels.join("\\quad "));
                slots += 1;
            }
        }
        let inf = match slots {
            1 => "UnaryInfC",
            2 => "BinaryInfC",
            3 => "TrinaryInfC",
            4 => "QuaternaryInfC",
            _ => "QuinaryInfC",
        };
        let _ = writeln!(
            out,
            "\\RightLabel{{\\scriptsize {}}}\n\\{inf}{{{j}}}",
            latex_text(rule)
        );
    }
}

/// The derivation as a standalone LaTeX document (bussproofs): the tree,
/// then the sub-derivations it references (`D1`, `D2`, ...), each scaled
/// down to the page's width when wider.
pub fn latex(d: &Derivation, title: &str) -> String {
    let mut metrics = HashMap::new();
    measure(&d.root, &mut metrics);
    let mut l = Latex {
        queue: Vec::new(),
        next: 0,
        metrics,
    };
    let mut body = String::new();
    let mut main = String::new();
    l.node(&d.root, 0, LATEX_WIDTH, &mut main);
    let _ = writeln!(body, "\\fitproof{{%\n{main}\\DisplayProof}}\n");
    let mut k = 0;
    while k < l.queue.len() {
        let (label, n) = l.queue[k];
        k += 1;
        let mut t = String::new();
        l.node(n, 0, LATEX_WIDTH, &mut t);
        let _ = writeln!(
            body,
            "\\bigskip\\noindent$\\mathcal{{D}}_{{{label}}}$:\\par\\fitproof{{%\n{t}\\DisplayProof}}\n"
        );
    }
    if let Some(m) = &d.stuck {
        let _ = writeln!(
            body,
            "\\bigskip\\noindent The run got stuck: \\texttt{{{}}}\n",
            latex_text(m)
        );
    }
    format!(
        "\\documentclass[a4paper,landscape]{{article}}\n\
         \\usepackage{{amssymb}}\n\
         \\usepackage{{graphicx}}\n\
         \\usepackage{{bussproofs}}\n\
         \\def\\defaultHypSeparation{{\\hskip 1em}}\n\
         \\ifdefined\\pdfpagewidth\\setlength{{\\pdfpagewidth}}{{297mm}}\\setlength{{\\pdfpageheight}}{{210mm}}\\fi\n\
         \\setlength{{\\paperwidth}}{{297mm}}\\setlength{{\\paperheight}}{{210mm}}\n\
         \\setlength{{\\textwidth}}{{267mm}}\\setlength{{\\textheight}}{{180mm}}\n\
         \\setlength{{\\oddsidemargin}}{{-10mm}}\\setlength{{\\evensidemargin}}{{-10mm}}\n\
         \\setlength{{\\topmargin}}{{-20mm}}\n\
         \\pagestyle{{empty}}\n\
         \\newsavebox{{\\proofbox}}\n\
         \\newcommand{{\\fitproof}}[1]{{\\sbox{{\\proofbox}}{{#1}}%\n\
         \\ifdim\\wd\\proofbox>\\linewidth\\resizebox{{\\linewidth}}{{!}}{{\\usebox{{\\proofbox}}}}\\else\\usebox{{\\proofbox}}\\fi\\par}}\n\
         \\begin{{document}}\n\
         \\footnotesize\n\
         \\noindent\\textbf{{Derivation of {}}}\\par\\medskip\n\n\
         {body}\
         \\end{{document}}\n",
        latex_text(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random programs (FUN, FUNMEM, racing FUNMEM) under every semantics:
    /// one node per statement step and the root, every rule a step's or a
    /// structural one, a line of text per node, LaTeX for every tree.
    #[test]
    fn random_programs_derive_a_node_per_statement() {
        use crate::session::{prepare, View};
        use funmem_oracle::campaign::{case_from, Source as Gen};
        use funmem_semantics::error::Limits;
        let gen = funmem_oracle::GenConfig::default();
        let mut derived = 0;
        for k in 0..150 {
            let case = case_from(Gen::Mixed, 20, k, &gen);
            let fun = case.program.lang == funmem_lang::ast::Lang::Fun;
            let name = if fun { "r.fun" } else { "r.funmem" };
            let src = Source::new(name, funmem_lang::print::program(&case.program));
            let Ok(p) = funmem_lang::front::load(&src) else {
                panic!("program {k} does not load:\n{}", src.text);
            };
            for view in [View::Value, View::Heap, View::Imp] {
                let Ok(subject) = prepare(&src, &p, Some(view), None) else {
                    continue;
                };
                let limits = Limits {
                    fuel: 20_000,
                    ..Limits::default()
                };
                let rec = subject.record(&case.inputs, limits, 3000);
                if rec.trace.cut > 0 {
                    continue;
                }
                let d = derive(&subject, &rec.trace);
                let mut rules = 0;
                d.root.walk(&mut |n| {
                    if let Some(r) = n.rule {
                        assert!(
                            STRUCTURAL_RULES.contains(&r)
                                || rec.trace.steps.iter().any(|s| s.rule == r),
                            "program {k} {view}: {r}"
                        );
                        if !STRUCTURAL_RULES.contains(&r) {
                            rules += 1;
                        }
                    }
                });
                let statements = rec
                    .trace
                    .steps
                    .iter()
                    .filter(|s| s.kind == StepKind::Rule)
                    .count();
                assert_eq!(
                    rules,
                    statements + 1,
                    "program {k} {view}:\n{}\n{}",
                    subject.source.text,
                    text(&d).join("\n")
                );
                assert_eq!(text(&d).len(), d.root.size());
                assert_eq!(d.stuck.is_some(), rec.outcome.is_err());
                assert!(latex(&d, "t").ends_with("\\end{document}\n"));
                derived += 1;
            }
        }
        assert!(derived > 250, "{derived}");
    }

    #[test]
    fn locations_group_consecutive_offsets() {
        let mut m = BTreeMap::new();
        m.insert(0, vec![2, 0, 1, 5]);
        m.insert(3, vec![7]);
        assert_eq!(locations(&m), "{(b0, 0..2), (b0, 5), (b3, 7)}");
        assert_eq!(locations(&BTreeMap::new()), "∅");
    }

    #[test]
    fn long_judgements_break_before_the_arrow_and_the_sets() {
        let j = J::default()
            .m("E; H ⊢ ")
            .c("let (x: int) = xs[i]")
            .m(" ⇓ ")
            .m("E, ")
            .c("x")
            .m(" ↦ ")
            .c("1i64")
            .m("; H; ⟨R = {(b0, 1)}, W = ∅⟩")
            .done();
        let lines: Vec<String> = judgement_lines(&j)
            .iter()
            .map(|l| {
                l.iter()
                    .map(|p| match p {
                        Part::Math(s) | Part::Code(s) | Part::Text(s) => s.as_str(),
                    })
                    .collect()
            })
            .collect();
        assert_eq!(
            lines,
            vec![
                "E; H ⊢ let (x: int) = xs[i]",
                "⇓ E, x ↦ 1i64; H;",
                "⟨R = {(b0, 1)}, W = ∅⟩"
            ]
        );
        let short = J::default().m("E ⊢ ").c("x").m(" ⇓ ").c("(1)").done();
        assert_eq!(judgement_lines(&short), vec![short.clone()]);
    }

    #[test]
    fn values_read_as_integers() {
        assert_eq!(int_of("2i64"), Some(2));
        assert_eq!(int_of("-13"), Some(-13));
        assert_eq!(int_of("block 0"), None);
    }

    #[test]
    fn latex_escapes_program_text() {
        assert_eq!(
            latex_text("x_mem{a}#%&$^~\\…"),
            "x\\_mem\\{a\\}\\#\\%\\&\\$\\^{}\\~{}\\textbackslash{}\\ldots{}"
        );
        assert_eq!(
            latex_judgement(&[
                Part::Math("E ⊢ ".into()),
                Part::Code("a_b".into()),
                Part::Math(" ⇓ ∅".into())
            ]),
            "$E\\ \\vdash \\ $\\texttt{a\\_b}$\\ \\Downarrow \\ \\emptyset $"
        );
    }
}
