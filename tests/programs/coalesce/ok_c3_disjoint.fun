-- C3 by disjointness: zs reads row 0 of ms while ys is being put in row
-- 1; the reads miss ys's place (proved), so ys is built in row 1.
-- ==
-- input { 2 [[1, 2], [3, 4]] [10, 20] }
-- output { [[1i64, 2i64], [11i64, 21i64]] [1i64, 2i64] }
-- input { 3 [[1, 2, 3], [4, 5, 6], [7, 8, 9]] [0, 0, 0] }
-- output { [[1i64, 2i64, 3i64], [1i64, 1i64, 1i64], [7i64, 8i64, 9i64]] [1i64, 2i64, 3i64] }
-- structure { Alloc 3 copy 1 }
-- structure simplify,coalesce { Alloc 2 copy 1 }
def main (n: int) (ms: *[n][n]int) (ns: [n]int) =
  let (ys: [n]int) = kernel j < n do
      let (a: int) = ns[j] + 1
      in (a)
  let (zs: [n]int) = kernel j < n do
      let (z: int) = ms[0, j]
      in (z)
  let (ms2: [n][n]int) = ms with [1] = ys
  in (ms2, zs)
