//! LBM (benches/programs/lbm.fun) against an independent reference: the
//! D3Q19 lattice-Boltzmann solver of Parboil's lbm, written here from its
//! description, in f32. Every time step relaxes each fluid cell's 19
//! distributions towards the equilibrium of its density and velocity
//!   f_eq = w ρ (1 + 3 e·u + 4.5 (e·u)² - 1.5 |u|²),  f' = (1 - ω) f + ω f_eq,
//! bounces an obstacle cell's distributions back to the opposite
//! directions, imposes the lid's velocity on an accelerated cell, and then
//! streams every distribution one cell along its direction. The grid is
//! the benchmark's: a flat array of 20 rows (19 distributions and a flag)
//! over nx·ny·(nz + 4) cells, x fastest, whose first and last two z planes
//! (plus the flat index just past the interior, as the Futhark version's
//! bound has it) are padding that keeps its values.
//!
//! The test block's expected outputs must be the reference's, and
//! `funmem run` must agree with it on those inputs and on a larger grid of
//! a lid-driven cavity (walls, a driven lid, fluid inside).

mod common;

use common::{f32_matrix, floats};

const PROGRAM: &str = "benches/programs/lbm.fun";

const OMEGA: f32 = 1.95;
const OBSTACLE: f32 = 1.0;
const ACCEL: f32 = 2.0;

/// The 19 velocities (x, y, z) in the benchmark's order: rest, south,
/// north, west, east, bottom, top, then the twelve diagonals SW, SE, NW,
/// NE, SB, ST, NB, NT, WB, WT, EB, ET.
const E: [[i64; 3]; 19] = [
    [0, 0, 0],
    [0, -1, 0],
    [0, 1, 0],
    [-1, 0, 0],
    [1, 0, 0],
    [0, 0, -1],
    [0, 0, 1],
    [-1, -1, 0],
    [1, -1, 0],
    [-1, 1, 0],
    [1, 1, 0],
    [0, -1, -1],
    [0, -1, 1],
    [0, 1, -1],
    [0, 1, 1],
    [-1, 0, -1],
    [-1, 0, 1],
    [1, 0, -1],
    [1, 0, 1],
];

/// The lattice weight of a velocity: 1/3 at rest, 1/18 along an axis,
/// 1/36 along a diagonal.
fn weight(e: [i64; 3]) -> f32 {
    match e.iter().map(|c| c.abs()).sum::<i64>() {
        0 => 1.0 / 3.0,
        1 => 1.0 / 18.0,
        _ => 1.0 / 36.0,
    }
}

/// The direction opposite to `d`.
fn opposite(d: usize) -> usize {
    let [x, y, z] = E[d];
    E.iter()
        .position(|&e| e == [-x, -y, -z])
        .expect("D3Q19 is symmetric")
}

/// The grid: 20 rows of `cells` values.
struct Grid {
    nx: usize,
    ny: usize,
    cells: usize,
    f: Vec<f32>,
}

impl Grid {
    fn at(&self, d: usize, i: usize) -> f32 {
        self.f[d * self.cells + i]
    }

    /// Whether cell `i` is simulated (not padding).
    fn active(&self, i: usize) -> bool {
        let margin = 2 * self.nx * self.ny;
        i >= margin && i <= self.cells - margin
    }

    /// The flat offset of one step along velocity `e`.
    fn offset(&self, e: [i64; 3]) -> i64 {
        let (nx, plane) = (self.nx as i64, (self.nx * self.ny) as i64);
        e[0] + e[1] * nx + e[2] * plane
    }
}

/// One cell's collision: its 19 distributions after relaxation (or
/// bounce-back).
fn collide(f: [f32; 19], flag: f32) -> [f32; 19] {
    let mut out = [0f32; 19];
    if flag == OBSTACLE {
        for (d, o) in out.iter_mut().enumerate() {
            *o = f[opposite(d)];
        }
        return out;
    }
    let rho: f32 = f.iter().sum();
    let u = if flag == ACCEL {
        [0.005f32, 0.002, 0.0]
    } else {
        let mut m = [0f32; 3];
        for (d, e) in E.iter().enumerate() {
            for k in 0..3 {
                m[k] += e[k] as f32 * f[d];
            }
        }
        [m[0] / rho, m[1] / rho, m[2] / rho]
    };
    let usq = 1.5 * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (d, e) in E.iter().enumerate() {
        let eu = e[0] as f32 * u[0] + e[1] as f32 * u[1] + e[2] as f32 * u[2];
        let eq = weight(*e) * rho * (1.0 + 3.0 * eu + 4.5 * eu * eu - usq);
        out[d] = (1.0 - OMEGA) * f[d] + OMEGA * eq;
    }
    out
}

/// One time step: collision of every active cell, then streaming (each
/// active cell takes direction d's value from its neighbour at -e_d).
fn step(g: &Grid) -> Grid {
    let n = g.cells;
    let mut post = g.f.clone();
    for i in (0..n).filter(|&i| g.active(i)) {
        let f: [f32; 19] = std::array::from_fn(|d| g.at(d, i));
        let c = collide(f, g.at(19, i));
        for (d, v) in c.into_iter().enumerate() {
            post[d * n + i] = v;
        }
    }
    let mut next = post.clone();
    for i in (0..n).filter(|&i| g.active(i)) {
        for (d, e) in E.iter().enumerate() {
            let from = (i as i64 - g.offset(*e)) as usize;
            next[d * n + i] = post[d * n + from];
        }
    }
    Grid { f: next, ..*g }
}

