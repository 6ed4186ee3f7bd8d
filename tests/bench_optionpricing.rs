//! benches/programs/optionpricing.fun against an independent reference:
//! Monte-Carlo pricing written in plain Rust from FinPar's description
//! (Sobol points by gray code, Wichura's AS241 inverse normal, a Brownian
//! path built by recursive bisection, correlated Black-Scholes prices, the
//! three contracts' payoffs), on the test block's inputs and larger cases;
//! and the program's Brownian bridge data against the bisection's points
//! (FinPar's order) and the bridge's law.

mod common;

use common::{assert_exit, funmem, numbers, text, write_temp};

const PROGRAM: &str = "benches/programs/optionpricing.fun";

/// The market data of one model.
struct Model {
    c: Vec<Vec<f32>>,
    vols: Vec<Vec<f32>>,
    drifts: Vec<Vec<f32>>,
    starts: Vec<f32>,
    detval: f32,
    discts: Vec<f32>,
}

/// One pricing problem: the contract, the iterations, the sizes and the
/// seed of the direction vectors (the Brownian bridge depends on the
/// number of dates only), and one model.
struct Problem {
    contract: i32,
    iterations: u64,
    dates: usize,
    unds: usize,
    bits: u32,
    seed: i64,
    model: Model,
}

/// The direction vector of dimension `d`, bit `b`, by the program's
/// documented formula: an odd multiplier below 2^(b+1), shifted so that
/// its lowest set bit is bit `bits - 1 - b`.
fn direction(seed: i64, d: i64, b: u32, bits: u32) -> i64 {
    let z = seed
        .wrapping_mul(1_000_003)
        .wrapping_add(d.wrapping_mul(10_007))
        .wrapping_add(i64::from(b) * 101)
        .wrapping_add(12_345)
        .wrapping_mul(2_862_933_555_777_941_757)
        .wrapping_add(3_037_000_493);
    let h = ((z / 1024) % (1 << 30)).abs();
    let m = (2 * h + 1) % (1i64 << (b + 1));
    m << (bits - 1 - b)
}

/// Wichura's AS241 (PPND7): the standard normal quantile of `p`.
fn inverse_normal(p: f32) -> f32 {
    fn ratio(x: f32, a: [f32; 8], b: [f32; 8]) -> f32 {
        let horner = |c: [f32; 8]| c.iter().rev().fold(0.0f32, |acc, &k| acc * x + k);
        horner(a) / horner(b)
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        return q * ratio(
            r,
            [
                3.387_133, 133.141_67, 1_971.591, 13_731.693, 45_921.953, 67_265.77, 33_430.574,
                2_509.081,
            ],
            [
                1.0, 42.313_33, 687.187, 5_394.196, 21_213.795, 39_307.895, 28_729.086, 5_226.495,
            ],
        );
    }
    let tail = if q < 0.0 { p } else { 1.0 - p };
    let r = (-tail.ln()).sqrt();
    let x = if r <= 5.0 {
        ratio(
            r - 1.6,
            [
                1.423_437_1,
                4.630_338,
                5.769_497,
                3.647_848_3,
                1.270_458_3,
                0.241_780_73,
                0.022_723_845,
                7.745_45e-4,
            ],
            [
                1.0,
                2.053_191_6,
                1.676_384_8,
                0.689_767_3,
                0.148_103_98,
                0.015_198_667,
                5.475_938e-4,
                1.050_75e-9,
            ],
        )
    } else {
        ratio(
            r - 5.0,
            [
                6.657_905,
                5.463_785,
                1.784_826_5,
                0.296_560_57,
                0.026_532_19,
                0.001_242_661,
                2.711_555_6e-5,
                2.010_334_4e-7,
            ],
            [
                1.0,
                0.599_832_2,
                0.136_929_88,
                0.014_875_361,
                7.868_691e-4,
                1.846_318_4e-5,
                1.421_511_7e-7,
                2.044_263e-5,
            ],
        )
    };
    if q < 0.0 {
        -x
    } else {
        x
    }
}

/// A Brownian path W at times 0, 1, ..., n (n = `z.len()`, W(0) = 0)
/// built by bisection, the deviates used in the order the points are
/// made: W(n) = sqrt(n) z_0, then recursively, left half before right
/// half, the midpoint m = (a + c) / 2 of each interval (a, c) that has a
/// time inside, from the Brownian bridge's law between its ends: mean
/// ((c - m) W(a) + (m - a) W(c)) / (c - a), variance (m - a)(c - m) / (c - a).
fn bisection_path(z: &[f32]) -> Vec<f32> {
    let n = z.len();
    let mut w = vec![0.0f32; n + 1];
    w[n] = (n as f32).sqrt() * z[0];
    let mut steps = vec![(n, 0, 0)];
    fill_between(0, n, z, &mut w, &mut steps);
    w
}

