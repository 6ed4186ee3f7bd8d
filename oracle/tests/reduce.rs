//! The reducer on hand-written failing cases: each reduces to a small case
//! that still fails the same way, still type-checks and is no larger; and on
//! the corpus, with "gives the same outcome" as the predicate, it never
//! panics, keeps the outcome and is deterministic.

use funmem_lang::ast::{ExpKind, Lang, Program};
use funmem_lang::check::check_program;
use funmem_lang::parse::parse_program;
use funmem_lang::print;
use funmem_oracle::reduce::{reduce, size};
use funmem_oracle::Case;
use funmem_semantics::error::{EvalError, Limits};
use funmem_semantics::fun::run_value;
use funmem_semantics::heap::run_heap;
use funmem_semantics::observer::NoObserver;
use funmem_semantics::textual::parse_values;
use funmem_semantics::value::{ArrayValue, Value};
use std::path::Path;

fn parse(text: &str, lang: Lang) -> Program {
    match parse_program(text, lang) {
        Ok(p) => {
            check_program(&p).expect("the test program type-checks");
            p
        }
        Err(d) => panic!("test program does not parse: {d:?}"),
    }
}

fn limits() -> Limits {
    Limits {
        fuel: 1_000_000,
        max_heap: 1 << 20,
    }
}

fn value(c: &Case) -> Result<Vec<Value>, EvalError> {
    run_value(&c.program, &c.inputs, limits(), &mut NoObserver)
}

fn vector(xs: &[i64]) -> Value {
    Value::Array(ArrayValue::vector(xs.to_vec()))
}

fn matrix(rows: usize, cols: usize, data: &[i64]) -> Value {
    assert_eq!(rows * cols, data.len());
    Value::Array(ArrayValue {
        shape: vec![rows, cols],
        data: funmem_semantics::value::Elems::I64(data.to_vec()),
    })
}

