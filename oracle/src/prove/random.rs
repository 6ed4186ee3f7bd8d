//! Random obligations, for property tests of the provers and for benches.
//!
//! Half are built around the shapes passes emit (contiguous and
//! interleaved per-thread parts, rows of a matrix, in-bounds of a part,
//! injectivity of row-major and transposed layouts), often perturbed so
//! that they turn false; the rest are random polynomials over a few
//! variables. Facts are drawn from what a pass would know (sizes are
//! non-negative, indices below their bounds, two threads differ).

use crate::Rng;
use funmem_lang::ast::{BinOp, SExp};
use funmem_lang::lmad::{Dim, Lmad};
use funmem_lang::obligation::{Claim, Fact, Obligation};
use funmem_lang::Name;
use rand::{RngExt, SeedableRng};

const VARS: [&str; 5] = ["n", "m", "t", "u", "k"];

fn var(x: &str) -> SExp {
    SExp::var(&Name::new(x))
}

fn int(k: i64) -> SExp {
    SExp::int(k)
}

fn bin(op: BinOp, a: SExp, b: SExp) -> SExp {
    SExp::bin(op, a, b)
}

/// A small random term: a constant, a variable, a product, or a sum.
fn term(rng: &mut Rng, depth: u32) -> SExp {
    let pick = rng.random_range(0..if depth == 0 { 3 } else { 6 });
    match pick {
        0 => int(rng.random_range(-2..4)),
        1 | 2 => var(VARS[rng.random_range(0..VARS.len())]),
        3 => bin(BinOp::Mul, term(rng, depth - 1), term(rng, depth - 1)),
        4 => bin(BinOp::Add, term(rng, depth - 1), term(rng, depth - 1)),
        _ => bin(BinOp::Sub, term(rng, depth - 1), term(rng, 0)),
    }
}

fn lmad(offset: SExp, dims: Vec<(SExp, SExp)>) -> Lmad<SExp> {
    Lmad {
        offset,
        dims: dims
            .into_iter()
            .map(|(elems, stride)| Dim { elems, stride })
            .collect(),
    }
}

fn random_lmad(rng: &mut Rng) -> Lmad<SExp> {
    let q = rng.random_range(1..3);
    let dims = (0..q)
        .map(|_| {
            let e = if rng.random_bool(0.6) {
                var(VARS[rng.random_range(0..2)])
            } else {
                int(rng.random_range(0..4))
            };
            (e, term(rng, 1))
        })
        .collect();
    lmad(term(rng, 2), dims)
}

/// Replaces, with some probability, one part of the LMAD by a random term.
fn perturb(rng: &mut Rng, mut l: Lmad<SExp>) -> Lmad<SExp> {
    if rng.random_bool(0.5) {
        match rng.random_range(0..3) {
            0 => l.offset = bin(BinOp::Add, l.offset, int(rng.random_range(-2..3))),
            1 => {
                let k = rng.random_range(0..l.dims.len());
                l.dims[k].stride = term(rng, 1);
            }
            _ => {
                let k = rng.random_range(0..l.dims.len());
                l.dims[k].elems = bin(BinOp::Add, l.dims[k].elems.clone(), int(1));
            }
        }
    }
    l
}

fn facts(rng: &mut Rng) -> Vec<Fact> {
    let (n, m, t, u, k) = (var("n"), var("m"), var("t"), var("u"), var("k"));
    let mut out = vec![
        bin(BinOp::Ge, n.clone(), int(0)),
        bin(BinOp::Ge, m.clone(), int(0)),
    ];
    let optional = [
        bin(BinOp::Le, int(0), t.clone()),
        bin(BinOp::Lt, t.clone(), n.clone()),
        bin(BinOp::Le, int(0), u.clone()),
        bin(BinOp::Lt, u.clone(), n.clone()),
        bin(BinOp::Ne, t.clone(), u.clone()),
        bin(BinOp::Lt, t.clone(), u),
        bin(BinOp::Ge, k.clone(), int(1)),
        bin(BinOp::Eq, k, bin(BinOp::Add, n, int(1))),
        bin(BinOp::Ge, m, int(1)),
    ];
    for f in optional {
        if rng.random_bool(0.6) {
            out.push(f);
        }
    }
    out.into_iter().map(|e| Fact::new(e, "random")).collect()
}

/// The `k`-th random obligation of `seed`.
pub fn obligation(seed: u64, k: u64) -> Obligation {
    let mut rng = Rng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ k);
    let (n, m, t, u) = (var("n"), var("m"), var("t"), var("u"));
    let mul = |a: &SExp, b: &SExp| bin(BinOp::Mul, a.clone(), b.clone());
    let claim = match rng.random_range(0..10) {
        // Contiguous per-thread parts (CPU expansion).
        0 => {
            let a = lmad(mul(&t, &m), vec![(m.clone(), int(1))]);
            let b = lmad(mul(&u, &m), vec![(m.clone(), int(1))]);
            Claim::Disjoint(perturb(&mut rng, a), perturb(&mut rng, b))
        }
        // Interleaved per-thread parts (GPU expansion).
        1 => {
            let a = lmad(t.clone(), vec![(m.clone(), n.clone())]);
            let b = lmad(u.clone(), vec![(m.clone(), n.clone())]);
            Claim::Disjoint(perturb(&mut rng, a), perturb(&mut rng, b))
        }
        // Rows of a matrix.
        2 => {
            let a = lmad(mul(&t, &m), vec![(m.clone(), int(1))]);
            let b = lmad(mul(&u, &m), vec![(m.clone(), int(1))]);
            let b = if rng.random_bool(0.5) {
                lmad(
                    int(0),
                    vec![(n.clone(), mul(&int(2), &m)), (m.clone(), int(1))],
                )
            } else {
                b
            };
            Claim::Disjoint(perturb(&mut rng, a), perturb(&mut rng, b))
        }
        // A part inside its block.
        3 => {
            let a = lmad(t.clone(), vec![(m.clone(), n.clone())]);
            Claim::InBounds(perturb(&mut rng, a), mul(&n, &m))
        }
        // Row-major or transposed layouts.
        4 => {
            let a = if rng.random_bool(0.5) {
                lmad(int(0), vec![(n.clone(), m.clone()), (m.clone(), int(1))])
            } else {
                lmad(int(0), vec![(m.clone(), int(1)), (n.clone(), m.clone())])
            };
            Claim::Injective(perturb(&mut rng, a))
        }
        5 => Claim::AtMost(term(&mut rng, 2), term(&mut rng, 2)),
        6 => Claim::Injective(random_lmad(&mut rng)),
        7 => Claim::InBounds(random_lmad(&mut rng), term(&mut rng, 2)),
        _ => Claim::Disjoint(random_lmad(&mut rng), random_lmad(&mut rng)),
    };
    let facts = facts(&mut rng);
    Obligation::new(
        "random",
        format!("random_{seed}_{k}"),
        claim,
        facts,
        funmem_lang::Span::DUMMY,
    )
}
