//! HotSpot (benches/programs/hotspot.fun) against an independent reference:
//! Rodinia's transient thermal solver written from its description (the
//! nine boundary cases: four corners, four edges, the interior), in f32.
//! The test block's expected outputs must be the reference's, and
//! `funmem run` must agree with it on those inputs and on a larger random
//! grid, where the chip constants make the neighbours' flow the largest
//! term of each step.

mod common;

use common::{f32_matrix, numbers};

const PROGRAM: &str = "benches/programs/hotspot.fun";

/// One time step of the solver: each cell's new temperature.
fn step(row: usize, col: usize, temp: &[f32], power: &[f32], k: &Consts) -> Vec<f32> {
    let t = |r: usize, c: usize| temp[r * col + c];
    let mut out = vec![0f32; row * col];
    for r in 0..row {
        for c in 0..col {
            let here = t(r, c);
            // Horizontal flow: both neighbours when they exist, one at an
            // edge, none on a grid one cell wide.
            let mut h = 0f32;
            if c > 0 {
                h += t(r, c - 1) - here;
            }
            if c + 1 < col {
                h += t(r, c + 1) - here;
            }
            let mut v = 0f32;
            if r > 0 {
                v += t(r - 1, c) - here;
            }
            if r + 1 < row {
                v += t(r + 1, c) - here;
            }
            let delta = (k.step / k.cap)
                * (power[r * col + c] + h / k.rx + v / k.ry + (80.0 - here) / k.rz);
            out[r * col + c] = here + delta;
        }
    }
    out
}

/// Rodinia's chip model for a grid of row × col cells.
struct Consts {
    cap: f32,
    rx: f32,
    ry: f32,
    rz: f32,
    step: f32,
}

fn consts(row: usize, col: usize) -> Consts {
    let (chip_height, chip_width, t_chip) = (0.016f32, 0.016f32, 0.0005f32);
    let (k_si, spec_heat_si, factor_chip, max_pd, precision) =
        (100f32, 1.75e6f32, 0.5f32, 3.0e6f32, 0.001f32);
    let gh = chip_height / row as f32;
    let gw = chip_width / col as f32;
    let max_slope = max_pd / (factor_chip * t_chip * spec_heat_si);
    Consts {
        cap: factor_chip * spec_heat_si * t_chip * gw * gh,
        rx: gw / (2.0 * k_si * t_chip * gh),
        ry: gh / (2.0 * k_si * t_chip * gw),
        rz: t_chip / (k_si * gh * gw),
        step: precision / max_slope,
    }
}

fn reference(row: usize, col: usize, iters: usize, temp: &[f32], power: &[f32]) -> Vec<f32> {
    let k = consts(row, col);
    let mut t = temp.to_vec();
    for _ in 0..iters {
        t = step(row, col, &t, power, &k);
    }
    t
}

/// Splits an input's numbers into (row, col, iters, temp, power).
fn parse_input(text: &str) -> (usize, usize, usize, Vec<f32>, Vec<f32>) {
    let n = numbers(text);
    let (row, col, iters) = (n[0] as usize, n[1] as usize, n[2] as usize);
    let cells = row * col;
    assert_eq!(n.len(), 3 + 2 * cells, "input shape");
    let temp = n[3..3 + cells].iter().map(|&x| x as f32).collect();
    let power = n[3 + cells..].iter().map(|&x| x as f32).collect();
    (row, col, iters, temp, power)
}

fn run_funmem(input: &str) -> Vec<f32> {
    numbers(&common::run_ok(PROGRAM, input))
        .into_iter()
        .map(|x| x as f32)
        .collect()
}

/// Each of `got`'s increments over `start` is the reference's within a
/// thousandth of the largest increment (so the check sees the step, not
/// just the temperature, which barely moves).
fn assert_close(start: &[f32], got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "result size");
    let scale = start
        .iter()
        .zip(want)
        .map(|(s, w)| (w - s).abs())
        .fold(0f32, f32::max)
        .max(1e-3);
    for (i, ((s, g), w)) in start.iter().zip(got).zip(want).enumerate() {
        let slack = 1e-3 * scale + 4.0 * f32::EPSILON * w.abs();
        assert!(
            ((g - s) - (w - s)).abs() <= slack,
            "cell {i}: funmem gives {g}, the reference {w} (start {s})"
        );
    }
}

/// A grid of temperatures spread over hundreds of degrees and a power map
/// with a few hot cells, from an integer hash of the cell's index.
fn generated(row: usize, col: usize) -> (Vec<f32>, Vec<f32>) {
    let h = |i: usize, k: u64| ((i as u64 + 1) * 2654435761 + k * 40503) % 1000;
    let temp = (0..row * col)
        .map(|i| 300.0 + h(i, 1) as f32 * 0.5)
        .collect();
    let power = (0..row * col)
        .map(|i| if h(i, 2) < 100 { h(i, 3) as f32 } else { 0.0 })
        .collect();
    (temp, power)
}

#[test]
fn test_block_outputs_are_the_reference() {
    let cases = common::block_cases(PROGRAM);
    assert!(cases.len() >= 2, "the block has its small cases");
    for (input, output) in cases {
        let (row, col, iters, temp, power) = parse_input(&input);
        let want = reference(row, col, iters, &temp, &power);
        let block: Vec<f32> = numbers(&output).into_iter().map(|x| x as f32).collect();
        assert_close(&temp, &block, &want);
        let got = run_funmem(&input);
        assert_close(&temp, &got, &want);
    }
}

#[test]
fn random_grid_agrees_with_the_reference() {
    let (row, col, iters) = (40, 36, 3);
    let (temp, power) = generated(row, col);
    let input = format!(
        "{row} {col} {iters} {} {}",
        f32_matrix(row, col, &temp),
        f32_matrix(row, col, &power)
    );
    let want = reference(row, col, iters, &temp, &power);
    // The neighbours' flow is what this grid exercises.
    let k = consts(row, col);
    assert!(k.step / k.cap / k.rx > 1e-4);
    assert_close(&temp, &run_funmem(&input), &want);
}

/// Prints the test block's second case and the first's output (`cargo test --test bench_hotspot
/// -- --ignored --nocapture`), as it was made.
#[test]
#[ignore]
fn print_medium_case() {
    let (row, col, iters) = (5, 6, 4);
    let (temp, power) = generated(row, col);
    println!(
        "input {{ {row}i64 {col}i64 {iters}i64 {} {} }}",
        f32_matrix(row, col, &temp),
        f32_matrix(row, col, &power)
    );
    let want = reference(row, col, iters, &temp, &power);
    println!("output {{ {} }}", f32_matrix(row, col, &want));
    let (row, col, iters, temp, power) = parse_input(&common::block_cases(PROGRAM)[0].0);
    let want = reference(row, col, iters, &temp, &power);
    println!("first case's output {{ {} }}", f32_matrix(row, col, &want));
}
