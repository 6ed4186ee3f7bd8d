//! The independent references on loops, in-place updates, concat,
//! replicate and kernels with several results: hand-written programs with
//! their expected results, for the FUN evaluator (`fun_ref`) and the
//! brute-force FUNMEM heap semantics (`reference`).

use funmem_lang::ast::{Lang, Program};
use funmem_lang::check::check_program;
use funmem_lang::parse::parse_program;
use funmem_oracle::fun_ref::{self, RefError, RefLimits};
use funmem_oracle::reference::{reference_heap, RefOutcome};
use funmem_semantics::textual::parse_values;
use funmem_semantics::value::Value;

fn parse(src: &str, lang: Lang) -> Program {
    let p = parse_program(src, lang).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    check_program(&p).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    p
}

fn values(text: &str) -> Vec<Value> {
    parse_values(text).expect("values")
}

fn show(vs: &[Value]) -> String {
    let t: Vec<String> = vs.iter().map(Value::to_string).collect();
    t.join(" ")
}

const LIMITS: RefLimits = RefLimits {
    fuel: 100_000,
    cells: 10_000,
};

/// The FUN reference's results, printed, or its error; FUN's interpreter
/// must agree with it (bindings included) or exceed a limit.
fn fun(src: &str, inputs: &str) -> Result<String, RefError> {
    let p = parse(src, Lang::Fun);
    let inputs = values(inputs);
    let mut trace = fun_ref::Trace::default();
    let limits = funmem_semantics::error::Limits {
        fuel: 50_000,
        max_heap: 10_000,
    };
    let source = funmem_semantics::fun::run_value(&p, &inputs, limits, &mut trace);
    let verdict = fun_ref::check(&p, &inputs, LIMITS, &source, Some(&trace));
    assert!(
        !matches!(verdict, fun_ref::Judgement::Differs(_)),
        "{verdict:?}"
    );
    fun_ref::run(&p, &inputs, LIMITS).map(|v| show(&v))
}

fn fun_ok(src: &str, inputs: &str) -> String {
    fun(src, inputs).unwrap_or_else(|e| panic!("{e}"))
}

fn fun_stuck(src: &str, inputs: &str) -> String {
    match fun(src, inputs) {
        Err(RefError::Stuck(m)) => m,
        r => panic!("expected stuck, got {r:?}"),
    }
}

/// The FUNMEM reference's outcome: results printed, or the outcome.
/// The heap semantics must end the same way.
fn mem(src: &str, inputs: &str) -> Result<String, RefOutcome> {
    let p = parse(src, Lang::FunMem);
    let inputs = values(inputs);
    let limits = funmem_semantics::error::Limits {
        fuel: 100_000,
        max_heap: 1 << 20,
    };
    let r = reference_heap(&p, &inputs, 100_000);
    let h = funmem_semantics::heap::run_heap(&p, &inputs, limits, true, &mut NoObserver);
    match (&r, &h) {
        (RefOutcome::Results(a), Ok(b)) => assert_eq!(a, b),
        (RefOutcome::Stuck(_), Err(e)) => assert_eq!(e.kind, ErrorKind::Stuck, "{e}"),
        (RefOutcome::Race { conflicts }, Err(e)) => match &e.kind {
            ErrorKind::Race(race) => assert!(names_a_conflict(race, conflicts), "{e}"),
            _ => panic!("{e}"),
        },
        (RefOutcome::OutOfFuel, Err(e)) => assert!(e.is_limit(), "{e}"),
        _ => panic!("reference {r:?}, heap {h:?}"),
    }
    match r {
        RefOutcome::Results(v) => Ok(show(&v)),
        o => Err(o),
    }
}

fn mem_ok(src: &str, inputs: &str) -> String {
    mem(src, inputs).unwrap_or_else(|e| panic!("{e:?}"))
}

fn mem_stuck(src: &str, inputs: &str) -> String {
    match mem(src, inputs) {
        Err(RefOutcome::Stuck(m)) => m,
        r => panic!("expected stuck, got {r:?}"),
    }
}

// ---- FUN ----

