//! Memory block reuse from the command line: what `--explain` says (the
//! aliases, first and last uses, the interference graph and each
//! decision), the three strategies on a program where they differ, the
//! rules' programs of tests/programs/reuse passing `funmem test`, and
//! fixed-seed fuzz samples through the CPU and GPU pipelines (and on
//! PoCL).

mod common;

use common::{assert_exit, funmem, opencl, text};

/// A program of tests/programs/reuse.
fn program(name: &str) -> String {
    format!("{}/tests/programs/reuse/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The `alloc` statements of a printed program.
fn allocs(out: &str) -> usize {
    out.lines()
        .filter(|l| l.contains(": mem) = alloc "))
        .count()
}

#[test]
fn explain_shows_aliases_uses_interference_and_decisions() {
    let f = program("alias_if.fun");
    let o = funmem(&["opt", &f, "--passes", "simplify,reuse", "--explain"], "");
    assert_exit(&o, 0);
    let err = text(&o.stderr);
    for line in [
        "reuse:",
        // The if's block stands for both branches' blocks...
        "  alias: `xs_mem` (an `if`'s block) may be `as_mem`, `bs_mem`",
        // ...so both are used where xs is, in zs's kernel.
        "  liveness: `as_mem` first used at `as` (its result), last used at `zs` (its result)",
        "  liveness: `bs_mem` first used at `bs` (its result), last used at `zs` (its result)",
        "  interference: `ys_mem` - `as_mem`: both alive at `ys` (its result)",
        "  interference: `ys_mem` - `bs_mem`: both alive at `ys` (its result)",
        // An exception, with its obligation.
        "  interference: `zs_mem` - `ys_mem` do not interfere: they meet only in kernel `zs`, where each iteration is done with `ys_mem` before it uses `zs_mem` and no two iterations' places meet (1 obligations proved)",
        // zs reads xs (as or bs) at the index it writes: as may share.
        "  reuse: `as_mem` uses `zs_mem`'s block (the same size)",
        "  reuse: `ys_mem` keeps its own block (not `zs_mem`: interferes with `as_mem`;",
    ] {
        assert!(err.contains(line), "missing {line:?} in:\n{err}");
    }
    let out = text(&o.stdout);
    assert!(out.contains("let (as: [n]int @ zs_mem -> R(n))"), "{out}");
    assert!(!out.contains("as_mem"), "{out}");
    assert_eq!(allocs(&out), 3, "{out}");
}

#[test]
fn explain_says_which_obligation_refused_a_sharing() {
    let o = funmem(
        &[
            "opt",
            &program("size_larger.fun"),
            "--passes",
            "simplify,reuse",
            "--explain",
        ],
        "",
    );
    assert_exit(&o, 0);
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "reuse: `ys_mem` keeps its own block (not `xs_mem`: `ys_mem` in `xs_mem`: obligation `m * 8 <= 1 * n * 8` refuted"
        ),
        "{err}"
    );
    let o = funmem(
        &[
            "opt",
            &program("ok_size_smaller.fun"),
            "--passes",
            "simplify,reuse",
            "--explain",
        ],
        "",
    );
    assert_exit(&o, 0);
    let err = text(&o.stderr);
    assert!(
        err.contains("reuse: `ys_mem` uses `xs_mem`'s block (proved to fit)"),
        "{err}"
    );
    assert_eq!(allocs(&text(&o.stdout)), 0, "{}", text(&o.stdout));
}

/// The linear scan needs 3 blocks where colouring and the exact search
/// need 2: the thesis's fig. 9.6 interference
/// (papers/serup2017/reuse_fig9_06_table.funmem says why).
#[test]
fn first_fit_needs_three_blocks_where_colouring_and_the_search_need_two() {
    let f = format!(
        "{}/papers/serup2017/reuse_fig9_06_table.funmem",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut got = Vec::new();
    for pass in ["reuse-first-fit", "reuse", "reuse-optimal"] {
        let passes = format!("simplify,{pass}");
        let o = funmem(&["opt", &f, "--passes", &passes, "--explain"], "");
        assert_exit(&o, 0);
        let out = text(&o.stdout);
        got.push((pass, allocs(&out)));
        if pass == "reuse-optimal" {
            let err = text(&o.stderr);
            assert!(err.contains(", proved least"), "{err}");
        }
        // Whatever it shares, the program means what it meant.
        let v = funmem(&["validate", &f, "--passes", &passes], "3 [1, 2, 3]");
        assert_exit(&v, 0);
        let report = text(&v.stdout);
        assert!(
            report
                .lines()
                .any(|l| l.starts_with(pass) && l.ends_with("valid, agrees with the source")),
            "{report}"
        );
    }
    assert_eq!(
        got,
        [("reuse-first-fit", 3), ("reuse", 2), ("reuse-optimal", 2)]
    );
}

#[test]
fn the_rules_programs_pass_their_tests() {
    let o = funmem(&["test", &program("")], "");
    let out = text(&o.stdout) + &text(&o.stderr);
    assert_exit(&o, 0);
    assert!(out.contains(" 0 failed"), "{out}");
}

/// `reuse: N of M blocks reused` from a fuzz summary: (N, M).
fn reused(out: &str) -> (u64, u64) {
    let line = out
        .lines()
        .find(|l| l.starts_with("reuse: ") && l.contains(" blocks reused"))
        .unwrap_or_else(|| panic!("no reuse line in:\n{out}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let n = words[1].parse().unwrap_or_else(|_| panic!("{line}"));
    let m = words[3].parse().unwrap_or_else(|_| panic!("{line}"));
    (n, m)
}

fn fuzz_sample(passes: &str, seed: &str) {
    let o = funmem(
        &["fuzz", "--passes", passes, "--count", "150", "--seed", seed],
        "",
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", text(&o.stderr));
    assert!(out.contains(&format!("passes {passes}:")), "{out}");
    assert!(out.contains(" 0 failures"), "{out}");
    let (n, m) = reused(&out);
    assert!(n > 0 && n <= m, "{n} of {m}:\n{out}");
}

#[test]
fn a_fixed_seed_fuzz_sample_passes_through_reuse() {
    fuzz_sample("simplify,reuse", "23");
}

#[test]
fn a_fixed_seed_fuzz_sample_passes_through_the_gpu_pipeline() {
    fuzz_sample("simplify,migrate,coalesce,reuse,expand-gpu", "24");
}

#[test]
fn a_fixed_seed_fuzz_sample_runs_on_pocl_through_reuse() {
    if !opencl() {
        return;
    }
    // --opencl's default passes are the GPU pipeline, reuse included.
    let o = funmem(
        &["fuzz", "--opencl", "pocl", "--count", "60", "--seed", "23"],
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
