-- N-body simulation (Accelerate's n-body, after the Futhark version that
-- the theses measured): `n_steps` steps of the direct O(n^2) method. In each
-- step a kernel over the bodies sums the acceleration that every body
-- (itself included, softened by `epsilon`) exerts on it:
--   r = p_j - p_i, a += m_j * r / (|r|^2 + epsilon^2)^(3/2),
-- then a second kernel advances each body: the position by `time_step`
-- times the old velocity, the velocity by `time_step` times the
-- acceleration. Masses do not change. The inputs and results are the
-- bodies as seven arrays (x, y, z, mass, vx, vy, vz), as in Futhark's
-- entry point.
--
-- What differs from the Futhark version: our FUN has no records or tuples,
-- so the vectors are three scalars, and the inner map and `reduce_comm`
-- with vector addition over all bodies (a reduction of triples) is a
-- sequential loop with three accumulators in each work-item; Futhark's
-- compiler sequentialises that inner reduction in the same way. `n` is an
-- explicit i64 input (sizes are i64); `n_steps` is i32 as in Futhark.
--
-- Table 4 (the last case, for `funmem bench`): N-body, 10^5 random bodies,
-- one step, time step 1.0 and epsilon 50.0 (the settings of Futhark's
-- datasets of N bodies).
-- ==
-- input { 3i64 1i32 50.0f32 1.0f32
--   [0.0f32, 10.0f32, -20.0f32] [0.0f32, 5.0f32, 15.0f32] [0.0f32, -3.0f32, 8.0f32]
--   [1000.0f32, 2000.0f32, 500.0f32]
--   [1.0f32, 0.0f32, -1.0f32] [0.0f32, 0.5f32, 0.0f32] [0.0f32, 0.0f32, 2.0f32] }
-- output { [1f32, 10f32, -21f32] [0f32, 5.5f32, 15f32] [0f32, -3f32, 10f32]
--   [1000f32, 2000f32, 500f32]
--   [1.092418f32, -0.1428148f32, -0.6135775f32]
--   [0.1156201f32, 0.4859603f32, -0.1750815f32]
--   [-0.02217261f32, 0.04743385f32, 1.854610f32] }
-- input { 4i64 3i32 0.5f32 0.1f32
--   [1.0f32, -1.0f32, 0.0f32, 2.0f32] [0.0f32, 1.0f32, -2.0f32, 2.0f32]
--   [0.5f32, 0.0f32, 1.0f32, -1.0f32] [1.0f32, 2.0f32, 3.0f32, 0.5f32]
--   [0.0f32, 0.1f32, 0.0f32, -0.2f32] [0.3f32, 0.0f32, 0.0f32, 0.0f32]
--   [0.0f32, 0.0f32, -0.1f32, 0.1f32] }
-- output { [0.9844528f32, -0.9617329f32, 0.0009665508f32, 1.932226f32]
--   [0.08223332f32, 0.9909096f32, -1.990089f32, 1.992427f32]
--   [0.4999774f32, 0.003155247f32, 0.9670173f32, -0.9646795f32]
--   [1f32, 2f32, 3f32, 0.5f32]
--   [-0.1556942f32, 0.1835632f32, 0.009276905f32, -0.2785260f32]
--   [0.2236747f32, -0.09119011f32, 0.09902548f32, -0.07674181f32]
--   [-0.001989360f32, 0.03170632f32, -0.1294556f32, 0.1538868f32] }
-- random input { 32i64 2i32 0.5f32 0.01f32 [32]f32 [32]f32 [32]f32 [32]f32 [32]f32
--   [32]f32 [32]f32 }
-- compiled random input { 100000i64 1i32 50.0f32 1.0f32 [100000]f32 [100000]f32
--   [100000]f32 [100000]f32 [100000]f32 [100000]f32 [100000]f32 }
def main (n: int) (n_steps: i32) (epsilon: f32) (time_step: f32) (xps: [n]f32) (yps: [n]f32) (zps: [n]f32) (ms: [n]f32) (xvs: [n]f32) (yvs: [n]f32) (zvs: [n]f32) =
  let (xs: [n]f32) (ys: [n]f32) (zs: [n]f32) (us: [n]f32) (vs: [n]f32) (ws: [n]f32) = loop (px: [n]f32) (py: [n]f32) (pz: [n]f32) (vx: [n]f32) (vy: [n]f32) (vz: [n]f32) = (xps, yps, zps, xvs, yvs, zvs) for step < i64(n_steps) do
    -- The acceleration of each body.
    let (ax: [n]f32) (ay: [n]f32) (az: [n]f32) = kernel i < n do
      let (xi: f32) = px[i]
      let (yi: f32) = py[i]
      let (zi: f32) = pz[i]
      let (sx: f32) (sy: f32) (sz: f32) = loop (accx: f32) (accy: f32) (accz: f32) = (0.0f32, 0.0f32, 0.0f32) for j < n do
        let (rx: f32) = px[j] - xi
        let (ry: f32) = py[j] - yi
        let (rz: f32) = pz[j] - zi
        let (rsqr: f32) = rx * rx + ry * ry + rz * rz + epsilon * epsilon
        let (invr: f32) = 1.0f32 / sqrt(rsqr)
        let (s: f32) = ms[j] * (invr * invr * invr)
        in (accx + s * rx, accy + s * ry, accz + s * rz)
      in (sx, sy, sz)
    -- Each body advanced by one time step.
    let (nx: [n]f32) (ny: [n]f32) (nz: [n]f32) (nu: [n]f32) (nv: [n]f32) (nw: [n]f32) = kernel i < n do
      in (px[i] + time_step * vx[i], py[i] + time_step * vy[i], pz[i] + time_step * vz[i], vx[i] + time_step * ax[i], vy[i] + time_step * ay[i], vz[i] + time_step * az[i])
    in (nx, ny, nz, nu, nv, nw)
  in (xs, ys, zs, ms, us, vs, ws)
