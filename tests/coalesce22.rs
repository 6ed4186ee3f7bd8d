//! The pass `coalesce` from the command line: what `--explain` says, the
//! programs it makes (validated against the sources), errors that stay
//! errors, no copy code where a copy became a no-op, and fixed-seed fuzz
//! samples through the CPU and GPU pipelines (and on PoCL).

mod common;

use common::{assert_exit, funmem, opencl, text, write_temp};

/// A chain (`b = copy a`, `c = concat b d`), an update of a copied
/// parameter with a fresh row, and a kernel whose iterations build rows.
const CHAIN: &str = "\
def main (n: int) (m: int) (xss: [n][m]int) =
  let (a: [n]int) = iota n
  let (b: [n]int) = copy a
  let (d: [n]int) = kernel i < n do
     let (v: int) = b[i]
     let (w: int) = v * 2
     in (w)
  let (nn: int) = n + n
  let (c: [nn]int) = concat b d
  let (y: [n][m]int) = copy xss
  let (row: [m]int) = kernel j < m do
     let (t: int) = j * 3
     in (t)
  let (z: [n][m]int) = y with [0] = row
  let (k: [n][m]int) = kernel i < n do
     let (r: [m]int) = replicate m i
     in (r)
  in (c, z, k)
";

#[test]
fn explain_lists_every_candidate_with_what_decided_it() {
    let f = write_temp("coalesce22_chain.fun", CHAIN);
    let o = funmem(
        &["opt", &f, "--passes", "simplify,coalesce", "--explain"],
        "",
    );
    assert_exit(&o, 0);
    let err = text(&o.stderr);
    for line in [
        "`c = concat b d`: `d` built in `c_mem` at n + {(n : 1)}: applied",
        "`c = concat b d`: `b` built in `c_mem` at 0 + {(n : 1)}: applied",
        "`b = copy a`: `a` built in `c_mem` at 0 + {(n : 1)}: applied",
        "`z_res = copy z`: `z` built in `z_res_mem` at 0 + {(n : m) (m : 1)}: applied",
        "`z = y with [..] = row`: `row` built in `z_res_mem` at 0 + {(m : 1)}: applied",
        "the result of the kernel of `k`: `r` built in `k_mem` at i * m + {(m : 1)}: applied",
        "`y = copy xss`: `xss` into `z_res_mem`: refused, C4 (fresh source): `xss` is not created in this body",
    ] {
        assert!(err.contains(line), "missing {line:?} in:\n{err}");
    }
    let out = text(&o.stdout);
    // The chain lives in c's block; a's, b's, d's, row's and r's blocks
    // are gone, and so are the copies b = copy a and z_res = copy z (y,
    // the update z of it and row are built in the result's block).
    for gone in [
        "a_mem", "b_mem", "d_mem", "row_mem", "r_mem", "y_mem", "= copy a", "= copy z",
    ] {
        assert!(!out.contains(gone), "{gone} left in:\n{out}");
    }
    assert!(
        out.contains("let (a: [n]int @ c_mem -> R(n)) = iota n"),
        "{out}"
    );
    // The update's index 0 is not provably below n (n may be 0): the
    // check before row's creation.
    assert!(out.contains("y_check"), "{out}");
}

#[test]
fn coalesced_programs_are_valid_and_agree_with_their_sources() {
    let f = write_temp("coalesce22_chain_v.fun", CHAIN);
    for passes in ["simplify,coalesce", "simplify,coalesce,expand-gpu"] {
        let o = funmem(
            &["validate", &f, "--passes", passes],
            "3 2 [[1, 2], [3, 4], [5, 6]]",
        );
        assert_exit(&o, 0);
        let out = text(&o.stdout);
        assert!(
            out.contains("coalesce         FUNMEM  heap+value  valid, agrees with the source"),
            "{out}"
        );
    }
}

/// `z with [i] = row` with `i` from the input: out of bounds for i = 5.
const OUT_OF_BOUNDS: &str = "\
def main (n: int) (i: int) (zs: *[n][n]int) =
  let (row: [n]int) = kernel j < n do
     let (v: int) = j + 100
     in (v)
  let (z: [n][n]int) = zs with [i] = row
  in (z)
