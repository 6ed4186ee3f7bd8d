//! The provers' limits hold whatever the obligation: a size that is a
//! polynomial of degree 27 in a kernel's index once kept Z3 (and the LMAD
//! procedure) busy for minutes inside `opt`, `lower --to opencl`,
//! `validate` and `prove`. Each command here is killed after a generous
//! bound, which fails the test; the limits themselves are a second or so.

mod common;

use common::{assert_exit, write_temp};
use std::process::Output;
use std::time::{Duration, Instant};

const PROGRAM: &str = "tests/programs/fun/expand_high_degree.fun";

/// Longer than any command here may take; reaching it fails the test.
const BOUND: Duration = Duration::from_secs(60);

/// Runs funmem with `stdin`, killing it (and failing) after [`BOUND`].
fn funmem(args: &[&str], stdin: &str) -> Output {
    common::funmem_bounded(args, stdin, 0, BOUND)
}

/// `((x + m)^3)^3)^3` written out as the program's products.
fn degree_27(x: &str) -> String {
    let a = format!("({x} + m)");
    let b = format!("({a} * {a} * {a})");
    let c = format!("({b} * {b} * {b})");
    format!("({c} * {c} * {c})")
}

/// The at-most claim expansion states for the program.
fn high_degree_obligation() -> String {
    format!(
        "obligation high_degree_at_most\n  expect unknown\n  given 0 <= i, i < n\n  at-most {} - h + i <= max({} - h + 0, {} - h + (n - 1))\n",
        degree_27("i"),
        degree_27("0"),
        degree_27("n - 1"),
    )
}

#[test]
fn expansion_leaves_the_allocation_and_finishes() {
    let start = Instant::now();
    let o = funmem(&["opt", PROGRAM, "--passes", "simplify,expand-gpu"], "");
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    // Unknown: the allocation stays inside the kernel, after `kernel`.
    let kernel = out.find("kernel i < n").expect("the kernel");
    let alloc = out.find("= alloc ").expect("an allocation");
    assert!(out[kernel..].contains("alloc "), "{out}");
    assert!(alloc < kernel, "the result's block is still made first");
    // One Z3 query of 1 s, killed, and a little more.
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn validate_hoists_a_size_beyond_the_provers_with_its_maximum() {
    let o = funmem(
        &["validate", PROGRAM, "--passes", "simplify,expand-gpu"],
        "3 -1 -2",
    );
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("expand-gpu       FUNMEM  heap+value  valid, agrees with the source"),
        "{out}"
    );
    // The degree-27 size is beyond both provers (the LMAD procedure refuses
    // the polynomial, Z3 runs out of time: `prove_keeps_its_time_limit`
    // checks both limits on the same obligation), so expansion hoists the
    // allocation with the maximum of its sizes computed before the kernel,
    // whose obligation the LMAD procedure proves.
    assert!(
        out.contains("(the maximum of the sizes, computed before the kernel)"),
        "{out}"
    );
    assert!(out.contains("proved by lmad"), "{out}");
    assert!(!out.contains("unknown"), "{out}");
}

/// An allocation that expansion leaves in a kernel: the block of an array
/// carried around a loop, which a fresh array replaces in every iteration
/// (hoisting it would need double buffering; docs/expansion.md).
const CARRIED: &str = "def main (n: int) (k: int) =
  let (ys: [n]int) = kernel i < n do
    let (a: [k]int) = iota k
    let (b: [k]int) = loop (acc: [k]int) = (a) for j < 3 do
      let (c: [k]int) = copy acc
      let (d: [k]int) = c with [0] = j
      in (d)
    let (y: int) = reduce (+) 0 b
    in (y)
  in (ys)
";

#[test]
fn lower_to_opencl_refuses_clearly() {
    let f = write_temp("carried.fun", CARRIED);
    let o = funmem(&["lower", &f, "--to", "opencl"], "");
    assert_exit(&o, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("this allocation is inside a kernel, and OpenCL kernels cannot allocate"),
        "{err}"
    );
    assert!(err.contains(":3:5:"), "positioned at the iota: {err}");
}

#[test]
fn prove_keeps_its_time_limit() {
    let f = write_temp("high_degree.obl", &high_degree_obligation());
    for (prover, ms) in [
        ("z3", "300"),
        ("z3-bare", "300"),
        ("all", "500"),
        ("lmad", "500"),
    ] {
        let start = Instant::now();
        let o = funmem(&["prove", &f, "--prover", prover, "--timeout-ms", ms], "");
        let took = start.elapsed();
        assert_exit(&o, 0);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.starts_with("high_degree_at_most  unknown  none"),
            "{prover}: {out}"
        );
        if prover != "lmad" {
            assert!(
                out.contains(&format!("Z3 exceeded its {ms} ms limit; killed")),
                "{prover}: {out}"
            );
        }
        // The limit, the other provers' budgets (about a second in all),
        // and starting the binary.
        assert!(took < Duration::from_secs(15), "{prover}: {took:?}");
    }
}

#[test]
fn the_search_keeps_its_work_limit() {
    // Two domains of 60,000 indices at every valuation of six variables.
    let f = write_temp(
        "big_domains.obl",
        "obligation big_domains\n  given a != b, c != d, e != f\n  disjoint 0 + {(60000 : 1)} and 60000 + {(60000 : 1)}\n",
    );
    let o = funmem(&["prove", &f, "--prover", "search"], "");
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("unknown") && out.contains("the search's budget of domain indices spent"),
        "{out}"
    );
}
