//! Issue 19 in IMP, on the command line: typed IMP programs by hand (i32
//! wrapping, f32 arithmetic, arrays of two element types sharing one
//! block, out of bounds by bytes), IMP `reduce` and `scan` (builtin
//! operators and lambdas, the race of a scan that writes where it reads,
//! sequential inside a kernel), and typed FUN programs with reduce, scan
//! and partial indexing lowered with `funmem lower --to imp`, whose IMP
//! translation must give the source's results.

mod common;

use common::{assert_exit, funmem, text, write_temp};

/// Runs `file` on `input`: exit code, standard output, standard error.
fn run(file: &str, input: &str) -> (Option<i32>, String, String) {
    let o = funmem(&["run", file], input);
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// Runs the IMP program `src` on `input`; it must succeed with `want`.
fn imp_gives(name: &str, src: &str, input: &str, want: &str) {
    let f = write_temp(&format!("{name}.imp"), src);
    let (c, out, err) = run(&f, input);
    assert_eq!((c, out.trim()), (Some(0), want), "{name}: {err}");
}

/// Runs the IMP program `src` on `input`; it must go wrong (exit 1) with
/// every one of `parts` in its error.
fn imp_fails(name: &str, src: &str, input: &str, parts: &[&str]) {
    let f = write_temp(&format!("{name}.imp"), src);
    let (c, out, err) = run(&f, input);
    assert_eq!(c, Some(1), "{name} should go wrong: {out}{err}");
    for p in parts {
        assert!(err.contains(p), "{name}: `{p}` not in {err}");
    }
}

#[test]
fn i32_wraps_and_f32_rounds() {
    let src = "def main (a: i32) (x: f32) =
  var w: i32; var y: f32; var d: f64; var b: bool;
  w <- a + 1i32;
  y <- x * 3.0f32 + 0.1f32;
  d <- f64(y);
  b <- y > 1.0f32
out (w, y, d, b)";
    imp_gives(
        "i32_f32",
        src,
        "2147483647i32 0.5f32",
        &format!(
            "-2147483648i32\n{}f32\n{}f64\ntrue",
            0.5f32 * 3.0 + 0.1,
            (0.5f32 * 3.0 + 0.1) as f64
        ),
    );
}

#[test]
fn arrays_of_two_types_share_a_block_by_bytes() {
    // Four i32s fill the bytes of two i64s: writing the i64 0x100000002
    // at element 0 makes i32 elements 0 and 1 read 2 and 1 (little-endian).
    let src = "def main (n: int) =
  var m: mem;
  m <- alloc 2;
  m[0] <- 4294967298;
  m[3] <- -1i32;
  var a: i32; var b: i32; var c: int;
  a <- m[0]; b <- m[1]; c <- m[1]
out (a, b, c, xs: [4]i32 @ m -> R(4))";
    imp_gives(
        "shared_block",
        src,
        "0",
        "2i32\n1i32\n-4294967296i64\n[2i32, 1i32, 0i32, -1i32]",
    );
}

#[test]
fn out_of_bounds_is_by_bytes() {
    // 5 bools take 5 bytes: an i32 at element 0 (bytes 0..4) is in, one at
    // element 1 (bytes 4..8) is not.
    let src = "def main (i: int) =
  var m: mem; var x: i32;
  m <- alloc 5 bool;
  m[2] <- true;
  x <- m[i]
out (x)";
    let f = write_temp("bytes_oob.imp", src);
    assert_eq!(run(&f, "0").1.trim(), "65536i32");
    imp_fails(
        "bytes_oob",
        src,
        "1",
        &["E-IMP-READ", "offset 1 of type i32 (bytes 4..8)", "size 5 bytes"],
    );
}

const REDUCE_SCAN: &str = "def main (n: int) (xs: [n]i32 @ xm -> R(n)) =
  var s: i32; var p: i64;
  s <- reduce (+) 0i32 for i < n do var e: i32; e <- xm[i] yield e done;
  p <- reduce (\\a b -> var c: int; c <- a * b + 1 yield c) 0 for i < n do
      var e: i32; e <- xm[i] yield i64(e) done;
  var om: mem;
  om <- alloc n f32;
  scan (max) (-1.0f32) for i < n do var e: i32; e <- xm[i] yield f32(e) into om[n - 1 - i] done
out (s, p, ys: [n]f32 @ om -> R(n))";

#[test]
fn reduce_and_scan_are_left_folds() {
    // p = ((0*3+1)*(-2)+1)*5+1 = -4
    imp_gives(
        "reduce_scan",
        REDUCE_SCAN,
        "3 [3i32, -2i32, 5i32]",
        "6i32\n-4i64\n[5.0f32, 3.0f32, 3.0f32]",
    );
    imp_gives("reduce_scan_empty", REDUCE_SCAN, "0 empty([0]i32)", "0i32\n0i64\nempty([0]f32)");
}

#[test]
fn a_scan_writing_where_it_reads_races() {
    let src = "def main (n: int) (xs: [n]int @ xm -> R(n)) =
  scan (+) 0 for i < n do var e: int; e <- xm[i] yield e into xm[i] done
out (xs: [n]int @ xm -> R(n))";
    imp_fails("scan_race", src, "3 [1, 2, 3]", &["E-IMP-SCAN", "race"]);
    // Even one element: the rule is about places, not timing. Inside a
    // kernel the scan is the iteration's sequential code.
    imp_fails("scan_one", src, "1 [4]", &["E-IMP-SCAN"]);
    let src = "def main (n: int) (xs: [n][2]int @ xm -> R(n, 2)) =
  kernel k < n do
    scan (+) 0 for i < 2 do var e: int; e <- xm[k * 2 + i] yield e into xm[k * 2 + i] done
  done
out (xs: [n][2]int @ xm -> R(n, 2))";
    imp_gives("scan_in_kernel", src, "2 [[1, 2], [3, 4]]", "[[1i64, 3i64], [3i64, 7i64]]");
}

#[test]
fn a_stuck_operator_is_stuck_at_the_reduce() {
    let src = "def main (n: int) (d: int) =
  var s: int;
  s <- reduce (\\a b -> var c: int; c <- a + b / d yield c) 0 for i < n do skip yield i done
out (s)";
    imp_gives("reduce_div", src, "3 1", "3i64");
    imp_fails("reduce_div0", src, "3 0", &["division by zero"]);
}

/// The FUN program and its IMP translation give `want` on `input`.
fn fun_and_imp_agree(name: &str, src: &str, input: &str, want: &str) {
    let f = write_temp(&format!("{name}.fun"), src);
    let (c, out, err) = run(&f, input);
    assert_eq!((c, out.trim()), (Some(0), want), "{name} (FUN): {err}");
    for passes in ["none", "simplify,expand-gpu"] {
        let o = funmem(&["lower", &f, "--to", "imp", "--passes", passes], "");
        assert_exit(&o, 0);
        let g = write_temp(&format!("{name}-{}.imp", passes.replace(',', "-")), &text(&o.stdout));
        let (c, out, err) = run(&g, input);
        assert_eq!((c, out.trim()), (Some(0), want), "{name} (IMP, {passes}): {err}");
    }
}

#[test]
fn typed_reduce_scan_and_partial_index_lower_to_imp() {
    let src = "def main (n: int) (xs: [n]f32) (yss: [n][2]i32) =
  let (row: [2]i32) = yss[1]
  let (lo: i32) = -100i32
  let (s: f32) = reduce (+) 0.0f32 xs
  let (m: i32) = reduce (\\(a: i32) (b: i32) -> let (c: i32) = max(a, b) in (c)) lo row
  let (ps: [n]f32) = scan (*) 1.0f32 xs
  in (s, m, ps)";
    fun_and_imp_agree(
        "typed_red",
        src,
        "3 [1.5f32, 2.0f32, 3.25f32] [[1i32, 2i32], [7i32, -3i32], [0i32, 0i32]]",
        "6.75f32\n7i32\n[1.5f32, 3.0f32, 9.75f32]",
    );
}

#[test]
fn rows_reduced_in_a_kernel_lower_to_imp() {
    let src = "def main (n: int) (xss: [n][3]int) =
  let (sums: [n]int) = kernel i < n do
      let (r: [3]int) = xss[i]
      let (s: int) = reduce (+) 0 r
      in (s)
  let (pre: [n]int) = scan (+) 0 sums
  in (sums, pre)";
    fun_and_imp_agree(
        "row_sums",
        src,
        "2 [[1, 2, 3], [4, 5, 6]]",
        "[6i64, 15i64]\n[6i64, 21i64]",
    );
}
