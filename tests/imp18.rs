//! Issue 18's constructs lowered to IMP, on the command line: `funmem
//! lower --to imp` of FUN and FUNMEM programs with loops (`for`, `while`),
//! in-place updates, `concat`, `replicate` and kernels with several
//! results, then `funmem run` of the IMP program, which must give the
//! source's results or go wrong as it does; IMP's own `for` and `while`
//! (fuel, races inside kernels); `funmem stats` on loops; and the copy onto
//! its own place that no longer allocates inside a kernel.

mod common;

use common::{assert_exit, funmem, text, write_temp};

/// `funmem lower FILE --to imp --passes P`, written to a temporary `.imp`
/// file named after `name`.
fn lower_to_imp(name: &str, src: &str, ext: &str, passes: &str) -> String {
    let f = write_temp(&format!("{name}.{ext}"), src);
    let o = funmem(&["lower", &f, "--to", "imp", "--passes", passes], "");
    assert_exit(&o, 0);
    let imp = text(&o.stdout);
    let g = write_temp(&format!("{name}-{}.imp", passes.replace(',', "-")), &imp);
    let o = funmem(&["check", &g], "");
    assert_exit(&o, 0);
    g
}

/// Runs `file` on `input`: exit code, standard output, standard error.
fn run(file: &str, input: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["run", file];
    args.extend_from_slice(extra);
    let o = funmem(&args, input);
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// The source and its IMP translation (after each pass list) agree on
/// every input: the same results, or both exit 1. `want` holds the
/// expected results of the inputs that succeed.
fn agree(name: &str, src: &str, ext: &str, cases: &[(&str, Option<&str>)]) {
    for passes in ["none", "simplify", "simplify,expand-gpu"] {
        let imp = lower_to_imp(name, src, ext, passes);
        let f = write_temp(&format!("{name}.{ext}"), src);
        for (input, want) in cases {
            let (sc, so, se) = run(&f, input, &[]);
            let (ic, io, ie) = run(&imp, input, &[]);
            match want {
                Some(w) => {
                    assert_eq!(
                        (sc, so.trim()),
                        (Some(0), *w),
                        "{name} source on {input}: {se}"
                    );
                    assert_eq!(
                        (ic, io.trim()),
                        (Some(0), *w),
                        "{name} IMP ({passes}) on {input}: {ie}"
                    );
                }
                None => {
                    assert_eq!(
                        sc,
                        Some(1),
                        "{name} source on {input} should go wrong: {so}"
                    );
                    assert_eq!(ic, Some(1), "{name} IMP ({passes}) on {input}: {io}");
                }
            }
        }
    }
}

/// A `for` loop whose parameters are an int, a block and an array in it,
/// a fresh block allocated every iteration.
const FOR_LOOP: &str = "def main (n: int) (t: int) =
  let (am: mem) = alloc n
  let (a0: [n]int @ am -> R(n)) = iota n
  let (s: int) (k2: int) (bm: mem) (b: [n]int @ bm -> R(n)) = loop (acc: int) (k: int) (m: mem) (xs: [n]int @ m -> R(n)) = (0, 1, am, a0) for i < t do
      let (acc2: int) = acc + i
      let (m2: mem) = alloc n
      let (ys: [n]int @ m2 -> R(n)) = kernel j < n do
          let (x: int) = xs[j]
          let (y: int) = x * 2 + k
          in (y)
      in (acc2, acc2, m2, ys)
  in (s, k2, b)
";

#[test]
fn for_loops_carry_ints_blocks_and_arrays() {
    agree(
        "for_loop",
        FOR_LOOP,
        "funmem",
        &[
            ("3 3", Some("3i64\n3i64\n[5i64, 13i64, 21i64]")),
            ("3 0", Some("0i64\n1i64\n[0i64, 1i64, 2i64]")),
            ("2 -4", Some("0i64\n1i64\n[0i64, 1i64]")),
        ],
    );
}

/// A `while` whose parameters swap (x0, y0 = y0, x0: the translation's
/// simultaneous assignment) and whose array grows by one every iteration.
const WHILE_LOOP: &str = "def main (n: int) =
  let (one: int) = 1
  let (am: mem) = alloc one
  let (a0: [one]int @ am -> R(one)) = iota one
  let (c: int) (x: int) (y: int) (k: int) (fm: mem) (f: [k]int @ fm -> R(k)) = loop (c0: int) (x0: int) (y0: int) (k0: int) (m: mem) (xs: [k0]int @ m -> R(k0)) = (n, 1, 2, one, am, a0) while c0 do
      let (c1: int) = c0 - 1
      let (k1: int) = k0 + 1
      let (m1: mem) = alloc k1
      let (l: int) = k0 - 1
      let (ys: [k1]int @ m1 -> R(k1)) = kernel i < k1 do
          let (lt: int) = i < k0
          let (j: int) = min(i, l)
          let (v: int) = xs[j]
          let (w: int) = v * lt + (1 - lt) * (x0 * 10 + y0)
          in (w)
      in (c1, y0, x0, k1, m1, ys)
  in (x, y, k, f)
";

#[test]
fn while_loops_assign_their_parameters_all_at_once() {
    agree(
        "while_loop",
        WHILE_LOOP,
        "funmem",
        &[
            ("3", Some("2i64\n1i64\n4i64\n[0i64, 12i64, 21i64, 12i64]")),
            ("0", Some("1i64\n2i64\n1i64\n[0i64]")),
        ],
    );
    // The translation reads a swapped parameter into a temporary first.
    let imp = lower_to_imp("while_swap", WHILE_LOOP, "funmem", "none");
    let text = std::fs::read_to_string(&imp).expect("the IMP file");
    assert!(text.contains("x0_next <- y0"), "{text}");
    assert!(text.contains("x0 <- x0_next"), "{text}");
}

#[test]
fn a_while_that_never_ends_is_out_of_fuel_at_the_while() {
    // n < 0 never reaches 0.
    let imp = lower_to_imp("while_endless", WHILE_LOOP, "funmem", "none");
    let (code, out, err) = run(&imp, "-1", &["--fuel", "100000"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(err.contains("E-IMP-WHILE"), "{err}");
    assert!(err.contains("fuel of 100000"), "{err}");
    assert!(err.contains("while c0 do"), "the while is shown: {err}");
    // A hand-written one, in a kernel iteration.
    let f = write_temp(
        "endless.imp",
        "def main (n: int) =
  var m: mem;
  m <- alloc n;
  kernel i < n do
    var c: int;
    c <- 1;
    while c do m[i] <- c; c <- c + 1 done
  done
out (n)
",
    );
    let (code, _, err) = run(&f, "2", &["--fuel", "5000"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("E-IMP-WHILE") && err.contains("fuel"), "{err}");
}

/// Updates of an element, of a range of a row and of whole rows, in a
/// block shared with nothing else.
const UPDATES: &str = "def main (n: int) (j: int) (o: int) =
  let (xm: mem) = alloc 12
  let (xs: [3][4]int @ xm -> R(3, 4)) = kernel i < 3 do
      let (row: [4]int @ xm -> i * 4 + {(4 : 1)}) = kernel k < 4 do
          let (v: int) = i * 10 + k
          in (v)
      in (row)
  let (ys: [3][4]int @ xm -> R(3, 4)) = xs with [1, j] = 99
  let (rm: mem) = alloc 2
  let (r: [2]int @ rm -> R(2)) = iota 2
  let (zs: [3][4]int @ xm -> R(3, 4)) = ys with [2, o : 2] = r
  let (wm: mem) = alloc 8
  let (w: [2][4]int @ wm -> R(2, 4)) = kernel i < 2 do
      let (row: [4]int @ wm -> i * 4 + {(4 : 1)}) = kernel k < 4 do
          let (v: int) = 0 - k
          in (v)
      in (row)
  let (us: [3][4]int @ xm -> R(3, 4)) = zs with [0 : 2] = w
  in (us)
";

#[test]
fn updates_write_in_place_and_out_of_bounds_is_stuck_in_both() {
    agree(
        "updates",
        UPDATES,
        "funmem",
        &[
            (
                "0 2 1",
                Some("[[0i64, -1i64, -2i64, -3i64], [0i64, -1i64, -2i64, -3i64], [20i64, 0i64, 1i64, 23i64]]"),
            ),
            // j = 4 would land in row 2 of the block: the guard stops it.
            ("0 4 0", None),
            ("0 -1 0", None),
            // The range 3 : 2 would reach the next row.
            ("0 1 3", None),
            ("0 0 -1", None),
        ],
    );
    let imp = lower_to_imp("updates_guard", UPDATES, "funmem", "none");
    let (_, _, err) = run(&imp, "0 4 0", &[]);
    assert!(err.contains("E-INDEX") && err.contains("j = 4"), "{err}");
    let (_, _, err) = run(&imp, "0 1 3", &[]);
    assert!(err.contains("E-SLICE") && err.contains("o = 3"), "{err}");
}

/// `concat`, `replicate` of an array and of an int, and a kernel with two
/// results.
const FRESH: &str = "def main (n: int) (m: int) =
  let (am: mem) = alloc n
  let (a: [n]int @ am -> R(n)) = iota n
  let (bm: mem) = alloc m
  let (b: [m]int @ bm -> R(m)) = iota m
  let (k: int) = n + m
  let (cm: mem) = alloc k
  let (c: [k]int @ cm -> R(k)) = concat a b
  let (nk: int) = n * k
  let (rm: mem) = alloc nk
  let (r: [n][k]int @ rm -> R(n, k)) = replicate n c
  let (sm: mem) = alloc 3
  let (s: [3]int @ sm -> R(3)) = replicate 3 m
  let (pm: mem) = alloc n
  let (qm: mem) = alloc n
  let (p: [n]int @ pm -> R(n)) (q: [n]int @ qm -> R(n)) = kernel i < n do
      let (x: int) = i * 2
      let (y: int) = i + 100
      in (x, y)
  in (c, r, s, p, q)
";

#[test]
fn concat_replicate_and_multi_result_kernels() {
    agree(
        "fresh",
        FRESH,
        "funmem",
        &[
            (
                "2 3",
                Some("[0i64, 1i64, 0i64, 1i64, 2i64]\n[[0i64, 1i64, 0i64, 1i64, 2i64], [0i64, 1i64, 0i64, 1i64, 2i64]]\n[3i64, 3i64, 3i64]\n[0i64, 2i64]\n[100i64, 101i64]"),
            ),
            (
                "0 2",
                Some("[0i64, 1i64]\nempty([0][2]i64)\n[2i64, 2i64, 2i64]\nempty([0]i64)\nempty([0]i64)"),
            ),
            ("2 -1", None),
        ],
    );
    // The two results are written by one IMP kernel.
    let imp = lower_to_imp("fresh_kernels", FRESH, "funmem", "none");
    let text = std::fs::read_to_string(&imp).expect("the IMP file");
    let last = text.rsplit("kernel i < n do").next().unwrap_or_default();
    assert!(
        last.contains("pm[i] <- x") && last.contains("qm[i] <- y"),
        "{text}"
    );
}

/// Every construct in FUN, through the whole pipeline.
const FUN_ALL: &str = "def main (n: int) (xs: *[n]int) (t: int) =
  let (ys: [n]int) = xs with [0] = 7
  let (k: int) = n + n
  let (zs: [k]int) = concat ys ys
  let (r: [2][k]int) = replicate 2 zs
  let (s: int) (acc: [k]int) = loop (j: int) (a: [k]int) = (0, zs) for i < t do
      let (b: [k]int) = a with [i] = j
      let (j2: int) = j + 10
      in (j2, b)
  let (c: int) (w: [n]int) = loop (c0: int) (v: [n]int) = (3, ys) while c0 do
      let (c1: int) = c0 - 1
      let (v2: [n]int) = kernel i < n do
          let (e: int) = v[i]
          let (e2: int) = e + c0
          in (e2)
      in (c1, v2)
  let (p: [n]int) (q: [n]int) = kernel i < n do
      let (e: int) = i * 2
      let (f: int) = r[1, i]
      in (e, f)
  in (s, acc, c, w, p, q)
";

#[test]
fn fun_programs_with_every_construct_agree_through_imp() {
    agree(
        "fun_all",
        FUN_ALL,
        "fun",
        &[
            (
                "3 [1, 2, 3] 2",
                Some("20i64\n[0i64, 10i64, 3i64, 7i64, 2i64, 3i64]\n0i64\n[13i64, 8i64, 9i64]\n[0i64, 2i64, 4i64]\n[7i64, 2i64, 3i64]"),
            ),
            (
                "2 [5, 6] 0",
                Some("0i64\n[7i64, 6i64, 7i64, 6i64]\n0i64\n[13i64, 12i64]\n[0i64, 2i64]\n[7i64, 6i64]"),
            ),
            // t = 7 updates past the end of acc (size 6): E-UPDATE.
            ("3 [1, 2, 3] 7", None),
            // n = 0: the update of xs[0] is out of bounds.
            ("0 empty([0]i64) 1", None),
        ],
    );
}

#[test]
fn imp_loops_in_the_corpus_pass_their_tests() {
    for f in [
        "tests/programs/imp/loops.imp",
        "tests/programs/imp/loops_in_kernel.imp",
    ] {
        let o = funmem(&["test", f], "");
        assert_exit(&o, 0);
        assert!(text(&o.stdout).contains("0 failed"), "{}", text(&o.stdout));
    }
}

#[test]
fn a_copy_onto_its_own_place_allocates_nothing() {
    // Row i is built at `o + {(m : 1)}` with o = i * m: the kernel's copy
    // into row i of the result is onto the same place.
    let o = funmem(
        &[
            "lower",
            "tests/programs/funmem/nested_kernel_inplace.funmem",
            "--to",
            "imp",
            "--passes",
            "none",
        ],
        "",
    );
    assert_exit(&o, 0);
    let imp = text(&o.stdout);
    assert_eq!(imp.matches("alloc").count(), 1, "{imp}");
    assert!(!imp.contains("tmp_mem"), "{imp}");
}

#[test]
fn stats_count_allocations_in_loops_once_per_iteration() {
    let f = write_temp("stats_loop.funmem", FOR_LOOP);
    let o = funmem(&["stats", &f, "--passes", "simplify", "--json"], "3 4");
    assert_exit(&o, 0);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let st = &j["stages"][0];
    assert_eq!(st["allocs_in_loops"], 1, "{j}");
    assert_eq!(st["allocs_in_kernels"], 0, "{j}");
    // One block before the loop and one in each of its 4 iterations.
    assert_eq!(st["allocations"], 5, "{j}");
    assert_eq!(st["cells_allocated"], 15, "{j}");
    // A loop iteration's blocks are not freed at its end.
    assert_eq!(st["peak_heap_cells"], 15, "{j}");
    // The table has the column.
    let o = funmem(&["stats", &f, "--passes", "simplify"], "3 4");
    assert_exit(&o, 0);
    assert!(text(&o.stdout).contains("allocs in loops"));
}