/// Reduces `case` and checks what every reduction must give: the result
/// still fails, type-checks, is no larger, and reducing again gives the
/// same case (determinism). Returns the reduced case.
fn reduce_checked(case: &Case, fails: &dyn Fn(&Case) -> bool, max_tries: usize) -> Case {
    assert!(fails(case), "the original case must fail");
    let mut calls = 0;
    let mut pred = |c: &Case| {
        calls += 1;
        fails(c)
    };
    let r = reduce(case, &mut pred, max_tries);
    assert!(calls <= max_tries, "{calls} calls of the predicate");
    eprintln!("{calls} calls of the predicate");
    assert!(fails(&r), "the reduced case must still fail");
    check_program(&r.program).expect("the reduced case type-checks");
    assert!(size(&r.program) <= size(&case.program));
    let again = reduce(case, &mut |c: &Case| fails(c), max_tries);
    assert_eq!(again, r, "reduction is deterministic");
    eprintln!(
        "reduced {} -> {} statements:\n{}inputs: {}",
        size(&case.program),
        size(&r.program),
        print::program(&r.program),
        r.inputs
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    r
}

fn divides_by_zero(c: &Case) -> bool {
    matches!(value(c), Err(e) if e.message.contains("division by zero"))
}

const DIV_DEEP: &str = "
def main (n: int) (xs: [n]int) (d: int) =
  let (a: int) = n + 1
  let (b: int) = a * 2
  let (ys: [n]int) = kernel i < n do
      let (x: int) = xs[i]
      let (y: int) = x + b
      let (w: [n]int) = kernel j < n do
          let (u: int) = xs[j]
          let (v: int) = u * y
          let (q: int) = v / d
          in (q)
      let (s: int) = w[0]
      let (t: int) = s + x
      in (t)
  let (zs: [n]int) = copy ys
  let (h: int) = if n then
      let (h1: int) = b - 1
      in (h1)
    else
      let (h2: int) = 0
      in (h2)
  in (zs, h, b)
";

#[test]
fn division_by_zero_deep_in_a_kernel() {
    let case = Case {
        program: parse(DIV_DEEP, Lang::Fun),
        inputs: vec![
            Value::Scalar(funmem_lang::prim::Const::I64(4)),
            vector(&[1, 2, 3, 4]),
            Value::Scalar(funmem_lang::prim::Const::I64(0)),
        ],
    };
    assert_eq!(size(&case.program), 15);
    let r = reduce_checked(&case, &divides_by_zero, 1000);
    assert!(size(&r.program) <= 3, "reduced to {}", size(&r.program));
    // The inputs shrank too: no array is longer than one element.
    for v in &r.inputs {
        if let Value::Array(a) = v {
            assert!(a.data.len() <= 1, "{v}");
        }
    }
}

#[test]
fn division_by_zero_at_top_level_reduces_to_one_statement() {
    let text = "
def main (n: int) (d: int) =
  let (a: int) = n * 3
  let (b: int) = a + d
  let (c: int) = b / d
  let (e: int) = c - 1
  in (e, a)
";
    let case = Case {
        program: parse(text, Lang::Fun),
        inputs: vec![
            Value::Scalar(funmem_lang::prim::Const::I64(7)),
            Value::Scalar(funmem_lang::prim::Const::I64(0)),
        ],
    };
    let r = reduce_checked(&case, &divides_by_zero, 1000);
    assert_eq!(size(&r.program), 1);
}

fn has_big_number(c: &Case) -> bool {
    match value(c) {
        Ok(vs) => vs.iter().any(|v| match v {
            Value::Scalar(c) => c.as_i64().is_some_and(|k| k > 100),
            Value::Array(a) => a.data.as_i64().is_some_and(|d| d.iter().any(|&k| k > 100)),
        }),
        Err(_) => false,
    }
}

#[test]
fn a_result_above_100() {
    let text = "
def main (n: int) (xs: [n]int) (k: int) =
  let (ys: [n]int) = kernel i < n do
      let (x: int) = xs[i]
      let (y: int) = x * k
      let (z: int) = y + i
      in (z)
  let (s: int) = ys[1]
  let (t: int) = s - 3
  let (u: [2]int) = ys[0:2]
  let (m: int) = min(t, 50)
  in (ys, t, u, m)
";
    let case = Case {
        program: parse(text, Lang::Fun),
        inputs: vec![
            Value::Scalar(funmem_lang::prim::Const::I64(4)),
            vector(&[1, 2, 30, 4]),
            Value::Scalar(funmem_lang::prim::Const::I64(5)),
        ],
    };
    let r = reduce_checked(&case, &has_big_number, 1000);
    assert!(size(&r.program) <= 3, "reduced to {}", size(&r.program));
}

fn contains_transpose(p: &Program) -> bool {
    fn body(b: &funmem_lang::ast::Body) -> bool {
        b.stms.iter().any(|s| match &s.exp.kind {
            ExpKind::Transpose(_) => true,
            ExpKind::Kernel(_, _, kb) => body(kb),
            ExpKind::If(_, t, e) => body(t) || body(e),
            _ => false,
        })
    }
    body(&p.body)
}

/// The program transposes, and its first result is a 2-D array that is not
/// square.
fn transposes_to_non_square(c: &Case) -> bool {
    if !contains_transpose(&c.program) {
        return false;
    }
    match value(c) {
        Ok(vs) => {
            matches!(vs.first(), Some(Value::Array(a)) if a.shape.len() == 2 && a.shape[0] != a.shape[1])
        }
        Err(_) => false,
    }
}

#[test]
fn a_transpose_with_a_non_square_result() {
    let text = "
def main (n: int) (m: int) (xss: [n][m]int) =
  let (yss: [m][n]int) = transpose xss
  let (zss: [m][n]int) = kernel i < m do
      let (r: [n]int) = kernel j < n do
          let (x: int) = yss[i, j]
          let (y: int) = x * 2
          in (y)
      in (r)
  let (k: int) = zss[0, 0]
  let (c: int) = k + m
  let (back: [n][m]int) = transpose zss
  in (back, c)
";
    let case = Case {
        program: parse(text, Lang::Fun),
        inputs: vec![
            Value::Scalar(funmem_lang::prim::Const::I64(2)),
            Value::Scalar(funmem_lang::prim::Const::I64(3)),
            matrix(2, 3, &[1, 2, 3, 4, 5, 6]),
        ],
    };
    let r = reduce_checked(&case, &transposes_to_non_square, 1000);
    assert!(size(&r.program) <= 2, "reduced to {}", size(&r.program));
}

#[test]
fn an_if_reduces_to_one_branch() {
    // The failure is in the else branch, taken when c = 0.
    let text = "
def main (n: int) (c: int) (xs: [n]int) =
  let (k: int) (ys: [k]int) = if c then
      let (h: int) = n / 2
      let (front: [h]int) = xs[0:h]
      in (h, front)
    else
      let (e: [n]int) = kernel i < n do
          let (x: int) = xs[i]
          let (y: int) = x / c
          in (y)
      in (n, e)
  let (s: int) = k * 2
  in (ys, s)
";
    let case = Case {
        program: parse(text, Lang::Fun),
        inputs: vec![
            Value::Scalar(funmem_lang::prim::Const::I64(3)),
            Value::Scalar(funmem_lang::prim::Const::I64(0)),
            vector(&[1, 2, 3]),
        ],
    };
    let r = reduce_checked(&case, &divides_by_zero, 1000);
    assert!(size(&r.program) <= 2, "reduced to {}", size(&r.program));
    let text = print::program(&r.program);
    assert!(!text.contains("if"), "the if is gone:\n{text}");
}

fn races(c: &Case) -> bool {
    matches!(
        run_heap(&c.program, &c.inputs, limits(), true, &mut NoObserver),
        Err(e) if e.is_race()
    )
}

#[test]
fn a_funmem_race() {
    // zs has stride 0: every iteration writes zm[0].
    let text = "
def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
  let (ym: mem) = alloc n
  let (ys: [n]int @ ym -> R(n)) = kernel i < n do
      let (x: int) = xs[i]
      let (y: int) = x + 1
      in (y)
  let (zm: mem) = alloc 1
  let (zs: [n]int @ zm -> 0 + {(n : 0)}) = kernel i < n do
      let (a: int) = ys[i]
      let (b: int) = a * 2
      in (b)
  let (s: int) = zs[0]
  let (t: int) = s + n
  in (ym, ys, t)
";
    let case = Case {
        program: parse(text, Lang::FunMem),
        inputs: vec![
            Value::Scalar(funmem_lang::prim::Const::I64(5)),
            vector(&[1, 2, 3, 4, 5]),
        ],
    };
    let r = reduce_checked(&case, &races, 1000);
    assert!(size(&r.program) <= 3, "reduced to {}", size(&r.program));
    // Two iterations suffice for a race; what input is left is tiny (the
    // racing array may live in the input's block: one statement fewer).
    let cells: usize = r
        .inputs
        .iter()
        .map(|v| match v {
            Value::Scalar(_) => 1,
            Value::Array(a) => a.data.len(),
        })
        .sum();
    assert!(cells <= 2, "{:?}", r.inputs);
}

#[test]
fn a_funmem_out_of_bounds_in_a_branch() {
    let text = "
def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) (c: int) =
  let (k: int) (km: mem) (ys: [k]int @ km -> R(k)) = if c then
      let (h: int) = n / 2
      let (front: [h]int @ xm -> 0 + {(h : 1)}) = xs[0:h]
      in (h, xm, front)
    else
      let (em: mem) = alloc n
      let (e: [n]int @ em -> R(n)) = kernel i < n do
          let (x: int) = xs[i]
          let (y: int) = 0 - x
          in (y)
      in (n, em, e)
  let (j: int) = k + 1
  let (z: int) = ys[j]
  in (k, ys, z)
";
    let case = Case {
        program: parse(text, Lang::FunMem),
        inputs: vec![
            Value::Scalar(funmem_lang::prim::Const::I64(5)),
            vector(&[1, 2, 3, 4, 5]),
            Value::Scalar(funmem_lang::prim::Const::I64(1)),
        ],
    };
    let out_of_bounds = |c: &Case| matches!(value(c), Err(e) if e.rule.contains("INDEX"));
    let r = reduce_checked(&case, &out_of_bounds, 1000);
    assert!(size(&r.program) <= 3, "reduced to {}", size(&r.program));
}

