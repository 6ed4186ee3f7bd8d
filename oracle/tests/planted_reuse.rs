//! Testing the tester on memory block reuse: for each rule of the pass
//! `reuse` (aliases, the loop and kernel rules of liveness, carried
//! blocks, body results as uses, the interference exception's proof,
//! element sizes inside kernels, size checks), the program of
//! tests/programs/reuse/ where that rule alone refuses a sharing passes
//! every check of the oracle as shipped, the pass's `--explain` lines say
//! the rule is what refused, and with the rule switched off (a planted
//! fault) the oracle reports the pass's output invalid or disagreeing
//! with the source.
//!
//! `ReuseNoCarried` forgets carried blocks in both places the pass uses
//! them: liveness (a carried block alive for the whole loop) and scope (a
//! carried block never takes a block from outside the loop).
//! carried_outside.fun shows the second: the loop's b then takes z's dead
//! block, one block for every iteration's b, and the next iteration reads
//! an overwritten b. The first alone is harmless (carried.fun: `t` is
//! built in the block `b` is then made in, each iteration's own new
//! block, whose arrays' lifetimes really are apart).
//!
//! One fault is not visible to the oracle, on any program, and the test
//! says so (the pass decides differently; every result stays right):
//!
//! - `ReuseNoElemSize` (elem_sizes.fun: an `i32` and an `i64` array of
//!   one kernel body share one block). The harm the rule prevents would
//!   be expansion interleaving that block per iteration in units of one
//!   element size; but `expand-gpu` looks at the element types of every
//!   array in a class and leaves a mixed block in the kernel (`left,
//!   element types of different sizes`), where each iteration allocates
//!   its own. The fault costs an allocation left inside a kernel (the
//!   expansion's counts, which fuzz campaigns compare, show it; the
//!   OpenCL backend refuses such a kernel, which `fuzz --opencl` counts
//!   as refused, not as a disagreement), not a result. Expansion's check
//!   is a second line of defence, so the fault is not a hole.
use funmem_lang::ast::{Lang, Program};
use funmem_lang::parse::{parse_program, AnyProgram};
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

