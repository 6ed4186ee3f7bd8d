//! benches/programs/series.fun against an independent reference: the Java
//! Grande Series benchmark (Fourier coefficients of (x + 1)^x on [0, 2] by
//! JGF's trapezoid rule, as its Futhark port computes them), written here
//! in plain Rust with libm's pow, cos and sin, which the program has not
//! (it has exp, log and its own reduced Taylor polynomials). Run on the
//! test block's small inputs (the first is Futhark's own test case) and on
//! more coefficients, on the interpreter and on PoCL.

mod common;

use common::{block_cases, numbers};

/// The integrand: `select` 0 is (x + 1)^x, 1 times cos(ωx), 2 times sin(ωx).
fn the_function(x: f64, omegan: f64, select: u8) -> f64 {
    let base = (x + 1.0).powf(x);
    match select {
        0 => base,
        1 => base * (omegan * x).cos(),
        _ => base * (omegan * x).sin(),
    }
}

/// JGF's trapezoid rule as written there: half of f at x0, f at the
/// nsteps - 2 points x0 + dx, x0 + 2dx, ... (x accumulated), half of f at
/// x1, all times dx = (x1 - x0) / nsteps.
fn trapezoid(x0: f64, x1: f64, nsteps: i32, omegan: f64, select: u8) -> f64 {
    let dx = (x1 - x0) / f64::from(nsteps);
    let mut x = x0;
    let mut sum = the_function(x0, omegan, select) / 2.0;
    for _ in 0..nsteps - 2 {
        x += dx;
        sum += the_function(x, omegan, select);
    }
    (sum + the_function(x1, omegan, select) / 2.0) * dx
}

/// The first `rows` (at least 1) coefficients: cosines and sines.
fn series_reference(rows: usize) -> (Vec<f64>, Vec<f64>) {
    let omega = std::f64::consts::PI;
    let mut cosines = vec![trapezoid(0.0, 2.0, 1000, 0.0, 0) / 2.0];
    let mut sines = vec![0.0];
    for i in 1..rows {
        let omegan = omega * i as f64;
        cosines.push(trapezoid(0.0, 2.0, 1000, omegan, 1));
        sines.push(trapezoid(0.0, 2.0, 1000, omegan, 2));
    }
    (cosines, sines)
}

/// The f64 tolerance of `funmem test` (absolute below 1, else relative).
fn close(got: &[f64], want: &[f64]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(a, b)| (a - b).abs() <= 1e-9 * 1f64.max(a.abs()).max(b.abs()))
}

const PROGRAM: &str = "benches/programs/series.fun";

fn reference_flat(rows: usize) -> Vec<f64> {
    let (c, s) = series_reference(rows);
    c.into_iter().chain(s).collect()
}

#[test]
fn block_outputs_match_the_reference() {
    let cases = block_cases(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/programs/series.fun"
    ));
    assert_eq!(cases.len(), 2, "two small cases in {PROGRAM}");
    for (inp, out) in cases {
        let rows = numbers(&inp)[0] as usize;
        let want = reference_flat(rows);
        let expected = numbers(&out);
        assert!(
            close(&expected, &want),
            "the block's output {expected:?} is not the reference's {want:?}"
        );
        let got = numbers(&common::run_ok(PROGRAM, &inp));
        assert!(
            close(&got, &want),
            "funmem run gave {got:?}, the reference {want:?}"
        );
    }
}

/// Futhark's own test case (jgf/series/series.fut) against the reference.
#[test]
fn the_reference_gives_futharks_expected_output() {
    let (c, s) = series_reference(4);
    let want_c = [
        2.872_952_496_483_799_6,
        1.116_104_667_614_788_5,
        0.344_290_603_981_686_87,
        0.152_388_987_025_192_9,
    ];
    let want_s = [
        0.0,
        -1.881_969_189_339_802_5,
        -1.164_564_262_332_095_5,
        -0.814_346_111_304_429_6,
    ];
    assert!(close(&c, &want_c), "{c:?}");
    assert!(close(&s, &want_s), "{s:?}");
}

/// More coefficients: angles up to 2·π·(rows - 1), so the program's range
/// reduction is tested over many multiples of π/2.
#[test]
fn more_coefficients_match_the_reference() {
    let rows = 40;
    let got = numbers(&common::run_ok(PROGRAM, &format!("{rows}i64")));
    assert!(close(&got, &reference_flat(rows)), "{got:?}");
}

/// The GPU pipeline on PoCL, with large angles (ω up to 3000π).
#[test]
fn opencl_matches_the_reference() {
    if !common::opencl() {
        return;
    }
    let rows = 3000;
    let o = common::funmem(
        &["run", "--semantics", "opencl", PROGRAM],
        &format!("{rows}i64"),
    );
    common::assert_exit(&o, 0);
    let got = numbers(&common::text(&o.stdout));
    assert!(close(&got, &reference_flat(rows)), "PoCL");
}

/// Prints a small case for the test block (run by hand with --ignored).
#[test]
#[ignore]
fn print_small_case() {
    let (c, s) = series_reference(9);
    let show = |v: &[f64]| {
        let cells: Vec<String> = v.iter().map(|x| format!("{x:?}f64")).collect();
        format!("[{}]", cells.join(", "))
    };
    println!("{} {}", show(&c), show(&s));
}
