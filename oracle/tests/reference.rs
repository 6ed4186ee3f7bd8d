//! The brute-force reference heap semantics against the real interpreters,
//! on hand-written programs and on generated FUNMEM programs.

use funmem_lang::ast::{Lang, Program};
use funmem_lang::check::check_program;
use funmem_lang::parse::parse_program;
use funmem_lang::print;
use funmem_oracle::gen_mem::gen_funmem;
use funmem_oracle::reference::{reference_heap, RefOutcome};
use funmem_oracle::{GenConfig, Rng};
use funmem_semantics::error::{ErrorKind, EvalError, Limits};
use funmem_semantics::fun::run_value;
use funmem_semantics::heap::run_heap;
use funmem_semantics::observer::NoObserver;
use funmem_semantics::validity::{validate, Verdict};
use funmem_semantics::value::{ArrayValue, Value};
use rand::SeedableRng;

/// Far more than any generated program needs.
const FUEL: u64 = 10_000_000;

const SEEDS: u64 = 3000;

fn parse(src: &str) -> Program {
    let p = parse_program(src, Lang::FunMem).expect("parses");
    check_program(&p).expect("type-checks");
    p
}

fn vector(xs: &[i64]) -> Value {
    Value::Array(ArrayValue::vector(xs.to_vec()))
}

fn heap(p: &Program, inputs: &[Value]) -> Result<Vec<Value>, EvalError> {
    run_heap(p, inputs, Limits::default(), true, &mut NoObserver)
}

#[test]
fn a_map_with_an_input_in_a_strided_layout() {
    let p = parse(
        "def main (n: int) (xm: mem) (xs: [n]int @ xm -> 1 + {(n : 2)}) =
           let (ym: mem) = alloc n
           let (ys: [n]int @ ym -> n - 1 + {(n : -1)}) = kernel i < n do
               let (x: int) = xs[i]
               let (y: int) = x * 2 + i
               in (y)
           in (ym, ys, xs)",
    );
    let inputs = [
        Value::Scalar(funmem_lang::prim::Const::I64(3)),
        vector(&[1, 2, 3]),
    ];
    assert_eq!(
        reference_heap(&p, &inputs, FUEL),
        RefOutcome::Results(vec![vector(&[2, 5, 8]), vector(&[1, 2, 3])])
    );
}

#[test]
fn a_stride_zero_result_races() {
    let p = parse(
        "def main (n: int) =
           let (m: mem) = alloc 1
           let (ys: [n]int @ m -> 0 + {(n : 0)}) = kernel i < n do in (i)
           in (ys)",
    );
    assert!(matches!(
        reference_heap(&p, &[Value::Scalar(funmem_lang::prim::Const::I64(2))], FUEL),
        RefOutcome::Race { .. }
    ));
    // One iteration cannot race.
    assert_eq!(
        reference_heap(&p, &[Value::Scalar(funmem_lang::prim::Const::I64(1))], FUEL),
        RefOutcome::Results(vec![vector(&[0])])
    );
}

#[test]
fn an_inner_kernel_race_is_also_a_race() {
    // Every outer iteration builds its row in one shared scratch block.
    let p = parse(
        "def main (n: int) =
           let (s: mem) = alloc 2
           let (m: mem) = alloc n * 2
           let (ys: [n][2]int @ m -> R(n, 2)) = kernel i < n do
               let (row: [2]int @ s -> R(2)) = kernel j < 2 do
                   let (v: int) = i + j
                   in (v)
               in (row)
           in (ys)",
    );
    assert!(matches!(
        reference_heap(&p, &[Value::Scalar(funmem_lang::prim::Const::I64(2))], FUEL),
        RefOutcome::Race { .. }
    ));
    assert!(
        heap(&p, &[Value::Scalar(funmem_lang::prim::Const::I64(2))]).is_err_and(|e| e.is_race())
    );
}

#[test]
fn memcopy_reads_before_it_writes() {
    // A copy shifted by one inside one block gives the old values.
    let p = parse(
        "def main (n: int) =
           let (m: mem) = alloc n + 1
           let (xs: [n]int @ m -> R(n)) = iota n
           let (ys: [n]int @ m -> 1 + {(n : 1)}) = copy xs
           in (ys)",
    );
    assert_eq!(
        reference_heap(&p, &[Value::Scalar(funmem_lang::prim::Const::I64(3))], FUEL),
        RefOutcome::Results(vec![vector(&[0, 1, 2])])
    );
}

#[test]
fn stuck_outside_the_block_and_out_of_the_shape() {
    let p = parse(
        "def main (n: int) =
           let (m: mem) = alloc n - 1
           let (xs: [n]int @ m -> R(n)) = iota n
           in (xs)",
    );
    assert!(matches!(
        reference_heap(&p, &[Value::Scalar(funmem_lang::prim::Const::I64(2))], FUEL),
        RefOutcome::Stuck(_)
    ));
    let q = parse(
        "def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
           let (x: int) = xs[n]
           in (x)",
    );
    assert!(matches!(
        reference_heap(
            &q,
            &[
                Value::Scalar(funmem_lang::prim::Const::I64(2)),
                vector(&[1, 2])
            ],
            FUEL
        ),
        RefOutcome::Stuck(_)
    ));
}

