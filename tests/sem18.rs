//! `funmem run` of FUN and FUNMEM programs with loops (`for`, `while`),
//! in-place updates, `concat`, `replicate` and kernels with several
//! results, under the value and the heap semantics: results, the rules
//! errors name, exit codes, and a `while` that never ends stopped by the
//! fuel limit (within a generous time bound).

mod common;

use common::{assert_exit, funmem as funmem_stdin, write_temp};

/// Runs a program under each of `sems`, expecting exit 0 and `out`.
fn runs_to(name: &str, src: &str, input: &str, sems: &[&str], out: &str) {
    let f = write_temp(name, src);
    for sem in sems {
        let o = funmem_stdin(&["run", &f, "--semantics", sem], input);
        assert_exit(&o, 0);
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            out,
            "{name} under {sem}"
        );
    }
}

/// Runs a program, expecting exit 1 and an error starting with `err`
/// (after the file's name).
fn fails_with(name: &str, src: &str, input: &str, sem: &str, err: &str) -> String {
    let f = write_temp(name, src);
    let o = funmem_stdin(&["run", &f, "--semantics", sem], input);
    assert_exit(&o, 1);
    let text = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        text.starts_with(&format!("{f}:{err}")),
        "{name} under {sem}:\n{text}"
    );
    text
}

const SQUARES: &str = "def main (n: int) (xs: *[n]int) =
  let (ys: [n]int) = loop (acc: [n]int) = (xs) for i < n do
    let (x: int) = acc[i]
    let (y: int) = x * x
    let (acc2: [n]int) = acc with [i] = y
    in (acc2)
  in (ys)
";

#[test]
fn for_loop_updates_in_place() {
    runs_to(
        "squares.fun",
        SQUARES,
        "4 [1, 2, 3, 4]",
        &["value"],
        "[1i64, 4i64, 9i64, 16i64]\n",
    );
    // No iterations: the initial values.
    runs_to(
        "squares0.fun",
        SQUARES,
        "0 empty([0]i64)",
        &["value"],
        "empty([0]i64)\n",
    );
}

#[test]
fn while_loop_counts_down() {
    let src = "def main (n: int) =
  let (k: int) (s: int) = loop (c: int) (t: int) = (n, 0) while c do
    let (c2: int) = c - 1
    let (t2: int) = t + c
    in (c2, t2)
  in (k, s)
";
    runs_to("while.fun", src, "4", &["value"], "0i64\n10i64\n");
}

#[test]
fn loop_grows_its_array_with_concat_and_replicate() {
    let src = "def main (n: int) =
  let (z: int) = 0
  let (a0: [z]int) = iota z
  let (m: int) (a: [m]int) = loop (k: int) (xs: [k]int) = (z, a0) for i < n do
    let (one: [1]int) = replicate 1 i
    let (k2: int) = k + 1
    let (ys: [k2]int) = concat xs one
    in (k2, ys)
  in (m, a)
";
    runs_to(
        "grow.fun",
        src,
        "4",
        &["value"],
        "4i64\n[0i64, 1i64, 2i64, 3i64]\n",
    );
}

#[test]
fn replicate_update_range_and_concat_of_rows() {
    let src = "def main (n: int) =
  let (r: [3]int) = iota 3
  let (g: [n][3]int) = replicate n r
  let (z: [2]int) = replicate 2 7
  let (g2: [n][3]int) = g with [1, 1 : 2] = z
  let (g3: [n][3]int) = replicate n r
  let (k: int) = n + n
  let (h: [k][3]int) = concat g2 g3
  in (h)
";
    runs_to(
        "rows.fun",
        src,
        "2",
        &["value"],
        "[[0i64, 1i64, 2i64], [0i64, 7i64, 7i64], [0i64, 1i64, 2i64], [0i64, 1i64, 2i64]]\n",
    );
}

