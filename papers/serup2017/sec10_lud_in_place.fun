-- Sec. 10 (LUD regression): `dst with [i] = res` in a loop, where the
-- kernel making res reads dst's block, each thread the very cell it
-- writes. The thesis's C3 refuses (dst's block is used while res is
-- made) and LUD ran slower for it; the thesis proposes allowing it when
-- each thread reads and writes the same index. Expected: coalesced.
-- ==
-- input { 2 [[1, 2], [3, 4]] }
-- output { [[2i64, 5i64], [6i64, 9i64]] }
-- input { 3 [[1, 2, 3], [4, 5, 6], [7, 8, 9]] }
-- output { [[2i64, 5i64, 8i64], [8i64, 11i64, 14i64], [14i64, 17i64, 20i64]] }
-- input { 0 empty([0][0]i64) }
-- output { empty([0][0]i64) }
-- structure { Alloc 2 copy 1 }
-- structure simplify,coalesce { Alloc 1 copy 1 }
def main (n: int) (m: *[n][n]int) =
  let (final: [n][n]int) = loop (dst: [n][n]int) = (m) for i < n do
      let (res: [n]int) = kernel j < n do
          let (x: int) = dst[i, j]
          let (y: int) = x * 2 + j
          in (y)
      let (dst2: [n][n]int) = dst with [i] = res
      in (dst2)
  in (final)
