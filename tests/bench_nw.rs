//! Needleman-Wunsch (`benches/programs/nw.fun`, Rodinia's nw) checked
//! against an independent reference: the textbook score recurrence filled
//! row by row, cell after cell, with no blocks and no anti-diagonals. The
//! test block's expected outputs must be the reference's, and `funmem run`
//! must give the reference's matrix on the test block's inputs and on a
//! larger generated case.

mod common;

use common::{assert_exit, funmem, ints, text};

const PROGRAM: &str = "benches/programs/nw.fun";

/// The score matrix: row 0 and column 0 of `inp` are the borders, and
/// cell (i, j) is the best of a match/mismatch step from (i-1, j-1) scored
/// by `reference[i][j]`, or a gap from the left or from above, which
/// costs `penalty`. Wrapping i32 arithmetic, as the program's.
fn reference_nw(penalty: i32, inp: &[Vec<i32>], reference: &[Vec<i32>]) -> Vec<Vec<i32>> {
    let mut m = inp.to_vec();
    for i in 1..m.len() {
        for j in 1..m.len() {
            let diagonal = m[i - 1][j - 1].wrapping_add(reference[i][j]);
            let left = m[i][j - 1].wrapping_sub(penalty);
            let up = m[i - 1][j].wrapping_sub(penalty);
            m[i][j] = diagonal.max(left).max(up);
        }
    }
    m
}

/// A square matrix of `n` rows from `n * n` integers.
fn square(v: &[i64], n: usize) -> Vec<Vec<i32>> {
    assert_eq!(v.len(), n * n);
    v.chunks(n)
        .map(|r| r.iter().map(|&x| x as i32).collect())
        .collect()
}

/// Runs the program on an input text; its result as integers.
fn run(input: &str) -> Vec<i64> {
    ints(&common::run_ok(PROGRAM, input))
}

#[test]
fn test_block_outputs_are_the_reference_and_the_program_agrees() {
    let cases = common::block_cases(PROGRAM);
    assert_eq!(cases.len(), 2, "the test block's small cases");
    for (input, output) in cases {
        let v = ints(&input);
        let n = v[0] as usize;
        let penalty = v[2] as i32;
        let inp = square(&v[3..3 + n * n], n);
        let refm = square(&v[3 + n * n..], n);
        let expected: Vec<i64> = reference_nw(penalty, &inp, &refm)
            .into_iter()
            .flatten()
            .map(i64::from)
            .collect();
        assert_eq!(ints(&output), expected, "the block's output, n = {n}");
        assert_eq!(run(&input), expected, "funmem run, n = {n}");
    }
}

/// A generated case of 33×33 cells in blocks of 8 (4×4 blocks, seven
/// block anti-diagonals), scores in -4 .. 10 as BLOSUM62's.
#[test]
fn larger_generated_case_agrees_with_the_reference() {
    let (n, b, penalty) = (33usize, 8, 7);
    let mut state: u64 = 12345;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as i32
    };
    let mut inp: Vec<Vec<i32>> = (0..n)
        .map(|_| (0..n).map(|_| next() % 10).collect())
        .collect();
    // The borders: gaps all the way from the corner.
    for (i, row) in inp.iter_mut().enumerate() {
        row[0] = -(i as i32) * penalty;
    }
    for (j, cell) in inp[0].iter_mut().enumerate() {
        *cell = -(j as i32) * penalty;
    }
    let refm: Vec<Vec<i32>> = (0..n)
        .map(|_| (0..n).map(|_| next() % 15 - 4).collect())
        .collect();
    let show = |m: &[Vec<i32>]| {
        let rows: Vec<String> = m
            .iter()
            .map(|r| {
                let cells: Vec<String> = r.iter().map(|x| format!("{x}i32")).collect();
                format!("[{}]", cells.join(", "))
            })
            .collect();
        format!("[{}]", rows.join(", "))
    };
    let input = format!("{n}i64 {b}i64 {penalty}i32 {} {}", show(&inp), show(&refm));
    let expected: Vec<i64> = reference_nw(penalty, &inp, &refm)
        .into_iter()
        .flatten()
        .map(i64::from)
        .collect();
    assert_eq!(run(&input), expected);
}

/// A work size that is not a multiple of the block size is refused, as
/// Futhark's assertion refuses it: the program is stuck (exit 1).
#[test]
fn work_size_not_a_multiple_of_the_block_is_stuck() {
    let n = 11;
    let zeros = format!(
        "[{}]",
        vec![format!("[{}]", vec!["0i32"; n].join(", ")); n].join(", ")
    );
    let o = funmem(
        &["run", PROGRAM],
        &format!("{n}i64 4i64 1i32 {zeros} {zeros}"),
    );
    assert_exit(&o, 1);
    assert!(text(&o.stderr).contains("zero"), "{}", text(&o.stderr));
}
