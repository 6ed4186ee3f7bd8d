//! Large blocks on OpenCL (PoCL): a block the device cannot hold is refused
//! before it is made, as the allocation's own error with its name, size
//! and position; the blocks a program allocates are bounded by the device,
//! not by the host's heap limit (which still bounds the input blocks laid
//! out on the host); every new block is zeroed, a block re-made in a loop
//! and a block of more than 2^31 bytes included (NVIDIA's
//! clEnqueueFillBuffer stalls from 2^31 bytes, so the driver zeroes with a
//! kernel of its own). `FUNMEM_SKIP_OPENCL=1` skips them.

mod common;

use common::{assert_exit, funmem, opencl, text, write_temp};

const BIG: &str = "def main (n: i64) =
  var xs: mem; xs <- alloc n f32;
  kernel i < n do xs[i] <- f32(i % 7) done;
  var r: f32;
  r <- xs[n - 1]
out (r)
";

#[test]
fn a_block_larger_than_the_device_allows_is_refused_by_name() {
    if !opencl() {
        return;
    }
    let f = write_temp("large_refused.imp", BIG);
    let args = ["run", &f, "--semantics", "opencl", "--device", "pocl"];
    let o = funmem(&args, "1000000000000");
    assert_exit(&o, 1);
    let e = text(&o.stderr);
    assert!(e.contains("large_refused.imp:2:16"), "{e}");
    assert!(
        e.contains(
            "E-IMP-ALLOC: out of device memory: block `xs` of 4000000000000 bytes is larger \
             than the device's largest buffer"
        ),
        "{e}"
    );
}

#[test]
fn device_blocks_are_not_bound_by_the_host_heap_limit() {
    if !opencl() {
        return;
    }
    let f = write_temp("large_heap.imp", BIG);
    let args = [
        "run",
        &f,
        "--semantics",
        "opencl",
        "--device",
        "pocl",
        "--max-heap",
        "1000",
    ];
    let o = funmem(&args, "100000");
    assert_exit(&o, 0);
    assert_eq!(text(&o.stdout), "4.0f32\n");
    // An input block is laid out on the host: the heap limit bounds it.
    let f = write_temp(
        "large_input.imp",
        "def main (n: i64) (xs: [n]i64 @ xm -> R(n)) =
  var r: i64;
  r <- xm[0]
out (r)
",
    );
    let args = [
        "run",
        &f,
        "--semantics",
        "opencl",
        "--device",
        "pocl",
        "--max-heap",
        "2",
    ];
    let o = funmem(&args, "4 [1, 2, 3, 4]");
    assert_exit(&o, 1);
    assert!(text(&o.stderr).contains("heap limit of 2 cells"));
}

#[test]
fn every_new_block_is_zeroed() {
    if !opencl() {
        return;
    }
    // Each iteration reads its new block's last element, then fills it:
    // a block re-made over a freed one still starts at zero. Sizes that are
    // not whole 8-byte words included.
    let f = write_temp(
        "large_zero.imp",
        "def main (n: i64) =
  var s: i64;
  s <- 0;
  for j < 3 do
    var ys: mem; ys <- alloc n + j i32;
    var r: i32;
    r <- ys[n + j - 1];
    s <- s + i64(r);
    kernel i < n + j do ys[i] <- 7i32 done
  done;
  var bs: mem; bs <- alloc 5 bool;
  var b: bool;
  b <- bs[4]
out (s, b)
",
    );
    let args = ["run", &f, "--semantics", "opencl", "--device", "pocl"];
    let o = funmem(&args, "1001");
    assert_exit(&o, 0);
    assert_eq!(text(&o.stdout), "0i64\nfalse\n");
}

#[test]
fn a_block_of_more_than_2_to_the_31_bytes_is_zeroed_to_its_end() {
    if !opencl() {
        return;
    }
    let f = write_temp(
        "large_2g.imp",
        "def main (n: i64) =
  var xs: mem; xs <- alloc n bool;
  var b: bool;
  b <- xs[n - 1]
out (b)
",
    );
    let args = ["run", &f, "--semantics", "opencl", "--device", "pocl"];
    let o = funmem(&args, "2147483665");
    let e = text(&o.stderr);
    // A PoCL whose largest buffer is smaller refuses it, by name.
    if e.contains("larger than the device's largest buffer") {
        assert_exit(&o, 1);
        return;
    }
    assert_exit(&o, 0);
    assert_eq!(text(&o.stdout), "false\n");
}
