//! Testing the tester on coalescing: for each of the pass's safety
//! conditions (C1 to C5, and the bounds check before an update's source),
//! the program of tests/programs/coalesce/ where that condition alone
//! refuses a coalescing passes every check of the oracle as shipped, and
//! with the condition switched off (a planted fault) the oracle reports
//! the pass's output ill-typed, invalid, or disagreeing with the source.

use funmem_lang::ast::Lang;
use funmem_lang::parse::parse_program;
use funmem_oracle::check::{check_case, Failure, FailureKind, Passed};
use funmem_oracle::Case;
use funmem_semantics::error::Limits;
use funmem_semantics::textual::parse_values;
use funmem_transforms::fault::{self, Fault};
use std::path::Path;

fn limits() -> Limits {
    Limits {
        fuel: 1_000_000,
        max_heap: 1 << 20,
    }
}

/// The program of tests/programs/coalesce/`name` with the inputs of its
/// `which`-th `input { ... }` item (from 0).
fn case(name: &str, which: usize) -> Case {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/programs/coalesce")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let program = parse_program(&text, Lang::Fun).unwrap_or_else(|d| panic!("{name}: {d:?}"));
    let inputs: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("-- input {"))
        .map(|l| l.trim().trim_end_matches('}'))
        .collect();
    let input = inputs
        .get(which)
        .unwrap_or_else(|| panic!("{name} has no input {which}"));
    let inputs = parse_values(input).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    Case { program, inputs }
}

fn check(c: &Case) -> Result<Passed, Failure> {
    let passes = funmem_transforms::pass::parse_list("simplify,coalesce").unwrap();
    check_case(c, &passes, limits())
}

/// As shipped, the case passes (`want`: it gives results, or goes wrong
/// like the source); with `f` on it fails at the coalescing stage with one
/// of `kinds`. Returns the failure.
fn caught(f: Fault, name: &str, which: usize, want: Passed, kinds: &[FailureKind]) -> Failure {
    let c = case(name, which);
    fault::set(Fault::None);
    match check(&c) {
        Ok(p) => assert_eq!(p, want, "{name} as shipped"),
        Err(e) => panic!("{name} fails as shipped: {e:?}"),
    }
    fault::set(f);
    let r = check(&c);
    fault::set(Fault::None);
    let e = match r {
        Ok(p) => panic!("{f:?} is not caught on {name}: {p:?}"),
        Err(e) => e,
    };
    eprintln!(
        "{f:?} on {name}: {} at `{}`: {}",
        e.kind.name(),
        e.stage,
        e.message
    );
    assert!(
        kinds.contains(&e.kind),
        "{f:?} on {name}: {:?}, expected one of {kinds:?}",
        e.kind
    );
    assert!(
        e.stage.contains("coalesce"),
        "{f:?} on {name}: the failure is at `{}`",
        e.stage
    );
    e
}

/// What `simplify,coalesce` decided on the program of `name`, one line per
/// candidate (as `funmem opt --explain` prints them).
fn explain(name: &str) -> Vec<String> {
    let c = case(name, 0);
    let passes = funmem_transforms::pass::parse_list("simplify,coalesce").unwrap();
    let src = funmem_lang::parse::AnyProgram::Fun(c.program);
    let provers = funmem_oracle::prove::Provers::default();
    let stages = funmem_transforms::pipeline::stages(&src, &passes, false, &provers)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    stages
        .iter()
        .find(|s| s.name == "coalesce")
        .map(|s| s.explain.clone())
        .unwrap_or_default()
}

/// As shipped, the candidate `src` of `name` is refused by `cond`; every
/// other decision is about the program result's copy (`.._res = copy ..`,
/// applied when the result is an update family the pass moves, refused
/// when it updates a parameter).
fn refused_by(name: &str, src: &str, cond: &str) {
    let lines = explain(name);
    eprintln!("{name}:\n  {}", lines.join("\n  "));
    let ours = format!("`{src}` into");
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&ours) && l.contains(&format!("refused, {cond}"))),
        "{name}: `{src}` is not refused by {cond}"
    );
    for l in &lines {
        assert!(
            l.contains(&ours) || l.contains("_res = copy "),
            "{name}: another decision: {l}"
        );
    }
}

const IN_TYPES: &[FailureKind] = &[FailureKind::IllTyped];
const IN_VALUES: &[FailureKind] = &[FailureKind::Invalid, FailureKind::Disagrees];

#[test]
fn c1_off_builds_a_source_still_read_where_it_is_overwritten() {
    refused_by("c1_used_after_root.fun", "xs", "C1");
    caught(
        Fault::CoalesceNoC1,
        "c1_used_after_root.fun",
        0,
        Passed::Results,
        IN_VALUES,
    );
}

#[test]
fn c2_off_builds_a_source_in_a_block_not_yet_allocated() {
    refused_by("c2_destination_late.fun", "xs", "C2");
    caught(
        Fault::CoalesceNoC2,
        "c2_destination_late.fun",
        0,
        Passed::Results,
        IN_TYPES,
    );
}

#[test]
fn c3_off_builds_a_source_where_the_destination_is_still_read() {
    refused_by("c3_destination_read.fun", "ys", "C3");
    for which in 0..2 {
        caught(
            Fault::CoalesceNoC3,
            "c3_destination_read.fun",
            which,
            Passed::Results,
            IN_VALUES,
        );
    }
}

