//! benches/programs/canny.fun against an independent reference: Canny edge
//! detection as Accelerate's example and its Futhark port define it (grey
//! levels from packed RGBA, a 5-tap Gaussian blur along each index, the
//! Sobel gradient with its direction from atan2 folded to four
//! orientations, non-maximum suppression with two thresholds, and the
//! list of strong pixels by a scatter to exclusive-scan positions), written
//! here in plain Rust with bit shifts, atan2 and a scatter, none of which
//! the program has. Run on the test block's small inputs (the first is
//! Futhark's own test case) and on larger pseudo-random images, on the
//! interpreter and on PoCL.

mod common;

use common::{block_cases, ints, numbers};

/// The orientations of the gradient (Futhark's `orientUndef` ..
/// `orientHoriz`).
const UNDEF: i32 = 0;
const VERT: i32 = 128;
const HORIZ: i32 = 255;

/// `i64.max lower (i64.min upper x)`.
fn clamp(x: i64, upper: i64) -> usize {
    0.max(upper.min(x)) as usize
}

/// Canny on an `h`×`w` image of packed RGBA pixels, row by row: the flat
/// indices of the strong edge pixels, in order.
fn canny_reference(low: f32, high: f32, h: usize, w: usize, img: &[i32]) -> Vec<i32> {
    let (hi, wi) = (h as i64, w as i64);
    let at = |v: &[f32], x: i64, y: i64| v[clamp(x, hi - 1) * w + clamp(y, wi - 1)];
    // Grey levels: the top three bytes as signed bytes.
    let grey: Vec<f32> = img
        .iter()
        .map(|&p| {
            let r = f32::from((p >> 24) as i8);
            let g = f32::from((p >> 16) as i8);
            let b = f32::from((p >> 8) as i8);
            255.0 * ((0.3 * r + 0.59 * g + 0.11 * b) / 255.0)
        })
        .collect();
    let weights = [
        1.0f32 / 16.0,
        4.0 / 16.0,
        6.0 / 16.0,
        4.0 / 16.0,
        1.0 / 16.0,
    ];
    let blur = |src: &[f32], along_rows: bool| -> Vec<f32> {
        let mut out = vec![0f32; h * w];
        for x in 0..hi {
            for y in 0..wi {
                let mut sum = 0f32;
                for (k, wt) in weights.iter().enumerate() {
                    let d = k as i64 - 2;
                    let v = if along_rows {
                        at(src, x + d, y)
                    } else {
                        at(src, x, y + d)
                    };
                    sum += v * wt;
                }
                out[x as usize * w + y as usize] = sum;
            }
        }
        out
    };
    let blurred = blur(&blur(&grey, true), false);
    // Gradient magnitude and direction, the direction by atan2 as Futhark.
    let mut mag = vec![0f32; h * w];
    let mut dir = vec![0i32; h * w];
    for x in 0..hi {
        for y in 0..wi {
            let v = |dx: i64, dy: i64| at(&blurred, x + dx, y + dy);
            let gx = v(1, -1) + 2.0 * v(1, 0) + v(1, 1) - v(-1, -1) - 2.0 * v(-1, 0) - v(-1, 1);
            let gy = v(-1, -1) + 2.0 * v(0, -1) + v(1, -1) - v(-1, 1) - 2.0 * v(0, 1) - v(1, 1);
            let i = x as usize * w + y as usize;
            mag[i] = (gx * gx + gy * gy).sqrt();
            let pi = std::f32::consts::PI;
            let alpha = (gy.atan2(gx) - pi / 8.0) * (4.0 / pi);
            let norm = alpha + if alpha <= 0.0 { 8.0 } else { 0.0 };
            dir[i] = if gx.abs() <= low && gy.abs() <= low {
                UNDEF
            } else {
                (64 * (1 + (norm as i32) % 4)).min(255)
            };
        }
    }
    // Non-maximum suppression and thresholds.
    let mut strong = vec![0i32; h * w];
    for x in 0..hi {
        for y in 0..wi {
            let i = x as usize * w + y as usize;
            let (m, d) = (mag[i], dir[i]);
            let ox = match d.cmp(&VERT) {
                std::cmp::Ordering::Greater => -1,
                std::cmp::Ordering::Less => 1,
                std::cmp::Ordering::Equal => 0,
            };
            let oy = if d < HORIZ { -1 } else { 0 };
            let fwd = at(&mag, x + ox, y + oy);
            let rev = at(&mag, x - ox, y - oy);
            let edge = if d == UNDEF || m < low || m < fwd || m < rev {
                0.0
            } else if m >= high {
                1.0
            } else {
                0.5
            };
            strong[i] = i32::from(edge == 1.0);
        }
    }
    // The scatter of Futhark's selectStrong: pixel i + 1, when strong, goes
    // to position (inclusive prefix sum at i) of a zeroed array as long as
    // the number of strong pixels.
    let scan: Vec<i32> = strong
        .iter()
        .scan(0, |s, &f| {
            *s += f;
            Some(*s)
        })
        .collect();
    let len = *scan.last().expect("a non-empty image") as usize;
    let mut out = vec![0i32; len];
    for i in 0..h * w - 1 {
        if strong[i + 1] != 0 {
            out[scan[i] as usize] = i as i32 + 1;
        }
    }
    out
}