const SUM_FOR: &str = "def main (n: int) =
  let (s: int) = loop (acc: int) = (0) for i < n do
    let (a: int) = acc + i
    in (a)
  in (s)
";

#[test]
fn fun_for_loop_sums_and_zero_or_negative_bounds_skip_the_body() {
    assert_eq!(fun_ok(SUM_FOR, "5"), "10i64");
    assert_eq!(fun_ok(SUM_FOR, "0"), "0i64");
    assert_eq!(fun_ok(SUM_FOR, "-3"), "0i64");
}

const COLLATZ: &str = "def main (x: int) =
  let (c: int) (steps: int) (v: int) = loop (go: int) (k: int) (y: int) = (1, 0, x) while go do
    let (e: int) = y % 2
    let (h: int) = y / 2
    let (t: int) = 3 * y + 1
    let (y2: int) = if e then
      in (t)
    else
      in (h)
    let (k2: int) = k + 1
    let (g: int) = y2 != 1
    in (g, k2, y2)
  in (steps, v)
";

#[test]
fn fun_while_loop_runs_until_its_condition_is_zero() {
    assert_eq!(fun_ok(COLLATZ, "6"), "8i64 1i64");
    assert_eq!(fun_ok(COLLATZ, "1"), "3i64 1i64");
    // 0 never reaches 1: the budget stops it, a limit and not stuck.
    assert!(matches!(fun(COLLATZ, "0"), Err(RefError::Limit(_))));
}

#[test]
fn fun_loop_arrays_change_size() {
    // Each iteration appends one element (concat) to the array.
    let p = "def main (n: int) =
  let (z: int) = 0
  let (e: [z]int) = iota z
  let (k: int) (xs: [k]int) = loop (m: int) (a: [m]int) = (z, e) for i < n do
    let (one: [1]int) = replicate 1 i
    let (m2: int) = m + 1
    let (b: [m2]int) = concat a one
    in (m2, b)
  in (k, xs)
";
    assert_eq!(fun_ok(p, "3"), "3i64 [0i64, 1i64, 2i64]");
    assert_eq!(fun_ok(p, "0"), "0i64 empty([0]i64)");
}

const UPD: &str =
    "def main (xs: *[3][2]int) (j: int) (o: int) (n: int) (ys: [n][2]int) (r: [2]int) =
  let (a: [3][2]int) = xs with [j, 1] = 7
  let (b: [3][2]int) = a with [o : n] = ys
  let (c: [3][2]int) = b with [2] = r
  in (c)
";

#[test]
fn fun_updates_of_elements_ranges_and_rows() {
    let xs = "[[1, 2], [3, 4], [5, 6]]";
    assert_eq!(
        fun_ok(UPD, &format!("{xs} 0 1 1 [[8, 9]] [0, 0]")),
        "[[1i64, 7i64], [8i64, 9i64], [0i64, 0i64]]"
    );
    assert_eq!(
        fun_ok(UPD, &format!("{xs} 2 0 0 empty([0][2]i64) [10, 11]")),
        "[[1i64, 2i64], [3i64, 4i64], [10i64, 11i64]]"
    );
    let m = fun_stuck(UPD, &format!("{xs} 3 0 0 empty([0][2]i64) [0, 0]"));
    assert!(m.contains("update index 3 is out of bounds"), "{m}");
    let m = fun_stuck(UPD, &format!("{xs} -1 0 0 empty([0][2]i64) [0, 0]"));
    assert!(m.contains("update index -1"), "{m}");
    let m = fun_stuck(UPD, &format!("{xs} 0 2 2 [[1, 1], [2, 2]] [0, 0]"));
    assert!(m.contains("update range 2:2 is out of bounds"), "{m}");
    let m = fun_stuck(UPD, &format!("{xs} 0 -1 1 [[1, 1]] [0, 0]"));
    assert!(m.contains("update range -1:1"), "{m}");
}

