//! Migration (`migrate`, Børgesen's thesis): the command line on it, its
//! explanation, and properties on generated programs: every stage valid
//! and agreeing (the fuzzer's checks), and the read sites outside kernels
//! never more after the pass than before (the worst case, counted
//! statically).

mod common;

use common::{assert_exit, text};
use funmem_lang::ast::Lang;
use funmem_lang::count::{host_reads, worse_reads, worst_host_reads};
use funmem_oracle::campaign::case_for;
use funmem_oracle::{Constructs, GenConfig};
use funmem_transforms::obligation::NoProver;
use funmem_transforms::pass::lookup;

fn funmem(args: &[&str]) -> std::process::Output {
    common::funmem(args, "")
}

/// The generator with host-side scalar work in most programs.
fn host_work() -> GenConfig {
    GenConfig {
        constructs: Constructs::default().parse("host=0.8").expect("parses"),
        ..GenConfig::default()
    }
}

#[test]
fn explain_prints_the_graph_the_cut_and_each_migrated_statement() {
    let o = funmem(&[
        "opt",
        "papers/borgesen2022/fig01_vector_norm.fun",
        "--passes",
        "simplify,migrate",
        "--explain",
    ]);
    assert_exit(&o, 0);
    let err = text(&o.stderr);
    assert!(err.contains("digraph migration {"), "{err}");
    assert!(err.contains("migrate: cut C (0): empty"), "{err}");
    assert!(err.contains("its result stays on the device"), "{err}");
    assert!(
        err.contains("host reads (read sites outside kernels): 1 before, 0 after"),
        "{err}"
    );
    let out = text(&o.stdout);
    assert!(out.contains("kernel t < 1 do"), "{out}");
}

#[test]
fn the_corpus_programs_pass_their_tests_with_migration() {
    let o = funmem(&["test", "tests/programs/migrate"]);
    assert_exit(&o, 0);
    assert!(text(&o.stdout).contains(" 0 failed"));
}

#[test]
fn a_fixed_seed_fuzz_sample_through_migration_has_no_failure() {
    let o = funmem(&[
        "fuzz",
        "--passes",
        "simplify,migrate",
        "--count",
        "400",
        "--seed",
        "24",
    ]);
    assert_exit(&o, 0);
    let out = text(&o.stdout) + &text(&o.stderr);
    assert!(out.contains(" 0 failures"), "{out}");
    assert!(
        out.contains("migrate: ") && out.contains("host reads removed"),
        "{out}"
    );
}

/// The worst case never gets worse: on 1500 generated programs with
/// host-side work, lowered and simplified, the synchronous reads outside
/// kernels after `migrate`, counted as a polynomial in the loops' trip
/// counts (a read in a loop runs K times, a branch counts as its worse
/// side), are never more than before for large K; and some are removed.
/// (A read moved out of a loop may add reads after it: more read sites,
/// and more reads in a run of few iterations, as the thesis's Fig. 16 and
/// zero-trip loops show; the worst case is what migration minimises.)
#[test]
fn migration_never_makes_the_worst_case_worse() {
    let gen = host_work();
    let simplify = lookup("simplify").unwrap();
    let migrate = lookup("migrate").unwrap();
    let (mut before_all, mut after_all) = (0, 0);
    for k in 0..1500 {
        let p = case_for(24, k, &gen).program;
        let p = if p.lang == Lang::Fun {
            match funmem_transforms::transform_program(&p) {
                Ok(q) => q,
                Err(_) => continue,
            }
        } else {
            p
        };
        let Ok(s) = simplify.run(&p, &NoProver) else {
            continue;
        };
        let m = migrate.run(&s.program, &NoProver).expect("migrate runs");
        let (before, after) = (
            worst_host_reads(&s.program.body),
            worst_host_reads(&m.program.body),
        );
        assert!(
            !worse_reads(&after, &before),
            "program {k}: worst case {before:?} before, {after:?} after:\n{}",
            funmem_lang::print::program(&m.program)
        );
        before_all += host_reads(&s.program.body);
        after_all += host_reads(&m.program.body);
    }
    assert!(after_all < before_all, "{before_all} -> {after_all}");
}

/// The cut is minimal, and D least among minimal cuts, on small programs:
/// on every generated program without loops (whose isolation makes the
/// flow the thesis's per-loop answer rather than the whole graph's) whose
/// graph has at most 16 vertices, a brute force over all partitions finds
/// no better one, and exactly one as good (Lemma 2).
#[test]
fn the_cut_is_minimal_on_small_programs() {
    let gen = host_work();
    let simplify = lookup("simplify").unwrap();
    let mut checked = 0;
    let mut with_sources = 0;
    for k in 0..3000 {
        let p = case_for(24, k, &gen).program;
        let Ok(p) = (if p.lang == Lang::Fun {
            funmem_transforms::transform_program(&p)
        } else {
            Ok(p)
        }) else {
            continue;
        };
        let Ok(s) = simplify.run(&p, &NoProver) else {
            continue;
        };
        let (g, sol) = funmem_transforms::migrate::solve(&s.program);
        if g.has_loop_edges() || g.len() > 16 {
            continue;
        }
        let (c, d, count) = g.brute_force().expect("small");
        assert_eq!(
            (sol.cut_size(), sol.device_size(), count),
            (c, d, 1),
            "program {k}:\n{}",
            g.to_dot(Some(&sol))
        );
        checked += 1;
        with_sources += usize::from(!g.sources().is_empty());
    }
    assert!(
        checked >= 300 && with_sources >= 100,
        "{checked} checked, {with_sources} with a read"
    );
}

/// `funmem stats` reports read sites and the reads a run makes, before
/// and after migration: Fig. 20's while loop reads once an iteration
/// before (5 elements, none above the threshold: 5 reads) and once after
/// the loop, which moved whole.
#[test]
fn stats_report_reads_per_run_before_and_after() {
    let o = common::funmem(
        &[
            "stats",
            "papers/borgesen2022/fig20_first_above_threshold.fun",
            "--passes",
            "simplify,migrate",
            "--json",
        ],
        "5 9 [1, 2, 3, 4, 5]",
    );
    assert_exit(&o, 0);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let st = &j["stages"];
    assert_eq!(st[0]["stage"], "simplify", "{j}");
    assert_eq!(
        (
            st[0]["host_read_sites"].as_u64(),
            st[0]["host_reads_run"].as_u64()
        ),
        (Some(2), Some(5)),
        "{j}"
    );
    assert_eq!(st[1]["stage"], "migrate", "{j}");
    assert_eq!(
        (
            st[1]["host_read_sites"].as_u64(),
            st[1]["host_reads_run"].as_u64()
        ),
        (Some(1), Some(1)),
        "{j}"
    );
}