/// `steps` time steps (at least one, as the benchmark runs).
fn reference(mut g: Grid, steps: usize) -> Vec<f32> {
    for _ in 0..steps.max(1) {
        g = step(&g);
    }
    g.f
}

/// Splits an input's numbers into the grid and the number of steps.
fn parse_input(text: &str) -> (Grid, usize) {
    let n = floats(text);
    let (nx, ny, cells, steps) = (n[0] as usize, n[1] as usize, n[2] as usize, n[3] as usize);
    assert_eq!(n.len(), 4 + 20 * cells, "input shape");
    assert_eq!(cells % (nx * ny), 0, "whole planes");
    let f = n[4..].to_vec();
    (Grid { nx, ny, cells, f }, steps)
}

fn run_funmem(input: &str) -> Vec<f32> {
    floats(&common::run_ok(PROGRAM, input))
}

fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "result size");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs().max(1.0),
            "row {}, cell {}: funmem gives {g}, the reference {w}",
            k / (want.len() / 20),
            k % (want.len() / 20)
        );
    }
}

/// A grid of nx × ny × nz cells (plus the padding): each distribution its
/// weight perturbed by up to ±20% (in thousandths, so that the values print
/// short), and the flags from `flag(x, y, z)` (z counted from the first
/// padding plane).
fn generated(nx: usize, ny: usize, nz: usize, flag: impl Fn(usize, usize, usize) -> f32) -> Grid {
    let cells = nx * ny * (nz + 4);
    let h = |i: usize, k: u64| ((i as u64 + 7) * 2654435761 + k * 97531) % 401;
    let mut f = vec![0f32; 20 * cells];
    for i in 0..cells {
        for (d, e) in E.iter().enumerate() {
            let w = weight(*e) * (0.8 + h(i, d as u64) as f32 / 1000.0);
            f[d * cells + i] = (w * 1000.0).round() / 1000.0;
        }
        f[19 * cells + i] = flag(i % nx, i / nx % ny, i / (nx * ny));
    }
    Grid { nx, ny, cells, f }
}

/// The lid-driven cavity of Parboil's datasets: obstacle walls around the
/// box and at the bottom of the fluid, the top plane of the fluid driven,
/// fluid inside.
fn cavity(nx: usize, ny: usize, nz: usize) -> impl Fn(usize, usize, usize) -> f32 {
    move |x, y, z| {
        if x == 0 || y == 0 || x == nx - 1 || y == ny - 1 || z == 2 {
            OBSTACLE
        } else if z == nz + 1 {
            ACCEL
        } else {
            0.0
        }
    }
}

/// The flags of the test block's small cases: a mixture, by a hash of the
/// cell's position.
fn mixed(x: usize, y: usize, z: usize) -> f32 {
    [0.0, OBSTACLE, 0.0, ACCEL, 0.0][(x + 2 * y + 3 * z) % 5]
}

fn input_text(g: &Grid, steps: usize) -> String {
    let rows: Vec<String> = (0..20)
        .map(|d| {
            let cells: Vec<String> = (0..g.cells)
                .map(|i| format!("{:?}f32", g.at(d, i)))
                .collect();
            format!("[{}]", cells.join(", "))
        })
        .collect();
    format!(
        "{}i64 {}i64 {}i64 {steps}i32 [{}]",
        g.nx,
        g.ny,
        g.cells,
        rows.join(", ")
    )
}

#[test]
fn test_block_outputs_are_the_reference() {
    let cases = common::block_cases(PROGRAM);
    assert!(cases.len() >= 2, "the block has its small cases");
    for (input, output) in cases {
        let (g, steps) = parse_input(&input);
        // Every kind of cell is simulated.
        for kind in [0.0, OBSTACLE, ACCEL] {
            assert!((0..g.cells).any(|i| g.active(i) && g.at(19, i) == kind));
        }
        let want = reference(g, steps);
        assert_close(&floats(&output), &want);
        assert_close(&run_funmem(&input), &want);
    }
}

#[test]
fn cavity_agrees_with_the_reference() {
    let (nx, ny, nz, steps) = (6, 5, 4, 3);
    let g = generated(nx, ny, nz, cavity(nx, ny, nz));
    let input = input_text(&g, steps);
    let before = g.f.clone();
    let want = reference(g, steps);
    // The steps moved the fluid.
    assert!(before.iter().zip(&want).any(|(a, b)| (a - b).abs() > 1e-3));
    assert_close(&run_funmem(&input), &want);
}

/// Prints the test block's two small cases with their outputs (`cargo
/// test --release --test bench_lbm -- --ignored --nocapture`), as they
/// were made.
#[test]
#[ignore]
fn print_small_cases() {
    for (nx, ny, nz, steps) in [(2, 2, 1, 1), (3, 2, 2, 2)] {
        let g = generated(nx, ny, nz, mixed);
        println!("input {{ {} }}", input_text(&g, steps));
        let cells = g.cells;
        let want = reference(g, steps);
        println!(
            "output {{ {} }}",
            f32_matrix(want.len() / cells, cells, &want)
        );
    }
}
