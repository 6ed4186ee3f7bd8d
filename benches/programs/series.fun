-- Series (Java Grande, as ported to Futhark in futhark-benchmarks
-- jgf/series; Serup 2017 §10, figs. 10.3-10.5): the first `rows` Fourier
-- coefficients of f(x) = (x + 1)^x on [0, 2]. Coefficient 0 is the
-- integral of f over [0, 2], halved (its sine part is 0, never computed);
-- coefficient n > 0 is the pair of integrals of f(x)·cos(nπx) and
-- f(x)·sin(nπx). Every integral is JGF's trapezoid rule with 1000 steps
-- as Futhark writes it: dx = (2 - 0) / 1000, half of f at 0, then f at
-- x = dx, 2dx, ... for 998 points (x accumulated by adding dx), half of f
-- at 2, the sum times dx. The results are the cosine and the sine
-- coefficients, two arrays of f64.
--
-- Structure as in the Futhark version (and fig. 10.4): `first` is a
-- one-element array per result (a replicate each), `rest` one kernel over
-- the other rows - 1 coefficients with two results, and each result is
-- `concat first rest`. Coalescing builds `first` and `rest` in the
-- result's block (offsets 0 and 1), which halves the peak memory (fig.
-- 10.5).
--
-- What differs from the Futhark version:
-- - No `**`, cos or sin. (x + 1)^x is exp(x · log(x + 1)). The cosine and
--   sine are computed here: the angle a ≥ 0 is reduced by the multiple k
--   of π/2 nearest to it, with π/2 split in three parts (Cody and Waite;
--   the first two have 30 significant bits, so their products with k are
--   exact for the angles here, up to 2^23·π/2), and the sine and cosine of
--   the rest r (|r| ≤ π/4) are Taylor polynomials to degree 17 and 18,
--   whose truncation error is below 5·10^-17; k mod 4 picks ±sin r or
--   ±cos r. So the coefficients agree with libm's to about 10^-15, well
--   within the f64 tolerance (10^-9), though not bit for bit.
-- - No functions: the integrand is written out in one loop per integral
--   kind. The loop's first and last iterations evaluate the end points
--   (weight 1/2) and the others the accumulated x, so the sums are added
--   in Futhark's order. The cosine and sine integrals of a coefficient
--   share their loop (Futhark calls TrapezoidIntegrate twice; the points
--   and the order of each sum are the same).
-- - No tuples: `first` and `rest` are two arrays each (Futhark's unzip of
--   the concatenation is already that in its core language, fig. 10.4).
-- - `rest` has max(rows - 1, 0) elements and the results 1 + that, so
--   that the results' size is known to be positive before `rest` is made:
--   coalescing needs the result's block allocated first (its C2), and
--   `hoist-allocs` moves an allocation above a kernel only when its size
--   is known to be non-negative. With `rows - 1` and `rows`, as Futhark
--   writes them, both concatenations are refused (C2), as for
--   papers/serup2017/fig10_04_series_concat.fun. For rows >= 1 the results
--   are the same; for rows <= 0, where Futhark fails (iota of a negative
--   size), this gives coefficient 0 alone.
--
-- Datasets: Futhark's own small case (4 rows) and 9 rows (CI); the
-- `compiled input` is Futhark's middle dataset, 100000 rows.
-- ==
-- input { 4i64 }
-- output { [2.8729524964837996f64, 1.1161046676147885f64,
--           0.34429060398168687f64, 0.1523889870251929f64]
--          [0.0f64, -1.8819691893398025f64, -1.1645642623320955f64,
--           -0.8143461113044296f64] }
-- input { 9i64 }
-- output { [2.8729524964837996f64, 1.1161046676147885f64,
--           0.34429060398168687f64, 0.1523889870251929f64,
--           0.07990394640815095f64, 0.04531344169145112f64,
--           0.026235909768806076f64, 0.014633947193359951f64,
--           0.00706485778828753f64]
--          [0.0f64, -1.8819691893398025f64, -1.1645642623320955f64,
--           -0.8143461113044296f64, -0.6214232745373945f64,
--           -0.5010799651273166f64, -0.41925780622097203f64,
--           -0.36013680070400933f64, -0.3154626366489171f64] }
-- compiled input { 100000i64 }
def main (rows: int) =
  let (nsteps: int) = 1000
  let (x0: f64) = 0.0
  let (x1: f64) = 2.0
  let (dx: f64) = (x1 - x0) / f64(nsteps)
  let (omega: f64) = 3.1415926535897932
  -- Coefficient 0: the integral of f alone.
  let (xlast: f64) (sum0: f64) = loop (xa: f64) (sa: f64) = (x0, 0.0) for s < nsteps do
      let (end: bool) = s == 0 || s == nsteps - 1
      let (xn: f64) (p: f64) = if s == 0 then
          in (xa, x0)
        else
          let (xb: f64) (pb: f64) = if s == nsteps - 1 then
              in (xa, x1)
            else
              in (xa + dx, xa + dx)
          in (xb, pb)
      let (fp: f64) = exp(p * log(p + 1.0))
      let (term: f64) = if end then
          in (fp / 2.0)
        else
          in (fp)
      in (xn, sa + term)
  let (a0: f64) = sum0 * dx
  let (one: int) = 1
  let (first_c: [one]f64) = replicate one (a0 / 2.0)
  let (first_s: [one]f64) = replicate one 0.0
  -- Coefficients 1 .. rows - 1.
  let (r1: int) = max(rows - 1, 0)
  let (n: int) = one + r1
  let (rest_c: [r1]f64) (rest_s: [r1]f64) = kernel i < r1 do
      let (omegan: f64) = omega * f64(i + 1)
      let (xe: f64) (sc: f64) (ss: f64) = loop (xc: f64) (ac: f64) (as: f64) = (x0, 0.0, 0.0) for t < nsteps do
          let (last: bool) = t == 0 || t == nsteps - 1
          let (xt: f64) (q: f64) = if t == 0 then
              in (xc, x0)
            else
              let (xu: f64) (qu: f64) = if t == nsteps - 1 then
                  in (xc, x1)
                else
                  in (xc + dx, xc + dx)
              in (xu, qu)
          let (fq: f64) = exp(q * log(q + 1.0))
          -- cos and sin of a = omegan · q: a = k·π/2 + r, |r| <= π/4.
          let (a: f64) = omegan * q
          let (kf: f64) = floor(a * 0.6366197723675814 + 0.5)
          let (r: f64) = a - kf * 1.5707963276654482 + kf * 8.705515692000731e-10 + kf * 3.50343439808993e-19
          let (r2: f64) = r * r
          let (sr: f64) = r * (1.0 + r2 * (-0.16666666666666666 + r2 * (0.008333333333333333 + r2 * (-0.0001984126984126984 + r2 * (2.7557319223985893e-06 + r2 * (-2.505210838544172e-08 + r2 * (1.6059043836821613e-10 + r2 * (-7.647163731819816e-13 + r2 * 2.8114572543455206e-15))))))))
          let (cr: f64) = 1.0 + r2 * (-0.5 + r2 * (0.041666666666666664 + r2 * (-0.001388888888888889 + r2 * (2.48015873015873e-05 + r2 * (-2.755731922398589e-07 + r2 * (2.08767569878681e-09 + r2 * (-1.1470745597729725e-11 + r2 * (4.779477332387385e-14 - r2 * 1.5619206968586225e-16))))))))
          let (quad: int) = (i64(kf) % 4 + 4) % 4
          let (cosa: f64) = f64(quad == 0) * cr - f64(quad == 1) * sr - f64(quad == 2) * cr + f64(quad == 3) * sr
          let (sina: f64) = f64(quad == 0) * sr + f64(quad == 1) * cr - f64(quad == 2) * sr - f64(quad == 3) * cr
          let (gc: f64) = fq * cosa
          let (gs: f64) = fq * sina
          let (tc: f64) (ts: f64) = if last then
              in (gc / 2.0, gs / 2.0)
            else
              in (gc, gs)
          in (xt, ac + tc, as + ts)
      in (sc * dx, ss * dx)
  let (cosines: [n]f64) = concat first_c rest_c
  let (sines: [n]f64) = concat first_s rest_s
  in (cosines, sines)
