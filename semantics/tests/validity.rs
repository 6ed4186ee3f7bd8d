//! Races, validity and limits on small FUNMEM and IMP programs: the cases
//! issue 4 lists. Each program is checked under the semantics it concerns;
//! the corpus (tests/programs) covers results and stuck rules that every
//! semantics shares.

use funmem_lang::ast::{Lang, Program};
use funmem_lang::check::{check_any, check_program};
use funmem_lang::parse::{parse_imp, parse_layer, parse_program, Layer};
use funmem_semantics::error::{ErrorKind, EvalError, Limits};
use funmem_semantics::heap::run_heap;
use funmem_semantics::imp::run_imp;
use funmem_semantics::observer::{NoObserver, Stats};
use funmem_semantics::run::{run, RunOptions, Semantics};
use funmem_semantics::validity::{validate, Verdict};
use funmem_semantics::value::{ArrayValue, Value};

fn funmem(src: &str) -> Program {
    let p = parse_program(src, Lang::FunMem).unwrap_or_else(|d| panic!("{d}\n{src}"));
    check_program(&p).unwrap_or_else(|d| panic!("{d}\n{src}"));
    p
}

fn int(k: i64) -> Value {
    Value::Scalar(funmem_lang::prim::Const::I64(k))
}

fn vector(xs: &[i64]) -> Value {
    Value::Array(ArrayValue::vector(xs.to_vec()))
}

fn race(e: &EvalError) -> &funmem_semantics::error::Race {
    match &e.kind {
        ErrorKind::Race(r) => r,
        k => panic!("expected a race, got {k:?}: {e}"),
    }
}

/// Every iteration writes its result to offset 0 (stride 0).
const WRITE_WRITE: &str = "def main (n: int) =
  let (m: mem) = alloc n
  let (ys: [n]int @ m -> 0 + {(n : 0)}) = kernel i < n do
    in (i)
  in (n)";

#[test]
fn write_write_race_is_found_and_named() {
    let p = funmem(WRITE_WRITE);
    let e = run_heap(&p, &[int(3)], Limits::default(), true, &mut NoObserver).expect_err("races");
    assert_eq!(e.rule, "E-MEM-KERNEL");
    let r = race(&e);
    assert_eq!((r.block, r.offset), (0, 0));
    assert_eq!((r.first.path[0], r.first.write), (0, true));
    assert_eq!((r.second.path[0], r.second.write), (1, true));
    assert!(e.message.contains("block 0 at offset 0"), "{}", e.message);
    // One iteration cannot race with itself; the value semantics has no heap.
    assert!(run_heap(&p, &[int(1)], Limits::default(), true, &mut NoObserver).is_ok());
    assert!(
        matches!(validate(&p, &[int(3)], Limits::default()), Verdict::HeapError(ref e) if e.is_race())
    );
    // Without the check, the heap semantics just runs.
    assert!(run_heap(&p, &[int(3)], Limits::default(), false, &mut NoObserver).is_ok());
}

/// Iteration i reads xs[i+1] of the block it writes in place: iteration
/// i+1 writes what iteration i read.
const READ_WRITE: &str = "def main (n: int) (m: mem) (xs: [n]int @ m -> R(n)) =
  let (ys: [n]int @ m -> R(n)) = kernel i < n do
    let (j: int) = min(i + 1, n - 1)
    let (x: int) = xs[j]
    in (x)
  in (ys)";

#[test]
fn read_write_race_is_found() {
    let p = funmem(READ_WRITE);
    let e = run_heap(
        &p,
        &[int(3), vector(&[1, 2, 3])],
        Limits::default(),
        true,
        &mut NoObserver,
    )
    .expect_err("races");
    let r = race(&e);
    // Offsets are bytes: element 1 of an i64 array starts at byte 8.
    assert_eq!(r.offset, 8);
    assert_eq!((r.first.path[0], r.first.write), (0, false));
    assert_eq!((r.second.path[0], r.second.write), (1, true));
}

/// Both iterations of the outer kernel run an inner kernel that writes the
/// same scratch block: the outer kernel races through its inner kernels.
const NESTED: &str = "def main (n: int) =
  let (s: mem) = alloc 2
  let (om: mem) = alloc n
  let (r: [n]int @ om -> R(n)) = kernel i < n do
    let (t: [2]int @ s -> R(2)) = kernel j < 2 do
      let (v: int) = i + j
      in (v)
    let (x: int) = t[0]
    in (x)
  in (r)";

#[test]
fn nested_kernel_race_is_a_race_of_the_outer_kernel() {
    let p = funmem(NESTED);
    let e = run_heap(&p, &[int(2)], Limits::default(), true, &mut NoObserver).expect_err("races");
    let r = race(&e);
    assert_eq!(r.block, 0, "the scratch block");
    assert_eq!(r.first.path[0], 0);
    assert_eq!(
        r.second.path,
        vec![1, 0],
        "outer iteration 1, inner iteration 0"
    );
    // The outer kernel's position, not the inner one's.
    assert_eq!(&NESTED[e.span.start..e.span.start + 8], "let (r: ");
    // With one outer iteration the inner kernel alone is race free.
    assert!(run_heap(&p, &[int(1)], Limits::default(), true, &mut NoObserver).is_ok());
}

/// Two kernels fill the even and the odd cells of one block; each
/// iteration writes its own cell.
const INTERLEAVED: &str = "def main (n: int) =
  let (m: mem) = alloc 2 * n
  let (e: [n]int @ m -> 0 + {(n : 2)}) = kernel i < n do
    in (i)
  let (o: [n]int @ m -> 1 + {(n : 2)}) = kernel i < n do
    let (x: int) = e[i]
    let (y: int) = x * 10
    in (y)
  in (e, o)";