/// The program of tests/programs/reuse/`name` with the inputs of its
/// `which`-th `input { ... }` item (from 0).
fn case(name: &str, which: usize) -> Case {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/programs/reuse")
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

/// The pipeline most rules are checked through.
const REUSE: &str = "simplify,reuse";
/// The pipeline of the element-size rule: it protects expansion.
const REUSE_GPU: &str = "simplify,reuse,expand-gpu";

fn check(c: &Case, passes: &str) -> Result<Passed, Failure> {
    let passes = funmem_transforms::pass::parse_list(passes).unwrap();
    check_case(c, &passes, limits())
}

/// As shipped, input `which` of `name` passes `passes` (`want`: it gives
/// results, or goes wrong like the source); with `f` on it fails at the
/// stage `at` with one of `kinds`. Returns the failure.
fn caught(
    f: Fault,
    name: &str,
    which: usize,
    passes: &str,
    at: &str,
    want: Passed,
    kinds: &[FailureKind],
) -> Failure {
    let c = case(name, which);
    fault::set(Fault::None);
    match check(&c, passes) {
        Ok(p) => assert_eq!(p, want, "{name} as shipped"),
        Err(e) => panic!("{name} fails as shipped: {e:?}"),
    }
    fault::set(f);
    let r = check(&c, passes);
    fault::set(Fault::None);
    let e = match r {
        Ok(p) => panic!("{f:?} is not caught on {name}, input {which}: {p:?}"),
        Err(e) => e,
    };
    eprintln!(
        "{f:?} on {name}, input {which}: {} at `{}`: {}",
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
        e.stage.contains(at),
        "{f:?} on {name}: the failure is at `{}`, not `{at}`",
        e.stage
    );
    e
}

/// `name` lowered to FUNMEM and simplified: the input of `reuse`.
fn simplified(name: &str) -> Program {
    let c = case(name, 0);
    let passes = funmem_transforms::pass::parse_list("simplify").unwrap();
    let provers = funmem_oracle::prove::Provers::default();
    let stages =
        funmem_transforms::pipeline::stages(&AnyProgram::Fun(c.program), &passes, false, &provers)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    match &stages.last().expect("a stage").program {
        AnyProgram::Fun(p) => p.clone(),
        other => panic!("{name}: simplify gives {other:?}"),
    }
}

/// What the pass `reuse` says about `name` (its `--explain` lines), and
/// the program it makes, with the faults as they are set.
fn reuse(name: &str) -> (Vec<String>, Program) {
    let p = simplified(name);
    let provers = funmem_oracle::prove::Provers::default();
    let out = funmem_transforms::pass::lookup("reuse")
        .unwrap()
        .run(&p, &provers)
        .unwrap_or_else(|d| panic!("{name}: {d:?}"));
    (out.explain, out.program)
}

/// The explanation as shipped, each of `want` a line of it (a line
/// containing every part of the entry, in order).
fn explains(name: &str, want: &[&[&str]]) -> Vec<String> {
    fault::set(Fault::None);
    let (lines, _) = reuse(name);
    eprintln!("{name}:\n  {}", lines.join("\n  "));
    for parts in want {
        assert!(
            lines.iter().any(|l| {
                let mut rest = l.as_str();
                parts.iter().all(|p| match rest.find(p) {
                    Some(k) => {
                        rest = &rest[k + p.len()..];
                        true
                    }
                    None => false,
                })
            }),
            "{name}: no line with {parts:?} in\n  {}",
            lines.join("\n  ")
        );
    }
    lines
}

/// No line of `lines` contains `text`.
fn nowhere(name: &str, lines: &[String], text: &str) {
    assert!(
        lines.iter().all(|l| !l.contains(text)),
        "{name}: a line contains {text:?}"
    );
}

const IN_VALUES: &[FailureKind] = &[FailureKind::Invalid, FailureKind::Disagrees];

#[test]
fn without_aliases_a_block_an_if_returns_is_overwritten() {
    let name = "alias_if.fun";
    let lines = explains(
        name,
        &[
            &["alias: `xs_mem` (an `if`'s block) may be `as_mem`, `bs_mem`"],
            // The use of xs in zs is a use of both blocks...
            &["liveness: `as_mem`", "last used at `zs` (its result)"],
            &["liveness: `bs_mem`", "last used at `zs` (its result)"],
            // ...so they are alive where ys is made, and ys goes elsewhere.
            &["interference: `ys_mem` - `as_mem`: both alive at `ys`"],
            &["interference: `ys_mem` - `bs_mem`: both alive at `ys`"],
            &["reuse: `ys_mem` keeps its own block"],
        ],
    );
    nowhere(name, &lines, "uses `as_mem`'s block");
    nowhere(name, &lines, "uses `bs_mem`'s block");
    // With the fault the block of the branch not taken is harmless; the
    // one xs is in is overwritten by ys. The case that takes `as` shows it.
    caught(
        Fault::ReuseNoAliases,
        name,
        0,
        REUSE,
        "reuse",
        Passed::Results,
        IN_VALUES,
    );
}

#[test]
fn without_the_loop_rule_an_iteration_overwrites_what_the_next_reads() {
    let name = "loop_widen.fun";
    explains(
        name,
        &[
            // xs is read in the loop: alive until the loop's end.
            &["liveness: `xs_mem`", "last used at `s` (its result)"],
            &["interference: `xs_mem` - `ys_mem`: both alive at `ys`"],
            &[
                "reuse: `ys_mem` keeps its own block",
                "interferes with `xs_mem`",
            ],
        ],
    );
    for which in 0..2 {
        caught(
            Fault::ReuseNoLoopWiden,
            name,
            which,
            REUSE,
            "reuse",
            Passed::Results,
            IN_VALUES,
        );
    }
}

#[test]
fn without_the_kernel_rule_iterations_overwrite_what_others_read() {
    let name = "kernel_widen.fun";
    explains(
        name,
        &[
            // xs is read in ys's kernel: alive during all of it, and the
            // exception cannot separate the iterations.
            &["liveness: `xs_mem`", "last used at `ys` (its result)"],
            &[
                "interference: `ys_mem` - `xs_mem`: both alive at `ys` (its result)",
                "refuted",
            ],
            &[
                "reuse: `ys_mem` keeps its own block",
                "interferes with `xs_mem`",
            ],
        ],
    );
    for which in 0..2 {
        caught(
            Fault::ReuseNoKernelWiden,
            name,
            which,
            REUSE,
            "reuse",
            Passed::Results,
            IN_VALUES,
        );
    }
}

#[test]
fn without_results_as_uses_two_results_share_a_block() {
    let name = "results.fun";
    explains(
        name,
        &[
            &["liveness: `xs_mem`", "last used at the body's result"],
            &["interference: `ys_mem` - `xs_mem`: both alive at `ys`"],
            &[
                "reuse: `ys_mem` keeps its own block",
                "interferes with `xs_mem`",
            ],
        ],
    );
    for which in 0..2 {
        caught(
            Fault::ReuseNoResultUse,
            name,
            which,
            REUSE,
            "reuse",
            Passed::Results,
            IN_VALUES,
        );
    }
}

#[test]
fn the_exception_shares_a_map_in_place() {
    let name = "ok_exception_map.fun";
    explains(
        name,
        &[
            &[
                "interference: `ys_mem` - `xs_mem` do not interfere: they meet only in kernel `ys`",
                "1 obligations proved",
            ],
            &["reuse: `xs_mem` uses `ys_mem`'s block (the same size)"],
        ],
    );
    fault::set(Fault::None);
    for which in 0..2 {
        assert_eq!(check(&case(name, which), REUSE), Ok(Passed::Results));
    }
}

#[test]
fn without_its_proof_the_exception_shares_a_shifted_map() {
    let name = "exception_shifted.fun";
    explains(
        name,
        &[
            &[
                "interference: `ys_mem` - `xs_mem`: both alive at `ys` (its result)",
                "obligation `disjoint",
                "refuted",
            ],
            &[
                "reuse: `ys_mem` keeps its own block",
                "interferes with `xs_mem`",
            ],
        ],
    );
    for which in 0..2 {
        caught(
            Fault::ReuseNoExceptionProof,
            name,
            which,
            REUSE,
            "reuse",
            Passed::Results,
            IN_VALUES,
        );
    }
}

/// The counts of `expand-gpu` on `name` through `simplify,reuse,expand-gpu`,
/// with the faults as they are set.
fn expansion_counts(name: &str) -> funmem_transforms::pass::Counts {
    let c = case(name, 0);
    let passes = funmem_transforms::pass::parse_list(REUSE_GPU).unwrap();
    let provers = funmem_oracle::prove::Provers::default();
    let stages =
        funmem_transforms::pipeline::stages(&AnyProgram::Fun(c.program), &passes, false, &provers)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    stages
        .iter()
        .find(|s| s.name == "expand-gpu")
        .map(|s| s.counts.clone())
        .expect("an expand-gpu stage")
}

/// See the module doc: expansion guards itself, so the fault costs an
/// allocation left in the kernel, never a result.
#[test]
fn without_the_element_size_rule_expansion_leaves_the_mixed_block_in_the_kernel() {
    use funmem_transforms::expand::{EXPANDED, KERNEL_ALLOCATIONS, LEFT_MIXED};
    let name = "elem_sizes.fun";
    explains(
        name,
        &[
            // Their lifetimes do not meet: only the rule keeps them apart.
            &["liveness: `as_mem` first used at `as` (its result), last used at `s`"],
            &["liveness: `bs_mem` first used at `bs` (its result), last used at `t`"],
            &[
                "interference: `bs_mem` - `as_mem`: blocks of a kernel body with elements of 8 and 4 bytes",
            ],
            &["reuse: `bs_mem` keeps its own block", "interferes with `as_mem`"],
        ],
    );
    fault::set(Fault::None);
    let shipped = expansion_counts(name);
    assert_eq!(shipped.get(KERNEL_ALLOCATIONS), 2, "{shipped:?}");
    assert_eq!(shipped.get(EXPANDED), 2, "{shipped:?}");
    assert_eq!(shipped.get(LEFT_MIXED), 0, "{shipped:?}");
    fault::set(Fault::ReuseNoElemSize);
    let (lines, _) = reuse(name);
    let faulty = expansion_counts(name);
    let verdicts: Vec<_> = (0..2)
        .map(|which| check(&case(name, which), REUSE_GPU))
        .collect();
    fault::set(Fault::None);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("reuse: `as_mem` uses `bs_mem`'s block")),
        "{lines:?}"
    );
    // One block of both element types, which expansion will not
    // interleave: it stays in the kernel, allocated per iteration.
    assert_eq!(faulty.get(KERNEL_ALLOCATIONS), 1, "{faulty:?}");
    assert_eq!(faulty.get(LEFT_MIXED), 1, "{faulty:?}");
    assert_eq!(faulty.get(EXPANDED), 0, "{faulty:?}");
    for v in verdicts {
        assert_eq!(v, Ok(Passed::Results));
    }
}