/// Splits an input text into the thresholds, the sizes and the pixels.
fn split_input(inp: &str) -> (f32, f32, usize, usize, Vec<i32>) {
    let v = numbers(inp);
    let (low, high) = (v[0] as f32, v[1] as f32);
    let (h, w) = (v[2] as usize, v[3] as usize);
    assert_eq!(v.len(), 4 + h * w, "input shape");
    (low, high, h, w, v[4..].iter().map(|&p| p as i32).collect())
}

const PROGRAM: &str = "benches/programs/canny.fun";

fn run_program(inp: &str) -> Vec<i64> {
    ints(&common::run_ok(PROGRAM, inp))
}

fn as_i64(v: &[i32]) -> Vec<i64> {
    v.iter().map(|&x| i64::from(x)).collect()
}

#[test]
fn block_outputs_match_the_reference() {
    let cases = block_cases(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/programs/canny.fun"
    ));
    assert_eq!(cases.len(), 2, "two small cases in {PROGRAM}");
    for (inp, out) in cases {
        let (low, high, h, w, img) = split_input(&inp);
        let want = as_i64(&canny_reference(low, high, h, w, &img));
        assert_eq!(
            ints(&out),
            want,
            "the block's output is not the reference's"
        );
        assert_eq!(run_program(&inp), want, "funmem run on {inp}");
    }
}

/// Futhark's own test case: low 50, high 100 on a 5×3 image gives the
/// strong pixels 1, 4, 6 and 7 (accelerate/canny/canny.fut).
#[test]
fn the_reference_gives_futharks_expected_output() {
    let img = [
        2092830683u32 as i32,
        1394728708,
        -33326269,
        1986857019,
        1313352304,
        -424163480,
        1813961220,
        -967167319,
        -503802777,
        -2133263610,
        -1327310708,
        -1863700019,
        -873352195,
        -1591419765,
        378033750,
    ];
    assert_eq!(canny_reference(50.0, 100.0, 5, 3, &img), vec![1, 4, 6, 7]);
}

/// A pseudo-random image (a linear congruential generator over all 32-bit
/// pixels) with smooth patches, and the program's input text for it: the
/// blur and thresholds then give strong and weak edges, not only noise.
fn random_image(low: f32, high: f32, h: usize, w: usize, seed: u32) -> (Vec<i32>, String) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        state
    };
    let img: Vec<i32> = (0..h * w)
        .map(|i| {
            // Every other 4×4 block of pixels is one colour.
            let (x, y) = (i / w, i % w);
            let noise = next();
            if (x / 4 + y / 4) % 2 == 0 {
                0x4050_6000
            } else {
                noise as i32
            }
        })
        .collect();
    let rows: Vec<String> = img
        .chunks(w)
        .map(|r| {
            let cells: Vec<String> = r.iter().map(|p| format!("{p}i32")).collect();
            format!("[{}]", cells.join(", "))
        })
        .collect();
    let inp = format!("{low:?}f32 {high:?}f32 {h}i64 {w}i64 [{}]", rows.join(", "));
    (img, inp)
}

#[test]
fn larger_random_image_matches_the_reference() {
    let (low, high, h, w) = (20.0f32, 60.0f32, 23usize, 31usize);
    let (img, inp) = random_image(low, high, h, w, 0x2545_f491);
    let want = as_i64(&canny_reference(low, high, h, w, &img));
    assert!(want.len() > 10, "a test with strong edges: {want:?}");
    assert_eq!(run_program(&inp), want);
}

/// The GPU pipeline on PoCL, on a larger image.
#[test]
fn opencl_matches_the_reference() {
    if !common::opencl() {
        return;
    }
    let (low, high, h, w) = (50.0f32, 100.0f32, 96usize, 128usize);
    let (img, inp) = random_image(low, high, h, w, 0x9e37_79b9);
    let want = as_i64(&canny_reference(low, high, h, w, &img));
    assert!(want.len() > 100, "a test with strong edges: {want:?}");
    let o = common::funmem(&["run", "--semantics", "opencl", PROGRAM], &inp);
    common::assert_exit(&o, 0);
    assert_eq!(ints(&common::text(&o.stdout)), want, "PoCL");
}

/// Prints a small case for the test block (run by hand with --ignored).
#[test]
#[ignore]
fn print_small_case() {
    let (low, high, h, w) = (20.0f32, 45.0f32, 6usize, 7usize);
    let (img, inp) = random_image(low, high, h, w, 7);
    println!("{inp}");
    println!("{:?}", canny_reference(low, high, h, w, &img));
}