";

#[test]
fn an_update_out_of_bounds_goes_wrong_before_its_source_is_written() {
    let f = write_temp("coalesce22_oob.fun", OUT_OF_BOUNDS);
    let o = funmem(&["opt", &f, "--passes", "simplify,coalesce"], "");
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    // The check comes before the kernel that builds row in zs's block.
    let check = out.find("zs_check").expect(&out);
    let kernel = out.find("= kernel j").expect(&out);
    assert!(check < kernel, "{out}");
    assert!(
        out.contains("@ zs_mem -> i * n + {(n : 1)}) = kernel"),
        "{out}"
    );
    // In bounds: the row lands in row 1; out of bounds: E-MEM-SLICE, like
    // the source's update, and never a write into the wrong row.
    let o = funmem(
        &["validate", &f, "--passes", "simplify,coalesce"],
        "2 1 [[1, 2], [3, 4]]",
    );
    assert_exit(&o, 0);
    let o = funmem(
        &["validate", &f, "--passes", "simplify,coalesce"],
        "2 5 [[1, 2], [3, 4]]",
    );
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(
        out.contains("coalesce         FUNMEM  heap+value  goes wrong like the source (stuck): E-SLICE: slice 5:1 is out of bounds"),
        "{out}"
    );
    let p = write_temp(
        "coalesce22_oob.funmem",
        &text(&funmem(&["opt", &f, "--passes", "simplify,coalesce"], "").stdout),
    );
    let o = funmem(&["run", &p], "2 5 [[1, 2], [3, 4]]");
    assert_exit(&o, 1);
    assert!(
        text(&o.stderr).contains("out of bounds"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn no_copy_code_where_a_kernel_result_was_built_in_place() {
    let f = write_temp(
        "coalesce22_rows.fun",
        "def main (n: int) (m: int) =\n  let (k: [n][m]int) = kernel i < n do\n     let (r: [m]int) = replicate m i\n     in (r)\n  in (k)\n",
    );
    let before = text(&funmem(&["lower", &f, "--to", "imp", "--passes", "simplify"], "").stdout);
    let after = text(
        &funmem(
            &["lower", &f, "--to", "imp", "--passes", "simplify,coalesce"],
            "",
        )
        .stdout,
    );
    // Before: each iteration allocates its row and copies it (a nested
    // kernel reading the row's block); after: the replicate writes k's
    // block, and nothing is copied.
    assert!(before.contains("r_mem"), "{before}");
    assert!(!after.contains("r_mem"), "{after}");
    assert!(
        after.matches("kernel").count() < before.matches("kernel").count(),
        "{before}\n{after}"
    );
}

/// A fixed-seed sample of the fuzz campaigns: no failure, and coalescing
/// fires on a good share of the candidates.
#[test]
fn fixed_seed_fuzz_samples_pass_and_coalesce() {
    for passes in ["simplify,coalesce", "simplify,coalesce,expand-gpu"] {
        let o = funmem(
            &[
                "fuzz", "--count", "300", "--seed", "22", "--passes", passes, "--json",
            ],
            "",
        );
        let out = text(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{out}");
        let s: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(s["failures"].as_array().map(Vec::len), Some(0), "{out}");
        let cands = s["tally"]["coalesce: candidates"].as_u64().unwrap_or(0);
        let done = s["tally"]["coalesce: coalesced"].as_u64().unwrap_or(0);
        assert!(
            cands >= 300 && done * 4 >= cands,
            "{cands} candidates, {done} coalesced"
        );
    }
}

#[test]
fn a_fixed_seed_fuzz_sample_runs_on_pocl_through_coalescing() {
    if !opencl() {
        return;
    }
    // --opencl's default passes are the GPU pipeline, coalescing included.
    let o = funmem(
        &["fuzz", "--opencl", "pocl", "--count", "100", "--seed", "22"],
        "",
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", text(&o.stderr));
    assert!(
        out.contains("passes simplify,migrate,coalesce,reuse,expand-gpu"),
        "{out}"
    );
    assert!(out.contains(" 0 disagreements"), "{out}");
}
