-- Canny edge detection (Accelerate's example, as ported to Futhark in
-- futhark-benchmarks accelerate/canny; Serup 2017 §10, figs. 10.6-10.9,
-- analyses its memory reuse). The input is an h×w image of packed RGBA
-- pixels (one i32 each: red in the top byte, then green, then blue). The
-- phases, each one data-parallel pass over the image:
--   1. grey level: 255 × the luminance 0.3 r + 0.59 g + 0.11 b over 255,
--      r, g, b being the pixel's top three bytes read as signed bytes;
--   2. Gaussian blur along the first (row) index, weights 1 4 6 4 1 / 16,
--      indices clamped to the image;
--   3. the same blur along the second (column) index;
--   4. Sobel gradient per pixel: its magnitude, and its direction
--      quantised to four orientations (64 rising diagonal, 128 along the
--      column index, 192 falling diagonal, 255 along the row index), or 0
--      (undefined) where both components are at most `low`;
--   5. non-maximum suppression and thresholding: a pixel whose direction
--      is undefined, whose magnitude is below `low` or below either
--      neighbour's along its direction is no edge (0.0), else a strong
--      edge (1.0) when its magnitude is at least `high`, else weak (0.5);
--   6. selection of the strong edges: the flat (row-major) indices of the
--      strong pixels, in order, found by a prefix sum of 0/1 flags.
-- The result is that list of indices (i32), as in the Futhark version.
--
-- Structure as in the Futhark version: five 2-D maps (phases 1-5; phase 4
-- one map with two results, magnitude and direction), then a map and a
-- scan over the flattened image and the compaction; so the arrays live
-- in blocks m1 .. m9 of fig. 10.6 (m0 the input), and a reuse pass may
-- put each 2-D phase into the block of the phase two before it.
--
-- What differs from the Futhark version:
-- - No bitwise operators or i8: the three bytes are taken from the pixel
--   as an unsigned 32-bit number (i64) by division and remainder, and a
--   byte of 128 or more is made negative by subtracting 256 (what
--   `i8.i32 (p >> k)` gives).
-- - No atan2: Futhark computes the angle, shifts it by π/8, scales it to
--   eight sectors and folds them to four orientations. The same sectors
--   are found here by comparing |dy| with tan(π/8)·|dx| and tan(3π/8)·|dx|
--   and, for the diagonals, the signs of dx and dy. The two agree except
--   where atan2's rounding puts a gradient within a few ulps of a sector
--   boundary (±π/8 + k·π/4); gradients along an axis or a diagonal are far
--   from every boundary. (The test's reference uses atan2, as Futhark.)
-- - No records or functions: the magnitude and direction are two arrays
--   (one kernel with two results), clamp is written out with min and max,
--   the orientation constants are literals.
-- - No flatten: the 0/1 flags of strong pixels are a kernel over h·w that
--   reads pixel (k / w, k % w).
-- - No scatter: Futhark writes index i into position (number of strong
--   pixels before i) of a replicate of length len (an exclusive scan,
--   written with the inclusive one shifted by one). A kernel may not
--   update an array made outside it, and a sequential loop of updates
--   would serialise the phase; so the compaction is the equivalent
--   gather: output j is the first position where the inclusive scan
--   reaches j + 1, found by a binary search over the scan (a kernel over
--   len with a while loop). Same result, a fresh array of the
--   data-dependent size len, as the replicate is in fig. 10.6 (m9).
-- - The image's sizes h and w are explicit i64 parameters, after low and
--   high. The image is a unique parameter, as in the version the thesis
--   measured (Serup made it so in 2017 for reuse; it is not any more), so
--   its block m0 may be reused.
-- - Accelerate's last stage (linking weak edges to strong ones, the
--   recursive "wildfire" done in Repa) is not in the Futhark version and
--   is not here: the benchmark ends, as Futhark's, with the strong edges.
--
-- Datasets: Futhark's own small case (5×3, low 50, high 100) and a 6×7
-- image (CI); the `compiled random input` is lena512's size (512×512,
-- random pixels) with Futhark's thresholds 50 and 100.
-- ==
-- input { 50f32 100f32 5i64 3i64
--   [[2092830683i32, 1394728708i32, -33326269i32],
--    [1986857019i32, 1313352304i32, -424163480i32],
--    [1813961220i32, -967167319i32, -503802777i32],
--    [-2133263610i32, -1327310708i32, -1863700019i32],
--    [-873352195i32, -1591419765i32, 378033750i32]] }
-- output { [1i32, 4i32, 6i32, 7i32] }
-- input { 20f32 45f32 6i64 7i64
--   [[1079009280i32, 1079009280i32, 1079009280i32, 1079009280i32, 211918734i32, -619404907i32, 1550419440i32],
--    [1079009280i32, 1079009280i32, 1079009280i32, 1079009280i32, -2013262541i32, 1940713718i32, -1942015011i32],
--    [1079009280i32, 1079009280i32, 1079009280i32, 1079009280i32, 2036278348i32, -635038917i32, 1556770654i32],
--    [1079009280i32, 1079009280i32, 1079009280i32, 1079009280i32, 1538083369i32, 768150900i32, -78325181i32],
--    [524270278i32, 1953256301i32, 1959894504i32, 463890471i32, 1079009280i32, 1079009280i32, 1079009280i32],
--    [363102795i32, -1694076114i32, -316333899i32, 1141291664i32, 1079009280i32, 1079009280i32, 1079009280i32]] }
-- output { [3i32, 6i32, 10i32, 11i32, 17i32, 18i32, 23i32, 24i32, 27i32, 28i32, 29i32, 30i32, 33i32, 39i32, 40i32] }
-- compiled random input { 50f32 100f32 512i64 512i64 [512][512]i32 }
def main (low: f32) (high: f32) (h: int) (w: int) (img: *[h][w]i32) =
  -- 1. Grey levels.
  let (grey: [h][w]f32) = kernel x < h do
      let (grow: [w]f32) = kernel y < w do
          let (u: int) = (i64(img[x, y]) + 4294967296) % 4294967296
          let (rb: int) = u / 16777216
          let (gb: int) = u / 65536 % 256
          let (bb: int) = u / 256 % 256
          let (r: int) = rb - 256 * i64(rb >= 128)
          let (g: int) = gb - 256 * i64(gb >= 128)
          let (b: int) = bb - 256 * i64(bb >= 128)
          let (lum: f32) = (0.3 * f32(r) + 0.59 * f32(g) + 0.11 * f32(b)) / 255.0
          in (255.0 * lum)
      in (grow)
  -- 2. Blur along the row index.
  let (blurx: [h][w]f32) = kernel x < h do
      let (bxrow: [w]f32) = kernel y < w do
          let (a: f32) = grey[max(min(x - 2, h - 1), 0), y] * 0.0625
          let (b: f32) = grey[max(min(x - 1, h - 1), 0), y] * 0.25
          let (c: f32) = grey[max(min(x, h - 1), 0), y] * 0.375
          let (d: f32) = grey[max(min(x + 1, h - 1), 0), y] * 0.25
          let (e: f32) = grey[max(min(x + 2, h - 1), 0), y] * 0.0625
          in (a + b + c + d + e)
      in (bxrow)
  -- 3. Blur along the column index.
  let (blurred: [h][w]f32) = kernel x < h do
      let (byrow: [w]f32) = kernel y < w do
          let (a: f32) = blurx[x, max(min(y - 2, w - 1), 0)] * 0.0625
          let (b: f32) = blurx[x, max(min(y - 1, w - 1), 0)] * 0.25
          let (c: f32) = blurx[x, max(min(y, w - 1), 0)] * 0.375
          let (d: f32) = blurx[x, max(min(y + 1, w - 1), 0)] * 0.25
          let (e: f32) = blurx[x, max(min(y + 2, w - 1), 0)] * 0.0625
          in (a + b + c + d + e)
      in (byrow)
  -- 4. Gradient magnitude and quantised direction (Sobel).
  let (mag: [h][w]f32) (dir: [h][w]i32) = kernel x < h do
      let (mrow: [w]f32) (drow: [w]i32) = kernel y < w do
          let (xm: int) = max(min(x - 1, h - 1), 0)
          let (xp: int) = max(min(x + 1, h - 1), 0)
          let (ym: int) = max(min(y - 1, w - 1), 0)
          let (yp: int) = max(min(y + 1, w - 1), 0)
          let (v0: f32) = blurred[xm, ym]
          let (v1: f32) = blurred[x, ym]
          let (v2: f32) = blurred[xp, ym]
          let (v3: f32) = blurred[xm, y]
          let (v4: f32) = blurred[xp, y]
          let (v5: f32) = blurred[xm, yp]
          let (v6: f32) = blurred[x, yp]
          let (v7: f32) = blurred[xp, yp]
          let (dx: f32) = v2 + 2.0 * v4 + v7 - v0 - 2.0 * v3 - v5
          let (dy: f32) = v0 + 2.0 * v1 + v2 - v5 - 2.0 * v6 - v7
          let (m: f32) = sqrt(dx * dx + dy * dy)
          let (ax: f32) = abs(dx)
          let (ay: f32) = abs(dy)
          let (o: i32) = if ax <= low && ay <= low then
              in (0i32)
            else
              let (o1: i32) = if ay <= 0.41421356 * ax then
                  in (255i32)
                else
                  let (o2: i32) = if ay >= 2.4142137 * ax then
                      in (128i32)
                    else
                      let (rising: bool) = dx > 0.0 == dy > 0.0
                      let (o3: i32) = 192i32 - 128i32 * i32(rising)
                      in (o3)
                  in (o2)
              in (o1)
          in (m, o)
      in (mrow, drow)
  -- 5. Non-maximum suppression and the two thresholds.
  let (edges: [h][w]f32) = kernel x < h do
      let (erow: [w]f32) = kernel y < w do
          let (mg: f32) = mag[x, y]
          let (dr: i32) = dir[x, y]
          let (ox: int) = i64(dr < 128i32) - i64(dr > 128i32)
          let (oy: int) = 0 - i64(dr < 255i32)
          let (fwd: f32) = mag[max(min(x + ox, h - 1), 0), max(min(y + oy, w - 1), 0)]
          let (rev: f32) = mag[max(min(x - ox, h - 1), 0), max(min(y - oy, w - 1), 0)]
          let (none: bool) = dr == 0i32 || mg < low || mg < fwd || mg < rev
          let (ev: f32) = if none then
              in (0.0f32)
            else
              let (ev1: f32) = if mg >= high then
                  in (1.0f32)
                else
                  in (0.5f32)
              in (ev1)
          in (ev)
      in (erow)
  -- 6. The strong edges' flat indices: flags, their prefix sum, and for
  --    each output position the first pixel where the sum reaches it.
  let (hw: int) = h * w
  let (strong: [hw]i32) = kernel k < hw do
      let (ek: f32) = edges[k / w, k % w]
      in (i32(ek == 1.0))
  let (counts: [hw]i32) = scan (+) 0i32 strong
  let (len: int) = i64(counts[hw - 1])
  let (found: [len]i32) = kernel j < len do
      let (want: i32) = i32(j) + 1i32
      let (lo: int) (hi: int) (more: bool) = loop (l: int) (u: int) (go: bool) = (0, hw - 1, 0 < hw - 1) while go do
          let (mid: int) = (l + u) / 2
          let (reached: bool) = counts[mid] >= want
          let (l2: int) (u2: int) = if reached then
              in (l, mid)
            else
              in (mid + 1, u)
          in (l2, u2, l2 < u2)
      in (i32(lo))
  in (found)
