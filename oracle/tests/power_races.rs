//! Issue 17, class 5: the race detector itself. A detector that misses
//! write-after-read races when the write is made inside a nested kernel
//! (the planted fault `RaceIgnoresReadsOnNestedWrite` of
//! funmem_semantics::fault) gives no wrong result the other checks could
//! see: the program just runs. `funmem fuzz --source funmem` draws programs
//! with exactly one race (gen_race) and compares the detector's report with
//! the brute-force reference's (eq. 4); that comparison catches the fault,
//! and the campaign without it does not.

use funmem_lang::ast::Lang;
use funmem_lang::parse::parse_program;
use funmem_oracle::campaign::{self, draws_race, Config, Source, Summary};
use funmem_oracle::check::{Checks, FailureKind};
use funmem_oracle::gen_mem::gen_funmem;
use funmem_oracle::reference::{names_a_conflict, reference_heap, RefOutcome};
use funmem_oracle::{GenConfig, Rng};
use funmem_semantics::error::{Access, ErrorKind, Limits};
use funmem_semantics::fault::{self, Fault};
use funmem_semantics::heap::run_heap;
use funmem_semantics::observer::NoObserver;
use funmem_semantics::value::{ArrayValue, Value};
use rand::SeedableRng;

fn faulty() {
    fault::set(Fault::RaceIgnoresReadsOnNestedWrite);
}

fn clean() {
    fault::set(Fault::None);
}

/// A fixed-seed FUNMEM campaign of `count` programs with these checks,
/// the fault on or off (on the workers, and here, where failures are
/// reduced).
fn campaign(count: u64, checks: Checks, with_fault: bool, reduce_tries: usize) -> Summary {
    let on_worker: fn() = if with_fault { faulty } else { clean };
    on_worker();
    let cfg = Config {
        count: Some(count),
        threads: 2,
        reduce_tries,
        source: Source::Funmem,
        checks,
        on_worker,
        ..Config::new(1, funmem_transforms::pass::parse_list("simplify").unwrap())
    };
    let s = campaign::run(&cfg, &()).expect("the campaign runs");
    clean();
    s
}