#[test]
fn without_the_size_check_a_larger_array_overruns_a_parameter_block() {
    let name = "size_larger.fun";
    explains(
        name,
        &[&[
            "reuse: `ys_mem` keeps its own block",
            "`ys_mem` in `xs_mem`: obligation `m * 8 <= 1 * n * 8` refuted",
        ]],
    );
    for which in 0..2 {
        caught(
            Fault::ReuseNoSizeCheck,
            name,
            which,
            REUSE,
            "reuse",
            Passed::Results,
            IN_VALUES,
        );
    }
}

#[test]
fn the_size_check_passes_what_it_can_prove_and_keeps_errors() {
    explains(
        "ok_size_smaller.fun",
        &[&["reuse: `ys_mem` uses `xs_mem`'s block (proved to fit)"]],
    );
    explains(
        "size_minus_one.fun",
        &[&[
            "reuse: `ys_mem` keeps its own block",
            "obligation `0 <= m` refuted",
        ]],
    );
    fault::set(Fault::None);
    for which in 0..2 {
        assert_eq!(
            check(&case("ok_size_smaller.fun", which), REUSE),
            Ok(Passed::Results)
        );
    }
    assert_eq!(
        check(&case("size_minus_one.fun", 0), REUSE),
        Ok(Passed::Results)
    );
    let gone = check(&case("size_minus_one.fun", 1), REUSE);
    assert!(matches!(gone, Ok(Passed::WentWrong(_))), "{gone:?}");
}

