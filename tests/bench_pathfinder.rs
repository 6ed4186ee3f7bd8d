//! Pathfinder (benches/programs/pathfinder.fun) against an independent
//! reference: Rodinia's dynamic programming written from its description,
//! with the walls made as the Futhark benchmark makes them (a Sobol number
//! of each cell's row-major index + 1, by Gray code and exclusive or of
//! the direction vectors 2^29 .. 1, modulo 10). The test block's expected
//! outputs must be the reference's, and `funmem run` must agree with it.

mod common;

use common::ints;

const PROGRAM: &str = "benches/programs/pathfinder.fun";

/// The Sobol number of `n` with the thirty one-bit direction vectors.
fn sobol(n: u64) -> u32 {
    let gray = (n >> 1) ^ n;
    let mut res = 0u32;
    for i in 0..30 {
        if gray & (1 << i) != 0 {
            res ^= 1 << (29 - i);
        }
    }
    res
}

/// The least cost of a path from the top row to each column of the
/// bottom row, moving down to the same column or a neighbouring one.
fn reference(cols: usize, rows: usize) -> Vec<i32> {
    let wall = |r: usize, c: usize| (sobol((r * cols + c + 1) as u64) % 10) as i32;
    let mut best: Vec<i32> = (0..cols).map(|c| wall(0, c)).collect();
    for r in 1..rows {
        best = (0..cols)
            .map(|c| {
                let lo = c.saturating_sub(1);
                let hi = (c + 1).min(cols - 1);
                wall(r, c) + best[lo..=hi].iter().copied().min().expect("a column")
            })
            .collect();
    }
    best
}

fn run_funmem(cols: usize, rows: usize) -> Vec<i64> {
    ints(&common::run_ok(PROGRAM, &format!("{cols} {rows}")))
}

fn widen(xs: &[i32]) -> Vec<i64> {
    xs.iter().map(|&x| i64::from(x)).collect()
}

#[test]
fn sobol_numbers_are_the_benchmarks() {
    // Gray codes 1, 3, 2, 6: bit-reversed into thirty bits.
    assert_eq!(sobol(1), 1 << 29);
    assert_eq!(sobol(2), (1 << 29) | (1 << 28));
    assert_eq!(sobol(3), 1 << 28);
    assert_eq!(sobol(4), (1 << 28) | (1 << 27));
}

#[test]
fn test_block_outputs_are_the_reference() {
    let cases = common::block_cases(PROGRAM);
    assert!(cases.len() >= 2, "the block has its small cases");
    for (input, output) in cases {
        let n = ints(&input);
        let (cols, rows) = (n[0] as usize, n[1] as usize);
        let want = widen(&reference(cols, rows));
        assert_eq!(ints(&output), want, "the block's output for {input}");
        assert_eq!(run_funmem(cols, rows), want, "funmem run on {input}");
    }
}

#[test]
fn larger_grid_agrees_with_the_reference() {
    let (cols, rows) = (300, 12);
    assert_eq!(run_funmem(cols, rows), widen(&reference(cols, rows)));
}