#[test]
fn c4_off_moves_a_source_whose_block_escapes() {
    refused_by("c4_block_escapes.fun", "xs", "C4");
    for which in 0..2 {
        caught(
            Fault::CoalesceNoC4,
            "c4_block_escapes.fun",
            which,
            Passed::Results,
            &[
                FailureKind::IllTyped,
                FailureKind::Invalid,
                FailureKind::Disagrees,
            ],
        );
    }
}

#[test]
fn c5_off_places_a_source_by_a_name_bound_after_it() {
    refused_by("c5_index_from_source.fun", "ys", "C5");
    caught(
        Fault::CoalesceNoC5,
        "c5_index_from_source.fun",
        0,
        Passed::Results,
        IN_TYPES,
    );
}

/// Records where a run writes (once the inputs are in place), and which block each named array is in.
#[derive(Default)]
struct Writes {
    blocks: Vec<(String, usize)>,
    writes: Vec<(usize, i64)>,
    /// The first rule has run: the inputs are in their blocks.
    running: bool,
}

impl funmem_semantics::observer::Observer for Writes {
    fn place(
        &mut self,
        name: &funmem_lang::Name,
        block: usize,
        _: &funmem_lang::lmad::Lmad<i64>,
        _: funmem_lang::prim::Prim,
    ) {
        self.blocks.push((name.to_string(), block));
    }
    fn rule(&mut self, _: &'static str, _: funmem_lang::Span) {
        self.running = true;
    }
    fn write(&mut self, block: usize, offset: i64, _: funmem_lang::prim::Prim, _: u64) {
        if self.running {
            self.writes.push((block, offset));
        }
    }
}

/// Runs the coalesce stage of `c` on the heap semantics: how it goes
/// wrong, and the offsets it wrote in `ms`'s block before.
fn coalesced_writes_to_ms(c: &Case) -> (String, Vec<i64>) {
    let passes = funmem_transforms::pass::parse_list("simplify,coalesce").unwrap();
    let src = funmem_lang::parse::AnyProgram::Fun(c.program.clone());
    let provers = funmem_oracle::prove::Provers::default();
    let stages = funmem_transforms::pipeline::stages(&src, &passes, false, &provers).unwrap();
    let st = stages.iter().find(|s| s.name == "coalesce").unwrap();
    let funmem_lang::parse::AnyProgram::Fun(p) = &st.program else {
        panic!("coalesce gives FUNMEM");
    };
    let mut obs = Writes::default();
    let r = funmem_semantics::heap::run_heap(p, &c.inputs, limits(), true, &mut obs);
    let err = r.expect_err("the update's indices are out of bounds");
    let ms = obs
        .blocks
        .iter()
        .find(|(n, _)| n == "ms")
        .map(|(_, b)| *b)
        .expect("ms has a block");
    let offsets = obs
        .writes
        .iter()
        .filter(|(b, _)| *b == ms)
        .map(|(_, o)| *o)
        .collect();
    (err.to_string(), offsets)
}

/// Errors stay errors. ms is 3 by 3 and ys goes to columns 2 and 3 of row
/// 0: out of bounds. As shipped, the inserted check goes wrong before ys
/// is made, and nothing is written in ms's block. Without the check, ys's
/// creation writes offsets 2 and 3 of ms's block, 3 being ms[1, 0],
/// outside the update's part, before the update goes wrong. The oracle
/// does not see it: both programs go wrong (stuck), and a program that
/// goes wrong has no results to compare; the test looks at the writes
/// itself.
#[test]
fn bounds_check_off_writes_outside_the_part_before_going_wrong() {
    let lines = explain("bounds_update_range.fun");
    assert!(
        lines.iter().any(|l| l.contains("`ys` built in")),
        "{lines:?}"
    );
    let c = case("bounds_update_range.fun", 1);
    fault::set(Fault::None);
    assert_eq!(check(&c), Ok(Passed::WentWrong("stuck")));
    let (err, written) = coalesced_writes_to_ms(&c);
    eprintln!("shipped: {err}; writes in ms's block: {written:?}");
    assert!(err.contains("SLICE"), "{err}");
    assert!(written.is_empty(), "{written:?}");

    fault::set(Fault::CoalesceNoBoundsCheck);
    let (err, written) = coalesced_writes_to_ms(&c);
    let verdict = check(&c);
    fault::set(Fault::None);
    eprintln!("without the check: {err}; writes in ms's block: {written:?}; oracle: {verdict:?}");
    assert!(err.contains("UPDATE"), "{err}");
    // Row 0 is offsets 0 to 2: offset 3 is outside the part.
    assert!(written.contains(&3), "{written:?}");
    // What the oracle says: the same as shipped (see above). When it learns
    // to see writes outside a part, this should say it is caught.
    assert_eq!(verdict, Ok(Passed::WentWrong("stuck")));
}

/// Every program of the folder, on every input, passes the oracle's checks
/// through `simplify,coalesce` as shipped.
#[test]
fn the_coalesce_corpus_passes_as_shipped() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/programs/coalesce");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".fun"))
        .collect();
    names.sort();
    assert!(names.len() >= 12, "{names:?}");
    fault::set(Fault::None);
    for name in &names {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let n = text.lines().filter(|l| l.starts_with("-- input {")).count();
        for which in 0..n {
            if let Err(e) = check(&case(name, which)) {
                panic!("{name}, input {which}: {e:?}");
            }
        }
    }
}
