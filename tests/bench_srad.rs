//! benches/programs/srad.fun against an independent reference: SRAD
//! (speckle-reducing anisotropic diffusion, Rodinia) written here in plain
//! Rust from the algorithm's description, run on the test block's small
//! inputs and on a larger pseudo-random image. The test block's expected
//! outputs are checked against the reference too, so they are not a copy of
//! the program's own output.

mod common;

use common::{block_cases, f32_matrix, floats as numbers};

/// SRAD on a `rows`×`cols` image of intensities in [0, 1] (a u8 pixel over
/// 255), `niter` iterations with λ = 0.5; the log-compressed image, row by
/// row.
fn srad_reference(rows: usize, cols: usize, niter: usize, pixels: &[f32]) -> Vec<f32> {
    let lambda = 0.5f32;
    let n = (rows * cols) as f32;
    let mut img: Vec<f32> = pixels.iter().map(|p| p.exp()).collect();
    let at = |v: &[f32], r: usize, c: usize| v[r * cols + c];
    for _ in 0..niter {
        // The statistics of the region of interest (the whole image),
        // accumulated in f64: a sequential f32 sum of a whole image loses
        // digits that the program's tree-shaped sums keep, and after 100
        // iterations the images part by more than the tolerance.
        let sum = img.iter().map(|&x| f64::from(x)).sum::<f64>() as f32;
        let sum_sq = img.iter().map(|&x| f64::from(x * x)).sum::<f64>() as f32;
        let mean = sum / n;
        let var = sum_sq / n - mean * mean;
        let q0 = var / (mean * mean);
        // Directional derivatives (zero flux at the borders: the missing
        // neighbour is the pixel itself) and the diffusion coefficients.
        let mut deriv = vec![[0f32; 4]; rows * cols];
        let mut coef = vec![0f32; rows * cols];
        for r in 0..rows {
            for c in 0..cols {
                let p = at(&img, r, c);
                let north = at(&img, r.saturating_sub(1), c) - p;
                let south = at(&img, (r + 1).min(rows - 1), c) - p;
                let west = at(&img, r, c.saturating_sub(1)) - p;
                let east = at(&img, r, (c + 1).min(cols - 1)) - p;
                let grad2 = (north * north + south * south + west * west + east * east) / (p * p);
                let lap = (north + south + west + east) / p;
                let q = (0.5 * grad2 - (lap * lap) / 16.0) / ((1.0 + 0.25 * lap).powi(2));
                let coefficient = 1.0 / (1.0 + (q - q0) / (q0 * (1.0 + q0)));
                coef[r * cols + c] = coefficient.clamp(0.0, 1.0);
                deriv[r * cols + c] = [north, south, west, east];
            }
        }
        // The divergence, with the coefficients of the pixel (north and
        // west) and of its south and east neighbours.
        let mut next = img.clone();
        for r in 0..rows {
            for c in 0..cols {
                let [north, south, west, east] = deriv[r * cols + c];
                let own = coef[r * cols + c];
                let c_south = coef[(r + 1).min(rows - 1) * cols + c];
                let c_east = coef[r * cols + (c + 1).min(cols - 1)];
                let div = own * north + c_south * south + own * west + c_east * east;
                next[r * cols + c] += 0.25 * lambda * div;
            }
        }
        img = next;
    }
    img.iter().map(|p| p.ln() * 255.0).collect()
}

fn close(got: &[f32], want: &[f32]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(a, b)| (a - b).abs() <= 2e-3 * 1f32.max(a.abs()).max(b.abs()))
}

/// Splits an input text into the three sizes and the pixels.
fn split_input(inp: &str) -> (usize, usize, usize, Vec<f32>) {
    let v = numbers(inp);
    let (rows, cols, niter) = (v[0] as usize, v[1] as usize, v[2] as usize);
    assert_eq!(v.len(), 3 + rows * cols, "input shape");
    (rows, cols, niter, v[3..].to_vec())
}

fn run_program(inp: &str) -> Vec<f32> {
    numbers(&common::run_ok(PROGRAM, inp))
}

const PROGRAM: &str = "benches/programs/srad.fun";

#[test]
fn block_outputs_match_the_reference() {
    let cases = block_cases(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/programs/srad.fun"
    ));
    assert_eq!(cases.len(), 2, "two small cases in {PROGRAM}");
    for (inp, out) in cases {
        let (rows, cols, niter, px) = split_input(&inp);
        let want = srad_reference(rows, cols, niter, &px);
        let expected = numbers(&out);
        assert!(
            close(&expected, &want),
            "the block's output {expected:?} is not the reference's {want:?}"
        );
        let got = run_program(&inp);
        assert!(
            close(&got, &want),
            "funmem run gave {got:?}, the reference {want:?}"
        );
    }
}

/// A pseudo-random image of intensities in [0, 1) (a linear congruential
/// generator) and the program's input text for it.
fn random_image(rows: usize, cols: usize, niter: usize) -> (Vec<f32>, String) {
    let mut state = 0x2545_f491u32;
    let px: Vec<f32> = (0..rows * cols)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1u32 << 24) as f32
        })
        .collect();
    let inp = format!(
        "{rows}i64 {cols}i64 {niter}i64 {}",
        f32_matrix(rows, cols, &px)
    );
    (px, inp)
}

#[test]
fn larger_random_image_matches_the_reference() {
    let (rows, cols, niter) = (12usize, 17usize, 6usize);
    let (px, inp) = random_image(rows, cols, niter);
    let want = srad_reference(rows, cols, niter, &px);
    let got = run_program(&inp);
    assert!(
        close(&got, &want),
        "funmem run gave {got:?}, the reference {want:?}"
    );
}

/// The GPU pipeline on PoCL, with Table 4's 100 iterations on a smaller
/// image (parallel sums, OpenCL's exp and log).
#[test]
fn opencl_hundred_iterations_match_the_reference() {
    if !common::opencl() {
        return;
    }
    let (rows, cols, niter) = (60usize, 50usize, 100usize);
    let (px, inp) = random_image(rows, cols, niter);
    let want = srad_reference(rows, cols, niter, &px);
    let o = common::funmem(&["run", "--semantics", "opencl", PROGRAM], &inp);
    common::assert_exit(&o, 0);
    let got = numbers(&common::text(&o.stdout));
    assert!(
        close(&got, &want),
        "PoCL gave {got:?}, the reference {want:?}"
    );
}