#[test]
fn the_budget_is_respected() {
    let case = Case {
        program: parse(DIV_DEEP, Lang::Fun),
        inputs: vec![
            Value::Scalar(funmem_lang::prim::Const::I64(4)),
            vector(&[1, 2, 3, 4]),
            Value::Scalar(funmem_lang::prim::Const::I64(0)),
        ],
    };
    for budget in [0, 1, 2, 5] {
        let mut calls = 0;
        let r = reduce(
            &case,
            &mut |c: &Case| {
                calls += 1;
                divides_by_zero(c)
            },
            budget,
        );
        assert!(calls <= budget);
        assert!(divides_by_zero(&r));
        if budget == 0 {
            assert_eq!(r, case);
        }
    }
}

#[test]
fn a_predicate_that_never_holds_keeps_the_case() {
    let case = Case {
        program: parse(DIV_DEEP, Lang::Fun),
        inputs: vec![
            Value::Scalar(funmem_lang::prim::Const::I64(4)),
            vector(&[1, 2, 3, 4]),
            Value::Scalar(funmem_lang::prim::Const::I64(0)),
        ],
    };
    let r = reduce(&case, &mut |_: &Case| false, 10_000);
    assert_eq!(r, case);
}

#[test]
fn size_counts_statements_at_all_depths() {
    let p = parse(DIV_DEEP, Lang::Fun);
    assert_eq!(size(&p), 15);
    let p = parse("def main (n: int) = in (n)", Lang::Fun);
    assert_eq!(size(&p), 0);
}