/// Fills the times strictly between `a` and `c` (whose points are made)
/// and records each point made as (m, a, c); the next deviate is
/// `z[steps.len()]`.
fn fill_between(
    a: usize,
    c: usize,
    z: &[f32],
    w: &mut [f32],
    steps: &mut Vec<(usize, usize, usize)>,
) {
    if c - a < 2 {
        return;
    }
    let m = (a + c) / 2;
    let (left, right, span) = ((m - a) as f32, (c - m) as f32, (c - a) as f32);
    let mean = (right * w[a] + left * w[c]) / span;
    w[m] = mean + (left * right / span).sqrt() * z[steps.len()];
    steps.push((m, a, c));
    fill_between(a, m, z, w, steps);
    fill_between(m, c, z, w, steps);
}

/// The bisection's points in the order it makes them, each (m, a, c):
/// time m between the made times a and c (the first, n, as (n, 0, 0)).
fn bisection_steps(n: usize) -> Vec<(usize, usize, usize)> {
    let z = vec![0.0f32; n];
    let mut w = vec![0.0f32; n + 1];
    let mut steps = vec![(n, 0, 0)];
    fill_between(0, n, &z, &mut w, &mut steps);
    steps
}

/// The order in which the bisection makes the times 1..=n.
fn bisection_order(n: usize) -> Vec<usize> {
    bisection_steps(n).iter().map(|s| s.0).collect()
}

/// The smallest of the prices relative to the contract's barriers.
fn relative_min(x: &[f32]) -> f32 {
    (x[0] / 3758.05).min(x[1] / 11840.0).min(x[2] / 1200.0)
}

/// The mean discounted payoff.
fn reference(pb: &Problem) -> f32 {
    let (n, u, bits) = (pb.dates, pb.unds, pb.bits);
    let dims = n * u;
    let dirs: Vec<Vec<i64>> = (0..dims)
        .map(|d| {
            (0..bits)
                .map(|b| direction(pb.seed, d as i64, b, bits))
                .collect()
        })
        .collect();
    let m = &pb.model;
    let mut total = 0.0f32;
    for it in 1..=pb.iterations {
        let gray = it ^ (it >> 1);
        // z[t][k]: the normal deviate of date t, underlying k.
        let z: Vec<Vec<f32>> = (0..n)
            .map(|t| {
                (0..u)
                    .map(|k| {
                        let mut x = 0i64;
                        for b in 0..bits {
                            if gray >> b & 1 == 1 {
                                x ^= dirs[t * u + k][b as usize];
                            }
                        }
                        inverse_normal(x as f32 / (1u64 << bits) as f32)
                    })
                    .collect()
            })
            .collect();
        // The Brownian path at times 1..n per underlying by bisection,
        // then its increments.
        let mut incr = vec![vec![0.0f32; u]; n];
        for k in 0..u {
            let zk: Vec<f32> = z.iter().map(|row| row[k]).collect();
            let w = bisection_path(&zk);
            for t in 0..n {
                incr[t][k] = w[t + 1] - w[t];
            }
        }
        // Correlated increments, then prices by compounding.
        let mut prices = vec![vec![0.0f32; u]; n];
        let mut growth = vec![1.0f32; u];
        for t in 0..n {
            for j in 0..u {
                let noise: f32 = (0..=j).map(|k| m.c[j][k] * incr[t][k]).sum();
                growth[j] *= (m.drifts[t][j] + noise * m.vols[t][j]).exp();
                prices[t][j] = m.starts[j] * growth[j];
            }
        }
        total += match pb.contract {
            1 => ((prices[0][0] - 4000.0) * m.detval).max(0.0) * m.discts[0],
            2 => {
                let hit = (0..4).find(|&t| relative_min(&prices[t]) >= 1.0);
                match hit {
                    Some(t) => [1150.0, 1300.0, 1450.0, 1600.0][t] * m.discts[t],
                    None => {
                        let x = relative_min(&prices[4]);
                        let amount = if x >= 1.0 {
                            1750.0
                        } else if x > 0.75 {
                            1000.0
                        } else {
                            1000.0 * x
                        };
                        amount * m.discts[4]
                    }
                }
            }
            3 => {
                let touched = prices
                    .iter()
                    .any(|p| p[0] <= 2630.635 || p[1] <= 8288.0 || p[2] <= 840.0);
                let last = &prices[366];
                let below = last[0] < 3758.05 || last[1] < 11840.0 || last[2] < 1200.0;
                let amount = if touched && below {
                    1000.0 * relative_min(last)
                } else {
                    1000.0
                };
                100.0 * m.discts[0] + amount * m.discts[1]
            }
            _ => 0.0,
        };
    }
    total / pb.iterations as f32
}

