//! Moving through a recorded trace: the stepper's commands.
//!
//! Every command is a pure function from a position (a step index) to a
//! position, so that the terminal UI, the web page (which mirrors these
//! rules in its script) and the tests agree. Going back is moving the
//! index down: each step keeps its whole state (persistent maps, see
//! [`crate::record`]), so nothing is recomputed.
//!
//! - *into*: the next step, whatever it is;
//! - *over*: the next step that is not inside the current one: from a
//!   statement with a body, its `Done` step; from an iteration, the next
//!   iteration (or the iteration's result, or the statement's end);
//! - *out*: the end of the statement the current step is inside;
//! - *back*: the previous step (and *back over*: the previous step at the
//!   same depth or shallower);
//! - *run to*: the next kernel iteration, allocation, write, breakpoint
//!   line, or the end of the run (the race or error that stopped it, or the
//!   results).

use crate::record::{Effect, Step, StepKind, Trace};
use funmem_lang::Source;
use std::collections::BTreeSet;

/// The stepper's commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// The next step.
    Into,
    /// The next step not inside the current one.
    Over,
    /// The end of the enclosing statement.
    Out,
    /// The previous step.
    Back,
    /// The previous step at this depth or shallower.
    BackOver,
    /// The next kernel iteration (parallel).
    Iteration,
    /// The next step that allocates a block.
    Alloc,
    /// The next step that writes to the heap.
    Write,
    /// The next statement on a breakpoint line.
    Breakpoint,
    /// The last step: results, error or race.
    End,
    /// The first step.
    Start,
}

/// The state of a stepper: where it is, and its breakpoints.
#[derive(Clone, Debug, Default)]
pub struct Cursor {
    /// The current step.
    pub at: usize,
    /// Breakpoint lines (1-based).
    pub breakpoints: BTreeSet<usize>,
}

impl Cursor {
    /// Applies a move; gives whether the position changed.
    pub fn go(&mut self, trace: &Trace, src: &Source, m: Move) -> bool {
        let to = target(trace, src, self.at, m, &self.breakpoints);
        let moved = to != self.at;
        self.at = to;
        moved
    }

    /// Sets or clears a breakpoint on a line.
    pub fn toggle_breakpoint(&mut self, line: usize) {
        if !self.breakpoints.remove(&line) {
            self.breakpoints.insert(line);
        }
    }
}

fn last(trace: &Trace) -> usize {
    trace.steps.len().saturating_sub(1)
}

/// The first step after `from` satisfying `p`, or the last step.
fn find(trace: &Trace, from: usize, p: impl Fn(&Step) -> bool) -> usize {
    trace
        .steps
        .iter()
        .enumerate()
        .skip(from + 1)
        .find(|(_, s)| p(s))
        .map_or(last(trace), |(k, _)| k)
}

