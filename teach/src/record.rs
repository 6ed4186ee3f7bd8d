//! Recording an evaluation as a sequence of steps, each with the whole
//! state after it, so that a stepper can go back as cheaply as forward.
//!
//! The [`Recorder`] is an [`Observer`] of the interpreters (the big-step
//! semantics of FUN, FUNMEM and IMP, IFL 2022 paper figs. 4, 10 and 12).
//! Their events arrive in the order of the rules' premises: a statement's
//! `rule` when it starts, the events of its bodies, its binds, `done`.
//! From them the recorder makes *steps*:
//!
//! - [`StepKind::Start`]: the program's parameters bound, input arrays laid
//!   out in their blocks (E-PROG, E-MEM-PROG, E-IMP-PROG);
//! - [`StepKind::Rule`]: a statement evaluated by the named rule;
//! - [`StepKind::Iteration`]: an iteration of a kernel, loop, reduce or
//!   scan begins, its index (and a loop's parameters) bound;
//! - [`StepKind::Result`]: a kernel iteration's result written into the
//!   kernel's destination (heap semantics);
//! - [`StepKind::Done`]: a statement with a body has finished, its
//!   pattern bound (only for statements whose body made steps);
//! - [`StepKind::Finish`]: the results, or [`StepKind::Stuck`]: the error
//!   that ended the run (a race names both accesses).
//!
//! Each step keeps the [`Effect`]s that happened during it and the
//! [`State`] after them. States are persistent maps and vectors (`imbl`):
//! consecutive states share all but what changed, so keeping one per step
//! costs O(log n) per change and going back is an index into a vector.
//!
//! Scoping follows the rules: an iteration starts from the environment the
//! statement started with (E, x ↦ k ⊢ b); when a statement finishes, the
//! names its bodies bound are gone and its own pattern is added (E' = E,
//! z ↦ v). Blocks are never freed (the semantics never frees).
//!
//! A run may be long: after `budget` steps the recorder stops keeping
//! states and only counts the steps, so that a teacher's page says what was
//! cut instead of exhausting memory.

use funmem_lang::lmad::Lmad;
use funmem_lang::prim::{Const, Prim};
use funmem_lang::{Name, Span};
use funmem_semantics::error::{ErrorKind, EvalError, Race};
use funmem_semantics::observer::Observer;
use funmem_semantics::value::Value;
use imbl::{OrdMap, Vector};
use std::fmt;

/// Most characters of a value kept for display: a large array's value is
/// cut (with `…`), so that recording a run of large arrays stays cheap.
pub const VALUE_CHARS: usize = 240;

/// `value` shown in at most [`VALUE_CHARS`] characters; formatting stops
/// there, so that a huge array is not printed whole first.
pub fn shown(value: &dyn fmt::Display) -> String {
    struct Bounded {
        out: String,
        chars: usize,
        full: bool,
    }
    impl fmt::Write for Bounded {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            for c in s.chars() {
                if self.chars == VALUE_CHARS {
                    self.full = true;
                    return Err(fmt::Error);
                }
                self.out.push(c);
                self.chars += 1;
            }
            Ok(())
        }
    }
    let mut b = Bounded {
        out: String::new(),
        chars: 0,
        full: false,
    };
    let _ = fmt::write(&mut b, format_args!("{value}"));
    if b.full {
        b.out.push('…');
    }
    b.out
}

/// Where an array lives: block, LMAD (in elements of `elem`), element type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The block's label (allocation number, from 0).
    pub block: usize,
    /// The index function, with constants only.
    pub lmad: Lmad<i64>,
    /// The element type.
    pub elem: Prim,
}

impl Place {
    /// The address (element offset in the block) of each element, in
    /// row-major order of the array's indices: at most `limit` of them.
    pub fn addresses(&self, limit: usize) -> Vec<i64> {
        let mut out = Vec::new();
        let _ = self.lmad.for_each_address(|a| {
            if out.len() >= limit {
                return Err(());
            }
            out.push(a);
            Ok(())
        });
        out
    }