/// FinPar's small model: one underlying, one date.
fn small(iterations: u64, seed: i64) -> Problem {
    Problem {
        contract: 1,
        iterations,
        dates: 1,
        unds: 1,
        bits: 30,
        seed,
        model: Model {
            c: vec![vec![1.0]],
            vols: vec![vec![0.19]],
            drifts: vec![vec![-0.027_648_1]],
            starts: vec![3758.05],
            detval: 0.999_781_7,
            discts: vec![0.980_549_5],
        },
    }
}

/// FinPar's medium model: three underlyings, five dates.
fn medium(iterations: u64, seed: i64) -> Problem {
    let vol = vec![0.19, 0.19, 0.15];
    Problem {
        contract: 2,
        iterations,
        dates: 5,
        unds: 3,
        bits: 30,
        seed,
        model: Model {
            c: vec![
                vec![1.0, 0.6, 0.8],
                vec![0.6, 0.8, 0.15],
                vec![0.8, 0.15, 0.580_947_5],
            ],
            vols: vec![vol; 5],
            drifts: vec![
                vec![-0.028_349_2, 0.017_877_1, 0.004_309_7],
                vec![-0.018_384_1, -0.004_453_1, 0.002_426_4],
                vec![-0.017_268_7, 0.012_563_9, 0.009_445_3],
                vec![-0.014_417_9, 0.015_741_1, 0.012_531_5],
                vec![-0.012_149_7, 0.018_290_5, 0.015_112_5],
            ],
            starts: vec![3758.05, 11840.0, 1200.0],
            detval: 0.0,
            discts: vec![
                0.979_786_3,
                0.950_574_8,
                0.921_462_2,
                0.890_669_3,
                0.858_856_8,
            ],
        },
    }
}

/// FinPar's large contract (3) over 367 dates, with FinPar's medium
/// correlations and volatilities and drifts that vary with the date.
fn large(iterations: u64, seed: i64) -> Problem {
    let mut pb = medium(iterations, seed);
    pb.contract = 3;
    pb.dates = 367;
    pb.model.vols = vec![vec![0.19, 0.19, 0.15]; 367];
    pb.model.drifts = (0..367)
        .map(|t| {
            let d = (t % 11) as f32 * 1e-3 - 5e-3;
            vec![d, -d, 0.5 * d]
        })
        .collect();
    pb.model.discts = vec![0.98, 0.9];
    pb
}

/// The problem as the program's input text.
fn input(pb: &Problem) -> String {
    let list = |xs: &[f32]| {
        let items: Vec<String> = xs.iter().map(|x| format!("{x:?}f32")).collect();
        format!("[{}]", items.join(", "))
    };
    let rows = |xss: &[Vec<f32>]| {
        let items: Vec<String> = xss.iter().map(|r| list(r)).collect();
        format!("[[{}]]", items.join(", "))
    };
    let m = &pb.model;
    format!(
        "{}i32 {}i64 1i64 {}i64 {}i64 {}i64 {}i64 {}i64\n{}\n{}\n{}\n[{}]\n[[{:?}f32]]\n[{}]\n",
        pb.contract,
        pb.iterations,
        pb.dates,
        pb.unds,
        m.discts.len(),
        pb.bits,
        pb.seed,
        rows(&m.c),
        rows(&m.vols),
        rows(&m.drifts),
        list(&m.starts),
        m.detval,
        list(&m.discts)
    )
}

/// The one f32 of a result line such as `[87.65393f32]`.
fn single(line: &str) -> f32 {
    let t = line.trim().trim_start_matches('[').trim_end_matches(']');
    t.trim_end_matches("f32")
        .parse()
        .unwrap_or_else(|e| panic!("not an f32 array of one: {line:?} ({e})"))
}

/// Within the f32 tolerance of the test blocks.
fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 2e-3 * 1f32.max(a.abs()).max(b.abs())
}

/// The program's result on `pb`.
fn run(pb: &Problem, name: &str) -> f32 {
    let path = write_temp(name, &input(pb));
    let o = funmem(&["run", PROGRAM, "--input", &path], "");
    assert_exit(&o, 0);
    single(&text(&o.stdout))
}

