//! Migration (`migrate`, Børgesen's thesis): the command line on it, its
//! explanation, and properties on generated programs: every stage valid
//! and agreeing (the fuzzer's checks), and the read sites outside kernels
//! never more after the pass than before (the worst case, counted
//! statically).

mod common;

use common::{assert_exit, text};
use funmem_lang::ast::Lang;
use funmem_lang::count::host_reads;
use funmem_oracle::campaign::case_for;
use funmem_oracle::GenConfig;
use funmem_transforms::obligation::NoProver;
use funmem_transforms::pass::lookup;

fn funmem(args: &[&str]) -> std::process::Output {
    common::funmem(args, "")
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

/// The worst case never gets worse: on 1500 generated programs, lowered
/// and simplified, `migrate` never leaves more read sites outside kernels
/// than there were, and removes some somewhere.
#[test]
fn migration_never_adds_read_sites() {
    let gen = GenConfig::default();
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
        let (before, after) = (host_reads(&s.program.body), host_reads(&m.program.body));
        assert!(
            after <= before,
            "program {k}: {before} read sites before, {after} after:\n{}",
            funmem_lang::print::program(&m.program)
        );
        before_all += before;
        after_all += after;
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
    let gen = GenConfig::default();
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
    assert!(checked >= 300 && with_sources >= 100, "{checked} checked, {with_sources} with a read");
}
