//! The command line on IMP loops on OpenCL (PoCL): `lower --to opencl`
//! shows host loops and C loops, `run --semantics opencl --stats` counts a
//! device-computed `while` condition's reads and the host's writes, and
//! endless loops, on the host or on the device, end with exit 1 and a
//! clear out-of-fuel error instead of running on. `FUNMEM_SKIP_OPENCL=1`
//! skips the runs.

mod common;

use common::{assert_exit, funmem as funmem_stdin, opencl, write_temp};

/// A `while` whose condition a kernel computes, and host writes.
const DEVICE_WHILE: &str = "def main (n: int) (limit: int) =
  var a: mem; a <- alloc n;
  a[0] <- 7;
  var flag: mem; flag <- alloc 1;
  var go: int; go <- 1;
  while go do
    kernel i < n do var x: int; x <- a[i]; a[i] <- x + 1 done;
    kernel i < 1 do var y: int; y <- a[0]; flag[0] <- y < limit done;
    go <- flag[0]
  done
out (r: [n]int @ a -> R(n))
";

#[test]
fn lower_to_opencl_shows_host_loops_and_c_loops() {
    let f = write_temp(
        "loops.imp",
        "def main (n: int) (t: int) =
  var a: mem; a <- alloc n;
  for r < t do
    kernel i < n do
      var s: int; s <- 0;
      for j < i do s <- s + j done;
      a[i] <- s + r
    done
  done
out (r: [n]int @ a -> R(n))
",
    );
    let o = funmem_stdin(&["lower", &f, "--to", "opencl"], "");
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    for text in [
        "//  for r < t do\n//    launch k0(r, a) over i < n\n//  done",
        "for (long v_j = 0; v_j < v_j_iterations; v_j++) {",
        "if (fm_err[0] != 0) return;",
    ] {
        assert!(out.contains(text), "{text}: {out}");
    }
}

#[test]
fn a_device_condition_is_read_back_each_iteration() {
    if !opencl() {
        return;
    }
    let f = write_temp("device_while.imp", DEVICE_WHILE);
    let args = [
        "run",
        &f,
        "--semantics",
        "opencl",
        "--device",
        "pocl",
        "--stats",
    ];
    let o = funmem_stdin(&args, "3 10");
    assert_exit(&o, 0);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "[10i64, 3i64, 3i64]\n");
    let err = String::from_utf8_lossy(&o.stderr);
    // 3 iterations: 3 reads of the flag, then the result block.
    for text in [
        "kernel launches:      6\n",
        "device-to-host:       4 transfers, 48 B (3 synchronous host reads)",
        "host-to-device:       1 transfers, 8 B (1 host writes)",
    ] {
        assert!(err.contains(text), "{text}: {err}");
    }
    // The interpreter agrees.
    let o = funmem_stdin(&["run", &f], "3 10");
    assert_exit(&o, 0);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "[10i64, 3i64, 3i64]\n");
}

#[test]
fn endless_loops_end_with_a_clear_limit() {
    if !opencl() {
        return;
    }
    // On the host: the flag never drops.
    let f = write_temp("host_while.imp", DEVICE_WHILE);
    let o = funmem_stdin(
        &[
            "run",
            &f,
            "--semantics",
            "opencl",
            "--device",
            "pocl",
            "--fuel",
            "50000000",
        ],
        "3 9223372036854775807",
    );
    assert_exit(&o, 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("E-IMP-WHILE"), "{err}");
    assert!(err.contains("out of fuel in a loop on the host"), "{err}");
    assert!(err.contains("--fuel"), "{err}");
    // On the device, with the default fuel: a while in each work-item.
    let f = write_temp(
        "device_spin.imp",
        "def main (n: int) =
  var m: mem; m <- alloc n;
  kernel i < n do
    var go: int; go <- 1;
    var k: int; k <- 0;
    while go do k <- k + 1 done;
    m[i] <- k
  done
out (r: [n]int @ m -> R(n))
",
    );
    let o = funmem_stdin(
        &[
            "run",
            &f,
            "--semantics",
            "opencl",
            "--device",
            "pocl",
            "--fuel",
            "100000000",
        ],
        "4",
    );
    assert_exit(&o, 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("E-IMP-WHILE"), "{err}");
    assert!(err.contains("out of fuel"), "{err}");
}
