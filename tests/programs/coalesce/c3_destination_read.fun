-- C3 alone: row i of ms is read (by zs) after ys is made and before ys is
-- put in that row. Built in row i, ys would be what zs reads.
-- ==
-- input { 2 [[1, 2], [3, 4]] [10, 20] 1 }
-- output { [[1i64, 2i64], [11i64, 21i64]] [3i64, 4i64] }
-- input { 2 [[1, 2], [3, 4]] [10, 20] 0 }
-- output { [[11i64, 21i64], [3i64, 4i64]] [1i64, 2i64] }
-- structure { Alloc 3 copy 1 }
-- structure simplify,coalesce { Alloc 3 copy 1 }
def main (n: int) (ms: *[n][n]int) (ns: [n]int) (i: int) =
  let (ys: [n]int) = kernel j < n do
      let (a: int) = ns[j] + 1
      in (a)
  let (zs: [n]int) = kernel j < n do
      let (z: int) = ms[i, j]
      in (z)
  let (ms2: [n][n]int) = ms with [i] = ys
  in (ms2, zs)
