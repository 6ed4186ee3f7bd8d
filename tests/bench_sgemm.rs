//! benches/programs/sgemm.fun against an independent reference: BLAS's
//! SGEMM without transposes, C' = beta C + alpha A B, as a plain triple
//! loop in Rust, on the test block's inputs and on larger random ones.

mod common;

use common::{assert_exit, funmem, text, write_temp};

const PROGRAM: &str = "benches/programs/sgemm.fun";

/// Row-major matrices and the two scalars.
struct Gemm {
    a: Vec<Vec<f32>>,
    b: Vec<Vec<f32>>,
    c: Vec<Vec<f32>>,
    alpha: f32,
    beta: f32,
}

/// beta C + alpha A B, accumulating each entry of A B in f64.
fn reference(g: &Gemm) -> Vec<Vec<f32>> {
    let inner = g.b.len();
    g.c.iter()
        .enumerate()
        .map(|(i, crow)| {
            crow.iter()
                .enumerate()
                .map(|(j, &cij)| {
                    let mut acc = 0.0f64;
                    for k in 0..inner {
                        acc += f64::from(g.a[i][k]) * f64::from(g.b[k][j]);
                    }
                    (f64::from(g.beta) * f64::from(cij) + f64::from(g.alpha) * acc) as f32
                })
                .collect()
        })
        .collect()
}

/// A matrix in the value format.
fn matrix(m: &[Vec<f32>]) -> String {
    let rows: Vec<String> = m
        .iter()
        .map(|r| {
            let xs: Vec<String> = r.iter().map(|x| format!("{x:?}f32")).collect();
            format!("[{}]", xs.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

/// The program's input text for `g`.
fn input(g: &Gemm) -> String {
    format!(
        "{}i64 {}i64 {}i64\n{}\n{}\n{}\n{:?}f32 {:?}f32\n",
        g.a.len(),
        g.b.len(),
        g.c[0].len(),
        matrix(&g.a),
        matrix(&g.b),
        matrix(&g.c),
        g.alpha,
        g.beta
    )
}

/// A matrix of f32s printed as `[[1.0f32, ...], ...]`, row by row.
fn parse_matrix(s: &str) -> Vec<Vec<f32>> {
    let body = s.trim().strip_prefix('[').and_then(|t| t.strip_suffix(']'));
    let body = body.unwrap_or_else(|| panic!("not a matrix: {s:?}"));
    body.split(']')
        .map(|r| r.trim_start_matches([',', ' ', '[']))
        .filter(|r| !r.trim().is_empty())
        .map(|r| {
            r.split(',')
                .map(|x| {
                    let x = x.trim().trim_end_matches("f32");
                    x.parse()
                        .unwrap_or_else(|e| panic!("not an f32: {x:?} ({e})"))
                })
                .collect()
        })
        .collect()
}

/// Within the f32 tolerance of the test blocks, element by element.
fn assert_close(got: &[Vec<f32>], want: &[Vec<f32>], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: rows");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.len(), w.len(), "{what}: row {i}");
        for (j, (x, y)) in g.iter().zip(w).enumerate() {
            let tol = 2e-3 * 1f32.max(x.abs()).max(y.abs());
            assert!((x - y).abs() <= tol, "{what}: [{i}][{j}] is {x}, want {y}");
        }
    }
}

/// The test block's two cases.
fn block_cases() -> Vec<Gemm> {
    let m = |rows: &[&[f32]]| rows.iter().map(|r| r.to_vec()).collect::<Vec<_>>();
    vec![
        Gemm {
            a: m(&[&[1.0, 2.0, 3.0], &[-1.0, 0.5, 4.0]]),
            b: m(&[
                &[1.0, 0.0, 2.0, -1.0],
                &[0.5, 1.0, 1.5, 2.0],
                &[3.0, -2.0, 0.25, 1.0],
            ]),
            c: m(&[&[1.0, 1.0, 1.0, 1.0], &[2.0, -2.0, 0.0, 3.0]]),
            alpha: 2.0,
            beta: 0.5,
        },
        Gemm {
            a: m(&[&[3.0, -4.0]]),
            b: m(&[&[0.25], &[0.5]]),
            c: m(&[&[10.0]]),
            alpha: -1.0,
            beta: 0.0,
        },
    ]
}

/// A random problem of the given sizes (a small linear congruential
/// generator, values in [-1, 1)).
fn random(n: usize, m: usize, p: usize, seed: u64) -> Gemm {
    let mut s = seed;
    let mut next = move || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    };
    let mut mat = |r: usize, c: usize| -> Vec<Vec<f32>> {
        (0..r).map(|_| (0..c).map(|_| next()).collect()).collect()
    };
    let (a, b, c) = (mat(n, m), mat(m, p), mat(n, p));
    Gemm {
        a,
        b,
        c,
        alpha: 1.5,
        beta: -0.75,
    }
}

/// The program's result on `g`.
fn run(g: &Gemm, name: &str) -> Vec<Vec<f32>> {
    let path = write_temp(name, &input(g));
    let o = funmem(&["run", PROGRAM, "--input", &path], "");
    assert_exit(&o, 0);
    parse_matrix(&text(&o.stdout))
}

#[test]
fn block_outputs_are_the_references() {
    let src = std::fs::read_to_string(PROGRAM).expect("the program");
    let outputs: Vec<Vec<Vec<f32>>> = src
        .lines()
        .filter_map(|l| l.trim_start_matches("--").trim().strip_prefix("output {"))
        .map(|l| parse_matrix(l.trim_end_matches('}')))
        .collect();
    let cases = block_cases();
    assert_eq!(outputs.len(), cases.len());
    for (k, (out, g)) in outputs.iter().zip(&cases).enumerate() {
        assert_close(out, &reference(g), &format!("test block case {k}"));
    }
}

#[test]
fn program_agrees_with_reference() {
    for (k, g) in block_cases().iter().enumerate() {
        assert_close(&run(g, &format!("sg{k}.in")), &reference(g), "block case");
    }
    for (n, m, p, seed) in [(7, 13, 5, 1), (16, 24, 12, 2)] {
        let g = random(n, m, p, seed);
        let what = format!("random {n}x{m} by {m}x{p}");
        assert_close(
            &run(&g, &format!("sg_{n}_{m}_{p}.in")),
            &reference(&g),
            &what,
        );
    }
}
