//! Perfectly nested kernels on OpenCL (PoCL): a 2-D or 3-D nest runs as
//! one NDRange, and gives what the interpreter gives, on results and on
//! errors: a negative inner bound, an empty inner kernel, a prefix that
//! reads a block the inner kernel writes through another name (which the
//! driver must run as loops), a launch past the work-item cap.
//! `FUNMEM_SKIP_OPENCL=1` skips the runs.

mod common;

use common::{assert_exit, funmem, opencl, text, write_temp};

/// Runs `file` on `input` with the interpreter and on PoCL, and asserts
/// the same exit code and output, and for an error the same position and
/// rule; returns the exit code and the interpreter's output, or the first
/// line of its error.
fn agree(file: &str, input: &str) -> (i32, String) {
    let interp = funmem(&["run", file], input);
    let ocl = funmem(
        &["run", file, "--semantics", "opencl", "--device", "pocl"],
        input,
    );
    let code = interp.status.code().unwrap_or(-1);
    assert_exit(&ocl, code);
    assert_eq!(text(&ocl.stdout), text(&interp.stdout), "{file} on {input}");
    let first = |b: &[u8]| text(b).lines().next().unwrap_or_default().to_string();
    let (e1, e2) = (first(&interp.stderr), first(&ocl.stderr));
    // `FILE:LINE:COL: RULE:` (the messages' own words may differ).
    let head = |e: &str| e.splitn(5, ':').take(4).collect::<Vec<_>>().join(":");
    assert_eq!(head(&e2), head(&e1), "{file} on {input}: {e1} / {e2}");
    (code, text(&interp.stdout) + &e1)
}

const MAP2: &str = "def main (n: int) (m: int) =
  var o: mem; o <- alloc n * m;
  kernel i < n do
    kernel j < m do o[i * m + j] <- i * 100 + j done
  done
out (r: [n][m]int @ o -> R(n, m))
";

const MAP3: &str = "def main (n: int) (m: int) (p: int) (q: int) (a: [q]int @ am -> R(q)) =
  var o: mem; o <- alloc n * m * p;
  kernel i < n do
    var x: int; x <- am[i]; var y: int; y <- x * 1000;
    kernel j < m do
      var z: int; z <- y + j * 10;
      kernel k < p do o[(i * m + j) * p + k] <- z + k done
    done
  done
out (r: [n][m][p]int @ o -> R(n, m, p))
";

/// A nested kernel whose bound may be negative while the allocation is not.
const NEG: &str = "def main (n: int) (m: int) =
  var o: mem; o <- alloc n * 4;
  kernel i < n do
    kernel j < m do o[i * 4 + j] <- j done
  done
out (r: [n][4]int @ o -> R(n, 4))
";

#[test]
fn nests_are_one_launch() {
    let f = write_temp("nested_map3.imp", MAP3);
    let o = funmem(&["lower", &f, "--to", "opencl"], "");
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    assert!(out.contains("over i < n * m * p"), "{out}");
    assert!(out.contains("long fm_step1"), "{out}");
}

#[test]
fn a_2d_map_agrees_with_the_interpreter() {
    if !opencl() {
        return;
    }
    let f = write_temp("nested_map2.imp", MAP2);
    let (code, out) = agree(&f, "3 4");
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "[[0i64, 1i64, 2i64, 3i64], [100i64, 101i64, 102i64, 103i64], \
         [200i64, 201i64, 202i64, 203i64]]\n"
    );
    // More work-items than one work-group, in a shape that does not
    // divide it.
    let (code, out) = agree(&f, "7 300");
    assert_eq!(code, 0);
    assert!(out.contains("[600i64, 601i64, 602i64,"), "{out}");
    assert!(out.contains("899i64]]"), "{out}");
}

#[test]
fn a_3d_map_with_prefixes_agrees_with_the_interpreter() {
    if !opencl() {
        return;
    }
    let f = write_temp("nested_map3run.imp", MAP3);
    let (code, out) = agree(&f, "2 3 2 2 [5, 7]");
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "[[[5000i64, 5001i64], [5010i64, 5011i64], [5020i64, 5021i64]], \
         [[7000i64, 7001i64], [7010i64, 7011i64], [7020i64, 7021i64]]]\n"
    );
    // A prefix's read out of bounds is the same error.
    let (code, out) = agree(&f, "3 1 1 2 [5, 7]");
    assert_eq!(code, 1);
    assert!(out.contains("E-IMP-READ"), "{out}");
}

#[test]
fn empty_inner_kernels_launch_nothing_and_still_run_the_prefix() {
    if !opencl() {
        return;
    }
    let f = write_temp("nested_empty2.imp", MAP2);
    assert_eq!(agree(&f, "3 0"), (0, "empty([3][0]i64)\n".to_string()));
    assert_eq!(agree(&f, "0 5"), (0, "empty([0][5]i64)\n".to_string()));
    // The prefix runs once per outer iteration however many inner
    // iterations there are: its failure is the run's, even with none.
    let f = write_temp("nested_empty3.imp", MAP3);
    let (code, out) = agree(&f, "3 0 2 2 [5, 7]");
    assert_eq!(code, 1);
    assert!(out.contains("E-IMP-READ"), "{out}");
    let (code, out) = agree(&f, "3 4 0 2 [5, 7]");
    assert_eq!(code, 1);
    assert!(out.contains("E-IMP-READ"), "{out}");
    let (code, out) = agree(&f, "2 4 0 2 [5, 7]");
    assert_eq!((code, out.as_str()), (0, "empty([2][4][0]i64)\n"));
}