    /// The index of each element in row-major order, beside its address:
    /// at most `limit` of them.
    pub fn elements(&self, limit: usize) -> Vec<(Vec<i64>, i64)> {
        self.lmad
            .domain()
            .take(limit)
            .map(|ix| {
                let a = self.lmad.apply(&ix);
                (ix, a)
            })
            .collect()
    }

    /// How the LMAD maps an index to an address, written out:
    /// `2 + 1·4 + 3·1 = 9`.
    pub fn explain(&self, index: &[i64]) -> String {
        let mut s = self.lmad.offset.to_string();
        for (i, d) in index.iter().zip(&self.lmad.dims) {
            s.push_str(&format!(" + {i}·{}", d.stride));
        }
        format!("{s} = {}", self.lmad.apply(index))
    }

    /// The LMAD in the paper's notation: `off + {(n1 : s1) (n2 : s2)}`.
    pub fn lmad_text(&self) -> String {
        let ds: Vec<String> = self
            .lmad
            .dims
            .iter()
            .map(|d| format!("({} : {})", d.elems, d.stride))
            .collect();
        format!("{} + {{{}}}", self.lmad.offset, ds.join(" "))
    }
}

/// A name's value in the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// Binding order, for display: lower is older.
    pub seq: u64,
    /// The value as the semantics shows it: a scalar, `block 2`, an array
    /// value (value semantics) or `(block 2, 0 + {(4 : 1)})` (heap).
    pub value: String,
    /// Where the array lives (heap semantics).
    pub place: Option<Place>,
}

/// A block of the heap: bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The bytes, zero when allocated.
    pub bytes: Vector<u8>,
    /// The element type last written or placed into the block, for
    /// drawing it as cells (i64 when nothing told).
    pub elem: Prim,
}

impl Block {
    /// Element `k` of type `t` (bytes k*size(t) ..), if inside the block.
    pub fn element(&self, k: i64, t: Prim) -> Option<Const> {
        let w = t.size() as usize;
        let at = usize::try_from(k).ok()?.checked_mul(w)?;
        if at.checked_add(w)? > self.bytes.len() {
            return None;
        }
        let mut word = 0u64;
        for j in 0..w {
            word |= u64::from(self.bytes[at + j]) << (8 * j);
        }
        Some(Const::from_bits(t, sign_extend(t, word)))
    }

    /// How many elements of type `t` the block holds.
    pub fn len(&self, t: Prim) -> usize {
        self.bytes.len() / (t.size() as usize).max(1)
    }

    /// Whether the block has no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// The word of a `t` read from its little-endian bytes.
fn sign_extend(t: Prim, w: u64) -> u64 {
    match t {
        Prim::I32 => w as u32 as i32 as i64 as u64,
        _ => w,
    }
}

/// Everything a stepper shows after a step.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct State {
    /// The environment.
    pub env: OrdMap<Name, Binding>,
    /// The heap (heap semantics), block `k` at index `k`.
    pub blocks: Vector<Block>,
    /// The iterations in progress, outermost first: the statement's span
    /// and the index.
    pub iterations: Vector<(Span, i64)>,
}

impl State {
    /// The environment in binding order.
    pub fn env_in_order(&self) -> Vec<(&Name, &Binding)> {
        let mut v: Vec<(&Name, &Binding)> = self.env.iter().collect();
        v.sort_by_key(|(_, b)| b.seq);
        v
    }

    /// The arrays of the environment that live in `block`, in binding
    /// order.
    pub fn arrays_in(&self, block: usize) -> Vec<(&Name, &Place)> {
        self.env_in_order()
            .into_iter()
            .filter_map(|(n, b)| b.place.as_ref().map(|p| (n, p)))
            .filter(|(_, p)| p.block == block)
            .collect()
    }
}

