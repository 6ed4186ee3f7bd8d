//! Missed optimisations: a planted fault that makes memory expansion skip
//! its rewrite (a variant size taken from the first iteration only, so the
//! obligation that each member fits its part cannot be proved) leaves every
//! program correct, so a campaign's checks all pass; the shares of what
//! the passes did, compared with a campaign without the fault
//! (`compare_with_baseline`, `funmem fuzz --baseline`), show it.

use funmem_oracle::baseline::{compare_with_baseline, DEFAULT_TOLERANCE};
use funmem_oracle::campaign::{self, Config, Summary};
use funmem_oracle::check::Tally;
use funmem_transforms::fault::{self, Fault};

/// The campaign: a fixed seed, expansion after the simplifier. (The
/// retry below does not re-expand every class in every campaign: with the
/// programs of the coalescing candidates' generator, seed 3 has one
/// allocation the faulty run leaves alone; seed 1 has none.)
fn config(passes: &str, count: u64) -> Config {
    Config {
        count: Some(count),
        threads: 2,
        ..Config::new(1, funmem_transforms::pass::parse_list(passes).unwrap())
    }
}

fn run(cfg: &Config) -> Summary {
    campaign::run(cfg, &()).expect("the campaign runs")
}

fn with_fault(cfg: &Config) -> Config {
    Config {
        on_worker: || fault::set(Fault::ExpandFirstIteration),
        ..cfg.clone()
    }
}

/// The campaign without and with the fault: both pass every check, and
/// the baseline comparison reports the variant sizes' share of expansion.
fn caught_by_the_baseline(passes: &str, pass: &str) {
    let cfg = config(passes, 60);
    let base = run(&cfg);
    assert!(base.failures.is_empty(), "{:?}", base.failures);
    let variant = format!("{pass}: variant sizes");
    assert!(
        base.tally.get(&variant) > 0,
        "the campaign makes no variant sizes: {:?}",
        base.tally
    );
    // The campaign without the fault matches its own summary.
    assert!(compare_with_baseline(&base, &base, DEFAULT_TOLERANCE)
        .unwrap()
        .is_empty());

    let faulty = run(&with_fault(&cfg));
    // The old campaign (no baseline) misses it: every check passes.
    assert!(faulty.failures.is_empty(), "{:?}", faulty.failures);
    assert_eq!(faulty.programs, base.programs);
    let drops = compare_with_baseline(&faulty, &base, DEFAULT_TOLERANCE).unwrap();
    eprintln!("{pass}:");
    for d in &drops {
        eprintln!("  {d}");
    }
    assert!(
        drops
            .iter()
            .any(|d| d.now.name == format!("{variant} expanded")),
        "no drop of {variant} expanded: {drops:?}"
    );
    // The fits-its-part obligations failed, so those classes were retried
    // with their maxima computed before the kernel like data-dependent
    // sizes: still expanded, at the cost of a pass over the iterations.
    let data = format!("{pass}: data-dependent sizes expanded");
    assert!(faulty.tally.get(&data) > base.tally.get(&data));
    assert_eq!(
        faulty.tally.get(&format!("{pass}: expanded")),
        base.tally.get(&format!("{pass}: expanded"))
    );
}

#[test]
fn a_variant_size_from_the_first_iteration_drops_the_gpu_expansion_share() {
    caught_by_the_baseline("simplify,expand-gpu", "expand-gpu");
}

#[test]
fn a_variant_size_from_the_first_iteration_drops_the_cpu_expansion_share() {
    caught_by_the_baseline("simplify,expand-cpu", "expand-cpu");
}

/// Programs to first detection: the campaign with and without the fault,
/// program by program, each prefix compared with a 3,000-program baseline
/// without it (of another seed). The prefixes without the fault never
/// drop. Run with
/// `cargo test --release -p funmem-oracle --test power_baseline -- --ignored --nocapture`.
#[test]
#[ignore]
fn programs_to_first_detection() {
    let passes = "simplify,expand-gpu";
    let base = run(&Config {
        seed: 4,
        ..config(passes, 3000)
    });
    let cfg = config(passes, 3000);
    let empty = Summary {
        programs: 0,
        tally: Tally::default(),
        ..base.clone()
    };
    let (mut clean, mut faulty) = (empty.clone(), empty);
    let mut first = None;
    for k in 0..3000 {
        let case = campaign::case_from(cfg.source, cfg.seed, k, &cfg.gen);
        for (s, f) in [
            (&mut clean, Fault::None),
            (&mut faulty, Fault::ExpandFirstIteration),
        ] {
            fault::set(f);
            if let Ok(c) = campaign::check(&case, &cfg) {
                s.tally.merge(&c.tally);
            }
            s.programs = k + 1;
        }
        fault::set(Fault::None);
        let drops = compare_with_baseline(&clean, &base, DEFAULT_TOLERANCE).unwrap();
        assert!(
            drops.is_empty(),
            "without the fault, after {} programs: {drops:?}",
            k + 1
        );
        if first.is_none() {
            if let Some(d) = compare_with_baseline(&faulty, &base, DEFAULT_TOLERANCE)
                .unwrap()
                .first()
            {
                eprintln!("first detection after {} programs: {d}", k + 1);
                first = Some(k + 1);
            }
        }
    }
    for d in compare_with_baseline(&faulty, &base, DEFAULT_TOLERANCE).unwrap() {
        eprintln!("after 3000 programs: {d}");
    }
    assert!(first.is_some(), "not detected in 3000 programs");
}

/// The first program of the campaign on which the fault expands fewer
/// variant sizes, reduced while that stays so: the smallest witness of
/// the missed optimisation. Run with
/// `cargo test --release -p funmem-oracle --test power_baseline -- --ignored --nocapture`.
#[test]
#[ignore]
fn a_witness_of_the_drop_reduces_to_a_few_statements() {
    let cfg = config("simplify,expand-gpu", 3000);
    let key = "expand-gpu: variant sizes expanded";
    let expanded = |case: &funmem_oracle::Case, f: Fault| {
        fault::set(f);
        let n = campaign::check(case, &cfg).map_or(0, |c| c.tally.get(key));
        fault::set(Fault::None);
        n
    };
    let mut missed = |case: &funmem_oracle::Case| {
        expanded(case, Fault::ExpandFirstIteration) < expanded(case, Fault::None)
    };
    let (k, case) = (0..3000)
        .map(|k| (k, campaign::case_from(cfg.source, cfg.seed, k, &cfg.gen)))
        .find(|(_, c)| missed(c))
        .expect("a program on which the fault expands less");
    let small = funmem_oracle::reduce::reduce(&case, &mut missed, 3000);
    let size = funmem_oracle::reduce::size;
    eprintln!(
        "program {k} ({} statements) reduced to {} statements:\n{}",
        size(&case.program),
        size(&small.program),
        small.program
    );
    assert!(missed(&small));
    assert!(size(&small.program) <= 8);
}
