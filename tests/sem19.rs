//! `funmem run` of FUN and FUNMEM programs with element types other than
//! i64, `reduce`, `scan` and partial indexing, under the value and the heap
//! semantics: typed arithmetic and conversions, reductions with built-in
//! operators and lambdas (and a lambda that gets stuck), rows of 2-D and
//! 3-D arrays (also of transposed and sliced ones), arrays of different
//! element types sharing one block of bytes, byte-level bounds and races,
//! a scan that writes where it reads, and the heap limit counted in 8-byte
//! cells.

mod common;

use common::{assert_exit, funmem, write_temp};

/// Runs a program under each of `sems`, expecting exit 0 and `out`.
fn runs_to(name: &str, src: &str, input: &str, sems: &[&str], out: &str) {
    let f = write_temp(name, src);
    for sem in sems {
        let o = funmem(&["run", &f, "--semantics", sem], input);
        assert_exit(&o, 0);
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            out,
            "{name} under {sem}"
        );
    }
}

/// Runs a program with extra arguments, expecting exit `code` and an error
/// starting with `err` (after the file's name); gives the error text.
fn fails_with(name: &str, src: &str, input: &str, args: &[&str], code: i32, err: &str) -> String {
    let f = write_temp(name, src);
    let mut all = vec!["run", f.as_str()];
    all.extend_from_slice(args);
    let o = funmem(&all, input);
    assert_exit(&o, code);
    let text = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        text.starts_with(&format!("{f}:{err}")),
        "{name} {args:?}:\n{text}"
    );
    text
}

const TYPED: &str = "def main (n: int) (xs: [n]f32) (ys: [n]i32) =
  let (lo: f32) = -1000
  let (s: f32) = reduce (+) 0 xs
  let (m: i32) = reduce (\\(a: i32) (b: i32) -> let (c: i32) = a * b in (c)) 1 ys
  let (p: [n]f32) = scan (max) lo xs
  let (q: f32) = s / 0
  let (r: i32) = i32(f32.nan)
  let (t: i32) = 2147483647 + m
  let (u: i64) = i64(1e30f32)
  let (b: bool) = s < q
  let (d: f64) = f64(s) * 0.5
  let (e: i32) = i32(-2.7f32)
  in (s, m, p, q, r, t, u, b, d, e)
";

#[test]
fn typed_arithmetic_conversions_and_reductions() {
    runs_to(
        "typed.fun",
        TYPED,
        "3 [1.5f32, -2f32, 4f32] [2i32, 3i32, 4i32]",
        &["value"],
        "3.5f32\n24i32\n[1.5f32, 1.5f32, 4.0f32]\nf32.inf\n0i32\n-2147483625i32\n\
         9223372036854775807i64\ntrue\n1.75f64\n-2i32\n",
    );
    // No elements: reduce gives ne, scan an empty array.
    runs_to(
        "typed0.fun",
        TYPED,
        "0 empty([0]f32) empty([0]i32)",
        &["value"],
        "0.0f32\n1i32\nempty([0]f32)\nf32.nan\n0i32\n-2147483648i32\n\
         9223372036854775807i64\nfalse\n0.0f64\n-2i32\n",
    );
}

const SHARED: &str = "def main (n: int) =
  let (m: mem) = alloc n
  let (a: [n]f32 @ m -> R(n)) = kernel i < n do
    let (x: f32) = f32(i)
    let (y: f32) = x * 1.5
    in (y)
  let (b: [n]i32 @ m -> n + {(n : 1)}) = kernel i < n do
    let (x: i32) = i32(i)
    let (y: i32) = 0 - x
    in (y)
  let (sa: f32) = reduce (+) 0 a
  let (sb: i32) = reduce (min) 0 b
  in (a, b, sa, sb)
";

#[test]
fn arrays_of_two_types_share_one_block_in_disjoint_bytes() {
    // An f32 array in bytes 0 .. 4n and an i32 array in bytes 4n .. 8n of
    // one block of n i64s.
    runs_to(
        "shared.funmem",
        SHARED,
        "3",
        &["heap", "value"],
        "[0.0f32, 1.5f32, 3.0f32]\n[0i32, -1i32, -2i32]\n4.5f32\n-2i32\n",
    );
}

