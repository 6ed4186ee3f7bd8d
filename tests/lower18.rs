//! Issue 18's constructs through the lowering and the passes, on the
//! command line: `funmem lower`, `funmem opt`, `funmem validate` and the
//! `structure` counts of `funmem test`, on FUN programs with loops (`for`,
//! `while`), in-place updates, `concat`, `replicate`, kernels with several
//! results and unique parameters.

mod common;

use common::{assert_exit, funmem, write_temp};

fn stdout(o: &std::process::Output) -> String {
    common::text(&o.stdout)
}

/// Every new construct at host level.
const ALL: &str = "def main (n: int) (xs: *[n]int) =
  let (ys: [n]int) = xs with [0] = 7
  let (k: int) = n + n
  let (zs: [k]int) = concat ys ys
  let (r: [3][n]int) = replicate 3 ys
  let (m: int) (acc: [k]int) = loop (j: int) (a: [k]int) = (0, zs) for i < n do
      let (b: [k]int) = a with [i] = j
      let (j2: int) = j + 1
      in (j2, b)
  let (t: [n][3]int) = transpose r
  let (c: int) (w: [n]int) = loop (c0: int) (v: [n]int) = (3, ys) while c0 do
      let (c1: int) = c0 - 1
      let (v2: [n]int) = copy v
      let (y1: [1]int) = ys[1 : 1]
      let (v3: [n]int) = v2 with [0 : 1] = y1
      in (c1, v3)
  let (p: [n]int) (q: [n]int) = kernel i < n do
      let (e: int) = i * 2
      in (i, e)
  let (t0: int) = t[0, 2]
  in (acc, m, w, p, q, c, t0)
";

/// Loops inside kernels: one whose allocation can leave the kernel (an
/// inner kernel's result, dead at the end of each iteration), one whose
/// allocation is carried to the next iteration and stays.
const IN_KERNEL: &str = "def main (n: int) (xs: [n]int) =
  let (ys: [n][n]int) = kernel i < n do
      let (r0: [n]int) = copy xs
      let (acc: [n]int) = loop (a: [n]int) = (r0) for t < 3 do
          let (tmp: [n]int) = kernel j < n do
              let (v: int) = a[j]
              let (w: int) = v + t
              in (w)
          let (a2: [n]int) = a with [0 : n] = tmp
          in (a2)
      in (acc)
  let (zs: [n][n]int) = kernel i < n do
      let (acc: [n]int) = loop (a: [n]int) = (xs) for t < 3 do
          let (b: [n]int) = copy a
          let (c: [n]int) = b with [0] = t
          in (c)
      in (acc)
  in (ys, zs)
";

fn lower(src: &str, name: &str, passes: &str) -> String {
    let f = write_temp(name, src);
    let o = funmem(&["lower", "--to", "funmem", "--passes", passes, &f], "");
    assert_exit(&o, 0);
    stdout(&o)
}

/// The printed FUNMEM program type-checks (uniqueness included).
fn assert_checks(text: &str, name: &str) {
    let f = write_temp(name, text);
    let o = funmem(&["check", &f], "");
    assert_exit(&o, 0);
}

#[test]
fn lowering_gives_loops_existential_memory_and_updates_their_arrays_block() {
    let out = lower(ALL, "all.fun", "none");
    assert_checks(&out, "all_none.funmem");
    // The unique parameter stays unique; the update lives in its block.
    assert!(out.contains("(xs: *[n]int @ xs_mem -> R(n))"), "{out}");
    assert!(
        out.contains("let (ys: [n]int @ xs_mem -> R(n)) = xs with [0] = 7"),
        "{out}"
    );
    // Concat and replicate: fresh row-major blocks.
    assert!(out.contains("let (zs_mem: mem) = alloc k"), "{out}");
    assert!(
        out.contains("let (r: [3][n]int @ r_mem -> R(3, n)) = replicate 3 ys"),
        "{out}"
    );
    // A loop parameter array carries its block, offset and stride.
    assert!(
        out.contains("loop (j: int) (a_mem: mem) (a_off: int) (a_s0: int) (a: [k]int @ a_mem -> a_off + {(k : a_s0)}) = (0, zs_mem, zs_off, zs_s0, zs) for i < n do"),
        "{out}"
    );
    assert!(out.contains("in (j2, a_mem, b_off, b_s0, b)"), "{out}");
    // A kernel with two results: a block each.
    assert!(out.contains("let (p_mem: mem) = alloc n"), "{out}");
    assert!(out.contains("let (q_mem: mem) = alloc n"), "{out}");
    assert!(
        out.contains("(p: [n]int @ p_mem -> R(n)) (q: [n]int @ q_mem -> R(n)) = kernel i < n do"),
        "{out}"
    );
}

#[test]
fn simplify_drops_loop_invariant_blocks_and_keeps_what_may_fail() {
    let out = lower(ALL, "all_s.fun", "simplify");
    assert_checks(&out, "all_simplify.funmem");
    // The in-place loop's block is the concat's, known before the loop.
    assert!(
        out.contains("loop (j: int) (a: [k]int @ zs_mem -> R(k)) = (0, zs) for i < n do"),
        "{out}"
    );
    // The while loop returns a fresh block each iteration: it stays
    // existential.
    assert!(out.contains("(v_mem: mem)"), "{out}");
    assert!(out.contains("while c0 do"), "{out}");
}