#[test]
fn kernel_with_two_results() {
    let fun = "def main (n: int) =
  let (a: [n]int) (b: [n]int) = kernel i < n do
    let (x: int) = i * 2
    let (y: int) = i + 10
    in (x, y)
  in (a, b)
";
    runs_to(
        "two.fun",
        fun,
        "3",
        &["value"],
        "[0i64, 2i64, 4i64]\n[10i64, 11i64, 12i64]\n",
    );
    let funmem = "def main (n: int) =
  let (ma: mem) = alloc n
  let (mb: mem) = alloc n
  let (a: [n]int @ ma -> R(n)) (b: [n]int @ mb -> n - 1 + {(n : -1)}) = kernel i < n do
    let (x: int) = i * 2
    let (y: int) = i + 10
    in (x, y)
  in (a, b)
";
    runs_to(
        "two.funmem",
        funmem,
        "3",
        &["heap", "value"],
        "[0i64, 2i64, 4i64]\n[10i64, 11i64, 12i64]\n",
    );
}

#[test]
fn funmem_loop_returns_a_new_block_each_iteration() {
    let src = "def main (n: int) (t: int) =
  let (m0: mem) = alloc n
  let (a0: [n]int @ m0 -> R(n)) = iota n
  let (m: mem) (a: [n]int @ m -> R(n)) = loop (mp: mem) (ap: [n]int @ mp -> R(n)) = (m0, a0) for i < t do
    let (mq: mem) = alloc n
    let (aq: [n]int @ mq -> R(n)) = kernel j < n do
      let (x: int) = ap[j]
      let (y: int) = x + i
      in (y)
    in (mq, aq)
  in (a)
";
    runs_to(
        "blocks.funmem",
        src,
        "3 3",
        &["heap", "value"],
        "[3i64, 4i64, 5i64]\n",
    );
}

#[test]
fn funmem_update_concat_replicate_in_the_heap() {
    let src = "def main (n: int) (xm: mem) (xs: *[n]int @ xm -> R(n)) =
  let (ys: [n]int @ xm -> R(n)) = loop (acc: [n]int @ xm -> R(n)) = (xs) for i < n do
    let (x: int) = acc[i]
    let (y: int) = x + 100
    let (acc2: [n]int @ xm -> R(n)) = acc with [i] = y
    in (acc2)
  let (k: int) = n + 2
  let (m: mem) = alloc k
  let (two: [2]int @ m -> n + {(2 : 1)}) = replicate 2 5
  let (mc: mem) = alloc k
  let (c: [k]int @ mc -> k - 1 + {(k : -1)}) = concat ys two
  in (c)
";
    runs_to(
        "heap_ops.funmem",
        src,
        "3 [1, 2, 3]",
        &["heap", "value"],
        "[101i64, 102i64, 103i64, 5i64, 5i64]\n",
    );
}

#[test]
fn errors_name_their_rules() {
    let upd = "def main (n: int) (j: int) =
  let (a: [n]int) = iota n
  let (b: [n]int) = a with [j] = 1
  in (b)
";
    fails_with(
        "upd.fun",
        upd,
        "3 3",
        "value",
        "3:3: E-UPDATE: index 3 is out of bounds for dimension 0 of `a`, of size 3",
    );
    let range = "def main (n: int) (o: int) =
  let (a: [n]int) = iota n
  let (z: [2]int) = replicate 2 0
  let (b: [n]int) = a with [o : 2] = z
  in (b)
";
    fails_with(
        "range.fun",
        range,
        "3 2",
        "value",
        "4:3: E-UPDATE: range 2:2 is out of bounds for dimension 0 of `a`, of size 3",
    );
    let rep = "def main (n: int) =
  let (a: [n]int) = replicate n 1
  in (a)
";
    fails_with(
        "rep.fun",
        rep,
        "-1",
        "value",
        "2:3: E-REPLICATE: replicate of negative count -1",
    );
    let mem_upd = "def main (n: int) (j: int) =
  let (m: mem) = alloc n
  let (a: [n]int @ m -> R(n)) = iota n
  let (b: [n]int @ m -> R(n)) = a with [j] = 1
  in (b)
";
    fails_with(
        "upd.funmem",
        mem_upd,
        "3 -1",
        "heap",
        "4:3: E-MEM-UPDATE: index -1 is out of bounds for dimension 0 of `a`, of size 3",
    );
    let mem_rep = "def main (n: int) =
  let (m: mem) = alloc 4
  let (a: [n]int @ m -> R(n)) = replicate n 1
  in (a)
";
    fails_with(
        "rep.funmem",
        mem_rep,
        "-2",
        "heap",
        "3:3: E-MEM-REPLICATE: replicate of negative count -2",
    );
}