/// See the module doc: the fault changes what shares, never a result.
#[test]
fn without_the_carried_rule_the_pass_shares_differently_and_stays_right() {
    let name = "carried.fun";
    let lines = explains(
        name,
        &[
            // b's block is alive from the loop's start (`r_off` is the
            // loop's first pattern name), not only from b's making.
            &["liveness: `b_mem` first used at `r_off`"],
            &["interference: `b_mem` - `t_mem`: both alive at `t` (its result)"],
        ],
    );
    nowhere(name, &lines, "uses `b_mem`'s block");
    fault::set(Fault::ReuseNoCarried);
    let (faulty, program) = reuse(name);
    fault::set(Fault::None);
    assert!(
        faulty
            .iter()
            .any(|l| l.contains("reuse: `t_mem` uses `b_mem`'s block")),
        "{faulty:?}"
    );
    let text = funmem_lang::print::program(&program);
    assert!(text.contains("(t: [n]int @ b_mem"), "{text}");
    for which in 0..2 {
        let c = case(name, which);
        assert_eq!(check(&c, REUSE), Ok(Passed::Results));
        fault::set(Fault::ReuseNoCarried);
        let r = check(&c, REUSE);
        let gpu = check(&c, REUSE_GPU);
        fault::set(Fault::None);
        assert_eq!(r, Ok(Passed::Results), "input {which}");
        assert_eq!(gpu, Ok(Passed::Results), "input {which}");
    }
}

/// Every program of the folder, on every input, passes the oracle's checks
/// through `simplify,reuse` and `simplify,reuse,expand-gpu` as shipped.
#[test]
fn without_the_carried_rule_a_loops_block_takes_one_from_outside() {
    let name = "carried_outside.fun";
    explains(name, &[&["reuse: `b_mem` keeps its own block"]]);
    for which in 0..2 {
        caught(
            Fault::ReuseNoCarried,
            name,
            which,
            REUSE,
            "reuse",
            Passed::Results,
            IN_VALUES,
        );
    }
}

#[test]
fn the_reuse_corpus_passes_as_shipped() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/programs/reuse");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".fun"))
        .collect();
    names.sort();
    assert!(names.len() >= 11, "{names:?}");
    fault::set(Fault::None);
    for name in &names {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let n = text.lines().filter(|l| l.starts_with("-- input {")).count();
        for which in 0..n {
            for passes in [REUSE, REUSE_GPU] {
                if let Err(e) = check(&case(name, which), passes) {
                    panic!("{name}, input {which}, {passes}: {e:?}");
                }
            }
        }
    }
}
