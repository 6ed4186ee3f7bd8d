//! Test blocks whose `structure` names a pass list (`structure
//! simplify,hoist-allocs { ... }`): the list runs on the program lowered to
//! FUNMEM, its result is counted and the cases run on it; a list naming a
//! pass that does not exist is skipped and says which. And the thesis
//! examples of papers/serup2017/ (Serup, Memory Block Merging in Futhark,
//! MSc thesis, DIKU 2017): their outputs hold on every stage.

mod common;

use common::{assert_exit, text, write_temp};

/// `funmem ARGS` with no standard input, bounded as every CLI test is.
fn funmem(args: &[&str]) -> std::process::Output {
    common::funmem(args, "")
}

/// A program whose allocations `hoist-allocs` moves up (four `alloc`s and
/// two `copy`s after `simplify`), with the test block `block` (after
/// `-- ==`).
fn program(block: &str) -> String {
    format!(
        "-- A kernel, a copy and an update.\n-- ==\n{block}def main (n: int) (xs: [n]int) =\n  \
         let (ys: [n]int) = kernel i < n do\n    \
         let (y: int) = xs[i] + 1\n    in (y)\n  \
         let (m: int) = n + 1\n  \
         let (zs: [m]int) = iota m\n  \
         let (ws: [m]int) = copy zs\n  \
         let (vs: [m]int) = zs with [0] = 7\n  \
         in (ys, ws, vs)\n"
    )
}

/// The case every program below has, and its right output.
const CASE: &str =
    "-- input { 2 [1, 5] }\n-- output { [2i64, 6i64] [0i64, 1i64, 2i64] [7i64, 1i64, 2i64] }\n";