#[test]
fn a_negative_inner_bound_is_the_interpreters_error() {
    if !opencl() {
        return;
    }
    let f = write_temp("nested_negative.imp", NEG);
    let (code, out) = agree(&f, "3 -2");
    assert_eq!(code, 1);
    assert!(
        out.ends_with("E-IMP-KERNEL: negative kernel bound -2"),
        "{out}"
    );
    // No outer iteration: the inner bound is never evaluated.
    assert_eq!(agree(&f, "0 -2"), (0, "empty([0][4]i64)\n".to_string()));
    let o = funmem(
        &["run", &f, "--semantics", "opencl", "--device", "pocl"],
        "3 -2",
    );
    assert!(text(&o.stderr).contains("negative kernel bound -2"));
}

#[test]
fn a_prefix_read_of_a_block_the_nest_writes_runs_in_order() {
    if !opencl() {
        return;
    }
    // `p` is `am`: each row's first element is read before the row is
    // written, so the row is that element + 1, + 2, ...
    let f = write_temp(
        "nested_alias.imp",
        "def main (n: int) (m: int) (k: int) (a: [k]int @ am -> R(k)) =
  var p: mem; p <- am;
  kernel i < n do
    var x: int; x <- am[i * m];
    kernel j < m do p[i * m + j] <- x + j + 1 done
  done
out (r: [n][m]int @ p -> R(n, m))
",
    );
    let (code, out) = agree(&f, "2 3 6 [10, 0, 0, 20, 0, 0]");
    assert_eq!(
        (code, out.as_str()),
        (0, "[[11i64, 12i64, 13i64], [21i64, 22i64, 23i64]]\n")
    );
}

#[test]
fn an_inner_bound_past_the_cap_runs_as_a_loop() {
    if !opencl() {
        return;
    }
    // 2 * 2^32 work-items would pass the cap: the inner level loops, and
    // the first outer iteration writes out of bounds at once.
    let f = write_temp(
        "nested_huge.imp",
        "def main (n: int) (m: int) =
  var o: mem; o <- alloc 4;
  kernel i < n do
    kernel j < m do o[i * 2 + j] <- j done
  done
out (r: [4]int @ o -> R(4))
",
    );
    let (code, out) = agree(&f, "2 4294967296");
    assert_eq!(code, 1);
    assert!(out.contains("E-IMP-WRITE"), "{out}");
}

#[test]
fn a_kernel_over_two_inner_kernels_agrees_with_the_interpreter() {
    if !opencl() {
        return;
    }
    // Split into two launches: the second reads what the first wrote in
    // the same outer iteration (a row built in `t`, then copied reversed).
    let f = write_temp(
        "nested_fission.imp",
        "def main (n: int) (m: int) =
  var t: mem; t <- alloc n * m;
  var o: mem; o <- alloc n * m;
  kernel i < n do
    var b: int; b <- i * m;
    kernel j < m do t[b + j] <- i * 10 + j done;
    kernel j < m do var v: int; v <- t[b + m - 1 - j]; o[b + j] <- v done
  done
out (r: [n][m]int @ o -> R(n, m))
",
    );
    let (code, out) = agree(&f, "2 3");
    assert_eq!(
        (code, out.as_str()),
        (0, "[[2i64, 1i64, 0i64], [12i64, 11i64, 10i64]]\n")
    );
    let (code, out) = agree(&f, "2 -1");
    assert_eq!(code, 1, "{out}");
}

#[test]
fn a_flattened_launch_spends_its_work_items_from_the_fuel() {
    if !opencl() {
        return;
    }
    // 20 * 20 work-items do not fit a fuel of 100: the inner level runs as
    // a loop in each of the 20 work-items, whose fuel stops it, a limit
    // (exit 1) as on the interpreter; with 1000 the nest is flattened.
    let f = write_temp("nested_fuel.imp", MAP2);
    let ocl = ["--semantics", "opencl", "--device", "pocl"];
    for extra in [&[][..], &ocl[..]] {
        let mut args = vec!["run", f.as_str(), "--fuel", "100"];
        args.extend(extra);
        let o = funmem(&args, "20 20");
        assert_exit(&o, 1);
        assert!(text(&o.stderr).contains("fuel"), "{}", text(&o.stderr));
    }
    let mut args = vec!["run", f.as_str(), "--fuel", "100"];
    args.extend(ocl);
    let o = funmem(&args, "20 20");
    assert!(
        text(&o.stderr).contains("out of fuel in a kernel's nested loops"),
        "{}",
        text(&o.stderr)
    );
    args[3] = "1000";
    assert_exit(&funmem(&args, "20 20"), 0);
}