fn show(s: &Summary) -> String {
    s.failures
        .iter()
        .map(|f| {
            format!(
                "program {}: {} at `{}`: {}",
                f.index,
                f.kind.name(),
                f.stage,
                f.message
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Programs checked in CI (debug builds: about 20 a second).
const COUNT: u64 = 48;

/// The checks of the old campaign: everything but the race comparison.
const OLD: Checks = Checks {
    races: false,
    ..Checks::ALL
};

/// Each failure as (program, kind).
fn failures(s: &Summary) -> Vec<(u64, FailureKind)> {
    s.failures.iter().map(|f| (f.index, f.kind)).collect()
}

#[test]
fn a_detector_that_misses_write_after_read_is_caught_by_the_race_comparison() {
    let new = campaign(COUNT, Checks::ALL, true, 300);
    let found: Vec<_> = new
        .failures
        .iter()
        .filter(|f| f.kind == FailureKind::RaceReport)
        .collect();
    let first = found.first().unwrap_or_else(|| {
        panic!(
            "no race-report failure in {COUNT} programs:\n{}",
            show(&new)
        )
    });
    eprintln!(
        "{} race-report failures; the first by program {} ({} programs), reduced from {} to {} statements: {}",
        found.len(),
        first.index,
        first.index + 1,
        first.statements,
        first.reduced_statements,
        first.message
    );
    assert_eq!(first.stage, "source");
    assert!(found.iter().all(|f| draws_race(Source::Funmem, f.index)));
    assert!(first.reduced_statements < first.statements);
    // The same programs without the race comparison: the fault is
    // invisible. Where it hides a race the program looks race free (and
    // valid: the racing cell is never observed), so the old checks report
    // nothing there, and nothing anywhere that they do not report without
    // the fault too. (A racing source is itself a failure of the old
    // checks: invalid, Def. 3.1.)
    let old = failures(&campaign(COUNT, OLD, true, 0));
    let old_clean = failures(&campaign(COUNT, OLD, false, 0));
    for f in &found {
        assert!(
            old.iter().all(|(k, _)| *k != f.index),
            "the old checks see program {}: {old:?}",
            f.index
        );
    }
    assert!(
        old.iter().all(|f| old_clean.contains(f)),
        "the fault shows in the old checks: {old:?}, without it {old_clean:?}"
    );
}

#[test]
fn without_the_fault_the_race_comparison_finds_nothing() {
    let s = campaign(COUNT, Checks::ALL, false, 0);
    // (Failures of other programs are gen_mem's invalid flavours.)
    assert!(
        s.failures
            .iter()
            .all(|f| !draws_race(Source::Funmem, f.index)
                && !matches!(f.kind, FailureKind::RaceReport | FailureKind::Reference)),
        "{}",
        show(&s)
    );
    assert!(
        s.went_wrong >= COUNT / 4,
        "the one-race programs went wrong with a race"
    );
}

/// Programs to first detection over a 3,000-program campaign, and the
/// reduced program's size. Run with
/// `cargo test --release -p funmem-oracle --test power_races -- --ignored --nocapture`.
#[test]
#[ignore]
fn detection_over_3000_programs() {
    let s = campaign(3000, Checks::ALL, true, 0);
    let found: Vec<u64> = s
        .failures
        .iter()
        .filter(|f| f.kind == FailureKind::RaceReport)
        .map(|f| f.index)
        .collect();
    let one_race = (0..3000).filter(|&k| draws_race(Source::Funmem, k)).count();
    eprintln!(
        "{} race-report failures in 3000 programs ({one_race} of them one-race programs), at {:?}",
        found.len(),
        &found[..found.len().min(20)]
    );
    let k = *found.first().expect("found");
    faulty();
    let cfg = Config {
        source: Source::Funmem,
        ..Config::new(1, funmem_transforms::pass::parse_list("simplify").unwrap())
    };
    let case = campaign::case_from(Source::Funmem, 1, k, &cfg.gen);
    let f = campaign::check(&case, &cfg).expect_err("fails");
    let (small, f2) = campaign::reduce_failure(&case, &f, &cfg);
    clean();
    eprintln!(
        "first: program {k} ({} programs), {} statements reduced to {}: {f2}\n{}",
        k + 1,
        funmem_oracle::reduce::size(&case.program),
        funmem_oracle::reduce::size(&small.program),
        small.program
    );
}

/// The reference's conflicts of a program, by its text.
/// The conflicting pairs the reference finds, as (block, offset, earlier
/// access, later access).
fn conflicts_of(src: &str, inputs: &[Value]) -> Vec<(usize, i64, Access, Access)> {
    let p = parse_program(src, Lang::FunMem).expect("parses");
    match reference_heap(&p, inputs, 1_000_000) {
        RefOutcome::Race { conflicts } => conflicts
            .into_iter()
            .map(|r| (r.block, r.offset, r.first, r.second))
            .collect(),
        r => panic!("no race: {r:?}"),
    }
}

fn at(path: i64, write: bool) -> Access {
    Access {
        path: vec![path],
        write,
    }
}

#[test]
fn the_reference_names_every_conflicting_pair() {
    // Every iteration writes cell 0 of block 0: three pairs.
    let pairs = conflicts_of(
        "def main (n: int) =
           let (m: mem) = alloc 1
           let (ys: [n]int @ m -> 0 + {(n : 0)}) = kernel i < n do in (i)
           in (ys)",
        &[Value::Scalar(funmem_lang::prim::Const::I64(3))],
    );
    assert_eq!(
        pairs,
        vec![
            (0, 0, at(0, true), at(1, true)),
            (0, 0, at(0, true), at(2, true)),
            (0, 0, at(1, true), at(2, true)),
        ]
    );
    // Iteration i reads xs[i] (block 0, a `mem` parameter) and writes
    // where xs[i + 1] is; the input block has 3 cells (24 bytes), the
    // last write is stuck, but the races before it are found: read by 1
    // after written by 0 (bytes 8..16), and read by 2 after written by 1
    // (bytes 16..24). Offsets are bytes.
    let pairs = conflicts_of(
        "def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
           let (m: mem) = alloc 1
           let (ys: [n]int @ xm -> 1 + {(n : 1)}) = kernel i < n do
               let (x: int) = xs[i]
               in (x)
           in (ys)",
        &[
            Value::Scalar(funmem_lang::prim::Const::I64(3)),
            Value::Array(ArrayValue::vector(vec![1, 2, 3])),
        ],
    );
    assert_eq!(
        pairs,
        vec![
            (0, 8, at(0, true), at(1, false)),
            (0, 16, at(1, true), at(2, false))
        ]
    );
}

#[test]
fn the_detector_reports_one_of_the_references_conflicts_on_gen_mem_programs() {
    let cfg = GenConfig::default();
    let mut races = 0;
    for seed in 0..600 {
        let case = gen_funmem(&mut Rng::seed_from_u64(seed), &cfg);
        let (p, inputs) = (&case.program, &case.inputs);
        // Only programs: an ill-typed one means nothing to either side.
        if funmem_lang::check::check_program(p).is_err() {
            continue;
        }
        let r = reference_heap(p, inputs, 1_000_000);
        let h = run_heap(p, inputs, Limits::default(), true, &mut NoObserver);
        match (&r, &h) {
            (RefOutcome::Race { conflicts }, Err(e)) => {
                let ErrorKind::Race(report) = &e.kind else {
                    panic!("seed {seed}: the reference races, the heap: {e}\n{p}");
                };
                assert!(
                    names_a_conflict(report, conflicts),
                    "seed {seed}: {report:?} not among {conflicts:?}\n{p}"
                );
                races += 1;
            }
            (RefOutcome::Race { .. }, _) => panic!("seed {seed}: a race missed\n{p}"),
            (_, Err(e)) => assert!(!e.is_race(), "seed {seed}: a race invented: {e}\n{p}"),
            _ => {}
        }
    }
    assert!(races > 60, "{races} racing programs");
}
