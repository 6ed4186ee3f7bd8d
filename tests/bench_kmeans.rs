//! benches/programs/kmeans.fun against an independent k-means in plain
//! Rust, written from the algorithm's description (Rodinia's k-means with
//! Futhark's integral threshold and iteration limit): the test block's small
//! cases (both the program's results and the block's expected output must
//! agree with the reference) and a larger generated case.

mod common;

use common::{block_cases, numbers};

/// Within the f32 tolerance of the test blocks (2e-3, relative above 1).
fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 2e-3 * 1f64.max(x.abs()).max(y.abs()))
}

/// The reference: centres (row-major, k x d) and rounds.
fn kmeans(d: usize, threshold: i32, k: usize, max_iter: i32, pts: &[f32]) -> (Vec<f32>, i32) {
    let n = pts.len() / d;
    let point = |i: usize| &pts[i * d..(i + 1) * d];
    let mut centres: Vec<f32> = pts[..k * d].to_vec();
    let mut assign: Vec<usize> = (0..n).map(|i| i % k).collect();
    let mut rounds = 0;
    let mut changed = threshold + 1;
    while changed > threshold && rounds < max_iter {
        // Nearest centre of each point; ties go to the lower index.
        let next: Vec<usize> = (0..n)
            .map(|i| {
                let mut best = (0usize, f32::INFINITY);
                for (c, centre) in centres.chunks(d).enumerate() {
                    let dist: f32 = point(i)
                        .iter()
                        .zip(centre)
                        .map(|(a, b)| (a - b) * (a - b))
                        .sum();
                    if dist < best.1 {
                        best = (c, dist);
                    }
                }
                best.0
            })
            .collect();
        // Means by one pass over the points (a histogram of sums and counts).
        let mut sums = vec![0f32; k * d];
        let mut counts = vec![0u32; k];
        for (i, &c) in next.iter().enumerate() {
            counts[c] += 1;
            for (s, x) in sums[c * d..(c + 1) * d].iter_mut().zip(point(i)) {
                *s += x;
            }
        }
        for c in 0..k {
            for s in &mut sums[c * d..(c + 1) * d] {
                *s /= counts[c].max(1) as f32;
            }
        }
        centres = sums;
        changed = assign.iter().zip(&next).filter(|(a, b)| a != b).count() as i32;
        assign = next;
        rounds += 1;
    }
    (centres, rounds)
}

/// The reference on a flat input (n d threshold k max_iterations points).
fn reference(input: &[f64]) -> Vec<f64> {
    let (d, th, k, mx) = (
        input[1] as usize,
        input[2] as i32,
        input[3] as usize,
        input[4] as i32,
    );
    let pts: Vec<f32> = input[5..].iter().map(|&x| x as f32).collect();
    let (cs, r) = kmeans(d, th, k, mx, &pts);
    let mut out: Vec<f64> = cs.iter().map(|&x| x as f64).collect();
    out.push(r as f64);
    out
}

fn run(input: &str) -> Vec<f64> {
    numbers(&common::run_ok("benches/programs/kmeans.fun", input))
}

#[test]
fn block_cases_agree_with_the_reference() {
    let cases = block_cases("benches/programs/kmeans.fun");
    assert_eq!(cases.len(), 2, "the block's small cases");
    for (input, output) in cases {
        let want = reference(&numbers(&input));
        let expected = numbers(&output);
        assert!(
            close(&expected, &want),
            "block output {expected:?}, reference {want:?}"
        );
        let got = run(&input);
        assert!(close(&got, &want), "funmem {got:?}, reference {want:?}");
    }
}

#[test]
fn generated_points_agree_with_the_reference() {
    // 600 points of 3 features around 4 centres, from a small LCG (more
    // points than the program's 256 runs of step 2, and not a multiple).
    let (n, d, k) = (600usize, 3usize, 4usize);
    let mut state = 12345u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) % 10000) as f32 / 1000.0
    };
    let mut pts = Vec::new();
    for i in 0..n {
        for j in 0..d {
            let centre = ((i * 7 + j) % k) as f32 * 10.0;
            pts.push(centre + next());
        }
    }
    let body: Vec<String> = pts
        .chunks(d)
        .map(|r| {
            format!(
                "[{}]",
                r.iter()
                    .map(|x| format!("{x}f32"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    let input = format!("{n}i64 {d}i64 0i32 {k}i64 30i32 [{}]", body.join(", "));
    let want = reference(&numbers(&input));
    let got = run(&input);
    assert!(close(&got, &want), "funmem {got:?}, reference {want:?}");
}