/// The test block's expected outputs, in order.
fn block_outputs() -> Vec<f32> {
    let src = std::fs::read_to_string(PROGRAM).expect("the program");
    src.lines()
        .filter_map(|l| l.trim_start_matches("--").trim().strip_prefix("output {"))
        .map(|l| single(l.trim_end_matches('}')))
        .collect()
}

#[test]
fn block_outputs_are_the_references() {
    let expected = [
        reference(&small(8, 7)),
        reference(&medium(4, 3)),
        reference(&medium(8, 5)),
    ];
    let block = block_outputs();
    assert_eq!(block.len(), expected.len());
    for (b, r) in block.iter().zip(expected) {
        assert!(close(*b, r), "test block says {b}, the reference {r}");
    }
}

#[test]
fn program_agrees_with_reference() {
    for (pb, name) in [
        (small(8, 7), "op_small.in"),
        (medium(4, 3), "op_medium.in"),
        (small(200, 11), "op_small_more.in"),
        (medium(40, 5), "op_medium_more.in"),
        (large(2, 9), "op_large.in"),
    ] {
        let (got, want) = (run(&pb, name), reference(&pb));
        assert!(close(got, want), "{name}: program {got}, reference {want}");
    }
}

#[test]
fn sobol_points_of_the_first_dimension_halve() {
    // The first direction vectors of dimension 0 give 1/2, then 1/4 or 3/4.
    let v0 = direction(7, 0, 0, 30);
    assert_eq!(v0, 1 << 29);
    assert_eq!(inverse_normal(0.5), 0.0);
    assert!(close(inverse_normal(0.975), 1.959_964));
    assert!(close(inverse_normal(1e-9), -5.997_807));
}

#[test]
fn bisection_order_is_finpars() {
    // The bridge indices (bb_bi) of FinPar's medium and large datasets.
    assert_eq!(bisection_order(1), [1]);
    assert_eq!(bisection_order(5), [5, 2, 1, 3, 4]);
    let large = bisection_order(367);
    assert_eq!(
        large[..20],
        [367, 183, 91, 45, 22, 11, 5, 2, 1, 3, 4, 8, 6, 7, 9, 10, 16, 13, 12, 14]
    );
    let mut all = large.clone();
    all.sort_unstable();
    assert_eq!(all, (1..=367).collect::<Vec<_>>());
}

#[test]
fn program_bridge_data_are_the_bisections() {
    // The program up to its bridge data, returning them: bi, li, ri, sd,
    // lw, rw, against the bisection's points and the bridge's law.
    let src = std::fs::read_to_string(PROGRAM).expect("the program");
    let cut = src
        .find("  let (inv_it: f32)")
        .expect("the Monte-Carlo part");
    let head = format!(
        "{}  in (bb_bi, bb_li, bb_ri, bb_sd, bb_lw, bb_rw)\n",
        &src[..cut]
    );
    let path = write_temp("op_bridge.fun", &head);
    for n in [1usize, 2, 3, 5, 8, 13, 367] {
        let column = |x: &str| format!("[[{}]]", vec![format!("[{x}f32]"); n].join(", "));
        let inp = format!(
            "3i32 1i64 1i64 {n}i64 1i64 1i64 2i64 1i64\n[[[1.0f32]]] {} {}\n[[1.0f32]] [[1.0f32]] [[1.0f32]]\n",
            column("0.19"),
            column("0.01")
        );
        let o = funmem(&["run", &path], &inp);
        assert_exit(&o, 0);
        let out: Vec<Vec<f64>> = text(&o.stdout).lines().map(numbers).collect();
        assert_eq!(out.len(), 6, "n = {n}: six arrays");
        for (i, &(m, a, c)) in bisection_steps(n).iter().enumerate() {
            let ints = [out[0][i], out[1][i], out[2][i]];
            assert_eq!(ints, [m as f64, a as f64, c as f64], "n = {n}, point {i}");
            let (sd, lw, rw) = if i == 0 {
                ((n as f64).sqrt(), 0.0, 0.0)
            } else {
                let (m, a, c) = (m as f64, a as f64, c as f64);
                (
                    ((m - a) * (c - m) / (c - a)).sqrt(),
                    (c - m) / (c - a),
                    (m - a) / (c - a),
                )
            };
            for (k, want) in [(3, sd), (4, lw), (5, rw)] {
                assert!(
                    (out[k][i] - want).abs() <= 1e-6 * want.max(1.0),
                    "n = {n}, point {i}, array {k}: {} against {want}",
                    out[k][i]
                );
            }
        }
    }
}
