-- SGEMM (Parboil): C' = beta * C + alpha * (A B) for A: [n][m], B: [m][p],
-- C: [n][p] in f32. As in Futhark's version, the product is a map over A's
-- rows of a map over B's columns (rows of B transposed) of a dot product,
-- a map2 of products summed by a reduction; then the two scalings and the
-- sum are three maps of their own.
--
-- What the port changes, and why: no functions or map2, so the maps are
-- kernels and the dot product is a kernel of products reduced by `(+)`.
-- Without fusion each (i, j) has its own array of m products, which memory
-- expansion hoists to one n·p·m array on the GPU (Futhark fuses the map2
-- into the reduction).
--
-- Datasets: two small cases, then Parboil's medium (A 1024×992, B
-- 992×1056, as in Futhark's medium.in), compiled, random.
-- ==
-- input { 2i64 3i64 4i64
--         [[1.0f32, 2.0f32, 3.0f32], [-1.0f32, 0.5f32, 4.0f32]]
--         [[1.0f32, 0.0f32, 2.0f32, -1.0f32], [0.5f32, 1.0f32, 1.5f32, 2.0f32], [3.0f32, -2.0f32, 0.25f32, 1.0f32]]
--         [[1.0f32, 1.0f32, 1.0f32, 1.0f32], [2.0f32, -2.0f32, 0.0f32, 3.0f32]]
--         2.0f32 0.5f32 }
-- output { [[22.5f32, -7.5f32, 12.0f32, 12.5f32], [23.5f32, -16.0f32, -0.5f32, 13.5f32]] }
-- input { 1i64 2i64 1i64 [[3.0f32, -4.0f32]] [[0.25f32], [0.5f32]] [[10.0f32]] -1.0f32 0.0f32 }
-- output { [[1.25f32]] }
-- compiled random input { 1024i64 992i64 1056i64 [1024][992]f32 [992][1056]f32 [1024][1056]f32 f32 f32 }
def main (n: int) (m: int) (p: int) (ass: [n][m]f32) (bss: [m][p]f32)
         (css: [n][p]f32) (alpha: f32) (beta: f32) =
  let (bssT: [p][m]f32) = transpose bss
  -- The product: row i of A against column j of B.
  let (abss: [n][p]f32) = kernel i < n do
        let (row: [p]f32) = kernel j < p do
              let (prods: [m]f32) = kernel k < m do in (ass[i, k] * bssT[j, k])
              let (dot: f32) = reduce (+) 0.0f32 prods
              in (dot)
        in (row)
  -- scale (css, beta)
  let (cbss: [n][p]f32) = kernel i2 < n do
        let (crow: [p]f32) = kernel j2 < p do in (css[i2, j2] * beta)
        in (crow)
  -- scale (abss, alpha)
  let (aabss: [n][p]f32) = kernel i3 < n do
        let (arow: [p]f32) = kernel j3 < p do in (abss[i3, j3] * alpha)
        in (arow)
  -- add
  let (rss: [n][p]f32) = kernel i4 < n do
        let (rrow: [p]f32) = kernel j4 < p do in (cbss[i4, j4] + aabss[i4, j4])
        in (rrow)
  in (rss)
