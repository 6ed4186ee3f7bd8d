//! Which steps of two runs correspond: the alignment behind side-by-side
//! views of a program before and after a pass.
//!
//! A pass changes how a program computes (more or fewer statements, other
//! blocks) but mostly keeps the names it binds. Steps correspond when they
//! bind the same name for the same (k-th) time. These *anchors* are taken
//! in an order both runs agree on (the longest chain increasing in both,
//! as in a longest common subsequence); between two anchors both runs
//! advance together, proportionally, so that every step of each run is
//! shown exactly in order and neither waits long for the other.

use crate::record::{Effect, StepKind, Trace};
use std::collections::HashMap;

/// Pairs of step indices `(a, b)` of `left` and `right` that correspond:
/// from `(0, 0)` to both last steps, each component non-decreasing, one of
/// them growing by one at a time or both together, so that every step of
/// each trace appears. Empty when either trace has no steps.
pub fn align(left: &Trace, right: &Trace) -> Vec<(usize, usize)> {
    let (n, m) = (left.steps.len(), right.steps.len());
    if n == 0 || m == 0 {
        return Vec::new();
    }
    let anchors = anchors(left, right);
    let mut out = vec![(0, 0)];
    let mut at = (0usize, 0usize);
    for &(a, b) in anchors.iter().chain(std::iter::once(&(n - 1, m - 1))) {
        if a < at.0 || b < at.1 || (a, b) == at {
            continue;
        }
        walk(at, (a, b), &mut out);
        at = (a, b);
    }
    out
}

/// Appends the pairs from `from` (exclusive) to `to` (inclusive),
/// advancing both proportionally.
fn walk(from: (usize, usize), to: (usize, usize), out: &mut Vec<(usize, usize)>) {
    let (da, db) = (to.0 - from.0, to.1 - from.1);
    let len = da.max(db);
    for t in 1..=len {
        // Rounded to the nearest: t * da / len.
        let a = from.0 + (2 * t * da + len) / (2 * len);
        let b = from.1 + (2 * t * db + len) / (2 * len);
        out.push((a, b));
    }
}

/// Each bind of a trace: (name, how many times bound before) → step. A
/// statement with a body binds its names at its end; its first step (its
/// rule) is keyed by them too (`open` keys), so that the statement's start
/// corresponds as well as its end.
fn binds(t: &Trace) -> Vec<((String, usize), usize)> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    // The latest Rule step at each (span, depth): the opener of a Done.
    let mut openers: HashMap<(usize, usize, usize), usize> = HashMap::new();
    for (k, s) in t.steps.iter().enumerate() {
        let at = (s.span.start, s.span.end, s.depth);
        match s.kind {
            StepKind::Rule => {
                openers.insert(at, k);
            }
            StepKind::Done => {
                if let Some(&o) = openers.get(&at) {
                    for e in &s.effects {
                        if let Effect::Bind { name, .. } = e {
                            let key = format!("open {}", name.as_str());
                            let c = seen.entry(key.clone()).or_insert(0);
                            out.push(((key, *c), o));
                            *c += 1;
                        }
                    }
                }
            }
            _ => {}
        }
        for e in &s.effects {
            if let Effect::Bind { name, .. } = e {
                let c = seen.entry(name.as_str().to_string()).or_insert(0);
                out.push(((name.as_str().to_string(), *c), k));
                *c += 1;
            }
        }
    }
    out
}