/// The files of the FUN and FUNMEM corpus and of the IFL paper, sorted.
fn corpus_files() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in [
        "tests/programs/fun",
        "tests/programs/funmem",
        "papers/ifl2022",
    ] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            files.push(e.path());
        }
    }
    files.sort();
    files
}

/// Every program of the corpus with its first test input, reduced while it
/// gives the same outcome under the value semantics (the same results, or
/// an error of the same rule): no panic, still well typed, the same
/// outcome, no larger, deterministic.
#[test]
fn corpus_programs_reduce_keeping_their_outcome() {
    let files = corpus_files();
    let mut done = 0;
    for f in files {
        let lang = match f.extension().and_then(|e| e.to_str()) {
            Some("fun") => Lang::Fun,
            Some("funmem") => Lang::FunMem,
            _ => continue,
        };
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let Ok(program) = parse_program(&text, lang) else {
            continue;
        };
        if check_program(&program).is_err() {
            continue;
        }
        let Ok(Some(spec)) = funmem_lang::testspec::parse(&text) else {
            continue;
        };
        for tc in spec.cases.iter().take(2) {
            let Ok(inputs) = parse_values(&tc.input) else {
                continue;
            };
            let case = Case {
                program: program.clone(),
                inputs,
            };
            let outcome = |c: &Case| match value(c) {
                Ok(vs) => Ok(vs),
                Err(e) => Err(e.rule),
            };
            let original = outcome(&case);
            let same = |c: &Case| outcome(c) == original;
            let r = reduce_checked(&case, &same, 300);
            eprintln!(
                "{}: {} -> {}",
                f.display(),
                size(&case.program),
                size(&r.program)
            );
            done += 1;
        }
    }
    assert!(done >= 10, "only {done} corpus cases");
}

/// A predicate that holds on about two candidates in three, decided by a
/// hash of the printed case: it drives the reducer through many moves on
/// arbitrary (well-typed) programs.
fn coin(seed: u64) -> impl Fn(&Case) -> bool {
    move |c: &Case| {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        seed.hash(&mut h);
        print::program(&c.program).hash(&mut h);
        for v in &c.inputs {
            v.to_string().hash(&mut h);
        }
        !h.finish().is_multiple_of(3)
    }
}

/// Arbitrary predicates on every corpus program: the reducer never panics,
/// its result type-checks, satisfies the predicate and is no larger.
#[test]
fn arbitrary_predicates_on_the_corpus() {
    let files = corpus_files();
    for f in files {
        let lang = match f.extension().and_then(|e| e.to_str()) {
            Some("fun") => Lang::Fun,
            Some("funmem") => Lang::FunMem,
            _ => continue,
        };
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let Ok(program) = parse_program(&text, lang) else {
            continue;
        };
        let Ok(Some(spec)) = funmem_lang::testspec::parse(&text) else {
            continue;
        };
        let Some(Ok(inputs)) = spec.cases.first().map(|tc| parse_values(&tc.input)) else {
            continue;
        };
        let case = Case { program, inputs };
        for seed in 0..4 {
            let p = coin(seed);
            if !p(&case) {
                continue;
            }
            let r = reduce(&case, &mut |c: &Case| p(c), 200);
            assert!(p(&r));
            if r != case {
                check_program(&r.program).expect("the reduced case type-checks");
            }
            assert!(size(&r.program) <= size(&case.program));
        }
    }
}