#[test]
fn a_pass_list_pipeline_is_run_counted_and_its_cases_run_on_it() {
    let f = write_temp(
        "pipeline_ok.fun",
        &program(&format!(
            "{CASE}-- structure simplify,hoist-allocs {{ Alloc 4 copy 2 update 1 }}\n\
             -- structure simplify, hoist-allocs {{ kernel 1 }}\n"
        )),
    );
    let o = funmem(&["test", &f]);
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    assert!(!out.contains("SKIP"), "{out}");
    // The same program without the structure items: the pass list adds
    // its two stages to the case (its result under the heap and value
    // semantics, its IMP translation under the heap one) and four counts.
    let g = write_temp("pipeline_none.fun", &program(CASE));
    let base = text(&funmem(&["test", &g]).stdout);
    let passed = |s: &str| -> usize {
        s.lines()
            .last()
            .and_then(|l| l.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no tally in {s}"))
    };
    assert_eq!(passed(&out), passed(&base) + 3 + 4, "{out}\n{base}");
}

#[test]
fn a_wrong_count_after_a_pass_list_fails_with_the_count() {
    let f = write_temp(
        "pipeline_count.fun",
        &program(&format!(
            "{CASE}-- structure simplify,hoist-allocs {{ Alloc 5 copy 2 }}\n"
        )),
    );
    let o = funmem(&["test", &f]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(
        out.contains("structure Alloc: 4 × Alloc, expected 5"),
        "{out}"
    );
    assert!(out.contains(", 1 failed"), "{out}");
}

#[test]
fn the_cases_run_on_the_pass_list_stages() {
    // A wrong output fails on every stage, the pass list's included.
    let f = write_temp(
        "pipeline_cases.fun",
        &program(
            "-- input { 2 [1, 5] }\n-- output { [2i64, 6i64] [0i64, 1i64, 2i64] [7i64, 1i64, 3i64] }\n\
             -- structure hoist-allocs { Alloc 4 }\n",
        ),
    );
    let o = funmem(&["test", &f]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(out.contains("after hoist-allocs, heap semantics"), "{out}");
    assert!(
        out.contains("after hoist-allocs, lower to IMP, heap semantics"),
        "{out}"
    );
}

#[test]
fn a_pass_list_with_an_unknown_pass_is_skipped_and_names_it() {
    let f = write_temp(
        "pipeline_unknown.fun",
        &program(&format!(
            "{CASE}-- structure simplify,no-such-pass {{ Alloc 1 }}\n\
             -- structure simplify,no-such-pass {{ copy 0 }}\n"
        )),
    );
    let o = funmem(&["test", &f]);
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    assert!(
        out.contains("SKIP")
            && out.contains("structure simplify,no-such-pass: unknown pass `no-such-pass`"),
        "{out}"
    );
    assert!(out.contains(", 0 failed, 2 skipped"), "{out}");
}

#[test]
fn a_malformed_pipeline_name_is_a_bad_test_block() {
    let f = write_temp(
        "pipeline_bad.fun",
        &program("-- structure simplify,,hoist-allocs { Alloc 1 }\n"),
    );
    let o = funmem(&["test", &f]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(
        out.contains("bad test block") && out.contains("comma-separated pass list"),
        "{out}"
    );
}

/// The thesis examples: every program has outputs and a `structure
/// simplify,coalesce` expectation, is a row of the README's table, and
/// `funmem test` passes on them (the coalesce counts skipped while the
/// pass does not exist).
#[test]
fn the_thesis_examples_pass_and_each_states_what_coalescing_gives() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/papers/serup2017");
    let readme = std::fs::read_to_string(format!("{dir}/README.md")).expect("the README");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .expect("the folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".fun"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    for f in &files {
        let path = format!("{dir}/{f}");
        let cases = common::block_cases(&path);
        assert!(!cases.is_empty(), "{f}: no output");
        let text = std::fs::read_to_string(&path).expect("the program");
        let spec = funmem_lang::testspec::parse(&text)
            .expect("a test block")
            .expect("a test block");
        // The thesis's counts after coalescing, of allocations and copies.
        let coalesce = spec
            .structures
            .iter()
            .find(|s| s.pipeline.as_deref() == Some("simplify,coalesce"))
            .unwrap_or_else(|| panic!("{f}: no `structure simplify,coalesce`"));
        let names: Vec<&str> = coalesce.counts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Alloc", "copy"], "{f}");
        assert!(
            readme.contains(&format!("| `{f}` |")),
            "{f} is not in the README's table"
        );
    }
    let o = funmem(&["test", "papers/serup2017"]);
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    assert!(out.contains(" passed, 0 failed"), "{out}");
}

#[test]
fn a_funmem_program_runs_the_pass_list_as_it_is() {
    // No lowering first: the list runs on the FUNMEM source itself (its
    // stage is there, as the wrong output on it shows).
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/papers/ifl2022/sec5_kernel_alloc.funmem"
    ))
    .expect("the program");
    let body = &src[src.find("def main").expect("a main")..];
    let ok = write_temp(
        "pipeline_mem.funmem",
        &format!(
            "-- ==\n-- input {{ 2 3 }}\n-- output {{ [[0i64, 1i64, 2i64], [1i64, 2i64, 3i64]] }}\n\
             -- structure expand-gpu {{ Alloc 3 kernel 2 }}\n{body}"
        ),
    );
    let o = funmem(&["test", &ok]);
    assert_exit(&o, 0);
    assert!(!text(&o.stdout).contains("SKIP"), "{}", text(&o.stdout));
    let bad = write_temp(
        "pipeline_mem_bad.funmem",
        &format!(
            "-- ==\n-- input {{ 2 3 }}\n-- output {{ [[0i64, 1i64, 2i64], [1i64, 2i64, 4i64]] }}\n\
             -- structure hoist-allocs,expand-gpu {{ Alloc 3 }}\n{body}"
        ),
    );
    let o = funmem(&["test", &bad]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    assert!(
        out.contains("after hoist-allocs,expand-gpu, heap semantics")
            && out.contains("after hoist-allocs,expand-gpu, lower to IMP, heap semantics"),
        "{out}"
    );
}