#[test]
fn a_race_before_getting_stuck_is_a_race() {
    // Iteration i reads xs[i] and writes where xs[i + 1] is; the last
    // iteration writes past the block, after iteration 1 read what
    // iteration 0 wrote.
    let p = parse(
        "def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
           let (ys: [n]int @ xm -> 1 + {(n : 1)}) = kernel i < n do
               let (x: int) = xs[i]
               in (x)
           in (ys)",
    );
    let inputs = [
        Value::Scalar(funmem_lang::prim::Const::I64(3)),
        vector(&[1, 2, 3]),
    ];
    assert!(matches!(
        reference_heap(&p, &inputs, FUEL),
        RefOutcome::Race { .. }
    ));
    assert!(heap(&p, &inputs).is_err_and(|e| e.is_race()));
}

#[test]
fn fuel_runs_out() {
    let p = parse(
        "def main (n: int) =
           let (m: mem) = alloc n
           let (xs: [n]int @ m -> R(n)) = kernel i < n do in (i)
           in (xs)",
    );
    assert_eq!(
        reference_heap(&p, &[Value::Scalar(funmem_lang::prim::Const::I64(100))], 50),
        RefOutcome::OutOfFuel
    );
}

#[test]
fn generation_is_deterministic() {
    let cfg = GenConfig::default();
    for seed in 0..50 {
        let a = gen_funmem(&mut Rng::seed_from_u64(seed), &cfg);
        let b = gen_funmem(&mut Rng::seed_from_u64(seed), &cfg);
        assert_eq!(print::program(&a.program), print::program(&b.program));
        assert_eq!(a.inputs, b.inputs);
    }
}

/// How the real heap semantics ended, in the reference's terms.
fn kind(r: &Result<Vec<Value>, EvalError>) -> &'static str {
    match r {
        Ok(_) => "results",
        Err(e) => match e.kind {
            ErrorKind::Race(_) => "race",
            ErrorKind::Stuck | ErrorKind::OutOfHeap => "stuck",
            ErrorKind::OutOfFuel => "out of fuel",
        },
    }
}

fn ref_kind(r: &RefOutcome) -> &'static str {
    match r {
        RefOutcome::Results(_) => "results",
        RefOutcome::Race { .. } => "race",
        RefOutcome::Stuck(_) => "stuck",
        RefOutcome::OutOfFuel => "out of fuel",
        RefOutcome::OutOfHeap => "stuck",
    }
}

#[test]
fn reference_agrees_with_the_interpreters_on_generated_programs() {
    let cfg = GenConfig::default();
    let limits = Limits::default();
    let (mut races, mut invalid, mut valid, mut stuck) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for seed in 0..SEEDS {
        let case = gen_funmem(&mut Rng::seed_from_u64(seed), &cfg);
        let (p, inputs) = (&case.program, &case.inputs);
        let show = || {
            let ins: Vec<String> = inputs.iter().map(Value::to_string).collect();
            format!("{}input: {}", print::program(p), ins.join(" "))
        };
        if let Err(d) = check_program(p) {
            failures.push(format!(
                "seed {seed}: does not type-check: {}\n{}",
                d.message,
                show()
            ));
            continue;
        }
        let r = reference_heap(p, inputs, FUEL);
        let h = heap(p, inputs);
        let value = run_value(p, inputs, limits, &mut NoObserver);
        if ref_kind(&r) != kind(&h) {
            failures.push(format!(
                "seed {seed}: reference: {r:?}; heap: {h:?}\n{}",
                show()
            ));
            continue;
        }
        if let (RefOutcome::Results(a), Ok(b)) = (&r, &h) {
            if a != b {
                failures.push(format!(
                    "seed {seed}: results differ: reference {a:?}, heap {b:?}\n{}",
                    show()
                ));
                continue;
            }
        }
        let ref_valid = matches!((&r, &value), (RefOutcome::Results(a), Ok(v)) if a == v);
        let verdict = validate(p, inputs, limits);
        if matches!(verdict, Verdict::Valid(_)) != ref_valid {
            failures.push(format!(
                "seed {seed}: validate says {verdict:?}, the reference {r:?}, values {value:?}\n{}",
                show()
            ));
            continue;
        }
        match (&r, &value) {
            (RefOutcome::Race { .. }, _) => races += 1,
            _ if ref_valid => valid += 1,
            (RefOutcome::Results(_), Ok(_)) => invalid += 1,
            _ => stuck += 1,
        }
    }
    let pct = |k: u64| 100.0 * k as f64 / SEEDS as f64;
    eprintln!(
        "{SEEDS} programs: {:.1}% valid, {:.1}% racing, {:.1}% invalid, {:.1}% other (stuck)",
        pct(valid),
        pct(races),
        pct(invalid),
        pct(stuck)
    );
    assert!(
        failures.is_empty(),
        "{} disagreements; the first:\n{}",
        failures.len(),
        failures
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
    assert!(pct(races) >= 10.0, "too few racing programs");
    assert!(pct(invalid) >= 10.0, "too few invalid programs");
    assert!(pct(valid) >= 40.0, "too few valid programs");
}