/// A long program (over 100 statements) with a division by zero in the
/// middle of a kernel reduces to a few statements within its budget.
#[test]
fn a_long_program() {
    let mut t = String::from("def main (n: int) (xs: [n]int) (d: int) =\n");
    t += "  let (a0: int) = n + 1\n  let (a1: int) = n * 2\n";
    for k in 2..40 {
        t += &format!("  let (a{k}: int) = a{} * 3 + a{}\n", k - 1, k - 2);
    }
    t += "  let (ys: [n]int) = kernel i < n do\n";
    t += "      let (x0: int) = xs[i]\n      let (x1: int) = x0 + i\n";
    for k in 2..30 {
        t += &format!("      let (x{k}: int) = x{} - x{} * a{k}\n", k - 1, k - 2);
    }
    t += "      let (q: int) = x29 / d\n";
    for k in 30..50 {
        t += &format!("      let (x{k}: int) = x{} + q\n", k - 1);
    }
    t += "      in (x49)\n";
    for k in 40..70 {
        t += &format!("  let (a{k}: int) = a{} + 1\n", k - 1);
    }
    t += "  let (zs: [n]int) = copy ys\n";
    t += "  in (a69, zs)\n";
    let case = Case {
        program: parse(&t, Lang::Fun),
        inputs: vec![
            Value::Scalar(funmem_lang::prim::Const::I64(3)),
            vector(&[4, 5, 6]),
            Value::Scalar(funmem_lang::prim::Const::I64(0)),
        ],
    };
    assert!(size(&case.program) > 100, "{}", size(&case.program));
    let start = std::time::Instant::now();
    let r = reduce_checked(&case, &divides_by_zero, 2000);
    eprintln!("took {:?}", start.elapsed());
    assert!(size(&r.program) <= 3, "reduced to {}", size(&r.program));
}

/// A result holding 9000 (which only the input 9 times 1000 makes).
fn has_9000(c: &Case) -> bool {
    match value(c) {
        Ok(vs) => vs.iter().any(|v| match v {
            Value::Scalar(c) => c.as_i64() == Some(9000),
            Value::Array(a) => a.data.as_i64().is_some_and(|d| d.contains(&9000)),
        }),
        Err(_) => false,
    }
}

fn contains_copy(b: &funmem_lang::ast::Body) -> bool {
    b.stms.iter().any(|s| match &s.exp.kind {
        ExpKind::Copy(_) => true,
        ExpKind::Kernel(_, _, kb) => contains_copy(kb),
        ExpKind::If(_, t, e) => contains_copy(t) || contains_copy(e),
        _ => false,
    })
}

/// A program whose `copy` is used, and which has a result of 9000.
fn needless_copy() -> Case {
    let text = "
def main (n: int) (xs: [n]int) =
  let (ys: [n]int) = copy xs
  let (zs: [n]int) = kernel i < n do
      let (a: int) = ys[i]
      let (b: int) = a * 1000
      in (b)
  in (zs)
";
    Case {
        program: parse(text, Lang::Fun),
        inputs: vec![
            Value::Scalar(funmem_lang::prim::Const::I64(2)),
            vector(&[7, 9]),
        ],
    }
}

#[test]
fn a_needless_copy_is_replaced_by_its_source() {
    // No cheap binding replaces the copy (the input's 9 matters), and the
    // copy is used, so only using `xs` for `ys` removes it.
    let case = needless_copy();
    let r = reduce_checked(&case, &has_9000, 500);
    assert!(!contains_copy(&r.program.body), "{}", r.program);
}

#[test]
fn reduction_stops_at_its_deadline() {
    let case = needless_copy();
    let mut calls = 0;
    let past = std::time::Instant::now();
    let r = funmem_oracle::reduce::reduce_until(
        &case,
        &mut |c: &Case| {
            calls += 1;
            has_9000(c)
        },
        10_000,
        Some(past),
    );
    assert_eq!(calls, 0, "no candidate is tried after the deadline");
    assert_eq!(r, case);
}