#[test]
fn fun_concat_and_replicate() {
    let p = "def main (x: [2][2]int) (y: [1][2]int) (n: int) (v: int) =
  let (k: int) = 2 + 1
  let (z: [k][2]int) = concat x y
  let (r: [n][k][2]int) = replicate n z
  let (s: [n]int) = replicate n v
  in (z, r, s)
";
    assert_eq!(
        fun_ok(p, "[[1, 2], [3, 4]] [[5, 6]] 2 9"),
        "[[1i64, 2i64], [3i64, 4i64], [5i64, 6i64]] [[[1i64, 2i64], [3i64, 4i64], [5i64, 6i64]], [[1i64, 2i64], [3i64, 4i64], [5i64, 6i64]]] [9i64, 9i64]"
    );
    assert_eq!(
        fun_ok(p, "[[1, 2], [3, 4]] [[5, 6]] 0 9"),
        "[[1i64, 2i64], [3i64, 4i64], [5i64, 6i64]] empty([0][3][2]i64) empty([0]i64)"
    );
    let m = fun_stuck(p, "[[1, 2], [3, 4]] [[5, 6]] -1 9");
    assert!(m.contains("replicate of negative count -1"), "{m}");
}

#[test]
fn fun_kernels_with_several_results() {
    let p = "def main (n: int) =
  let (a: [n]int) (b: [n][2]int) = kernel i < n do
    let (sq: int) = i * i
    let (r: [2]int) = replicate 2 i
    in (sq, r)
  in (a, b)
";
    assert_eq!(
        fun_ok(p, "3"),
        "[0i64, 1i64, 4i64] [[0i64, 0i64], [1i64, 1i64], [2i64, 2i64]]"
    );
    assert_eq!(fun_ok(p, "0"), "empty([0]i64) empty([0][2]i64)");
}

#[test]
fn fun_loop_with_updates_inside_a_kernel() {
    // Each row: a fresh array updated in place by a loop.
    let p = "def main (n: int) =
  let (a: [n][3]int) = kernel i < n do
    let (z: [3]int) = replicate 3 0
    let (r: [3]int) = loop (acc: [3]int) = (z) for j < 3 do
      let (v: int) = i * 10 + j
      let (acc2: [3]int) = acc with [j] = v
      in (acc2)
    in (r)
  in (a)
";
    assert_eq!(
        fun_ok(p, "2"),
        "[[0i64, 1i64, 2i64], [10i64, 11i64, 12i64]]"
    );
}

// ---- FUNMEM ----

#[test]
fn mem_update_writes_through_a_strided_lmad_in_place() {
    // xs lives reversed with stride 2 in its block; the update writes
    // there, and a slice of the same block sees it.
    let p = "def main (xm: mem) (xs: *[3]int @ xm -> 4 + {(3 : -2)}) (j: int) (v: int) =
  let (ys: [3]int @ xm -> 4 + {(3 : -2)}) = xs with [j] = v
  in (ys)
";
    assert_eq!(mem_ok(p, "[1, 2, 3] 1 9"), "[1i64, 9i64, 3i64]");
    let m = mem_stuck(p, "[1, 2, 3] 3 9");
    assert!(m.contains("update index 3 out of bounds"), "{m}");
    let p = "def main (n: int) (xm: mem) (xs: *[3][2]int @ xm -> 0 + {(3 : 1) (2 : 3)}) (o: int) (ym: mem) (ys: [n][2]int @ ym -> R(n, 2)) =
  let (zs: [3][2]int @ xm -> 0 + {(3 : 1) (2 : 3)}) = xs with [o : n] = ys
  in (zs)
";
    assert_eq!(
        mem_ok(p, "1 [[1, 2], [3, 4], [5, 6]] 2 [[7, 8]]"),
        "[[1i64, 2i64], [3i64, 4i64], [7i64, 8i64]]"
    );
    let m = mem_stuck(p, "2 [[1, 2], [3, 4], [5, 6]] 2 [[7, 8], [9, 9]]");
    assert!(m.contains("update range 2:2 out of bounds"), "{m}");
}