/// The position a move from `at` leads to (it stays in the trace; a move
/// that finds nothing goes to the end, or stays at the start going back).
pub fn target(
    trace: &Trace,
    src: &Source,
    at: usize,
    m: Move,
    breakpoints: &BTreeSet<usize>,
) -> usize {
    let n = trace.steps.len();
    if n == 0 {
        return 0;
    }
    let at = at.min(n - 1);
    let here = &trace.steps[at];
    let d = here.depth;
    match m {
        Move::Into => (at + 1).min(n - 1),
        Move::Back => at.saturating_sub(1),
        Move::Start => 0,
        Move::End => n - 1,
        Move::BackOver => (0..at)
            .rev()
            .find(|&k| trace.steps[k].depth <= d)
            .unwrap_or(0),
        Move::Over => match here.kind {
            StepKind::Iteration { .. } | StepKind::Result { .. } => find(trace, at, |s| {
                s.depth < d
                    || (s.depth == d
                        && matches!(s.kind, StepKind::Iteration { .. } | StepKind::Result { .. }))
            }),
            _ => find(trace, at, |s| s.depth <= d),
        },
        Move::Out => find(trace, at, |s| s.depth < d),
        Move::Iteration => find(trace, at, |s| {
            matches!(s.kind, StepKind::Iteration { parallel: true, .. })
        }),
        Move::Alloc => find(trace, at, |s| {
            s.effects.iter().any(|e| matches!(e, Effect::Alloc { .. }))
        }),
        Move::Write => find(trace, at, |s| {
            s.effects.iter().any(|e| matches!(e, Effect::Write { .. }))
        }),
        Move::Breakpoint => find(trace, at, |s| {
            matches!(s.kind, StepKind::Rule) && breakpoints.contains(&src.line_col(s.span.start).0)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Recorder;
    use funmem_lang::parse::AnyProgram;
    use funmem_lang::Span;
    use funmem_oracle::{Case, GenConfig, Rng};
    use funmem_semantics::error::Limits;
    use funmem_semantics::run::{run, RunOptions, Semantics};
    use proptest::prelude::*;
    use rand::SeedableRng;

    fn record(p: &AnyProgram, sem: Semantics, inputs: &[funmem_semantics::value::Value]) -> Trace {
        let mut rec = Recorder::new(5000, sem == Semantics::Heap, "E-PROG", Span::new(0, 0));
        let opts = RunOptions {
            limits: Limits {
                fuel: 100_000,
                max_heap: 1 << 20,
            },
            race_check: true,
        };
        let out = run(p, sem, inputs, opts, &mut rec).expect("a semantics of the layer");
        rec.finish(&out)
    }

    fn source(p: &AnyProgram) -> Source {
        Source::new("t.fun", p.print())
    }

    /// A random program of either layer, with its inputs and semantics.
    fn random(
        seed: u64,
        mem: bool,
    ) -> (AnyProgram, Vec<funmem_semantics::value::Value>, Semantics) {
        let mut rng = Rng::seed_from_u64(seed);
        let cfg = GenConfig {
            max_stms: 6,
            max_depth: 2,
            max_size: 3,
            ..GenConfig::default()
        };
        let Case { program, inputs } = if mem {
            funmem_oracle::gen_mem::gen_funmem(&mut rng, &cfg)
        } else {
            funmem_oracle::gen::gen_fun(&mut rng, &cfg)
        };
        let sem = if mem {
            Semantics::Heap
        } else {
            Semantics::Value
        };
        (AnyProgram::Fun(program), inputs, sem)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// k steps forward then k back returns to the same step and the
        /// very same state; and every recorded state is what replaying the
        /// effects from the start gives (the snapshots are not stale).
        #[test]
        fn forward_then_back_is_the_start(seed in any::<u64>(), mem in any::<bool>(),
                                          start in 0usize..200, k in 0usize..60) {
            let (p, inputs, sem) = random(seed, mem);
            let trace = record(&p, sem, &inputs);
            let src = source(&p);
            let n = trace.steps.len();
            prop_assert!(n >= 2);
            let mut c = Cursor { at: start % n, ..Cursor::default() };
            let first = c.at;
            let before = trace.steps[first].state.clone();
            let mut moved = 0;
            for _ in 0..k {
                if c.go(&trace, &src, Move::Into) {
                    moved += 1;
                }
            }
            for _ in 0..moved {
                c.go(&trace, &src, Move::Back);
            }
            prop_assert_eq!(c.at, first);
            prop_assert_eq!(&trace.steps[c.at].state, &before);
            // Replaying the heap writes reproduces every recorded heap.
            let mut heap: Vec<Vec<u8>> = Vec::new();
            for s in &trace.steps {
                for e in &s.effects {
                    match e {
                        Effect::Alloc { block, bytes } => {
                            if heap.len() <= *block {
                                heap.resize(*block + 1, Vec::new());
                            }
                            heap[*block] = vec![0; *bytes as usize];
                        }
                        Effect::Write { block, offset, elem, value } => {
                            let w = elem.size() as usize;
                            let at = *offset as usize * w;
                            let bits = value.to_bits();
                            for j in 0..w {
                                heap[*block][at + j] = (bits >> (8 * j)) as u8;
                            }
                        }
                        _ => {}
                    }
                }
                let got: Vec<Vec<u8>> = s.state.blocks.iter()
                    .map(|b| b.bytes.iter().copied().collect()).collect();
                prop_assert_eq!(&got, &heap);
            }
        }

        /// Over never lands inside the current statement, and Out leaves it.
        #[test]
        fn over_and_out_leave_the_statement(seed in any::<u64>(), mem in any::<bool>()) {
            let (p, inputs, sem) = random(seed, mem);
            let trace = record(&p, sem, &inputs);
            let src = source(&p);
            let none = BTreeSet::new();
            for at in 0..trace.steps.len() {
                let d = trace.steps[at].depth;
                let o = target(&trace, &src, at, Move::Over, &none);
                prop_assert!(o > at || at + 1 == trace.steps.len());
                if o + 1 < trace.steps.len() && matches!(trace.steps[at].kind, StepKind::Rule) {
                    prop_assert!(trace.steps[o].depth <= d);
                    prop_assert!((at + 1..o).all(|j| trace.steps[j].depth > d));
                }
                let out = target(&trace, &src, at, Move::Out, &none);
                if out + 1 < trace.steps.len() {
                    prop_assert!(trace.steps[out].depth < d);
                }
            }
        }
    }

    #[test]
    fn moves_through_a_kernel() {
        let text = "def main (n: int) =
  let (xs: [n]int) = kernel i < n do
      let (v: int) = i * 2
      in (v)
  let (s: int) = reduce (+) 0 xs
  in (s)
";
        let src = Source::new("k.fun", text);
        let p = funmem_lang::front::load(&src).unwrap();
        let inputs = [funmem_semantics::value::Value::int(3)];
        let trace = record(&p, Semantics::Value, &inputs);
        let kinds: Vec<String> = trace
            .steps
            .iter()
            .map(|s| format!("{}{}", s.rule, s.depth))
            .collect();
        assert_eq!(
            kinds,
            [
                "E-PROG0",
                "E-KERNEL0",
                "E-KERNEL1",
                "E-SCALAR1",
                "E-KERNEL1",
                "E-SCALAR1",
                "E-KERNEL1",
                "E-SCALAR1",
                "E-KERNEL0",
                "E-REDUCE0",
                "E-PROG0"
            ]
        );
        let mut c = Cursor::default();
        let bp = BTreeSet::new();
        assert_eq!(
            target(&trace, &src, 1, Move::Over, &bp),
            8,
            "over the kernel"
        );
        assert_eq!(
            target(&trace, &src, 2, Move::Over, &bp),
            4,
            "over an iteration"
        );
        assert_eq!(
            target(&trace, &src, 3, Move::Out, &bp),
            8,
            "out of the body"
        );
        assert_eq!(target(&trace, &src, 3, Move::Iteration, &bp), 4);
        assert_eq!(target(&trace, &src, 8, Move::BackOver, &bp), 1);
        c.toggle_breakpoint(5);
        assert!(c.go(&trace, &src, Move::Breakpoint));
        assert_eq!(c.at, 9, "the reduce on line 5");
        assert!(c.go(&trace, &src, Move::End));
        assert!(matches!(trace.steps[c.at].kind, StepKind::Finish { .. }));
        assert!(!c.go(&trace, &src, Move::Into), "the end stays");
    }
}
