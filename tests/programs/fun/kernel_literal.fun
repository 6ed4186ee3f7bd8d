-- Kernels over literal bounds (`kernel i < 4`) with literal sizes in types
-- (`[4]int`, `[4][2]int`). Sibling kernels reuse the index name `i`.
-- ==
-- input { 3 }
-- output { [0i64, 3i64, 6i64, 9i64] [3i64, 6i64] [[0i64, 1i64], [1i64, 2i64], [2i64, 3i64], [3i64, 4i64]] }
-- input { -1 }
-- output { [0i64, -1i64, -2i64, -3i64] [-1i64, -2i64] [[0i64, 1i64], [1i64, 2i64], [2i64, 3i64], [3i64, 4i64]] }
def main (x: int) =
  let (ys: [4]int) = kernel i < 4 do
      let (y: int) = x * i
      in (y)
  let (zs: [2]int) = ys[1:2]
  let (ms: [4][2]int) = kernel i < 4 do
      let (r: [2]int) = kernel j < 2 do
          let (v: int) = i + j
          in (v)
      in (r)
  in (ys, zs, ms)