#[test]
fn mem_concat_and_replicate_write_their_place() {
    let p =
        "def main (xm: mem) (x: [2]int @ xm -> R(2)) (ym: mem) (y: [1]int @ ym -> R(1)) (n: int) =
  let (k: int) = 2 + 1
  let (m: mem) = alloc 7
  let (z: [k]int @ m -> 6 + {(k : -2)}) = concat x y
  let (r: mem) = alloc 12
  let (w: [n][k]int @ r -> 0 + {(n : 1) (k : n)}) = replicate n z
  in (z, w)
";
    assert_eq!(
        mem_ok(p, "[1, 2] [3] 2"),
        "[1i64, 2i64, 3i64] [[1i64, 2i64, 3i64], [1i64, 2i64, 3i64]]"
    );
    let m = mem_stuck(p, "[1, 2] [3] -1");
    assert!(m.contains("replicate of negative count -1"), "{m}");
}

#[test]
fn mem_loop_swaps_two_blocks() {
    // Double buffering: each iteration writes the next array into the
    // other block, and the two blocks swap.
    let p = "def main (n: int) (t: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
  let (bm: mem) = alloc n
  let (m1: mem) (m2: mem) (ys: [n]int @ m1 -> R(n)) = loop (src: mem) (dst: mem) (a: [n]int @ src -> R(n)) = (xm, bm, xs) for s < t do
    let (b: [n]int @ dst -> R(n)) = kernel i < n do
      let (x: int) = a[i]
      let (y: int) = x + s
      in (y)
    in (dst, src, b)
  in (ys)
";
    // 1 + 0 + 1 + 2 = 4 for every element after 3 iterations.
    assert_eq!(mem_ok(p, "2 3 [1, 10]"), "[4i64, 13i64]");
    assert_eq!(mem_ok(p, "2 0 [1, 10]"), "[1i64, 10i64]");
}

#[test]
fn mem_a_while_loop_that_never_ends_runs_out_of_fuel() {
    let p = "def main (c: int) =
  let (d: int) = loop (go: int) = (c) while go do
    in (go)
  in (d)
";
    assert_eq!(mem(p, "1"), Err(RefOutcome::OutOfFuel));
    assert_eq!(mem_ok(p, "0"), "0i64");
}

#[test]
fn mem_multi_result_kernels_write_each_block() {
    let p = "def main (n: int) =
  let (ma: mem) = alloc n
  let (mb: mem) = alloc 2 * n
  let (a: [n]int @ ma -> R(n)) (b: [n]int @ mb -> 1 + {(n : 2)}) = kernel i < n do
    let (x: int) = i + 1
    let (y: int) = i * 3
    in (x, y)
  in (a, b)
";
    assert_eq!(mem_ok(p, "3"), "[1i64, 2i64, 3i64] [0i64, 3i64, 6i64]");
    // Both results in one block, at the same place: a race.
    let p = "def main (n: int) =
  let (ma: mem) = alloc n
  let (a: [n]int @ ma -> R(n)) (b: [n]int @ ma -> 0 + {(n : 0)}) = kernel i < n do
    in (i, i)
  in (a, b)
";
    assert!(matches!(mem(p, "2"), Err(RefOutcome::Race { .. })));
}

#[test]
fn mem_a_loop_inside_a_kernel_iteration_races_on_a_shared_scratch_block() {
    // Every iteration's loop updates one shared scratch array.
    let p = "def main (n: int) =
  let (s: mem) = alloc 1
  let (om: mem) = alloc n
  let (res: [n]int @ om -> R(n)) = kernel i < n do
    let (z: [1]int @ s -> R(1)) = replicate 1 0
    let (r: [1]int @ s -> R(1)) = loop (acc: [1]int @ s -> R(1)) = (z) for j < 2 do
      let (acc2: [1]int @ s -> R(1)) = acc with [0] = i
      in (acc2)
    let (v: int) = r[0]
    in (v)
  in (res)
";
    assert!(matches!(mem(p, "2"), Err(RefOutcome::Race { .. })));
    assert_eq!(mem_ok(p, "1"), "[0i64]");
}

// ---- generated programs ----

use funmem_lang::print;
use funmem_oracle::gen_mem::{gen_funmem, gen_funmem_valid};
use funmem_oracle::reference::{names_a_conflict, reference_heap_within};
use funmem_oracle::{Constructs, GenConfig, Rng};
use funmem_semantics::error::{ErrorKind, Limits};
use funmem_semantics::observer::NoObserver;
use funmem_semantics::validity::{validate, Verdict};
use rand::SeedableRng;

