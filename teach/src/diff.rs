//! Two runs side by side as text: what `funmem step --diff A B` prints when
//! its output is not a terminal.
//!
//! One line per pair of corresponding steps ([`crate::align`]): the left
//! run's step line and the right run's, each cut to half the width. A side
//! that waits while the other catches up shows `·`. Where either heap
//! changed, both heaps follow, one block per line next to each other:
//! `b0 i64: 0 1 2 | xs 0 + {(3 : 1)}` (the cells, then the arrays in scope
//! that live in the block with their LMADs), so that a student sees a pass
//! move an array into another block.

use crate::record::{State, Trace};
use crate::text;
use funmem_lang::Source;

/// The width of the lines unless told (two columns of 79 and a separator).
pub const WIDTH: usize = 161;

/// Most cells of a block a text line shows.
const CELLS: usize = 32;

fn fit(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        let mut t = s.to_string();
        t.extend(std::iter::repeat_n(' ', width - n));
        t
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// One line per block of a heap: its cells, then the arrays in it.
pub fn heap_text(state: &State) -> Vec<String> {
    state
        .blocks
        .iter()
        .enumerate()
        .map(|(k, b)| {
            let t = b.elem;
            let n = b.len(t);
            let mut cells: Vec<String> = (0..n.min(CELLS))
                .map(|j| {
                    b.element(j as i64, t)
                        .map_or_else(|| "?".to_string(), crate::tui::cell_text)
                })
                .collect();
            if n > CELLS {
                cells.push(format!("…{}", n - CELLS));
            }
            let arrays: Vec<String> = state
                .arrays_in(k)
                .iter()
                .map(|(name, p)| format!("{name} {}", p.lmad_text()))
                .collect();
            let mut s = format!("b{k} {t}: {}", cells.join(" "));
            if !arrays.is_empty() {
                s.push_str(" | ");
                s.push_str(&arrays.join(", "));
            }
            s
        })
        .collect()
}

/// The two runs side by side, `width` characters wide.
pub fn lines(
    left: (&Source, &Trace),
    right: (&Source, &Trace),
    pairs: &[(usize, usize)],
    width: usize,
) -> Vec<String> {
    let half = width.saturating_sub(3) / 2;
    let row = |l: &str, r: &str| {
        format!(
            "{} │ {}",
            fit(l, half),
            r.chars().take(half).collect::<String>()
        )
        .trim_end()
        .to_string()
    };
    let mut out = vec![row(
        &format!("left: {}", left.0.name),
        &format!("right: {}", right.0.name),
    )];
    let mut prev: Option<(usize, usize)> = None;
    for &(a, b) in pairs {
        let (Some(sa), Some(sb)) = (left.1.steps.get(a), right.1.steps.get(b)) else {
            continue;
        };
        let moved = |now: usize, was: Option<usize>| was != Some(now);
        let la = if moved(a, prev.map(|p| p.0)) {
            text::line(left.0, a, sa)
        } else {
            "   ·".to_string()
        };
        let lb = if moved(b, prev.map(|p| p.1)) {
            text::line(right.0, b, sb)
        } else {
            "   ·".to_string()
        };
        out.push(row(&la, &lb));
        let changed = match prev {
            None => !sa.state.blocks.is_empty() || !sb.state.blocks.is_empty(),
            Some((pa, pb)) => {
                left.1.steps[pa].state.blocks != sa.state.blocks
                    || right.1.steps[pb].state.blocks != sb.state.blocks
            }
        };
        if changed {
            let ha = heap_text(&sa.state);
            let hb = heap_text(&sb.state);
            for j in 0..ha.len().max(hb.len()) {
                let l = ha.get(j).map_or(String::new(), |s| format!("      {s}"));
                let r = hb.get(j).map_or(String::new(), |s| format!("      {s}"));
                out.push(row(&l, &r));
            }
        }
        prev = Some((a, b));
    }
    for (side, t) in [("left", left.1), ("right", right.1)] {
        if t.cut > 0 {
            out.push(format!(
                "   …  {side}: {} steps not shown (the step budget is {}; raise it with --max-steps)",
                t.cut, t.budget
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::prepare;
    use funmem_semantics::error::Limits;
    use funmem_semantics::value::Value;

    fn run(name: &str, text: &str, n: i64) -> (Source, Trace) {
        let src = Source::new(name, text);
        let p = funmem_lang::front::load(&src).expect("a program");
        let s = prepare(&src, &p, None, None).expect("prepared");
        let t = s.record(&[Value::int(n)], Limits::default(), 1000).trace;
        (s.source, t)
    }

    #[test]
    fn both_heaps_show_where_the_arrays_live() {
        // The same values, in one block (left) or two (right).
        let (sa, ta) = run(
            "a.funmem",
            "def main (n: int) =
  let (m: mem) = alloc n + n
  let (xs: [n]int @ m -> R(n)) = iota n
  let (ys: [n]int @ m -> n + {(n : 1)}) = copy xs
  in (ys)
",
            2,
        );
        let (sb, tb) = run(
            "b.funmem",
            "def main (n: int) =
  let (m: mem) = alloc n
  let (xs: [n]int @ m -> R(n)) = iota n
  let (k: mem) = alloc n
  let (ys: [n]int @ k -> R(n)) = copy xs
  in (ys)
",
            2,
        );
        let pairs = crate::align::align(&ta, &tb);
        let out = lines((&sa, &ta), (&sb, &tb), &pairs, 121);
        let all = out.join("\n");
        assert!(out[0].starts_with("left: a.funmem") && out[0].contains("│ right: b.funmem"));
        assert!(
            all.contains("b0 i64: 0 1 0 1 | xs 0 + {(2 : 1)}, ys 2 + {(2 : 1)}"),
            "{all}"
        );
        assert!(all.contains("b1 i64: 0 1 | ys 0 + {(2 : 1)}"), "{all}");
        // Each line is at most the width.
        assert!(out.iter().all(|l| l.chars().count() <= 121), "{all}");
        // The last pair is both ends.
        assert!(out
            .last()
            .is_some_and(|l| l.contains("results: [0i64, 1i64]")));
    }
}
