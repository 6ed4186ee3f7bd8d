//! LUD (`benches/programs/lud.fun`, Rodinia's lud) checked against an
//! independent reference: the matrix the program documents (an integer
//! hash of each position and the seed, plus n on the diagonal), factored
//! in f64 by unblocked Gaussian elimination without pivoting, L and U
//! stored in one matrix as the program stores them. The test block's
//! expected outputs must be the reference's (within the f32 tolerance),
//! and `funmem run` must give it on the block's inputs and on a larger
//! case; the reference itself must satisfy L·U = A.

mod common;

use common::{assert_exit, funmem, text};

const PROGRAM: &str = "benches/programs/lud.fun";

/// The program's documented input matrix: element (i, j) is
/// (x2 % 1024) / 1024 with x1 = ((i·n + j)·1103515245 + seed·12345 +
/// 12345) mod 2^31 and x2 = (x1·1103515245 + 12345) mod 2^31, plus n on
/// the diagonal.
fn matrix(n: usize, seed: i64) -> Vec<Vec<f64>> {
    let n64 = n as i64;
    (0..n64)
        .map(|i| {
            (0..n64)
                .map(|j| {
                    let x1 = ((i * n64 + j) * 1103515245 + seed * 12345 + 12345) % 2147483648;
                    let x2 = (x1 * 1103515245 + 12345) % 2147483648;
                    (x2 % 1024) as f64 / 1024.0 + if i == j { n as f64 } else { 0.0 }
                })
                .collect()
        })
        .collect()
}

/// Gaussian elimination without pivoting: for each pivot k, the column
/// below it is divided by it (L's column), and the rest of the trailing
/// submatrix loses the outer product (U's rows appear in turn).
fn reference_lu(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut a = a.to_vec();
    let n = a.len();
    for k in 0..n {
        let (upper, lower) = a.split_at_mut(k + 1);
        let pivot_row = &upper[k];
        for row in lower.iter_mut() {
            row[k] /= pivot_row[k];
            let l = row[k];
            for (x, p) in row[k + 1..].iter_mut().zip(&pivot_row[k + 1..]) {
                *x -= l * p;
            }
        }
    }
    a
}

/// L·U from the combined matrix (L's unit diagonal implied).
fn multiply_back(lu: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = lu.len();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    (0..=i.min(j))
                        .map(|k| {
                            if k == i {
                                lu[k][j]
                            } else {
                                lu[i][k] * lu[k][j]
                            }
                        })
                        .sum()
                })
                .collect()
        })
        .collect()
}

/// Within 10^-4 relative (absolute below 1): tighter than the 2·10^-3
/// of funmem test's f32 comparison, since the diagonally dominant input
/// makes L's elements small (about 0.1), where an error in their sums
/// could hide within 2·10^-3; f32's rounding stays far below 10^-4 at
/// these sizes.
fn close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-4 * 1f64.max(g.abs()).max(w.abs());
        assert!((g - w).abs() <= tol, "{what}: element {k}: {g} against {w}");
    }
}

/// The reference's factors of the program's matrix for n and seed.
fn expected(n: usize, seed: i64) -> Vec<f64> {
    let a = matrix(n, seed);
    let lu = reference_lu(&a);
    let back: Vec<f64> = multiply_back(&lu).into_iter().flatten().collect();
    let a_flat: Vec<f64> = a.into_iter().flatten().collect();
    close(&back, &a_flat, "L·U = A");
    lu.into_iter().flatten().collect()
}

/// Runs the program on n, b and seed; its result.
fn run(n: usize, b: usize, seed: i64) -> Vec<f64> {
    let o = funmem(&["run", PROGRAM], &format!("{n}i64 {b}i64 {seed}i64"));
    assert_exit(&o, 0);
    common::numbers(&text(&o.stdout))
}

#[test]
fn test_block_outputs_are_the_reference_and_the_program_agrees() {
    let cases = common::block_cases(PROGRAM);
    assert_eq!(cases.len(), 2, "the test block's small cases");
    for (input, output) in cases {
        let v = common::numbers(&input);
        let (n, b, seed) = (v[0] as usize, v[1] as usize, v[2] as i64);
        let want = expected(n, seed);
        close(
            &common::numbers(&output),
            &want,
            &format!("the block's output, n = {n}"),
        );
        close(&run(n, b, seed), &want, &format!("funmem run, n = {n}"));
    }
}

/// 20×20 in blocks of 8 (padded to 24: three block steps, the last one
/// mostly padding), and 16×16 in blocks of 4 (no padding, four steps).
#[test]
fn larger_cases_agree_with_the_reference() {
    close(&run(20, 8, 7), &expected(20, 7), "n = 20, b = 8");
    close(&run(16, 4, 3), &expected(16, 3), "n = 16, b = 4");
}