#[test]
fn expansion_hoists_loop_invariant_allocations_out_of_kernels_only() {
    for passes in ["simplify,expand-gpu", "simplify,expand-cpu"] {
        let f = write_temp("in_kernel.fun", IN_KERNEL);
        let o = funmem(&["opt", "--passes", passes, &f], "");
        assert_exit(&o, 0);
        let out = stdout(&o);
        assert_checks(&out, "in_kernel.funmem");
        // The inner kernel's result block and r0's left the first kernel.
        let first = out.split("let (zs_mem").next().unwrap_or_default();
        let inside_first = first.split("= kernel i < n do").nth(1).unwrap_or_default();
        assert!(!inside_first.contains("alloc"), "{passes}:\n{out}");
        assert!(
            first.contains("let (tmp_mem_1: mem) = alloc"),
            "{passes}:\n{out}"
        );
        // The carried block of the second stays in its loop.
        let second = out.split("let (zs_mem").nth(1).unwrap_or_default();
        assert!(
            second.contains("let (b_mem: mem) = alloc n"),
            "{passes}:\n{out}"
        );
    }
}

#[test]
fn host_loops_keep_their_allocations() {
    let src = "def main (n: int) (xs: [n]int) =
  let (r: [n]int) = loop (a: [n]int) = (xs) for t < 2 do
      let (b: [n][n]int) = kernel i < n do
          let (c: [n]int) = copy a
          in (c)
      let (d: [n]int) = kernel i < n do
          let (e: int) = b[i, i]
          in (e)
      in (d)
  in (r)
";
    let f = write_temp("host_loop.fun", src);
    let o = funmem(&["opt", "--passes", "simplify,expand-gpu", &f], "");
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert_checks(&out, "host_loop.funmem");
    // The kernel's allocation is hoisted out of the kernel, into the loop
    // body, not out of the loop.
    let body = out.split("for t < 2 do").nth(1).unwrap_or_default();
    assert!(body.contains("let (c_mem_1: mem) = alloc"), "{out}");
    let inside = body.split("= kernel i < n do").nth(1).unwrap_or_default();
    let inside = inside.split("in (c)").next().unwrap_or_default();
    assert!(!inside.contains("alloc"), "{out}");
}

#[test]
fn validate_runs_every_stage_of_every_construct() {
    for (src, name, input) in [
        (ALL, "v_all.fun", "4 [1, 2, 3, 4]"),
        (ALL, "v_all1.fun", "2 [5, 6]"),
        (IN_KERNEL, "v_in_kernel.fun", "3 [5, 6, 7]"),
        (IN_KERNEL, "v_in_kernel0.fun", "0 empty([0]i64)"),
    ] {
        let f = write_temp(name, src);
        for passes in [
            "none",
            "simplify",
            "simplify,expand-gpu",
            "simplify,expand-cpu",
        ] {
            let o = funmem(&["validate", "--passes", passes, &f], input);
            assert_exit(&o, 0);
        }
    }
}

/// A source that goes wrong: validate exits 1, and every stage goes
/// wrong like the source (none is invalid or disagrees).
fn assert_wrong_alike(src: &str, name: &str, input: &str) {
    let f = write_temp(name, src);
    for passes in ["none", "simplify,expand-gpu", "simplify,expand-cpu"] {
        let o = funmem(&["validate", "--passes", passes, &f], input);
        assert_exit(&o, 1);
        let out = stdout(&o);
        let stages: Vec<&str> = out.lines().skip(1).collect();
        assert!(!stages.is_empty(), "{out}");
        assert!(
            stages
                .iter()
                .all(|l| l.contains("goes wrong like the source")),
            "{passes}:\n{out}"
        );
    }
}

#[test]
fn validate_reports_stuck_updates_and_replicates_in_every_stage_alike() {
    let src = "def main (n: int) (j: int) (xs: *[n]int) =
  let (ys: [n]int) = xs with [j] = 1
  in (ys)
";
    assert_wrong_alike(src, "stuck.fun", "2 5 [1, 2]");
    assert_wrong_alike(ALL, "stuck_all.fun", "0 empty([0]i64)");
    let src = "def main (n: int) (o: int) (xs: *[n]int) (ys: [2]int) =
  let (zs: [n]int) = xs with [o : 2] = ys
  let (c: int) = n - 3
  let (r: [c][n]int) = replicate c zs
  in (r)
";
    assert_wrong_alike(src, "stuck_range.fun", "3 2 [1, 2, 3] [4, 5]");
    assert_wrong_alike(src, "stuck_replicate.fun", "2 0 [1, 2] [4, 5]");
}

#[test]
fn a_while_that_never_ends_runs_out_of_fuel_in_every_stage() {
    let src = "def main (n: int) =
  let (c: int) = loop (c0: int) = (n) while c0 do
      let (c1: int) = c0 + 1
      in (c1)
  in (c)
";
    let f = write_temp("endless.fun", src);
    let o = funmem(
        &["validate", "--fuel", "10000", "--passes", "simplify", &f],
        "1",
    );
    assert_exit(&o, 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("E-LOOP-WHILE"), "{err}");
}

#[test]
fn structure_counts_the_new_constructs_after_lowering() {
    let good = "-- ==\n-- structure { loop 2 update 3 concat 1 replicate 1 }\n";
    let f = write_temp("structure.fun", &format!("{good}{ALL}"));
    let o = funmem(&["test", &f], "");
    assert_exit(&o, 0);
    assert!(stdout(&o).contains(" 0 failed"), "{}", stdout(&o));
    let bad = "-- ==\n-- structure { loop 3 }\n";
    let f = write_temp("structure_bad.fun", &format!("{bad}{ALL}"));
    let o = funmem(&["test", &f], "");
    assert_exit(&o, 1);
}
