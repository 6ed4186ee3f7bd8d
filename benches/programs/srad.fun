-- SRAD (Rodinia): speckle-reducing anisotropic diffusion of an image, after
-- the structure of the Futhark benchmark (rodinia/srad). The image is
-- scaled up by exp; then each of niter iterations (a sequential host loop)
-- takes the mean and variance of the whole image (two sums), computes per
-- pixel the four differences to its neighbours (clamped at the borders)
-- and a diffusion coefficient (one 2-D kernel with five results), and
-- updates every pixel from its own coefficient and those of its south and
-- east neighbours (a second 2-D kernel); at the end each pixel is
-- log-compressed back to 0..255. lambda is 0.5, as in Futhark's main.
--
-- What differs from the Futhark version:
-- - FUN has no u8: the image is given as f32 intensities in [0, 1], the u8
--   pixel already divided by 255 (so `random input`'s floats in [0, 1] are
--   whole images); niter is an input (Futhark's main fixes 100).
-- - No flatten: each sum is a reduction per row inside a kernel, then a
--   reduction of the row sums (the squares are a 2-D map first).
-- - The border clamps are min/max instead of Futhark's ifs (the same for
--   every index in range); the coefficient's clamp to [0, 1] is an if.
-- - Results come out of the kernels as five separate arrays (no tuples).
--
-- Datasets: two small images (CI); the `compiled random input` is Table 4's
-- SRAD 502×458 with 100 iterations (random intensities in [0, 1]).
-- ==
-- input { 3i64 4i64 2i64
--         [[0.1f32, 0.5f32, 0.9f32, 0.3f32],
--          [0.7f32, 0.2f32, 0.4f32, 0.8f32],
--          [0.6f32, 1.0f32, 0.0f32, 0.25f32]] }
-- output { [[61.326923f32, 123.36172f32, 198.6929f32, 112.73002f32],
--            [151.60013f32, 86.21291f32, 118.68074f32, 173.43407f32],
--            [161.22812f32, 238.2681f32, 34.577637f32, 77.7764f32]] }
-- input { 4i64 3i64 5i64
--         [[0.5f32, 0.52f32, 0.48f32],
--          [0.55f32, 0.3f32, 0.51f32],
--          [0.49f32, 0.5f32, 0.7f32],
--          [0.45f32, 0.6f32, 0.5f32]] }
-- output { [[128.78394f32, 125.38291f32, 125.72987f32],
--            [128.87222f32, 99.06791f32, 130.77385f32],
--            [127.996956f32, 134.09747f32, 156.9242f32],
--            [128.48549f32, 135.10277f32, 142.60541f32]] }
-- compiled random input { 502i64 458i64 100i64 [502][458]f32 }
def main (rows: int) (cols: int) (niter: int) (pixels: [rows][cols]f32) =
  let (ne: f32) = f32(rows * cols)
  let (lambda: f32) = 0.5
  let (image: [rows][cols]f32) = kernel i < rows do
      let (row: [cols]f32) = kernel j < cols do
          let (e: f32) = exp(pixels[i, j])
          in (e)
      in (row)
  let (final: [rows][cols]f32) = loop (img: [rows][cols]f32) = (image) for it < niter do
      -- Statistics of the whole image.
      let (sq: [rows][cols]f32) = kernel i < rows do
          let (sqrow: [cols]f32) = kernel j < cols do
              let (x: f32) = img[i, j]
              in (x * x)
          in (sqrow)
      let (sums: [rows]f32) (sums2: [rows]f32) = kernel i < rows do
          let (r: [cols]f32) = img[i]
          let (r2: [cols]f32) = sq[i]
          let (s: f32) = reduce (+) 0 r
          let (s2: f32) = reduce (+) 0 r2
          in (s, s2)
      let (total: f32) = reduce (+) 0 sums
      let (total2: f32) = reduce (+) 0 sums2
      let (mean: f32) = total / ne
      let (variance: f32) = total2 / ne - mean * mean
      let (q0sqr: f32) = variance / (mean * mean)
      -- Differences to the four neighbours and the diffusion coefficient.
      let (dN: [rows][cols]f32) (dS: [rows][cols]f32) (dW: [rows][cols]f32) (dE: [rows][cols]f32) (c: [rows][cols]f32) = kernel i < rows do
          let (rN: [cols]f32) (rS: [cols]f32) (rW: [cols]f32) (rE: [cols]f32) (rc: [cols]f32) = kernel j < cols do
              let (jc: f32) = img[i, j]
              let (n: f32) = img[max(i - 1, 0), j] - jc
              let (s: f32) = img[min(i + 1, rows - 1), j] - jc
              let (w: f32) = img[i, max(j - 1, 0)] - jc
              let (e: f32) = img[i, min(j + 1, cols - 1)] - jc
              let (g2: f32) = (n * n + s * s + w * w + e * e) / (jc * jc)
              let (l: f32) = (n + s + w + e) / jc
              let (num: f32) = 0.5 * g2 - 1.0 / 16.0 * (l * l)
              let (den: f32) = 1.0 + 0.25 * l
              let (qsqr: f32) = num / (den * den)
              let (den2: f32) = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr))
              let (ck: f32) = 1.0 / (1.0 + den2)
              let (ck2: f32) = if ck < 0.0 then
                  in (0.0f32)
                else
                  let (ck1: f32) = if ck > 1.0 then
                      in (1.0f32)
                    else
                      in (ck)
                  in (ck1)
              in (n, s, w, e, ck2)
          in (rN, rS, rW, rE, rc)
      -- The update, from the pixel's own coefficient and its south and
      -- east neighbours'.
      let (next: [rows][cols]f32) = kernel i < rows do
          let (nrow: [cols]f32) = kernel j < cols do
              let (cN: f32) = c[i, j]
              let (cS: f32) = c[min(i + 1, rows - 1), j]
              let (cE: f32) = c[i, min(j + 1, cols - 1)]
              let (d: f32) = cN * dN[i, j] + cS * dS[i, j] + cN * dW[i, j] + cE * dE[i, j]
              in (img[i, j] + 0.25 * lambda * d)
          in (nrow)
      in (next)
  let (result: [rows][cols]f32) = kernel i < rows do
      let (orow: [cols]f32) = kernel j < cols do
          let (p: f32) = final[i, j]
          in (log(p) * 255.0)
      in (orow)
  in (result)