/// Every construct in every program that draws them.
fn all_constructs() -> GenConfig {
    GenConfig {
        constructs: Constructs {
            loops: 1.0,
            update: 1.0,
            concat: 1.0,
            replicate: 1.0,
            multi_kernel: 1.0,
            ..Constructs::NONE
        },
        ..GenConfig::default()
    }
}

/// How often each construct occurs in these programs' text.
fn count_constructs(text: &str, counts: &mut [usize; 6]) {
    for (k, w) in [
        " loop ",
        " with [",
        " concat ",
        " replicate ",
        "while ",
        "for ",
    ]
    .iter()
    .enumerate()
    {
        counts[k] += text.matches(w).count();
    }
}

fn show_case(case: &funmem_oracle::Case) -> String {
    let ins: Vec<String> = case.inputs.iter().map(Value::to_string).collect();
    format!("{}input: {}", print::program(&case.program), ins.join(" "))
}

#[test]
fn generated_funmem_programs_with_the_new_constructs_type_check() {
    let cfg = all_constructs();
    let mut counts = [0usize; 6];
    let mut multi = 0;
    for seed in 0..300u64 {
        for valid in [false, true] {
            let mut rng = Rng::seed_from_u64(seed);
            let case = if valid {
                gen_funmem_valid(&mut rng, &cfg)
            } else {
                gen_funmem(&mut rng, &cfg)
            };
            let text = print::program(&case.program);
            if let Err(d) = check_program(&case.program) {
                panic!("seed {seed}: {}\n{text}", d.message);
            }
            count_constructs(&text, &mut counts);
            multi += text
                .lines()
                .filter(|l| l.contains("= kernel") && l.matches(": [").count() > 1)
                .count();
        }
    }
    assert!(counts.iter().all(|&c| c > 20), "{counts:?}");
    assert!(multi > 20, "{multi}");
}

#[test]
fn with_no_constructs_the_funmem_generator_draws_none() {
    let cfg = GenConfig {
        constructs: Constructs::NONE,
        ..GenConfig::default()
    };
    for seed in 0..100u64 {
        let text = print::program(&gen_funmem(&mut Rng::seed_from_u64(seed), &cfg).program);
        for w in [" loop ", " with [", " concat ", " replicate "] {
            assert!(!text.contains(w), "seed {seed}: {w}\n{text}");
        }
    }
}

/// The brute-force reference and the real heap semantics (with its race
/// detector) agree on generated FUNMEM programs with the new constructs:
/// the same results, stuck alike, or a race the reference finds among its
/// conflicts; valid programs (`gen_funmem_valid`) are valid (Def. 3.1).
#[test]
fn the_heap_reference_agrees_with_the_heap_semantics_on_generated_programs() {
    let cfg = all_constructs();
    let limits = Limits {
        fuel: 1_000_000,
        max_heap: 1 << 20,
    };
    let (mut results, mut stuck, mut races, mut valid) = (0, 0, 0, 0);
    for seed in 0..300u64 {
        for only_valid in [false, true] {
            let mut rng = Rng::seed_from_u64(seed);
            let case = if only_valid {
                gen_funmem_valid(&mut rng, &cfg)
            } else {
                gen_funmem(&mut rng, &cfg)
            };
            let (p, inputs) = (&case.program, &case.inputs);
            // Only programs: an ill-typed one means nothing to either side.
            if funmem_lang::check::check_program(p).is_err() {
                continue;
            }
            let r = reference_heap_within(p, inputs, limits.fuel, limits.max_heap);
            let h = funmem_semantics::heap::run_heap(p, inputs, limits, true, &mut NoObserver);
            let ctx = || {
                format!(
                    "seed {seed} (valid only: {only_valid})\n{}",
                    show_case(&case)
                )
            };
            match (&r, &h) {
                (RefOutcome::Results(a), Ok(b)) => {
                    assert_eq!(a, b, "{}", ctx());
                    results += 1;
                }
                (RefOutcome::Stuck(_), Err(e)) if e.kind == ErrorKind::Stuck => stuck += 1,
                (RefOutcome::Race { conflicts }, Err(e)) => match &e.kind {
                    ErrorKind::Race(race) => {
                        assert!(
                            names_a_conflict(race, conflicts),
                            "{e} is not among {conflicts:?}\n{}",
                            ctx()
                        );
                        assert!(!only_valid, "a valid program races\n{}", ctx());
                        races += 1;
                    }
                    _ => panic!("reference races, heap: {e}\n{}", ctx()),
                },
                _ => panic!("reference {r:?}, heap {h:?}\n{}", ctx()),
            }
            if only_valid && matches!(r, RefOutcome::Results(_)) {
                match validate(p, inputs, limits) {
                    Verdict::Valid(_) => valid += 1,
                    v => panic!("not valid: {v:?}\n{}", ctx()),
                }
            }
        }
    }
    eprintln!("{results} results, {stuck} stuck, {races} races, {valid} valid");
    assert!(results > 300 && stuck > 30 && races > 20 && valid > 150);
}