#[test]
fn iterations_writing_different_offsets_of_one_block_do_not_race() {
    let p = funmem(INTERLEAVED);
    match validate(&p, &[int(4)], Limits::default()) {
        Verdict::Valid(v) => assert_eq!(v, vec![vector(&[0, 1, 2, 3]), vector(&[0, 10, 20, 30])]),
        v => panic!("{v:?}"),
    }
}

/// `c` overwrites block m while `b`, which lives there, is still a result:
/// no race, but the heap result differs from the value result.
const OVERWRITTEN: &str = "def main (n: int) =
  let (m: mem) = alloc n
  let (a: [n]int @ m -> R(n)) = iota n
  let (b: [n]int @ m -> R(n)) = kernel i < n do
    let (x: int) = a[i]
    let (y: int) = x + 10
    in (y)
  let (c: [n]int @ m -> R(n)) = iota n
  in (b, c)";

#[test]
fn invalid_but_race_free_program_is_rejected() {
    let p = funmem(OVERWRITTEN);
    // Building b in place over a is fine: each iteration reads and writes its own cell.
    let heap =
        run_heap(&p, &[int(3)], Limits::default(), true, &mut NoObserver).expect("race free");
    assert_eq!(heap, vec![vector(&[0, 1, 2]), vector(&[0, 1, 2])]);
    match validate(&p, &[int(3)], Limits::default()) {
        Verdict::Invalid(d) => {
            assert_eq!((d.result, d.index.clone()), (0, Some(vec![0])));
            assert_eq!((d.got.as_str(), d.expected.as_str()), ("0i64", "10i64"));
        }
        v => panic!("expected invalid, got {v:?}"),
    }
}

#[test]
fn empty_arrays_and_empty_kernels() {
    let p = funmem(
        "def main (n: int) (k: int) =
  let (m: mem) = alloc n * k
  let (xss: [n][k]int @ m -> R(n, k)) = kernel i < n do
    let (r: [k]int @ m -> R(k)) = iota k
    in (r)
  in (xss)",
    );
    for (n, k) in [(0, 3), (3, 0), (0, 0)] {
        let want = Value::Array(ArrayValue {
            shape: vec![n as usize, k as usize],
            data: funmem_semantics::value::Elems::I64(vec![]),
        });
        assert_eq!(
            validate(&p, &[int(n), int(k)], Limits::default()),
            Verdict::Valid(vec![want])
        );
    }
}

#[test]
fn fuel_and_heap_limits_are_clean_errors() {
    let p = funmem(OVERWRITTEN);
    let small = Limits {
        fuel: 5,
        max_heap: 1 << 20,
    };
    let e = run_heap(&p, &[int(100)], small, false, &mut NoObserver).expect_err("fuel");
    assert_eq!(e.kind, ErrorKind::OutOfFuel);
    let tiny = Limits {
        fuel: 1 << 20,
        max_heap: 10,
    };
    let e = run_heap(&p, &[int(100)], tiny, false, &mut NoObserver).expect_err("heap");
    assert_eq!(e.kind, ErrorKind::OutOfHeap);
    // An endless program does not exist without loops, but a huge kernel
    // nest stops at the fuel limit rather than running for hours.
    let big = parse_layer(
        "def main (n: int) = let (a: [n][n]int) = kernel i < n do let (b: [n]int) = kernel j < n do in (j) in (b) in (n)",
        Layer::Fun,
    )
    .expect("parses");
    check_any(&big).expect("checks");
    let r = run(
        &big,
        Semantics::Value,
        &[int(1 << 20)],
        RunOptions {
            limits: Limits {
                fuel: 1000,
                max_heap: 1 << 62,
            },
            race_check: true,
        },
        &mut NoObserver,
    );
    assert_eq!(
        r.expect("applies").expect_err("fuel").kind,
        ErrorKind::OutOfFuel
    );
}

#[test]
fn imp_kernels_are_race_checked_too() {
    let p = parse_imp(
        "def main (n: int) = var m: mem; m <- alloc 1; kernel i < n do m[0] <- i done out (n)",
    )
    .expect("parses");
    check_any(&funmem_lang::parse::AnyProgram::Imp(p.clone())).expect("checks");
    let e = run_imp(&p, &[int(2)], Limits::default(), true, &mut NoObserver).expect_err("races");
    assert!(e.is_race(), "{e}");
    assert!(run_imp(&p, &[int(2)], Limits::default(), false, &mut NoObserver).is_ok());
    // Nested: both outer iterations' inner kernels write cell j; the report
    // gives both full paths.
    let p = parse_imp(
        "def main (n: int) = var m: mem; m <- alloc 2; kernel i < n do kernel j < 2 do m[j] <- i done done out (n)",
    )
    .expect("parses");
    let e = run_imp(&p, &[int(2)], Limits::default(), true, &mut NoObserver).expect_err("races");
    let r = race(&e);
    assert_eq!(
        (r.first.path.clone(), r.second.path.clone()),
        (vec![0, 0], vec![1, 0])
    );
}

#[test]
fn stats_count_statements_reads_writes_and_allocations() {
    let p = funmem(OVERWRITTEN);
    let mut st = Stats::default();
    run_heap(&p, &[int(3)], Limits::default(), true, &mut st).expect("runs");
    // alloc, iota, kernel (+ 2 per iteration), iota.
    assert_eq!(st.statements, 4 + 2 * 3);
    assert_eq!((st.allocations, st.cells), (1, 3));
    assert_eq!(st.iterations, 3);
    // Reads: 3 by a[i] and 6 by reading back b and c.
    assert_eq!(st.reads, 3 + 6);
    // Writes: iota twice and the kernel's memcopies.
    assert_eq!(st.writes, 3 + 3 + 3);
}
