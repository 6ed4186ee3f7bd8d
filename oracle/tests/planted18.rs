//! The planted faults of issue 18's lowering (loops, in-place updates):
//! each, on a small hand-written FUN program, makes the differential
//! checks fail, and the same program passes them without the fault.

use funmem_lang::ast::Lang;
use funmem_lang::parse::parse_program;
use funmem_oracle::check::{check_case_with, Checks, FailureKind};
use funmem_oracle::Case;
use funmem_semantics::error::Limits;
use funmem_semantics::textual::parse_values;
use funmem_transforms::fault::{self, Fault};
use funmem_transforms::pass::parse_list;

fn case(src: &str, inputs: &str) -> Case {
    let program = parse_program(src, Lang::Fun).unwrap_or_else(|d| panic!("{d}"));
    funmem_lang::check::check_program(&program).unwrap_or_else(|d| panic!("{d}"));
    Case {
        program,
        inputs: parse_values(inputs).unwrap(),
    }
}

/// Checks the case through `passes` with the fault on (it must fail with
/// one of `kinds`) and off (it must pass). The stages' own checks: the
/// faults are in the lowering, which validity and agreement with the
/// source must catch.
fn caught(f: Fault, c: &Case, passes: &str, kinds: &[FailureKind]) {
    let passes = parse_list(passes).unwrap();
    fault::set(f);
    let with = check_case_with(c, &passes, Limits::default(), Checks::STAGES);
    fault::set(Fault::None);
    match with {
        Err(e) => assert!(
            kinds.contains(&e.kind),
            "{f:?}: failed, but as {:?} at `{}`: {}",
            e.kind,
            e.stage,
            e.message
        ),
        Ok(_) => panic!("{f:?} was not caught"),
    }
    if let Err(e) = check_case_with(c, &passes, Limits::default(), Checks::STAGES) {
        panic!(
            "without {f:?} the program fails too: {:?} at `{}`: {}",
            e.kind, e.stage, e.message
        );
    }
}

#[test]
fn an_update_that_overwrites_a_source_still_read_is_invalid() {
    let c = case(
        "def main (n: int) (xs: [n]int) =
           let (ys: [n]int) = copy xs
           let (zs: [n]int) = ys with [0] = 7
           let (a: int) = xs[0]
           in (zs, a)",
        "3 [1, 2, 3]",
    );
    for passes in ["none", "simplify"] {
        caught(Fault::UpdateFreshBlock, &c, passes, &[FailureKind::Invalid]);
    }
}

#[test]
fn a_loop_result_read_from_the_initial_block_disagrees() {
    let c = case(
        "def main (n: int) (xs: [n]int) =
           let (r: [n]int) = loop (a: [n]int) = (xs) for i < 2 do
               let (b: [n]int) = kernel j < n do
                   let (v: int) = a[j]
                   let (w: int) = v + i
                   in (w)
               in (b)
           in (r)",
        "3 [1, 2, 3]",
    );
    for passes in ["none", "simplify,expand-gpu"] {
        caught(
            Fault::LoopResultParamBlock,
            &c,
            passes,
            &[FailureKind::Disagrees, FailureKind::Invalid],
        );
    }
}
