-- In-place updates of a unique parameter: a whole row, a range inside a
-- row, one element. Out of bounds is stuck (E-UPDATE).
-- ==
-- input { 2 3 [[1, 2, 3], [4, 5, 6]] [7, 8, 9] }
-- output { [[7i64, 8i64, 9i64], [4i64, 7i64, 0i64]] }
-- input { 1 3 [[1, 2, 3]] [7, 8, 9] }
-- error: out of bounds
-- structure { update 3 }
def main (n: int) (m: int) (xss: *[n][m]int) (ys: [m]int) =
  let (a: [n][m]int) = xss with [0] = ys
  let (y1: [1]int) = ys[0 : 1]
  let (b: [n][m]int) = a with [1, 1 : 1] = y1
  let (c: [n][m]int) = b with [1, 2] = 0
  in (c)
