//! How the front end, the translations and the passes scale with a
//! program's size: each stage on generated programs of 10^3, 10^4 and 10^5
//! statements (`funmem_oracle::big`, the mixed shape: iotas, kernels with
//! and without an `if`, nested kernels and scalar chains, arrays read long
//! after they are bound).
//!
//! `cargo bench --bench passes`; benches/README.md has the curve. Each
//! stage's input is made once, outside the timing, by the stages before it.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use funmem_lang::ast::{Lang, Program};
use funmem_lang::check::check_program;
use funmem_lang::parse::parse_program;
use funmem_oracle::big::{count_statements, program, Shape};
use funmem_transforms::{expand, simplify, to_funmem, to_imp};
use std::hint::black_box;
use std::time::Duration;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// Every stage's input, for one size.
struct Inputs {
    text: String,
    stms: u64,
    fun: Program,
    funmem: Program,
    simplified: Program,
    expanded: Program,
}

fn inputs(n: usize) -> Inputs {
    let prover = funmem_oracle::prove::Provers::default();
    let text = program(Shape::Mixed, n);
    let fun = parse_program(&text, Lang::Fun).expect("generated program parses");
    check_program(&fun).expect("generated program type-checks");
    let funmem = to_funmem::transform_program(&fun).expect("lowers to FUNMEM");
    let simplified = simplify::simplify(&funmem);
    let expanded = expand::expand_gpu_pass(&simplified, &prover)
        .expect("expands")
        .program;
    Inputs {
        stms: count_statements(&fun) as u64,
        text,
        fun,
        funmem,
        simplified,
        expanded,
    }
}

fn passes(c: &mut Criterion) {
    let all: Vec<(usize, Inputs)> = SIZES.iter().map(|&n| (n, inputs(n))).collect();
    let prover = funmem_oracle::prove::Provers::default();
    let mut g = c.benchmark_group("passes");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (n, i) in &all {
        // Elements per second below are source statements per second.
        g.throughput(Throughput::Elements(i.stms));
        g.bench_with_input(BenchmarkId::new("front-end", n), i, |b, i| {
            b.iter(|| {
                let p = parse_program(black_box(&i.text), Lang::Fun).expect("parses");
                check_program(&p).expect("type-checks");
                p
            })
        });
        g.bench_with_input(BenchmarkId::new("to-funmem", n), i, |b, i| {
            b.iter(|| to_funmem::transform_program(black_box(&i.fun)).expect("lowers"))
        });
        g.bench_with_input(BenchmarkId::new("check-funmem", n), i, |b, i| {
            b.iter(|| check_program(black_box(&i.funmem)).expect("type-checks"))
        });
        g.bench_with_input(BenchmarkId::new("simplify", n), i, |b, i| {
            b.iter(|| simplify::simplify(black_box(&i.funmem)))
        });
        g.bench_with_input(BenchmarkId::new("expand-gpu", n), i, |b, i| {
            b.iter(|| expand::expand_gpu_pass(black_box(&i.simplified), &prover).expect("expands"))
        });
        g.bench_with_input(BenchmarkId::new("to-imp", n), i, |b, i| {
            b.iter(|| to_imp::fun_mem_to_imp(black_box(&i.expanded)).expect("lowers"))
        });
    }
    g.finish();
}

criterion_group!(benches, passes);
criterion_main!(benches);
