//! Interpreter speed (issue 4's targets): statements per second of the FUN
//! value and IMP semantics on a kernel of 10^7 iterations, and the cost of
//! race detection in the FUNMEM heap semantics.
//!
//! `cargo bench --bench interpreters`; figures go in the closing notes.
//! Each program does the same work per iteration: read an element, compute
//! `x * 2 + i`, produce it.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use funmem_lang::parse::{parse_layer, Layer};
use funmem_lang::prim::Const;
use funmem_semantics::error::Limits;
use funmem_semantics::observer::NoObserver;
use funmem_semantics::run::{run, RunOptions, Semantics};
use funmem_semantics::value::{ArrayValue, Value};
use std::hint::black_box;

const N: i64 = 10_000_000;

const FUN: &str = "def main (n: int) (xs: [n]int) =
  let (ys: [n]int) = kernel i < n do
    let (x: int) = xs[i]
    let (y: int) = x * 2 + i
    in (y)
  in (ys)";

const FUNMEM: &str = "def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
  let (ym: mem) = alloc n
  let (ys: [n]int @ ym -> R(n)) = kernel i < n do
    let (x: int) = xs[i]
    let (y: int) = x * 2 + i
    in (y)
  in (ys)";

const IMP: &str = "def main (n: int) (xs: [n]int @ xm -> R(n)) =
  var ym: mem;
  ym <- alloc n;
  kernel i < n do
    var x: int;
    x <- xm[i];
    var y: int;
    y <- x * 2 + i;
    ym[i] <- y
  done
out (ys: [n]int @ ym -> R(n))";

fn inputs() -> Vec<Value> {
    vec![
        Value::Scalar(Const::I64(N)),
        Value::Array(ArrayValue::vector((0..N).collect())),
    ]
}

fn bench(
    c: &mut Criterion,
    name: &str,
    src: &str,
    layer: Layer,
    sem: Semantics,
    race_check: bool,
    stmts_per_iter: u64,
) {
    let p = parse_layer(src, layer).expect("benchmark program parses");
    funmem_lang::check::check_any(&p).expect("benchmark program type-checks");
    let inputs = inputs();
    let opts = RunOptions {
        limits: Limits::default(),
        race_check,
    };
    let mut g = c.benchmark_group("interpreters");
    g.sample_size(10);
    g.throughput(Throughput::Elements(stmts_per_iter * N as u64));
    g.bench_function(name, |b| {
        b.iter(|| {
            let r =
                run(&p, sem, black_box(&inputs), opts, &mut NoObserver).expect("semantics applies");
            black_box(r.expect("runs"))
        })
    });
    g.finish();
}

fn interpreters(c: &mut Criterion) {
    // Elements per second below are statements per second.
    bench(
        c,
        "fun-value-1e7",
        FUN,
        Layer::Fun,
        Semantics::Value,
        false,
        2,
    );
    bench(c, "imp-1e7", IMP, Layer::Imp, Semantics::Heap, true, 5);
    bench(
        c,
        "imp-1e7-no-race-check",
        IMP,
        Layer::Imp,
        Semantics::Heap,
        false,
        5,
    );
    bench(
        c,
        "funmem-heap-1e7",
        FUNMEM,
        Layer::FunMem,
        Semantics::Heap,
        true,
        2,
    );
    bench(
        c,
        "funmem-heap-1e7-no-race-check",
        FUNMEM,
        Layer::FunMem,
        Semantics::Heap,
        false,
        2,
    );
}

criterion_group!(benches, interpreters);
criterion_main!(benches);