/// One thing that happened during a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// A name bound (the statement's pattern, a parameter, or on entry to
    /// an iteration).
    Bind {
        /// The name.
        name: Name,
        /// Its value, shown.
        value: String,
    },
    /// A block allocated.
    Alloc {
        /// Its label.
        block: usize,
        /// Its size in bytes.
        bytes: u64,
    },
    /// An element read.
    Read {
        /// The block.
        block: usize,
        /// The element offset (in elements of `elem`).
        offset: i64,
        /// The element type.
        elem: Prim,
    },
    /// An element written.
    Write {
        /// The block.
        block: usize,
        /// The element offset (in elements of `elem`).
        offset: i64,
        /// The element type.
        elem: Prim,
        /// The value written.
        value: Const,
    },
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Effect::Bind { name, value } => write!(f, "{name} = {value}"),
            Effect::Alloc { block, bytes } => write!(f, "alloc b{block} ({bytes} bytes)"),
            Effect::Read {
                block,
                offset,
                elem,
            } => write!(f, "read b{block}[{offset}]:{elem}"),
            Effect::Write {
                block,
                offset,
                value,
                ..
            } => write!(f, "b{block}[{offset}] := {value}"),
        }
    }
}

/// What a step is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// The program's inputs bound.
    Start,
    /// A statement evaluated by its rule.
    Rule,
    /// An iteration begins.
    Iteration {
        /// Its index.
        index: i64,
        /// Whether the iterations are parallel (a kernel's) rather than a
        /// sequential loop's.
        parallel: bool,
    },
    /// An iteration's result is written into its destination.
    Result {
        /// The iteration's index.
        index: i64,
    },
    /// A statement with a body has finished.
    Done,
    /// The run ended with these results.
    Finish {
        /// One line per result, in Futhark's value format.
        results: Vec<String>,
    },
    /// The run ended with an error.
    Stuck {
        /// The error as the interpreters report it: `RULE: message`.
        message: String,
        /// For a race: the two accesses.
        race: Option<Box<Race>>,
    },
}

/// One step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// What it is.
    pub kind: StepKind,
    /// The rule, by its paper name (for an iteration or `Done`, the rule of
    /// the statement it belongs to).
    pub rule: &'static str,
    /// The statement (the whole program for Start and Finish).
    pub span: Span,
    /// How many statements it is nested in (0 at the top level).
    pub depth: usize,
    /// The step that opened the statement this step is inside, if any.
    pub parent: Option<usize>,
    /// What happened during the step.
    pub effects: Vec<Effect>,
    /// The state after the step.
    pub state: State,
}

/// A recorded run.
#[derive(Clone, Debug)]
pub struct Trace {
    /// The steps kept, in order.
    pub steps: Vec<Step>,
    /// Steps of the run that were not kept (past the budget).
    pub cut: u64,
    /// The budget the recorder had.
    pub budget: usize,
}

impl Trace {
    /// Whether the last step kept ends the run (Finish or Stuck).
    pub fn is_complete(&self) -> bool {
        self.cut == 0
    }
}

/// A statement being evaluated.
#[derive(Clone, Debug)]
struct Open {
    rule: &'static str,
    span: Span,
    /// Its Rule step (None past the budget).
    step: Option<usize>,
    /// The environment it started with.
    env: OrdMap<Name, Binding>,
    /// Whether steps were made inside it.
    nested: bool,
    /// Whether an iteration of it is in progress (its index pushed on
    /// `State::iterations`).
    iterating: bool,
    /// Whether its `Done` step has been made.
    closing: bool,
}

/// The observer that records a run (see the module's documentation).
pub struct Recorder {
    steps: Vec<Step>,
    cur: State,
    effects: Vec<Effect>,
    open: Vec<Open>,
    seq: u64,
    budget: usize,
    cut: u64,
    /// Heap events are ignored (value semantics: arrays are values).
    heap: bool,
    program: Span,
    start_rule: &'static str,
    /// Whether the last step has its state: effects now are the next
    /// step's.
    flushed: bool,
    /// The program is IMP (its scoping differs: see [`Recorder::scoped`]).
    imp: bool,
    /// Past the budget, steps are only counted; these stand in for
    /// `flushed` and a non-empty `effects` there, so that an iteration's
    /// result step is counted as it would have been made.
    quiet_flushed: bool,
    quiet_effects: bool,
}

