//! Error paths: a translation that drops a bounds guard is caught by
//! `funmem fuzz` itself, by the generator's error paths and by the guard
//! check, each on its own.
//!
//! The planted fault `KernelIndexInBounds` takes any enclosing kernel's
//! index as in bounds, so `xs[i]` inside `kernel i < m` gets no
//! `assert index` even when `xs` has another size. It shows at run time
//! only when such an index goes past its array's end yet stays inside the
//! array's block (a slice of a larger array, an inner dimension of a 2-D
//! array): FUNMEM gets stuck (E-INDEX) where IMP reads a neighbouring
//! element. Past the block, IMP gets stuck too, "like the source", and the
//! differential checks see nothing.
//!
//! Why the old campaign misses it. Before this work the generator used a
//! kernel's index only on dimensions it is provably below, so the guard
//! the fault drops was one that always held; its risky indices were
//! variables, literals and `d - k`, rarely a kernel's index over another
//! size, and never a slice's index past the slice's end inside its block.
//! The old campaign missed the fault over 23,000 programs. Here the same
//! campaign (same seed, count and checks) without risky programs
//! (`fail_share` 0) and without the guard check (`Checks::STAGES`) stands
//! for it: its programs never index out of bounds at run time, so the
//! dropped guards never matter and it finds nothing, as the old one did.
//! With risky programs (the default share) the new error paths catch the
//! fault as a wrong error; with the guard check, even programs that never
//! go wrong catch it (as `unguarded`), since dead code and zero-trip
//! kernels index arrays with kernel indices of other sizes.

use funmem_oracle::campaign::{self, case_for, reduce_failure, Config};
use funmem_oracle::check::{check_case_with, Checks, FailureKind};
use funmem_oracle::reduce::size;
use funmem_transforms::fault::{self, Fault};

/// A seed whose error paths catch the fault early (its 8th program), so
/// that the test is quick; over seeds 0 to 39 the median was about 300
/// programs and the worst about 1,900 (`explore_seeds`). Since the
/// generator makes element types, seed 6 no longer catches it in 40
/// programs; of seeds 0 to 19 only seed 0 does. Since it makes
/// coalescing's root statements, seed 0 needs 169 programs; seed 31
/// catches it in its 3rd (over seeds 0 to 39: median about 250, worst
/// 913).
const SEED: u64 = 31;
/// Programs per campaign: a few seconds each in a debug build.
const COUNT: u64 = 40;

fn config(checks: Checks, fail_share: f64, planted: bool) -> Config {
    let mut cfg = Config::new(
        SEED,
        funmem_transforms::pass::parse_list("simplify").expect("passes"),
    );
    cfg.count = Some(COUNT);
    cfg.threads = 2;
    cfg.reduce_tries = 60;
    cfg.checks = checks;
    cfg.gen.fail_share = fail_share;
    cfg.on_worker = if planted {
        || fault::set(Fault::KernelIndexInBounds)
    } else {
        || fault::set(Fault::None)
    };
    cfg
}

fn kinds(cfg: &Config) -> Vec<FailureKind> {
    let s = campaign::run(cfg, &()).expect("runs");
    assert_eq!(s.programs, COUNT);
    s.failures.iter().map(|f| f.kind).collect()
}

#[test]
fn the_generators_error_paths_catch_a_dropped_guard_without_the_guard_check() {
    let found = kinds(&config(Checks::STAGES, 0.1, true));
    assert!(
        found
            .iter()
            .any(|k| matches!(k, FailureKind::WrongError | FailureKind::Disagrees)),
        "not caught: {found:?}"
    );
    assert!(!found.contains(&FailureKind::Unguarded));
}

#[test]
fn the_guard_check_catches_a_dropped_guard_on_programs_that_never_go_wrong() {
    let found = kinds(&config(Checks::ALL, 0.0, true));
    assert!(found.contains(&FailureKind::Unguarded), "{found:?}");
}

#[test]
fn without_risky_programs_or_the_guard_check_the_dropped_guard_goes_unseen() {
    assert_eq!(kinds(&config(Checks::STAGES, 0.0, true)), []);
}

#[test]
fn the_shipped_translation_passes_both() {
    assert_eq!(kinds(&config(Checks::STAGES, 0.1, false)), []);
    assert_eq!(kinds(&config(Checks::ALL, 0.1, false)), []);
}

/// Figures (run with `--release -- --ignored`): for seeds 0 to 39, the
/// first program of 3,000 with which the error paths alone (no guard
/// check) catch the fault.
#[test]
#[ignore]
fn explore_seeds() {
    fault::set(Fault::KernelIndexInBounds);
    let cfg = config(Checks::STAGES, 0.1, true);
    for seed in 0..40u64 {
        let k = (0..3000u64).find(|&k| {
            let case = case_for(seed, k, &cfg.gen);
            check_case_with(&case, &cfg.passes, cfg.limits, Checks::STAGES).is_err()
        });
        eprintln!("seed {seed}: {k:?}");
    }
}

/// Figures for the report (run with `--release -- --ignored`): the first
/// program of 3,000 that catches the fault, with and without the guard
/// check, and the reduced program.
#[test]
#[ignore]
fn programs_to_first_detection() {
    for checks in [Checks::STAGES, Checks::ALL] {
        let cfg = Config {
            seed: 0,
            checks,
            reduce_tries: 2000,
            ..config(checks, 0.1, true)
        };
        fault::set(Fault::KernelIndexInBounds);
        let found = (0..3000u64).find_map(|k| {
            let case = case_for(cfg.seed, k, &cfg.gen);
            check_case_with(&case, &cfg.passes, cfg.limits, checks)
                .err()
                .map(|f| (k, case, f))
        });
        let Some((k, case, f)) = found else {
            panic!("{checks:?}: not caught in 3000 programs");
        };
        let (small, f2) = reduce_failure(&case, &f, &cfg);
        fault::set(Fault::None);
        eprintln!(
            "{checks:?}: program {k} ({} programs): {} at `{}`; {} statements reduced to {}:\n{}",
            k + 1,
            f2.kind.name(),
            f2.stage,
            size(&case.program),
            size(&small.program),
            small.program
        );
    }
}
