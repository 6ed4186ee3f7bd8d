//! Element types, reduce, scan and partial indexing in the independent
//! references (fun_ref, reference) and in the provers: obligations with
//! conversions and floats are proved where true and never wrongly.

use funmem_lang::ast::{Lang, Program};
use funmem_lang::check::check_program;
use funmem_lang::obligation::{parse_obligations, Obligation, Outcome, Prover};
use funmem_lang::parse::parse_program;
use funmem_oracle::fun_ref::{self, RefError, RefLimits};
use funmem_oracle::prove::{smt, Provers, Which};
use funmem_oracle::reference::{names_a_conflict, reference_heap_within, RefOutcome};
use funmem_semantics::error::{ErrorKind, Limits};
use funmem_semantics::observer::NoObserver;
use funmem_semantics::textual::parse_values;
use funmem_semantics::value::Value;

fn parse(src: &str, lang: Lang) -> Program {
    let p = parse_program(src, lang).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    check_program(&p).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    p
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
/// must agree with it, bindings included.
fn fun(src: &str, inputs: &str) -> Result<String, RefError> {
    let p = parse(src, Lang::Fun);
    let inputs = parse_values(inputs).expect("inputs");
    let mut trace = fun_ref::Trace::default();
    let limits = Limits {
        fuel: 50_000,
        max_heap: 10_000,
    };
    let source = funmem_semantics::fun::run_value(&p, &inputs, limits, &mut trace);
    let verdict = fun_ref::check(&p, &inputs, LIMITS, &source, Some(&trace));
    assert_eq!(verdict, fun_ref::Judgement::Agrees, "{source:?}");
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

/// The FUNMEM reference's outcome (results printed), with a heap limit of
/// `cells` 8-byte cells; the heap semantics must end the same way (a race
/// it reports among the reference's conflicts).
fn mem_within(src: &str, inputs: &str, cells: u64) -> Result<String, RefOutcome> {
    let p = parse(src, Lang::FunMem);
    let inputs = parse_values(inputs).expect("inputs");
    let limits = Limits {
        fuel: 100_000,
        max_heap: cells,
    };
    let r = reference_heap_within(&p, &inputs, 100_000, cells);
    let h = funmem_semantics::heap::run_heap(&p, &inputs, limits, true, &mut NoObserver);
    match (&r, &h) {
        (RefOutcome::Results(a), Ok(b)) => assert_eq!(a, b),
        (RefOutcome::Stuck(_), Err(e)) => assert_eq!(e.kind, ErrorKind::Stuck, "{e}"),
        (RefOutcome::Race { conflicts }, Err(e)) => match &e.kind {
            ErrorKind::Race(race) => {
                assert!(names_a_conflict(race, conflicts), "{e}\n{conflicts:?}")
            }
            _ => panic!("{e}"),
        },
        (RefOutcome::OutOfFuel | RefOutcome::OutOfHeap, Err(e)) => assert!(e.is_limit(), "{e}"),
        _ => panic!("reference {r:?}, heap {h:?}"),
    }
    match r {
        RefOutcome::Results(v) => Ok(show(&v)),
        o => Err(o),
    }
}

fn mem(src: &str, inputs: &str) -> Result<String, RefOutcome> {
    mem_within(src, inputs, 1 << 20)
}

fn mem_ok(src: &str, inputs: &str) -> String {
    mem(src, inputs).unwrap_or_else(|e| panic!("{e:?}"))
}

// ---- FUN ----

const TYPED: &str = "def main (n: int) (xs: [n]f32) (ys: [n]i32) =
  let (lo: f32) = -1000
  let (s: f32) = reduce (+) 0 xs
  let (m: i32) = reduce (\\(a: i32) (b: i32) -> let (c: i32) = a * b in (c)) 1 ys
  let (p: [n]f32) = scan (max) lo xs
  let (q: f32) = s / 0
  let (r: i32) = i32(f32.nan)
  let (t: i32) = 2147483647 + m
  let (u: i64) = i64(1e30f32)
  let (b: bool) = s < q
  let (d: f64) = f64(s) * 0.5
  let (e: i32) = i32(-2.7f32)
  let (w: f32) = f32(16777217)
  let (z: bool) = bool(f32.nan) && !(q != q)
  in (s, m, p, q, r, t, u, b, d, e, w, z)
";

#[test]
fn typed_scalars_conversions_and_reductions_in_fun() {
    assert_eq!(
        fun_ok(TYPED, "3 [1.5f32, -2f32, 4f32] [2i32, 3i32, 4i32]"),
        "3.5f32 24i32 [1.5f32, 1.5f32, 4.0f32] f32.inf 0i32 -2147483625i32 \
         9223372036854775807i64 true 1.75f64 -2i32 16777216.0f32 true"
    );
    // No elements: reduce gives ne, scan an empty array of its type.
    assert_eq!(
        fun_ok(TYPED, "0 empty([0]f32) empty([0]i32)"),
        "0.0f32 1i32 empty([0]f32) f32.nan 0i32 -2147483648i32 \
         9223372036854775807i64 false 0.0f64 -2i32 16777216.0f32 false"
    );
}

#[test]
fn lambdas_fold_from_the_left_and_get_stuck_in_their_body() {
    // A lambda that is not associative shows the order: ((100 / 2) / 5) / 1.
    let div = "def main (n: int) (xs: [n]i32) =
  let (s: i32) = reduce (\\(a: i32) (b: i32) -> let (c: i32) = a / b in (c)) 100 xs
  let (p: [n]i32) = scan (\\(a: i32) (b: i32) -> let (c: i32) = a - b in (c)) 0 xs
  in (s, p)
";
    assert_eq!(
        fun_ok(div, "3 [2i32, 5i32, 1i32]"),
        "10i32 [-2i32, -7i32, -8i32]"
    );
    assert_eq!(fun_stuck(div, "2 [2i32, 0i32]"), "division by zero");
    // A lambda reading an enclosing array (and bool reductions).
    let weights = "def main (n: int) (xs: [n]i64) (ws: [3]i64) (bs: [n]bool) =
  let (s: i64) = reduce (\\(a: i64) (b: i64) -> let (k: i64) = b % 3 let (w: i64) = ws[k] let (c: i64) = a + w * b in (c)) 0 xs
  let (all: bool) = reduce (&&) true bs
  let (any: [n]bool) = scan (||) false bs
  in (s, all, any)
";
    assert_eq!(
        fun_ok(weights, "3 [1, 2, 4] [10, 20, 30] [false, true, false]"),
        "160i64 false [false, true, true]"
    );
    // ws[k] out of bounds inside the lambda: stuck.
    let m = fun_stuck(weights, "1 [-1] [10, 20, 30] [true]");
    assert!(m.contains("index -1 is out of bounds"), "{m}");
}

#[test]
fn partial_indexing_selects_rows_of_2d_and_3d_arrays() {
    let p = "def main (x: [2][3][2]int) (i: int) =
  let (r: [3][2]int) = x[i]
  let (q: [2]int) = x[i, 2]
  let (t: [2][3]int) = transpose r
  let (c: [3]int) = t[1]
  let (s: [2][2]int) = r[1 : 2, 0 : 2]
  let (u: [2]int) = s[0]
  in (r, q, c, u)
";
    let x = "[[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]]";
    assert_eq!(
        fun_ok(p, &format!("{x} 1")),
        "[[7i64, 8i64], [9i64, 10i64], [11i64, 12i64]] [11i64, 12i64] [8i64, 10i64, 12i64] [9i64, 10i64]"
    );
    let m = fun_stuck(p, &format!("{x} 2"));
    assert!(
        m.contains("index 2 is out of bounds for dimension 0"),
        "{m}"
    );
}

#[test]
fn generated_typed_programs_agree_with_the_fun_interpreter() {
    use rand::SeedableRng;
    let cfg = funmem_oracle::GenConfig {
        fail_share: 0.3,
        ..funmem_oracle::GenConfig::default()
    };
    let limits = Limits {
        fuel: 1_000_000,
        max_heap: 1 << 20,
    };
    let (mut agree, mut typed, mut reductions) = (0, 0, 0);
    for k in 0..300u64 {
        let case = funmem_oracle::gen::gen_fun(&mut funmem_oracle::Rng::seed_from_u64(k), &cfg);
        if check_program(&case.program).is_err() {
            continue;
        }
        let text = case.program.to_string();
        typed += usize::from(text.contains("f32") || text.contains("i32"));
        reductions += usize::from(text.contains("reduce") || text.contains("scan"));
        let mut trace = fun_ref::Trace::default();
        let source =
            funmem_semantics::fun::run_value(&case.program, &case.inputs, limits, &mut trace);
        let l = RefLimits::from_limits(limits);
        match fun_ref::check(&case.program, &case.inputs, l, &source, Some(&trace)) {
            fun_ref::Judgement::Agrees => agree += 1,
            fun_ref::Judgement::Inconclusive => {}
            fun_ref::Judgement::Differs(m) => panic!("program {k}: {m}\n{}", case.program),
        }
    }
    assert!(
        agree > 200 && typed > 50 && reductions > 50,
        "{agree} {typed} {reductions}"
    );
}

// ---- FUNMEM ----

const SHARED: &str = "def main (n: int) =
  let (m: mem) = alloc n
  let (a: [n]f32 @ m -> R(n)) = kernel i < n do
    let (x: f32) = f32(i)
    let (y: f32) = x * 1.5
    in (y)
  let (b: [n]i32 @ m -> n + {(n : 1)}) = kernel i < n do
    let (x: i32) = i32(i)
    let (y: i32) = 0 - x
    in (y)
  let (sa: f32) = reduce (+) 0 a
  let (sb: i32) = reduce (min) 0 b
  let (h: mem) = alloc 2 bool
  let (bs: [2]bool @ h -> R(2)) = kernel i < 2 do
    let (c: bool) = i < 1
    in (c)
  in (a, b, sa, sb, bs)
";

#[test]
fn arrays_of_several_types_share_a_block_in_the_reference() {
    // An f32 array in bytes 0 .. 4n, an i32 array in bytes 4n .. 8n.
    assert_eq!(
        mem_ok(SHARED, "3"),
        "[0.0f32, 1.5f32, 3.0f32] [0i32, -1i32, -2i32] 4.5f32 -2i32 [true, false]"
    );
}

#[test]
fn byte_overlaps_of_different_widths_race_and_bounds_are_bytes() {
    // a[k] is bytes 8k .. 8k+8, b[k] bytes 4 + 4k .. 8 + 4k: iteration 2
    // writes b[2] (bytes 12 .. 16) inside a[1], which iteration 1 wrote.
    let src = "def main (n: int) =
  let (m: mem) = alloc n
  let (a: [n]i64 @ m -> R(n)) (b: [n]i32 @ m -> 1 + {(n : 1)}) = kernel i < n do
    let (x: i32) = i32(i)
    in (i, x)
  in (a, b)
";
    match mem(src, "3") {
        Err(RefOutcome::Race { conflicts }) => {
            let got: Vec<(usize, i64, i64, i64)> = conflicts
                .iter()
                .map(|c| (c.block, c.offset, c.first.path[0], c.second.path[0]))
                .collect();
            assert_eq!(got, vec![(0, 12, 1, 2)], "{conflicts:?}");
        }
        r => panic!("{r:?}"),
    }
    assert_eq!(mem_ok(src, "2"), "[0i64, 1i64] [0i32, 1i32]");
    // A block of 3 i32s is 12 bytes: a[1] of an i64 array is bytes 8 .. 16.
    let oob = "def main (n: int) =
  let (m: mem) = alloc n i32
  let (a: [n]i64 @ m -> R(n)) = kernel i < n do
    in (i)
  in (a)
";
    match mem(oob, "3") {
        Err(RefOutcome::Stuck(m)) => assert!(m.contains("outside block 0, of 12 bytes"), "{m}"),
        r => panic!("{r:?}"),
    }
    // The heap limit counts 8-byte cells: 9 i32s are 36 bytes, 5 cells.
    let big = "def main (n: int) =
  let (m: mem) = alloc n i32
  in (n)
";
    assert_eq!(mem_within(big, "9", 5), Ok("9i64".into()));
    assert_eq!(mem_within(big, "11", 5), Err(RefOutcome::OutOfHeap));
}

#[test]
fn a_scan_outside_kernels_must_not_write_where_it_reads() {
    let src = "def main (n: int) (m: mem) (xs: [n]i64 @ m -> R(n)) =
  let (ys: [n]i64 @ m -> R(n)) = scan (+) 0 xs
  in (ys)
";
    match mem(src, "3 [1, 2, 3]") {
        Err(RefOutcome::Race { conflicts }) => {
            let got: Vec<(i64, i64, i64)> = conflicts
                .iter()
                .map(|c| (c.offset, c.first.path[0], c.second.path[0]))
                .collect();
            assert_eq!(got, vec![(0, 0, 0), (8, 1, 1), (16, 2, 2)]);
            assert!(conflicts.iter().all(|c| !c.first.write && c.second.write));
        }
        r => panic!("{r:?}"),
    }
    // One block, the scan's output one element after its input: the
    // prefix i is written over xs[i + 1], which it reads.
    let shifted = "def main (n: int) =
  let (nn: int) = n + n
  let (m: mem) = alloc nn
  let (xs: [n]i64 @ m -> R(n)) = iota n
  let (ys: [n]i64 @ m -> n + {(n : 1)}) = scan (+) 0 xs
  let (zs: [n]i64 @ m -> 1 + {(n : 1)}) = scan (+) 0 xs
  in (ys, zs)
";
    match mem(shifted, "3") {
        Err(RefOutcome::Race { conflicts }) => {
            let got: Vec<(i64, i64, i64)> = conflicts
                .iter()
                .map(|c| (c.offset, c.first.path[0], c.second.path[0]))
                .collect();
            assert_eq!(got, vec![(8, 1, 0), (16, 2, 1)]);
        }
        r => panic!("{r:?}"),
    }
    // Without the second scan, the first writes beside what it reads.
    let beside = shifted.replace(
        "  let (zs: [n]i64 @ m -> 1 + {(n : 1)}) = scan (+) 0 xs\n",
        "",
    );
    let beside = beside.replace("in (ys, zs)", "in (ys)");
    assert_eq!(mem_ok(&beside, "3"), "[0i64, 1i64, 3i64]");
    // In a block of its own it is fine; inside a kernel iteration a scan is
    // the iteration's code, and writing its own row is no race.
    let ok = "def main (n: int) (m: mem) (xs: [n]i64 @ m -> R(n)) =
  let (o: mem) = alloc n
  let (ys: [n]i64 @ o -> R(n)) = scan (+) 0 xs
  let (nn: int) = n * n
  let (q: mem) = alloc nn
  let (zs: [n][n]i64 @ q -> R(n, n)) = kernel i < n do
    let (r: [n]i64 @ q -> i * n + {(n : 1)}) = scan (*) i xs
    in (r)
  let (row: [n]i64 @ q -> n + {(n : 1)}) = zs[1]
  let (s: i64) = reduce (max) 0 row
  in (ys, zs, s)
";
    assert_eq!(
        mem_ok(ok, "2 [2, 3]"),
        "[2i64, 5i64] [[0i64, 0i64], [2i64, 6i64]] 6i64"
    );
}

fn obligation(src: &str) -> Obligation {
    parse_obligations(src)
        .unwrap_or_else(|d| panic!("{d:?}"))
        .remove(0)
}

fn outcome(src: &str, which: Which) -> Outcome {
    let p = Provers {
        which,
        memo: false,
        ..Provers::default()
    };
    p.prove(&obligation(src)).outcome
}

fn word(src: &str, which: Which) -> &'static str {
    outcome(src, which).word()
}

#[test]
fn truth_values_converted_to_i64_are_modelled_exactly() {
    // i64(a < b) is 0 or 1.
    let at_most_one = "obligation t\n  at-most i64(a < b) <= 1\n";
    assert_eq!(word(at_most_one, Which::All), "proved");
    assert_eq!(word(at_most_one, Which::Z3), "proved");
    // ... and 1 exactly when a < b: refuted, with a real counterexample.
    let zero = "obligation t\n  given a < b\n  at-most i64(a < b) <= 0\n";
    match outcome(zero, Which::All) {
        Outcome::Refuted(c) => assert!(c.values["a"] < c.values["b"], "{c}"),
        o => panic!("{o:?}"),
    }
    assert_eq!(word(zero, Which::Z3), "refuted");
    // An offset that is a truth value: 0 here, since n >= 1.
    let offset = "obligation t\n  given n >= 1\n  in-bounds i64(n < 0) + {(n : 1)} within n\n";
    assert_eq!(word(offset, Which::All), "proved");
    assert_eq!(word(offset, Which::Z3), "proved");
    let off_by_one = "obligation t\n  given n >= 1\n  in-bounds i64(n > 0) + {(n : 1)} within n\n";
    assert_eq!(word(off_by_one, Which::All), "refuted");
    // bool(x) is x != 0.
    let b = "obligation t\n  given bool(c) && c >= 0\n  at-most 1 <= c\n";
    assert_eq!(word(b, Which::All), "proved");
    assert_eq!(word(b, Which::Z3), "proved");
}

#[test]
fn float_conversions_are_unknown_integers() {
    // True whatever i64(f) is: proved by every prover that can.
    let same = "obligation t\n  at-most i64(f) <= i64(f)\n";
    assert_eq!(word(same, Which::All), "proved");
    let apart = "obligation t\n  given i64(f) >= 0, 0 <= n\n  disjoint 0 + {(i64(f) : 1)} and i64(f) + {(n : 1)}\n";
    assert_eq!(word(apart, Which::All), "proved");
    assert_eq!(word(apart, Which::Lmad), "proved");
    assert_eq!(word(apart, Which::Z3), "proved");
    // Not true for every integer value: never proved, and never refuted
    // either (the value the search or Z3 picks may be unreachable).
    for src in [
        "obligation t\n  at-most i64(f32(n)) <= n\n",
        "obligation t\n  at-most i64(sqrt(f64(n))) <= n\n",
        "obligation t\n  given n >= 0\n  in-bounds i64(2.5f32) + {(n : 1)} within n + 3\n",
        "obligation t\n  at-most i64(x < 2.5) <= 0\n",
    ] {
        for which in [Which::All, Which::Lmad, Which::Search, Which::Z3] {
            assert_eq!(word(src, which), "unknown", "{which:?} on {src}");
        }
    }
    // A float comparison converted is at most 1 all the same? Unknown:
    // the view does not know it is a truth value, which is sound.
    let q = smt::query(
        &obligation("obligation t\n  at-most i64(f32(n)) + i64(x < 2.5) <= n\n"),
        true,
    );
    // Every opaque symbol is declared (Z3 rejects undeclared ones).
    for line in q.body.lines().filter(|l| l.contains("|opaque ")) {
        if line.starts_with("(declare-const") {
            continue;
        }
        let mut rest = line;
        while let Some(k) = rest.find("|opaque ") {
            let tail = &rest[k + 1..];
            let end = tail.find('|').unwrap();
            let name = &tail[..end];
            assert!(
                q.body.contains(&format!("(declare-const |{name}| Int)")),
                "{name} undeclared in\n{}",
                q.body
            );
            rest = &tail[end + 1..];
        }
    }
    assert!(
        q.vars.iter().any(|v| v.starts_with("opaque ")),
        "{:?}",
        q.vars
    );
}