#[test]
fn overlapping_arrays_of_different_widths_race_in_a_kernel() {
    // a[k] is bytes 8k .. 8k+8, b[k] bytes 4 + 4k .. 8 + 4k: iteration 2
    // writes b[2] (bytes 12 .. 16) inside a[1], which iteration 1 wrote.
    let src = "def main (n: int) =
  let (m: mem) = alloc n
  let (a: [n]i64 @ m -> R(n)) (b: [n]i32 @ m -> 1 + {(n : 1)}) = kernel i < n do
    let (x: i32) = i32(i)
    in (i, x)
  in (a, b)
";
    let e = fails_with(
        "mixed_race.funmem",
        src,
        "3",
        &[],
        1,
        "3:3: E-MEM-KERNEL: data race",
    );
    assert!(
        e.contains(
            "block 0 at offset 12 was written by iteration 1 and then written by iteration 2"
        ),
        "{e}"
    );
    // Without the third iteration nothing overlaps across iterations.
    runs_to(
        "mixed_race2.funmem",
        src,
        "2",
        &["heap"],
        "[0i64, 1i64]\n[0i32, 1i32]\n",
    );
}

#[test]
fn out_of_bounds_is_any_byte_outside_the_block() {
    // A block of 3 i32s is 12 bytes: a[1] of an i64 array is bytes 8 .. 16.
    let src = "def main (n: int) =
  let (m: mem) = alloc n i32
  let (a: [n]i64 @ m -> R(n)) = kernel i < n do
    in (i)
  in (a)
";
    let e = fails_with("oob.funmem", src, "3", &[], 1, "3:3: E-MEM-KERNEL:");
    assert!(
        e.contains(
            "write of element 1 (i64, bytes 8..16) is out of bounds of block 0, of 12 bytes"
        ),
        "{e}"
    );
    // Two i64s fit in 4 i32s' bytes.
    let four = src
        .replace("alloc n i32", "alloc nn i32")
        .replace("  let (m: mem)", "  let (nn: int) = n + n\n  let (m: mem)");
    runs_to("oob2.funmem", &four, "2", &["heap"], "[0i64, 1i64]\n");
}

#[test]
fn a_scan_that_writes_where_it_reads_races() {
    let src = "def main (n: int) (xs: [n]i64 @ m -> R(n)) (m: mem) =
  let (ys: [n]i64 @ m -> R(n)) = scan (+) 0 xs
  in (ys)
";
    let e = fails_with(
        "scanrace.funmem",
        src,
        "3 [1, 2, 3]",
        &[],
        1,
        "2:3: E-MEM-SCAN:",
    );
    assert!(
        e.contains("the scan writes where it reads: byte 0 of block 0"),
        "{e}"
    );
    // The value semantics has no memory to overlap.
    runs_to(
        "scanrace_v.funmem",
        src,
        "3 [1, 2, 3]",
        &["value"],
        "[1i64, 3i64, 6i64]\n",
    );
    // Into a block of its own it is fine; inside a kernel iteration a scan
    // is that iteration's sequential code.
    let ok = "def main (n: int) (xs: [n]i64 @ m -> R(n)) (m: mem) =
  let (o: mem) = alloc n
  let (ys: [n]i64 @ o -> R(n)) = scan (+) 0 xs
  let (nn: int) = n * n
  let (q: mem) = alloc nn
  let (zs: [n][n]i64 @ q -> R(n, n)) = kernel i < n do
    let (r: [n]i64 @ q -> i * n + {(n : 1)}) = scan (*) i xs
    in (r)
  in (ys, zs)
";
    runs_to(
        "scanok.funmem",
        ok,
        "3 [1, 2, 3]",
        &["heap", "value"],
        "[1i64, 3i64, 6i64]\n[[0i64, 0i64, 0i64], [1i64, 2i64, 6i64], [2i64, 4i64, 12i64]]\n",
    );
}

#[test]
fn a_stuck_operator_is_stuck_in_the_reduction() {
    let fun = "def main (n: int) (xs: [n]i32) =
  let (s: i32) = reduce (\\(a: i32) (b: i32) -> let (c: i32) = a / b in (c)) 100 xs
  in (s)
";
    let e = fails_with(
        "stuck.fun",
        fun,
        "3 [5i32, 0i32, 2i32]",
        &[],
        1,
        "2:3: E-REDUCE:",
    );
    assert!(e.contains("division by zero"), "{e}");
    runs_to(
        "stuck_ok.fun",
        fun,
        "3 [5i32, 1i32, 2i32]",
        &["value"],
        "10i32\n",
    );
    let mem = "def main (n: int) (xs: [n]i32 @ m -> R(n)) (m: mem) =
  let (o: mem) = alloc n i32
  let (s: [n]i32 @ o -> R(n)) = scan (\\(a: i32) (b: i32) -> let (c: i32) = a / b in (c)) 100 xs
  in (s)
";
    let input = "3 [5i32, 0i32, 2i32]";
    fails_with("stuck.funmem", mem, input, &[], 1, "3:3: E-MEM-SCAN:");
    fails_with(
        "stuck_v.funmem",
        mem,
        input,
        &["--semantics", "value"],
        1,
        "3:3: E-SCAN:",
    );
    runs_to(
        "stuck_ok.funmem",
        mem,
        "3 [5i32, 1i32, 2i32]",
        &["heap", "value"],
        "[20i32, 20i32, 10i32]\n",
    );
}