impl Recorder {
    /// A recorder keeping at most `budget` steps (at least 2: the start and
    /// the end). `heap` says whether the semantics has a heap worth
    /// drawing; `start_rule` names the program rule (E-PROG, E-MEM-PROG,
    /// E-IMP-PROG: the last selects IMP's scoping) and `program` the
    /// program's span.
    pub fn new(budget: usize, heap: bool, start_rule: &'static str, program: Span) -> Recorder {
        Recorder {
            steps: Vec::new(),
            cur: State::default(),
            effects: Vec::new(),
            open: Vec::new(),
            seq: 0,
            budget: budget.max(2),
            cut: 0,
            heap,
            program,
            start_rule,
            flushed: false,
            imp: start_rule == "E-IMP-PROG",
            quiet_flushed: false,
            quiet_effects: false,
        }
    }

    fn full(&self) -> bool {
        self.steps.len() + 1 >= self.budget
    }

    /// The step in progress is over: it gets the effects so far and the
    /// state now. Effects after this belong to the next step.
    fn flush(&mut self) {
        if self.steps.is_empty() {
            // Events before any statement: the start.
            self.steps.push(Step {
                kind: StepKind::Start,
                rule: self.start_rule,
                span: self.program,
                depth: 0,
                parent: None,
                effects: Vec::new(),
                state: State::default(),
            });
        }
        if let Some(last) = self.steps.last_mut() {
            last.effects.append(&mut self.effects);
            last.state = self.cur.clone();
        }
        self.flushed = true;
    }

    /// Starts a step, unless past the budget (then counts it). Gives its
    /// index. Effects since the last step was flushed are the new step's.
    fn push(&mut self, kind: StepKind, rule: &'static str, span: Span) -> Option<usize> {
        if !self.flushed || self.steps.is_empty() {
            self.flush();
        }
        if let Some(o) = self.open.last_mut() {
            o.nested = true;
        }
        if self.full() {
            self.cut += 1;
            self.effects.clear();
            self.quiet_flushed = false;
            self.quiet_effects = false;
            return None;
        }
        let parent = self.open.iter().rev().find_map(|o| o.step);
        self.steps.push(Step {
            kind,
            rule,
            span,
            depth: self.open.len(),
            parent,
            effects: std::mem::take(&mut self.effects),
            state: State::default(),
        });
        self.flushed = false;
        Some(self.steps.len() - 1)
    }

    /// Before the first name a statement with steps inside binds itself:
    /// its `Done` step, the bodies' names gone (E' = E, z ↦ v).
    fn closing(&mut self) {
        let Some(o) = self.open.last_mut() else {
            return;
        };
        if !o.nested || o.closing {
            return;
        }
        o.closing = true;
        let (rule, span, env, iterating) = (o.rule, o.span, o.env.clone(), o.iterating);
        if iterating {
            self.cur.iterations.pop_back();
            if let Some(o) = self.open.last_mut() {
                o.iterating = false;
            }
        }
        if self.scoped(rule) {
            self.cur.env = env;
        }
        let opened = self.open.last().and_then(|o| o.step);
        if let Some(k) = self.push(StepKind::Done, rule, span) {
            // At the depth of the statement's own step, under its parent.
            let parent = opened.and_then(|o| self.steps[o].parent);
            let depth = self.open.len().saturating_sub(1);
            let st = &mut self.steps[k];
            st.depth = depth;
            st.parent = parent;
        }
    }

    fn binding(&mut self, value: String, place: Option<Place>) -> Binding {
        self.seq += 1;
        Binding {
            seq: self.seq,
            value,
            place,
        }
    }

    fn recording(&self) -> bool {
        self.cut == 0
    }

    /// Whether the bodies of a statement by `rule` bind names that are gone
    /// after it (and at each iteration). In FUN and FUNMEM every body is a
    /// scope; in IMP (fig. 12) only a kernel's iterations start from E and
    /// leave it as it was: assignments in a branch or a sequential loop
    /// persist.
    fn scoped(&self, rule: &str) -> bool {
        !self.imp || rule == "E-IMP-KERNEL"
    }

