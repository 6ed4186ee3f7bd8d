//! Prover speed over the obligation suite (tests/obligations/): one
//! benchmark per file, proving every obligation in it with the default
//! provers (quick search, LMAD procedure, search, Z3), and the LMAD
//! procedure alone on the file's true obligations.
//!
//! `cargo bench --bench provers`; per-obligation times come from
//! `funmem prove tests/obligations` (the closing notes report both).

use criterion::{criterion_group, criterion_main, Criterion};
use funmem_lang::obligation::{parse_obligations, Expect, Prover};
use funmem_oracle::prove::{lmad, Provers};
use std::hint::black_box;

fn suite(c: &mut Criterion) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/obligations");
    let files = funmem_oracle::prove::obligation_files(&[dir.into()]);
    let provers = Provers {
        memo: false,
        ..Provers::default()
    };
    let mut g = c.benchmark_group("prove");
    g.sample_size(10);
    for f in files {
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let obs = parse_obligations(&std::fs::read_to_string(&f).unwrap()).unwrap();
        g.bench_function(format!("{name} (all provers)"), |b| {
            b.iter(|| {
                for o in &obs {
                    black_box(provers.prove(o));
                }
            })
        });
        let true_ones: Vec<_> = obs
            .iter()
            .filter(|o| o.expect == Some(Expect::Proved))
            .collect();
        g.bench_function(format!("{name} (LMAD procedure, true ones)"), |b| {
            b.iter(|| {
                for o in &true_ones {
                    let _ = black_box(lmad::prove(o));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, suite);
criterion_main!(benches);