const INPUT_2D3D: &str = "2 3 [[1.0f64, 2.0f64, 3.0f64], [4.0f64, 5.0f64, 6.0f64]] \
    [[[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]], [[7i32, 8i32, 9i32], [10i32, 11i32, 12i32]]] 1";

const PARTIAL_OUT: &str = "[4.0f64, 5.0f64, 6.0f64]\n[2.0f64, 5.0f64]\n[5.0f64, 6.0f64]\n\
    [[7i32, 8i32, 9i32], [10i32, 11i32, 12i32]]\n[10i32, 11i32, 12i32]\n15.0f64\n";

#[test]
fn partial_indexing_of_2d_and_3d_arrays_transposed_and_sliced() {
    let fun = "def main (n: int) (m: int) (xss: [n][m]f64) (x3: [2][n][m]i32) (k: int) =
  let (row: [m]f64) = xss[k]
  let (t: [m][n]f64) = transpose xss
  let (col: [n]f64) = t[1]
  let (s: [n][2]f64) = xss[0:n, 1:2]
  let (srow: [2]f64) = s[k]
  let (plane: [n][m]i32) = x3[1]
  let (r3: [m]i32) = x3[1, k]
  let (tot: f64) = reduce (+) 0 row
  in (row, col, srow, plane, r3, tot)
";
    runs_to("partial.fun", fun, INPUT_2D3D, &["value"], PARTIAL_OUT);
    // In FUNMEM the rows live in their sources' blocks (the checker wants
    // exactly these index functions: no copy).
    let mem = "def main (n: int) (m: int) (xss: [n][m]f64 @ b -> R(n, m)) (x3: [2][n][m]i32 @ c -> R(2, n, m)) (k: int) (b: mem) (c: mem) =
  let (row: [m]f64 @ b -> k * m + {(m : 1)}) = xss[k]
  let (t: [m][n]f64 @ b -> 0 + {(m : 1) (n : m)}) = transpose xss
  let (col: [n]f64 @ b -> 1 + {(n : m)}) = t[1]
  let (s: [n][2]f64 @ b -> 1 + {(n : m) (2 : 1)}) = xss[0:n, 1:2]
  let (srow: [2]f64 @ b -> 1 + k * m + {(2 : 1)}) = s[k]
  let (plane: [n][m]i32 @ c -> n * m + {(n : m) (m : 1)}) = x3[1]
  let (r3: [m]i32 @ c -> n * m + k * m + {(m : 1)}) = x3[1, k]
  let (tot: f64) = reduce (+) 0 row
  in (row, col, srow, plane, r3, tot)
";
    runs_to(
        "partial.funmem",
        mem,
        INPUT_2D3D,
        &["heap", "value"],
        PARTIAL_OUT,
    );
    // A row out of bounds is stuck in E-INDEX / E-MEM-INDEX.
    let bad = INPUT_2D3D.replace("]]] 1", "]]] 2");
    fails_with(
        "partial_oob.fun",
        fun,
        &bad,
        &[],
        1,
        "2:3: E-INDEX: index 2 is out of bounds",
    );
    fails_with(
        "partial_oob.funmem",
        mem,
        &bad,
        &[],
        1,
        "2:3: E-MEM-INDEX: index 2 is out of bounds",
    );
}

#[test]
fn the_heap_limit_counts_bytes_in_8_byte_cells() {
    let src = "def main (n: int) =
  let (m: mem) = alloc n i32
  let (a: [n]i32 @ m -> R(n)) = kernel i < n do
    let (x: i32) = i32(i)
    in (x)
  let (z: mem) = alloc 1 bool
  in (a)
";
    // 16 i32s are 64 bytes, 8 cells, and one bool a cell of its own; 17
    // i32s are 68 bytes, 9 cells.
    let f = write_temp("limit.funmem", src);
    let o = funmem(&["run", &f, "--max-heap", "9"], "16");
    assert_exit(&o, 0);
    let e = fails_with(
        "limit.funmem",
        src,
        "17",
        &["--max-heap", "8"],
        1,
        "2:3: E-MEM-ALLOC:",
    );
    assert!(e.contains("allocating 9 cells"), "{e}");
    fails_with(
        "limit2.funmem",
        src,
        "16",
        &["--max-heap", "8"],
        1,
        "6:3: E-MEM-ALLOC:",
    );
}
