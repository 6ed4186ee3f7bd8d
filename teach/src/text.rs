//! Steps as text: one line per step (what `funmem step` prints when its
//! output is not a terminal), and one JSON object per line (`--json`).
//!
//! A line reads
//!
//! ```text
//!    4  E-MEM-INDEX      5:3     let (y: int) = xs[i]  | read b0[1]:i64; y = 2i64
//! ```
//!
//! the step's number, its rule by the paper's name, the statement's line
//! and column, the statement indented by its nesting, and what happened:
//! names bound, blocks allocated, elements read and written. An iteration
//! reads `iteration 2` (a kernel's) or `loop iteration 2` (a loop's,
//! reduction's or scan's) with its index bound, a kernel iteration's
//! result written into the kernel's array `result of iteration 2`, and a
//! statement with a body ends with a line `end of ...`. The last line
//! gives the results or the error; a race names both accesses.

use crate::record::{Effect, Step, StepKind, Trace};
use funmem_lang::{Source, Span};
use serde_json::{json, Value as Json};

/// Most effects a text line lists before saying how many more there were.
pub const EFFECTS_PER_LINE: usize = 8;

/// The first line of the statement at `span`, trimmed, at most `width`
/// characters (an ellipsis marks a cut).
pub fn snippet(src: &Source, span: Span, width: usize) -> String {
    let text = src.text.get(span.start..span.end.min(src.text.len()));
    let line = text
        .and_then(|t| t.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("");
    let chars: Vec<char> = line.chars().collect();
    if chars.len() > width {
        let mut s: String = chars[..width.saturating_sub(1)].iter().collect();
        s.push('…');
        s
    } else {
        line.to_string()
    }
}

/// What a step is about, in words: the statement, `iteration i = 2 of
/// ...`, `end of ...`, the results or the error.
pub fn describe(src: &Source, step: &Step, width: usize) -> String {
    let text = snippet(src, step.span, width);
    match &step.kind {
        StepKind::Start => "program inputs".to_string(),
        StepKind::Rule => text,
        StepKind::Iteration { index, parallel } => {
            let what = if *parallel {
                "iteration"
            } else {
                "loop iteration"
            };
            format!("{what} {index}")
        }
        StepKind::Result { index } => format!("result of iteration {index}"),
        StepKind::Done => format!("end of {text}"),
        StepKind::Finish { results } => format!("results: {}", results.join(", ")),
        StepKind::Stuck { message, .. } => format!("error: {message}"),
    }
}

/// The effects of a step, `; `-separated, at most `limit` of them.
pub fn effects_text(effects: &[Effect], limit: usize) -> String {
    let mut parts: Vec<String> = effects.iter().take(limit).map(|e| e.to_string()).collect();
    if effects.len() > limit {
        parts.push(format!("… ({} more)", effects.len() - limit));
    }
    parts.join("; ")
}

/// For a race, both accesses in words.
pub fn race_text(step: &Step, src: &Source) -> Option<String> {
    let StepKind::Stuck { race: Some(r), .. } = &step.kind else {
        return None;
    };
    let (line, col) = src.line_col(r.kernel.start);
    let acc = |a: &funmem_semantics::error::Access| {
        let path: Vec<String> = a.path.iter().map(|i| i.to_string()).collect();
        format!(
            "iteration {} {}",
            path.join("/"),
            if a.write { "wrote" } else { "read" }
        )
    };
    // A scan that writes where it reads races with itself, not in a kernel.
    let what = if step.rule.contains("KERNEL") {
        "the kernel"
    } else {
        "the statement"
    };
    Some(format!(
        "race in {what} at {line}:{col} on block {} byte {}: {}, then {}",
        r.block,
        r.offset,
        acc(&r.first),
        acc(&r.second)
    ))
}

/// One step as one line.
pub fn line(src: &Source, k: usize, step: &Step) -> String {
    let (l, c) = src.line_col(step.span.start);
    let at = match step.kind {
        StepKind::Start | StepKind::Finish { .. } => String::new(),
        _ => format!("{l}:{c}"),
    };
    let indent = "  ".repeat(step.depth);
    let mut s = format!(
        "{k:>4}  {:<17}{at:<8}{indent}{}",
        step.rule,
        describe(src, step, 48)
    );
    let eff = effects_text(&step.effects, EFFECTS_PER_LINE);
    if !eff.is_empty() {
        s.push_str("  | ");
        s.push_str(&eff);
    }
    if let Some(r) = race_text(step, src) {
        s.push_str("  | ");
        s.push_str(&r);
    }
    s
}

/// The whole trace as lines, with a closing note when steps were cut.
pub fn lines(src: &Source, trace: &Trace) -> Vec<String> {
    let mut out = Vec::with_capacity(trace.steps.len() + 1);
    let n = trace.steps.len();
    for (k, s) in trace.steps.iter().enumerate() {
        if trace.cut > 0 && k + 1 == n {
            out.push(format!(
                "   …  {} steps not shown (the step budget is {}; raise it with --max-steps)",
                trace.cut, trace.budget
            ));
        }
        out.push(line(src, k, s));
    }
    out
}

fn effect_json(e: &Effect) -> Json {
    match e {
        Effect::Bind { name, value } => json!({"bind": name.as_str(), "value": value}),
        Effect::Alloc { block, bytes } => json!({"alloc": block, "bytes": bytes}),
        Effect::Read {
            block,
            offset,
            elem,
        } => json!({"read": block, "offset": offset, "type": elem.to_string()}),
        Effect::Write {
            block,
            offset,
            elem,
            value,
        } => json!({"write": block, "offset": offset, "type": elem.to_string(),
                    "value": value.to_string()}),
    }
}

/// One step as a JSON object: `step`, `kind`, `rule`, `line`, `col`,
/// `depth`, `parent`, `text`, `effects`, and per kind `index` and
/// `parallel` (iterations), `results` (finish), `error` and `race` (stuck).
pub fn step_json(src: &Source, k: usize, step: &Step) -> Json {
    let (l, c) = src.line_col(step.span.start);
    let kind = match step.kind {
        StepKind::Start => "start",
        StepKind::Rule => "rule",
        StepKind::Iteration { .. } => "iteration",
        StepKind::Result { .. } => "result",
        StepKind::Done => "done",
        StepKind::Finish { .. } => "finish",
        StepKind::Stuck { .. } => "stuck",
    };
    let mut o = json!({
        "step": k,
        "kind": kind,
        "rule": step.rule,
        "line": l,
        "col": c,
        "depth": step.depth,
        "parent": step.parent,
        "text": snippet(src, step.span, 200),
        "effects": step.effects.iter().map(effect_json).collect::<Vec<_>>(),
    });
    match &step.kind {
        StepKind::Iteration { index, parallel } => {
            o["index"] = json!(index);
            o["parallel"] = json!(parallel);
        }
        StepKind::Result { index } => o["index"] = json!(index),
        StepKind::Finish { results } => o["results"] = json!(results),
        StepKind::Stuck { message, race } => {
            o["error"] = json!(message);
            if let Some(r) = race {
                let (kl, kc) = src.line_col(r.kernel.start);
                let acc = |a: &funmem_semantics::error::Access| json!({"iterations": a.path, "write": a.write});
                o["race"] = json!({
                    "kernel": {"line": kl, "col": kc},
                    "block": r.block,
                    "byte": r.offset,
                    "first": acc(&r.first),
                    "second": acc(&r.second),
                });
            }
        }
        _ => {}
    }
    o
}

/// The whole trace as JSON lines; a last object `{"cut": n, "budget": b}`
/// when steps were cut.
pub fn json_lines(src: &Source, trace: &Trace) -> Vec<String> {
    let mut out: Vec<String> = trace
        .steps
        .iter()
        .enumerate()
        .map(|(k, s)| step_json(src, k, s).to_string())
        .collect();
    if trace.cut > 0 {
        out.push(json!({"cut": trace.cut, "budget": trace.budget}).to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::prepare;
    use funmem_semantics::error::Limits;

    /// The text lines of `text` (a program file named `name`) run on
    /// `input`.
    fn lines_of(name: &str, text: &str, input: &str) -> Vec<String> {
        let src = Source::new(name, text);
        let p = funmem_lang::front::load(&src).expect("a program");
        let subject = prepare(&src, &p, None, None).expect("ready to step");
        let inputs =
            funmem_semantics::textual::read_values_for(input.as_bytes(), &subject.input_prims())
                .expect("inputs");
        let rec = subject.record(&inputs, Limits::default(), 1000);
        lines(&subject.source, &rec.trace)
    }

    /// The trace of `text` on `input` with `budget` steps.
    fn trace_of(name: &str, text: &str, input: &str, budget: usize) -> Trace {
        let src = Source::new(name, text);
        let p = funmem_lang::front::load(&src).expect("a program");
        let subject = prepare(&src, &p, None, None).expect("ready to step");
        let inputs =
            funmem_semantics::textual::read_values_for(input.as_bytes(), &subject.input_prims())
                .expect("inputs");
        subject.record(&inputs, Limits::default(), budget).trace
    }

    #[test]
    fn a_cut_run_keeps_its_first_states_and_counts_every_step() {
        let kernel = "def main (n: int) =
  let (m: mem) = alloc n
  let (xs: [n]int @ m -> R(n)) = kernel i < n do
    let (y: int) = i * 2
    in (y)
  in (xs)
";
        let race = "def main (n: int) =
  let (m: mem) = alloc n
  let (xs: [n]int @ m -> 0 + {(n : 0)}) = kernel i < n do
    let (y: int) = i * 2
    in (y)
  in (xs)
";
        for text in [kernel, race] {
            let full = trace_of("a.funmem", text, "3", 1000);
            assert_eq!(full.cut, 0);
            for budget in 2..full.steps.len() + 2 {
                let t = trace_of("a.funmem", text, "3", budget);
                let n = t.steps.len();
                assert_eq!(n as u64 + t.cut, full.steps.len() as u64, "budget {budget}");
                // Every step kept but the end is the full run's, state
                // included (a result step past the budget changes none).
                for k in 0..n - 1 {
                    assert_eq!(t.steps[k], full.steps[k], "budget {budget}, step {k}");
                }
            }
        }
    }

    #[test]
    fn the_longest_rule_names_keep_a_space_before_the_position() {
        let ls = lines_of(
            "a.imp",
            "def main (n: int) =\n  var x: int;\n  x <- n + 1\nout (x)\n",
            "2",
        );
        assert!(
            ls.iter()
                .any(|l| l.contains("E-IMP-ASSIGN-INT 3:3") && l.ends_with("x <- n + 1  | x = 3")),
            "{ls:#?}"
        );
    }

    #[test]
    fn a_for_loop_binds_its_index_in_its_iteration() {
        let ls = lines_of(
            "a.imp",
            "def main (n: int) =\n  var s: int;\n  for i < n do\n    s <- s + i\n  done\nout (s)\n",
            "2",
        );
        let first = ls
            .iter()
            .position(|l| l.contains("loop iteration 0"))
            .expect("an iteration");
        assert!(ls[first].ends_with("| i = 0"), "{ls:#?}");
        assert!(!ls[first - 1].contains("i = 0"), "{ls:#?}");
    }

    #[test]
    fn a_race_on_an_iterations_result_shows_the_write_then_both_accesses() {
        let ls = lines_of(
            "a.funmem",
            "def main (n: int) =
  let (n1: int) = n + 1
  let (m: mem) = alloc n1
  let (xs: [n1]int @ m -> R(n1)) = iota n1
  let (ys: [n]int @ m -> R(n)) = kernel i < n do
    let (j: int) = i + 1
    let (x: int) = xs[j]
    in (x)
  in (ys)
",
            "2",
        );
        let n = ls.len();
        assert!(ls[n - 3].ends_with("| read b0[2]:i64; x = 2i64"), "{ls:#?}");
        assert!(
            ls[n - 2].contains("result of iteration 1  | b0[1] := 2i64"),
            "{ls:#?}"
        );
        assert!(
            ls[n - 1].ends_with(
                "race in the kernel at 5:3 on block 0 byte 8: iteration 0 read, then iteration 1 wrote"
            ),
            "{ls:#?}"
        );
    }

    #[test]
    fn a_reduction_operators_iterations_bind_its_parameters() {
        let prog = "def main (n: int) (xs: [n]int) =
  let (m: int) = reduce (\\(a: int) (b: int) -> let (c: int) = max(a, b) in (c)) 0 xs
  in (m)
";
        for name in ["a.fun", "a.funmem"] {
            let text = if name.ends_with("funmem") {
                prog.replace("[n]int)", "[n]int @ q -> R(n)) (q: mem)")
            } else {
                prog.to_string()
            };
            let ls = lines_of(name, &text, "2 [5, 9]");
            let its: Vec<&String> = ls.iter().filter(|l| l.contains("loop iteration")).collect();
            assert_eq!(its.len(), 2, "{ls:#?}");
            assert!(
                its[0].ends_with("loop iteration 0  | a = 0i64; b = 5i64"),
                "{ls:#?}"
            );
            assert!(
                its[1].ends_with("loop iteration 1  | a = 5i64; b = 9i64"),
                "{ls:#?}"
            );
        }
    }

    #[test]
    fn a_scan_that_races_with_itself_is_not_called_a_kernel() {
        let ls = lines_of(
            "a.funmem",
            "def main (n: int) (xs: [n]i64 @ m -> R(n)) (m: mem) =
  let (ys: [n]i64 @ m -> R(n)) = scan (+) 0 xs
  in (ys)
",
            "3 [1, 2, 3]",
        );
        let last = ls.last().expect("lines");
        assert!(
            last.contains("race in the statement at 2:3 on block 0 byte 0"),
            "{ls:#?}"
        );
    }
}