/// On generated FUN programs with the new constructs, the reference and
/// FUN's interpreter agree: the same bindings, results, or both stuck.
#[test]
fn fun_ref_agrees_with_the_fun_interpreter_on_generated_programs() {
    use funmem_oracle::fun_ref::{check, Judgement, Trace};
    let cfg = GenConfig {
        fail_share: 0.3,
        ..all_constructs()
    };
    let limits = Limits {
        fuel: 1_000_000,
        max_heap: 1 << 20,
    };
    let (mut results, mut went_wrong, mut inconclusive) = (0, 0, 0);
    let mut counts = [0usize; 6];
    for seed in 0..400u64 {
        let case = funmem_oracle::gen::gen_fun(&mut Rng::seed_from_u64(seed), &cfg);
        count_constructs(&print::program(&case.program), &mut counts);
        let mut trace = Trace::default();
        let source =
            funmem_semantics::fun::run_value(&case.program, &case.inputs, limits, &mut trace);
        match check(
            &case.program,
            &case.inputs,
            RefLimits::from_limits(limits),
            &source,
            Some(&trace),
        ) {
            Judgement::Agrees if source.is_ok() => results += 1,
            Judgement::Agrees => went_wrong += 1,
            Judgement::Inconclusive => inconclusive += 1,
            Judgement::Differs(m) => panic!("seed {seed}: {m}\n{}", show_case(&case)),
        }
    }
    eprintln!("{counts:?}: {results} results, {went_wrong} wrong, {inconclusive} inconclusive");
    assert!(counts[..4].iter().all(|&c| c > 20), "{counts:?}");
    assert!(results > 150 && went_wrong > 30, "{results} {went_wrong}");
}

#[test]
fn huge_counts_are_limits_not_hangs() {
    // A stride-0 layout fits a count of any size in one cell.
    let p = "def main (n: int) =
  let (m: mem) = alloc 1
  let (x: [n]int @ m -> 0 + {(n : 0)}) = replicate n 7
  let (y: int) = x[0]
  in (y)
";
    // (The reference alone: the heap semantics is not bounded here yet.)
    let big = reference_heap(&parse(p, Lang::FunMem), &values("1000000000000"), 100_000);
    assert_eq!(big, RefOutcome::OutOfFuel);
    let q = p.replace("replicate n 7", "iota n");
    let big = reference_heap(&parse(&q, Lang::FunMem), &values("1000000000000"), 100_000);
    assert_eq!(big, RefOutcome::OutOfFuel);
    assert_eq!(mem_ok(p, "3"), "7i64");
}

#[test]
fn huge_arrays_in_fun_are_limits() {
    let p = "def main (n: int) =
  let (r: [n]int) = replicate n 0
  let (x: [n][n]int) = replicate n r
  let (y: [n][n]int) = x with [0, 0] = 1
  in (y)
";
    assert!(matches!(fun(p, "100000"), Err(RefError::Limit(_))));
    assert_eq!(fun_ok(p, "2"), "[[1i64, 0i64], [0i64, 0i64]]");
}