    /// An iteration of the innermost open statement begins.
    fn iteration(&mut self, span: Span, index: i64, parallel: bool) {
        let Some(o) = self.open.last_mut() else {
            return;
        };
        if o.span != span {
            return;
        }
        // E, x ↦ k ⊢ b: each iteration starts from the statement's E.
        let env = o.env.clone();
        let was = std::mem::replace(&mut o.iterating, true);
        let rule = o.rule;
        if self.recording() {
            if self.scoped(rule) {
                self.cur.env = env;
            }
            if was {
                self.cur.iterations.pop_back();
            }
            self.cur.iterations.push_back((span, index));
        }
        self.push(StepKind::Iteration { index, parallel }, rule, span);
    }

    /// Ends the recording with the run's outcome.
    pub fn finish(mut self, outcome: &Result<Vec<Value>, EvalError>) -> Trace {
        if self.steps.is_empty() {
            self.flush();
        }
        let (kind, rule, span) = match outcome {
            Ok(vs) => (
                StepKind::Finish {
                    results: vs.iter().map(|v| shown(v)).collect(),
                },
                self.start_rule,
                self.program,
            ),
            Err(e) => (
                StepKind::Stuck {
                    message: e.to_string(),
                    race: match &e.kind {
                        ErrorKind::Race(r) => Some(r.clone()),
                        _ => None,
                    },
                },
                e.rule,
                e.span,
            ),
        };
        // A stuck statement's effects so far are its own step's; after an
        // iteration's last statement they are the iteration's result being
        // written (a race found on that write): a step of their own.
        let stuck = matches!(kind, StepKind::Stuck { .. });
        let result_of = match (self.open.last(), self.cur.iterations.last()) {
            (Some(o), Some(&(s, i)))
                if o.iterating && s.start == o.span.start && s.end == o.span.end =>
            {
                Some((o.rule, o.span, i))
            }
            _ => None,
        };
        match result_of {
            Some((rule, span, i))
                if stuck && self.flushed && self.cut == 0 && !self.effects.is_empty() =>
            {
                if self
                    .push(StepKind::Result { index: i }, rule, span)
                    .is_some()
                {
                    self.flush();
                }
            }
            _ => {
                if !self.flushed || (stuck && self.cut == 0) {
                    self.flush();
                }
            }
        }
        // Past the budget, that result step is counted as it would have
        // been made.
        let iterating = self.open.last().is_some_and(|o| o.iterating);
        if stuck && !self.recording() && self.quiet_flushed && self.quiet_effects && iterating {
            self.cut += 1;
        }
        // The end is always kept: it replaces the last step kept when the
        // budget is spent.
        if self.steps.len() + 1 > self.budget && self.steps.len() > 1 {
            self.steps.pop();
            self.cut += 1;
        }
        let depth = if stuck { self.open.len() } else { 0 };
        let parent = if stuck {
            self.open.iter().rev().find_map(|o| o.step)
        } else {
            None
        };
        // The results' read-back comes after the last statement.
        let effects = std::mem::take(&mut self.effects);
        self.steps.push(Step {
            kind,
            rule,
            span,
            depth,
            parent,
            effects,
            state: self.cur.clone(),
        });
        Trace {
            steps: self.steps,
            cut: self.cut,
            budget: self.budget,
        }
    }

    /// An array's place in the heap; its block is drawn in its element
    /// type from now on.
    fn heap_place(&mut self, block: usize, lmad: &Lmad<i64>, elem: Prim) -> Place {
        if let Some(b) = self.block_mut(block) {
            b.elem = elem;
        }
        Place {
            block,
            lmad: lmad.clone(),
            elem,
        }
    }

    fn block_mut(&mut self, block: usize) -> Option<&mut Block> {
        self.cur.blocks.get_mut(block)
    }
}

impl Observer for Recorder {
    const DETAILED: bool = true;

    fn rule(&mut self, rule: &'static str, span: Span) {
        let step = self.push(StepKind::Rule, rule, span);
        self.open.push(Open {
            rule,
            span,
            step,
            env: self.cur.env.clone(),
            nested: false,
            iterating: false,
            closing: false,
        });
    }

    fn bind(&mut self, name: &Name, value: &dyn fmt::Display) {
        if !self.recording() {
            return;
        }
        self.closing();
        let value = shown(value);
        let b = self.binding(value.clone(), None);
        self.cur.env.insert(name.clone(), b);
        self.effects.push(Effect::Bind {
            name: name.clone(),
            value,
        });
    }

