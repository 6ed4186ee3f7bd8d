//! Testing the tester: each planted fault of the translations
//! (funmem_transforms::fault) is found by the checks within a bounded
//! number of generated programs, and the failure is reduced to a program of
//! a few statements, which the shipped translations handle correctly.

use funmem_oracle::campaign::{case_for, reduce_failure, Config};
use funmem_oracle::check::check_case;
use funmem_oracle::reduce::size;
use funmem_transforms::fault::{self, Fault};

/// Programs tried before giving up on finding a fault.
const BUDGET: u64 = 2000;
/// Largest acceptable reduced program, in statements.
const SMALL: usize = 6;
/// The same for the faults of loops and updates: a loop and the arrays it
/// carries, or an update and the copy it consumes, need a few statements
/// more.
const SMALL_NEW: usize = 10;

/// The faults planted here are in the translation of the constructs
/// every program has (fresh arrays, kernels, transposes, expansion), so the
/// programs leave out loops, updates, concat, replicate and multi-result
/// kernels (whose faults `planted18` plants): these are the programs the
/// generator made before them, so seed 7 finds each fault as it did.
fn config(passes: &str) -> Config {
    let mut cfg = Config {
        threads: 1,
        reduce_tries: 3000,
        ..Config::new(7, funmem_transforms::pass::parse_list(passes).unwrap())
    };
    cfg.gen.constructs = funmem_oracle::Constructs::NONE;
    // Bounded by tries, not time: what the reducer reaches must not
    // depend on how fast the machine (or a debug build) is.
    cfg.reduce_time = None;
    cfg
}

fn find_and_reduce(f: Fault) {
    find_and_reduce_through(f, "simplify");
}

fn find_and_reduce_through(f: Fault, passes: &str) {
    find_and_reduce_with(f, config(passes), SMALL);
}

/// As `config`, but with the generator's default shares of loops,
/// updates, concat, replicate and multi-result kernels (the campaign that
/// `funmem fuzz` runs).
fn config_new_constructs(passes: &str) -> Config {
    let mut cfg = config(passes);
    cfg.gen.constructs = funmem_oracle::GenConfig::default().constructs;
    cfg
}

/// Finds `f` with `cfg` and reduces it to at most `max_size` statements.
fn find_and_reduce_with(f: Fault, cfg: Config, max_size: usize) {
    fault::set(f);
    let found = (0..BUDGET).find_map(|k| {
        let case = case_for(cfg.seed, k, &cfg.gen);
        check_case(&case, &cfg.passes, cfg.limits)
            .err()
            .map(|e| (k, case, e))
    });
    let Some((k, case, failure)) = found else {
        fault::set(Fault::None);
        panic!("{f:?} was not found in {BUDGET} programs");
    };
    let (small, f2) = reduce_failure(&case, &failure, &cfg);
    fault::set(Fault::None);
    eprintln!(
        "{f:?}: found by program {k} ({} programs), {} at `{}`, reduced from {} to {} statements:\n{}",
        k + 1,
        f2.kind.name(),
        f2.stage,
        size(&case.program),
        size(&small.program),
        small.program
    );
    assert!(f2.same_as(&failure));
    assert!(
        size(&small.program) <= max_size,
        "{f:?}: reduced only to {} statements:\n{}",
        size(&small.program),
        small.program
    );
    // Without the fault, the reduced program passes every check.
    assert!(
        check_case(&small, &cfg.passes, cfg.limits).is_ok(),
        "{f:?}: the reduced program fails without the fault too:\n{}",
        small.program
    );
}

#[test]
fn an_off_by_one_offset_of_fresh_arrays_is_caught() {
    find_and_reduce(Fault::FreshOffsetOffByOne);
}

#[test]
fn a_missing_copy_of_a_kernel_result_is_caught() {
    find_and_reduce(Fault::MissingKernelCopy);
}

#[test]
fn a_wrong_stride_in_transpose_is_caught() {
    find_and_reduce(Fault::TransposeStride);
}

#[test]
fn an_expansion_with_overlapping_parts_is_caught() {
    find_and_reduce_through(Fault::ExpandOverlap, "expand-cpu");
}

/// A campaign reduces one failure of each kind (stage, kind, message up to
/// numbers) and lists the programs that failed alike with it.
#[test]
fn failures_alike_are_reduced_once() {
    let cfg = Config {
        count: Some(120),
        threads: 2,
        reduce_tries: 200,
        on_worker: || fault::set(Fault::MissingKernelCopy),
        ..config("simplify")
    };
    let s = funmem_oracle::campaign::run(&cfg, &()).unwrap();
    let failing: usize = s.failures.iter().map(|f| 1 + f.duplicates.len()).sum();
    eprintln!(
        "{} failing programs, {} reduced: {:?}",
        failing,
        s.failures.len(),
        s.failures
            .iter()
            .map(|f| (&f.stage, f.kind, &f.message))
            .collect::<Vec<_>>()
    );
    assert!(failing > s.failures.len(), "some failures are alike");
    // Every program is counted once, in order, with no repeats.
    let mut all: Vec<u64> = s
        .failures
        .iter()
        .flat_map(|f| std::iter::once(f.index).chain(f.duplicates.iter().copied()))
        .collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), failing);
    for f in &s.failures {
        assert!(f.duplicates.iter().all(|&d| d > f.index));
    }
}

#[test]
fn an_update_lowered_over_a_source_still_read_is_caught() {
    find_and_reduce_with(
        Fault::UpdateFreshBlock,
        config_new_constructs("simplify"),
        SMALL_NEW,
    );
}

#[test]
fn a_loop_result_read_from_the_initial_block_is_caught() {
    find_and_reduce_with(
        Fault::LoopResultParamBlock,
        config_new_constructs("simplify"),
        SMALL_NEW,
    );
}
