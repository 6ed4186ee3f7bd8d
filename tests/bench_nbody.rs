//! benches/programs/nbody.fun against an independent N-body step in plain
//! Rust, written from the algorithm's description (Accelerate's n-body:
//! softened all-pairs gravity, then an explicit Euler step of positions by
//! the old velocities and velocities by the accelerations): the test
//! block's small cases (both the program's results and the block's expected
//! output must agree with the reference) and a larger generated case.

mod common;

use common::{block_cases, numbers};

/// Within the f32 tolerance of the test blocks (2e-3, relative above 1).
fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 2e-3 * 1f64.max(x.abs()).max(y.abs()))
}

#[derive(Clone, Copy)]
struct Vec3 {
    x: f32,
    y: f32,
    z: f32,
}

impl Vec3 {
    fn add(self, o: Vec3) -> Vec3 {
        Vec3 {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
    fn sub(self, o: Vec3) -> Vec3 {
        Vec3 {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
    fn scale(self, s: f32) -> Vec3 {
        Vec3 {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }
    fn dot(self, o: Vec3) -> f32 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
}

#[derive(Clone, Copy)]
struct Body {
    pos: Vec3,
    mass: f32,
    vel: Vec3,
}

/// `steps` steps of the simulation.
fn simulate(bodies: &mut [Body], steps: usize, eps: f32, dt: f32) {
    for _ in 0..steps {
        let accels: Vec<Vec3> = bodies
            .iter()
            .map(|b| {
                bodies.iter().fold(
                    Vec3 {
                        x: 0.0,
                        y: 0.0,
                        z: 0.0,
                    },
                    |acc, o| {
                        let r = o.pos.sub(b.pos);
                        let dist2 = r.dot(r) + eps * eps;
                        let inv = 1.0 / dist2.sqrt();
                        acc.add(r.scale(o.mass * inv * inv * inv))
                    },
                )
            })
            .collect();
        for (b, a) in bodies.iter_mut().zip(accels) {
            b.pos = b.pos.add(b.vel.scale(dt));
            b.vel = b.vel.add(a.scale(dt));
        }
    }
}

/// The reference on a flat input (n steps epsilon time_step and the seven
/// arrays), flat in the program's result order.
fn reference(input: &[f64]) -> Vec<f64> {
    let n = input[0] as usize;
    let col = |c: usize, i: usize| input[4 + c * n + i] as f32;
    let mut bodies: Vec<Body> = (0..n)
        .map(|i| Body {
            pos: Vec3 {
                x: col(0, i),
                y: col(1, i),
                z: col(2, i),
            },
            mass: col(3, i),
            vel: Vec3 {
                x: col(4, i),
                y: col(5, i),
                z: col(6, i),
            },
        })
        .collect();
    simulate(
        &mut bodies,
        input[1] as usize,
        input[2] as f32,
        input[3] as f32,
    );
    let fields: [fn(&Body) -> f32; 7] = [
        |b| b.pos.x,
        |b| b.pos.y,
        |b| b.pos.z,
        |b| b.mass,
        |b| b.vel.x,
        |b| b.vel.y,
        |b| b.vel.z,
    ];
    fields
        .iter()
        .flat_map(|f| bodies.iter().map(|b| f(b) as f64).collect::<Vec<_>>())
        .collect()
}

fn run(input: &str) -> Vec<f64> {
    numbers(&common::run_ok("benches/programs/nbody.fun", input))
}

#[test]
fn block_cases_agree_with_the_reference() {
    let cases = block_cases("benches/programs/nbody.fun");
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
fn generated_bodies_agree_with_the_reference() {
    // 60 bodies from a small LCG, two steps.
    let n = 60usize;
    let mut state = 2026u64;
    let mut next = |scale: f32| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) % 20001) as f32 / 10000.0 * scale - scale
    };
    let mut arrays = Vec::new();
    for c in 0..7 {
        let xs: Vec<String> = (0..n)
            .map(|_| {
                let v = match c {
                    0..=2 => next(100.0),
                    3 => next(500.0) + 1000.0,
                    _ => next(1.0),
                };
                format!("{v}f32")
            })
            .collect();
        arrays.push(format!("[{}]", xs.join(", ")));
    }
    let input = format!("{n}i64 2i32 5.0f32 0.5f32 {}", arrays.join(" "));
    let want = reference(&numbers(&input));
    let got = run(&input);
    assert!(close(&got, &want), "funmem {got:?}, reference {want:?}");
}
