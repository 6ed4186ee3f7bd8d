//! The fuzzer's FUN generator and coalescing: generated programs hold root
//! statements (`copy`, `concat`, updates with an array, kernels returning
//! an array they made) whose source is fresh and used last there, often
//! enough to exercise the `coalesce` pass, and the fuzzer counts them.

use funmem_oracle::campaign::case_for;
use funmem_oracle::gen::{root_statements, RootCounts};
use funmem_oracle::GenConfig;

/// Over 1000 programs of the default configuration (seed 22): how many
/// programs have a candidate, and the candidates of each kind.
fn census() -> (u64, RootCounts) {
    let gen = GenConfig::default();
    let mut having = 0;
    let mut all = RootCounts::default();
    for k in 0..1000 {
        let c = root_statements(&case_for(22, k, &gen).program);
        having += u64::from(c.total() > 0);
        all.add(&c);
    }
    (having, all)
}

#[test]
fn candidates_are_frequent_and_of_every_kind() {
    let (having, all) = census();
    eprintln!("{having} of 1000 programs with a candidate; {all:?}");
    assert!(having >= 300, "only {having} of 1000 programs: {all:?}");
    assert!(
        all.copy > 0 && all.concat > 0 && all.update > 0 && all.kernel > 0,
        "{all:?}"
    );
}