    fn place(&mut self, name: &Name, block: usize, lmad: &Lmad<i64>, elem: Prim) {
        if !self.recording() || !self.heap {
            return;
        }
        let place = self.heap_place(block, lmad, elem);
        if let Some(b) = self.cur.env.get_mut(name) {
            b.place = Some(place);
        }
    }

    fn destination(&mut self, name: &Name, block: usize, lmad: &Lmad<i64>, elem: Prim) {
        if !self.recording() || !self.heap {
            return;
        }
        // The kernel's result is in the environment, marked as being
        // written, from the kernel's start: its iterations write its cells.
        let place = self.heap_place(block, lmad, elem);
        let b = self.binding(
            format!("(block {block}, {}), being written", place.lmad_text()),
            Some(place),
        );
        self.cur.env.insert(name.clone(), b.clone());
        if let Some(o) = self.open.last_mut() {
            o.env.insert(name.clone(), b);
        }
    }

    fn enter(&mut self, name: &Name, value: &dyn fmt::Display) {
        if !self.recording() {
            return;
        }
        let value = shown(value);
        let b = self.binding(value.clone(), None);
        self.cur.env.insert(name.clone(), b);
        self.effects.push(Effect::Bind {
            name: name.clone(),
            value,
        });
    }

    fn done(&mut self, _span: Span) {
        if !self.recording() {
            // Its `Done` step, had it been kept.
            if self.open.pop().is_some_and(|o| o.nested && !o.closing) {
                self.cut += 1;
            }
            self.quiet_flushed = true;
            self.quiet_effects = false;
            return;
        }
        self.closing();
        let Some(o) = self.open.pop() else {
            return;
        };
        if o.iterating {
            self.cur.iterations.pop_back();
        }
        // Its names joined E as they were bound (`bind`, after `closing`
        // dropped its bodies' names).
        self.flush();
    }

    fn alloc(&mut self, block: usize, _cells: u64, bytes: u64) {
        if !self.recording() || !self.heap {
            return;
        }
        // Blocks are numbered in allocation order.
        while self.cur.blocks.len() <= block {
            self.cur.blocks.push_back(Block {
                bytes: Vector::new(),
                elem: Prim::I64,
            });
        }
        let n = usize::try_from(bytes).unwrap_or(usize::MAX);
        let b = &mut self.cur.blocks[block];
        b.bytes = std::iter::repeat_n(0u8, n).collect();
        self.effects.push(Effect::Alloc { block, bytes });
    }

    fn read(&mut self, block: usize, offset: i64, elem: Prim) {
        if !self.heap {
            return;
        }
        if !self.recording() {
            self.quiet_effects = true;
            return;
        }
        self.effects.push(Effect::Read {
            block,
            offset,
            elem,
        });
    }

    fn write(&mut self, block: usize, offset: i64, elem: Prim, word: u64) {
        if !self.heap {
            return;
        }
        if !self.recording() {
            self.quiet_effects = true;
            return;
        }
        let w = elem.size() as usize;
        if let Some(b) = self.block_mut(block) {
            if let Some(at) = usize::try_from(offset).ok().and_then(|o| o.checked_mul(w)) {
                for j in 0..w {
                    if let Some(byte) = b.bytes.get_mut(at + j) {
                        *byte = (word >> (8 * j)) as u8;
                    }
                }
            }
        }
        self.effects.push(Effect::Write {
            block,
            offset,
            elem,
            value: Const::from_bits(elem, word),
        });
    }

    fn iteration_start(&mut self, kernel: Span, i: i64) {
        self.iteration(kernel, i, true);
    }

