-- A 2-D slice `xss[a:b, c:d]`: rows a .. a+b-1, columns c .. c+d-1. A slice
-- with 0 columns is a [b][0] array.
-- ==
-- input { 3 4 [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]] 1 2 1 2 }
-- output { [[5i64, 6i64], [9i64, 10i64]] }
-- input { 3 4 [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]] 0 3 2 0 }
-- output { empty([3][0]i64) }
-- input { 3 4 [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]] 2 2 0 1 }
-- error: (?i)out of bounds
def main (n: int) (m: int) (xss: [n][m]int) (a: int) (b: int) (c: int) (d: int) =
  let (yss: [b][d]int) = xss[a:b, c:d]
  in (yss)