/// The anchors: step pairs binding the same name the same time, the
/// longest chain non-decreasing in both runs.
fn anchors(left: &Trace, right: &Trace) -> Vec<(usize, usize)> {
    let rb: HashMap<(String, usize), usize> = binds(right).into_iter().collect();
    // Each key is bound once per run; in the left run's order.
    let mut matches: Vec<(usize, usize)> = binds(left)
        .into_iter()
        .filter_map(|(key, a)| rb.get(&key).map(|&b| (a, b)))
        .collect();
    matches.sort_unstable();
    // Longest chain non-decreasing in b (a already is): patience sorting.
    let mut tails: Vec<usize> = Vec::new(); // index into matches
    let mut prev: Vec<Option<usize>> = vec![None; matches.len()];
    for (i, &(_, b)) in matches.iter().enumerate() {
        let at = tails.partition_point(|&t| matches[t].1 <= b);
        prev[i] = at.checked_sub(1).map(|p| tails[p]);
        if at == tails.len() {
            tails.push(i);
        } else {
            tails[at] = i;
        }
    }
    let mut chain = Vec::new();
    let mut cur = tails.last().copied();
    while let Some(i) = cur {
        chain.push(matches[i]);
        cur = prev[i];
    }
    chain.reverse();
    chain.dedup();
    chain
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{State, Step};
    use funmem_lang::{Name, Span};

    fn trace(binds: &[&[&str]]) -> Trace {
        Trace {
            steps: binds
                .iter()
                .map(|names| Step {
                    kind: StepKind::Rule,
                    rule: "E-SCALAR",
                    span: Span::new(0, 0),
                    depth: 0,
                    parent: None,
                    effects: names
                        .iter()
                        .map(|n| Effect::Bind {
                            name: Name::from(*n),
                            value: "0".into(),
                        })
                        .collect(),
                    state: State::default(),
                })
                .collect(),
            cut: 0,
            budget: 100,
        }
    }

    /// Every step of both appears, in order, from the start to both ends.
    fn well_formed(p: &[(usize, usize)], n: usize, m: usize) {
        assert_eq!(p.first(), Some(&(0, 0)));
        assert_eq!(p.last(), Some(&(n - 1, m - 1)));
        for w in p.windows(2) {
            let (da, db) = (w[1].0 - w[0].0, w[1].1 - w[0].1);
            assert!(da <= 1 && db <= 1 && da + db >= 1, "{p:?}");
        }
    }

    #[test]
    fn equal_runs_align_step_for_step() {
        let t = trace(&[&["n"], &["x"], &["y"], &["z"]]);
        let p = align(&t, &t);
        assert_eq!(p, vec![(0, 0), (1, 1), (2, 2), (3, 3)]);
    }

    #[test]
    fn extra_steps_on_one_side_pause_the_other_at_the_anchor() {
        // The right run allocates twice more before binding x.
        let l = trace(&[&["n"], &["x"], &["y"]]);
        let r = trace(&[&["n"], &["m1"], &["m2"], &["x"], &["y"]]);
        let p = align(&l, &r);
        well_formed(&p, 3, 5);
        assert!(p.contains(&(1, 3)), "x binds at 1 and 3: {p:?}");
        assert!(p.contains(&(2, 4)), "{p:?}");
    }

    #[test]
    fn the_kth_binding_of_a_name_matches_the_kth() {
        // A loop binding i three times; the right run does more per round.
        let l = trace(&[&["i"], &["a"], &["i"], &["a"], &["i"], &["a"]]);
        let r = trace(&[
            &["i"],
            &["t"],
            &["a"],
            &["i"],
            &["t"],
            &["a"],
            &["i"],
            &["t"],
            &["a"],
        ]);
        let p = align(&l, &r);
        well_formed(&p, 6, 9);
        for pair in [(0, 0), (1, 2), (2, 3), (3, 5), (4, 6), (5, 8)] {
            assert!(p.contains(&pair), "{pair:?} in {p:?}");
        }
    }

    #[test]
    fn a_statement_s_start_corresponds_by_the_names_it_binds_at_its_end() {
        let mut l = trace(&[&["n"], &[], &["i"], &["ys"], &["n2"]]);
        let mut r = trace(&[&["n"], &["m1"], &["m2"], &[], &["i"], &["ys"], &["n2"]]);
        // Steps 1 / 3 open the kernel whose end (3 / 5) binds ys.
        for (t, open, done) in [(&mut l, 1, 3), (&mut r, 3, 5)] {
            t.steps[open].span = Span::new(10, 20);
            t.steps[done].span = Span::new(10, 20);
            t.steps[done].kind = StepKind::Done;
            t.steps[open].depth = 0;
            t.steps[done].depth = 0;
        }
        let p = align(&l, &r);
        well_formed(&p, 5, 7);
        assert!(p.contains(&(1, 3)), "{p:?}");
        // Before it, the extra allocations wait at the left's step 0 or 1.
        assert!(p.iter().all(|&(a, b)| b > 3 || a <= 1), "{p:?}");
    }

    #[test]
    fn crossing_matches_keep_an_order_both_agree_on() {
        let l = trace(&[&["s"], &["a"], &["b"], &["c"]]);
        let r = trace(&[&["s"], &["b"], &["a"], &["c"]]);
        let p = align(&l, &r);
        well_formed(&p, 4, 4);
        assert!(p.contains(&(3, 3)));
    }

    #[test]
    fn no_common_names_still_walks_both_to_the_end() {
        let l = trace(&[&["a"], &["b"]]);
        let r = trace(&[&["x"], &["y"], &["z"], &["w"], &["v"]]);
        let p = align(&l, &r);
        well_formed(&p, 2, 5);
        assert!(align(&trace(&[]), &r).is_empty());
    }
}
