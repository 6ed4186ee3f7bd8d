//! `hoist-allocs` from the command line: allocations move above the
//! statements they do not depend on, never above the definitions of their
//! sizes, within a loop's body but not out of it, and not above a kernel
//! when their size may go wrong; `opt --explain` says so; `validate` finds
//! every stage valid and agreeing.

mod common;

use common::{assert_exit, write_temp};

/// `funmem ARGS` with no standard input, bounded as every CLI test is.
fn funmem(args: &[&str]) -> std::process::Output {
    common::funmem(args, "")
}

/// `validate --passes hoist-allocs` on `input`: every stage valid and
/// agreeing.
fn validates(file: &str, input: &str) {
    let inp = write_temp(&format!("{}.in", file.replace('/', "_")), input);
    let o = funmem(&[
        "validate",
        file,
        "--passes",
        "hoist-allocs",
        "--input",
        &inp,
    ]);
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("hoist-allocs  FUNMEM  heap+value  valid, agrees with the source"),
        "{out}"
    );
}

/// The program after the pass (its lines, trimmed) and the explanation.
fn opt(file: &str) -> (Vec<String>, String) {
    let o = funmem(&["opt", file, "--passes", "hoist-allocs", "--explain"]);
    assert_exit(&o, 0);
    let lines = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .collect();
    (lines, String::from_utf8_lossy(&o.stderr).to_string())
}

fn line_of(lines: &[String], start: &str) -> usize {
    lines
        .iter()
        .position(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line `{start}` in {lines:#?}"))
}

const BASIC: &str = "tests/programs/funmem/hoist22_basic.funmem";

#[test]
fn an_allocation_moves_above_the_statements_it_does_not_depend_on() {
    let (lines, explain) = opt(BASIC);
    // `cm` is allocated first, before the copy, the iota and the loop.
    assert_eq!(line_of(&lines, "let (cm: mem) = alloc n"), 1, "{lines:#?}");
    assert!(line_of(&lines, "let (cm: mem)") < line_of(&lines, "let (a: "));
    assert!(
        explain.contains("`cm` moved above 6 statement(s), to the start of the program"),
        "{explain}"
    );
    validates(BASIC, "3 [1, 2, 3]");
    validates(BASIC, "0 empty([0]i64)");
}

#[test]
fn an_allocation_does_not_move_above_the_definition_of_its_size() {
    let (lines, explain) = opt(BASIC);
    assert_eq!(
        line_of(&lines, "let (bm: mem) = alloc k"),
        line_of(&lines, "let (k: int) = n + 1") + 1
    );
    assert!(
        // `k = n + 1` cannot go wrong: it moved up first, and `bm` with it.
        explain.contains(
            "`bm` moved above 2 statement(s), to just after `k`: its size reads `k`, bound there"
        ),
        "{explain}"
    );
}

#[test]
fn an_allocation_moves_within_a_loop_body_but_not_out_of_it() {
    let (lines, explain) = opt(BASIC);
    let head = line_of(&lines, "let (s: int) = loop");
    assert_eq!(line_of(&lines, "let (tm: mem) = alloc n"), head + 1);
    assert!(
        explain.contains(
            "`tm` moved above 1 statement(s), to the start of the body of the loop of `s`"
        ),
        "{explain}"
    );
}

#[test]
fn a_size_that_may_go_wrong_stays_below_a_kernel() {
    let f = write_temp(
        "kernel.funmem",
        "def main (n: int) (d: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
  let (ym: mem) = alloc n
  let (ys: [n]int @ ym -> R(n)) = kernel i < n do
      let (x: int) = xs[i]
      let (y: int) = x + i
      in (y)
  let (zm: mem) = alloc n + n / d
  let (z: [n]int @ zm -> R(n)) = copy ys
  let (wm: mem) = alloc n * 2
  let (w: [n]int @ wm -> 0 + {(n : 2)}) = copy z
  in (w)
",
    );
    let (lines, explain) = opt(&f);
    assert!(line_of(&lines, "let (zm: mem)") > line_of(&lines, "let (ys: "));
    assert_eq!(
        line_of(&lines, "let (wm: mem) = alloc n * 2"),
        1,
        "{lines:#?}"
    );
    assert!(explain.contains("`zm` stays after `ys`"), "{explain}");
    assert!(explain.contains("may race"), "{explain}");
    validates(&f, "4 2 [1, 2, 3, 4]");
    // Division by zero: stuck at the same allocation in the source and
    // after the pass (exit 1: the program went wrong).
    let inp = write_temp("zero.in", "4 0 [1, 2, 3, 4]");
    let o = funmem(&["validate", &f, "--passes", "hoist-allocs", "--input", &inp]);
    assert_exit(&o, 1);
    let out = String::from_utf8_lossy(&o.stdout);
    for stage in ["source ", "hoist-allocs "] {
        let line = out
            .lines()
            .find(|l| l.starts_with(stage))
            .unwrap_or_else(|| panic!("no {stage} line: {out}"));
        assert!(line.contains("E-MEM-ALLOC: division by zero"), "{out}");
    }
}

#[test]
fn the_pass_is_listed_and_runs_on_fun_programs() {
    let o = funmem(&["passes"]);
    assert_exit(&o, 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("hoist-allocs"));
    let o = funmem(&[
        "opt",
        "tests/programs/design_example.fun",
        "--passes",
        "simplify,hoist-allocs,expand-gpu",
    ]);
    assert_exit(&o, 0);
}

#[test]
fn a_racing_kernel_still_races_first() {
    // The kernel races (every iteration writes offset 0); `zm`'s size is
    // negative for n < 10, so above the kernel it would be stuck first.
    let f = write_temp(
        "race.funmem",
        "def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
  let (ym: mem) = alloc 1
  let (ys: [n]int @ ym -> 0 + {(n : 0)}) = kernel i < n do
      let (x: int) = xs[i]
      in (x)
  let (k: int) = n - 10
  let (zm: mem) = alloc n - 10
  let (z: [n]int @ ym -> 0 + {(n : 0)}) = copy ys
  in (z)
",
    );
    let (lines, explain) = opt(&f);
    assert!(line_of(&lines, "let (zm: mem)") > line_of(&lines, "let (ys: "));
    // (`k = n - 10` cannot go wrong and moves above the kernel; `zm`,
    // which may, does not.)
    assert!(
        explain.contains("`zm` stays after `ys`: its size `n - 10` may go wrong and that statement runs a kernel that may race"),
        "{explain}"
    );
    let inp = write_temp("race.in", "3 [1, 2, 3]");
    let o = funmem(&["validate", &f, "--passes", "hoist-allocs", "--input", &inp]);
    assert_exit(&o, 1);
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with("hoist-allocs "))
        .unwrap_or_else(|| panic!("no hoist-allocs line: {out}"));
    assert!(line.contains("data race"), "{out}");
}