    fn iteration_end(&mut self, kernel: Span, i: i64) {
        // The iteration's result written into the kernel's destination
        // (E-MEM-KERNEL's memcopy): a step of its own.
        if !self.recording() {
            if self.quiet_flushed && self.quiet_effects {
                self.cut += 1;
                self.quiet_flushed = false;
                self.quiet_effects = false;
            }
            return;
        }
        if self.flushed && !self.effects.is_empty() {
            let rule = self.open.last().map_or("E-MEM-KERNEL", |o| o.rule);
            // Past the budget the step is counted, and the last step kept
            // keeps the state it had.
            if self
                .push(StepKind::Result { index: i }, rule, kernel)
                .is_some()
            {
                self.flush();
            }
        }
    }

    fn loop_iteration(&mut self, span: Span, i: i64) {
        self.iteration(span, i, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut() {
        let long: Vec<String> = (0..1000).map(|k| k.to_string()).collect();
        let s = shown(&long.join(", "));
        assert_eq!(s.chars().count(), VALUE_CHARS + 1);
        assert!(s.ends_with('…'));
        assert_eq!(shown(&"[1i64, 2i64]"), "[1i64, 2i64]");
    }

    #[test]
    fn a_block_reads_back_its_typed_elements() {
        let mut b = Block {
            bytes: std::iter::repeat_n(0u8, 8).collect(),
            elem: Prim::I32,
        };
        b.bytes[0] = 0xff;
        b.bytes[1] = 0xff;
        b.bytes[2] = 0xff;
        b.bytes[3] = 0xff;
        b.bytes[4] = 7;
        assert_eq!(b.element(0, Prim::I32), Some(Const::I32(-1)));
        assert_eq!(b.element(1, Prim::I32), Some(Const::I32(7)));
        assert_eq!(b.element(2, Prim::I32), None);
        assert_eq!(b.len(Prim::I32), 2);
    }

    #[test]
    fn an_lmad_explains_its_addresses() {
        let p = Place {
            block: 0,
            lmad: Lmad {
                offset: 2,
                dims: vec![
                    funmem_lang::lmad::Dim {
                        elems: 3,
                        stride: 4,
                    },
                    funmem_lang::lmad::Dim {
                        elems: 4,
                        stride: 1,
                    },
                ],
            },
            elem: Prim::I64,
        };
        assert_eq!(p.explain(&[1, 3]), "2 + 1·4 + 3·1 = 9");
        assert_eq!(p.lmad_text(), "2 + {(3 : 4) (4 : 1)}");
        assert_eq!(p.addresses(3), vec![2, 3, 4]);
        assert_eq!(p.elements(100).len(), 12);
    }

    #[test]
    fn a_cut_run_counts_the_steps_it_did_not_keep() {
        use crate::session::prepare;
        use funmem_lang::Source;
        use funmem_semantics::error::Limits;
        for (name, text, inputs) in [
            (
                "k.funmem",
                "def main (n: int) (m: int) =\n  let (xss_mem: mem) = alloc n * m\n  let (xss: [n][m]int @ xss_mem -> R(n, m)) = kernel i < n do\n    let (row_mem: mem) = alloc m\n    let (row: [m]int @ row_mem -> R(m)) = iota m\n    let (ys_mem: mem) = alloc m\n    let (ys: [m]int @ ys_mem -> R(m)) = kernel j < m do\n      let (x: int) = row[j]\n      let (y: int) = x + i\n      in (y)\n    in (ys)\n  in (xss)\n",
                vec![4, 5],
            ),
            (
                "l.fun",
                "def main (n: int) =\n  let (s: int) = loop (a: int) = (0) for k < n do\n    let (b: int) = a + k\n    in (b)\n  in (s)\n",
                vec![30],
            ),
        ] {
            let src = Source::new(name, text.to_string());
            let p = funmem_lang::front::load(&src).expect("a program");
            let s = prepare(&src, &p, None, None).expect("ready");
            let inputs: Vec<Value> = inputs.iter().map(|&k| Value::Scalar(Const::I64(k))).collect();
            let all = s.record(&inputs, Limits::default(), 1_000_000).trace;
            assert_eq!(all.cut, 0);
            for budget in [2, 3, 10, 17, 50] {
                let t = s.record(&inputs, Limits::default(), budget).trace;
                assert_eq!(
                    t.steps.len() as u64 + t.cut,
                    all.steps.len() as u64,
                    "{name}, budget {budget}"
                );
            }
        }
    }
}