#[test]
fn a_while_that_never_ends_runs_out_of_fuel() {
    let fun = "def main (n: int) =
  let (k: int) = loop (c: int) = (n) while c do
    let (c2: int) = c + 1
    in (c2)
  in (k)
";
    let f = write_temp("forever.fun", fun);
    let o = funmem_stdin(&["run", &f, "--fuel", "100000"], "1");
    assert_exit(&o, 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "{f}:2:3: E-LOOP-WHILE: the `while` loop did not finish: fuel of 100000"
        )),
        "{err}"
    );
    let funmem = "def main (n: int) =
  let (k: int) = loop (c: int) = (n) while c do
    let (c2: int) = c + 1
    in (c2)
  in (k)
";
    let f = write_temp("forever.funmem", funmem);
    for sem in ["heap", "value"] {
        let o = funmem_stdin(&["run", &f, "--semantics", sem, "--fuel", "1000000"], "1");
        assert_exit(&o, 1);
        let err = String::from_utf8_lossy(&o.stderr);
        let rule = if sem == "heap" {
            "E-MEM-LOOP"
        } else {
            "E-LOOP-WHILE"
        };
        assert!(
            err.starts_with(&format!(
                "{f}:2:3: {rule}: the `while` loop did not finish: fuel of"
            )),
            "{sem}: {err}"
        );
    }
}

#[test]
fn a_race_in_a_loop_inside_a_kernel_is_found() {
    // Kernel iteration i writes cell i + j in its loop's iteration j:
    // iterations 0 and 1 both write cell 1.
    let src = "def main (n: int) =
  let (n2: int) = n + n
  let (mo: mem) = alloc n2
  let (mr: mem) = alloc n
  let (r: [n]int @ mr -> R(n)) = kernel i < n do
    let (s: int) = loop (acc: int) = (0) for j < n do
      let (at: int) = i + j
      let (c: [1]int @ mo -> at + {(1 : 1)}) = replicate 1 i
      let (acc2: int) = acc + 1
      in (acc2)
    in (s)
  in (r)
";
    let text = fails_with("race.funmem", src, "2", "heap", "5:3: E-MEM-KERNEL: ");
    assert!(text.contains("race"), "{text}");
    // Without the check it runs.
    let f = write_temp("race.funmem", src);
    let o = funmem_stdin(&["run", &f, "--no-race-check"], "2");
    assert_exit(&o, 0);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "[2i64, 2i64]\n");
}

#[test]
fn a_huge_iota_or_replicate_into_a_stride_0_layout_runs_out_of_fuel() {
    // The layout fits 10^12 elements into one cell, so the heap limit
    // never stops them; fuel per element written does.
    for (name, make) in [("iota", "iota n"), ("replicate", "replicate n 7")] {
        let src = format!(
            "def main (n: int) =
  let (m: mem) = alloc 1
  let (xs: [n]int @ m -> 0 + {{(n : 0)}}) = {make}
  let (v: int) = xs[0]
  in (v)
"
        );
        let f = write_temp(&format!("huge_{name}.funmem"), &src);
        let o = funmem_stdin(&["run", &f, "--fuel", "100000"], "1000000000000");
        assert_exit(&o, 1);
        let text = String::from_utf8_lossy(&o.stderr);
        assert!(text.contains("fuel of 100000"), "{name}: {text}");
    }
}
