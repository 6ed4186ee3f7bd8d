-- `transpose` swaps the two dimensions; transposing twice gives the array
-- back. yss[2, 0] is xss[0, 2].
-- ==
-- input { 2 3 [[1, 2, 3], [4, 5, 6]] }
-- output { [[1i64, 4i64], [2i64, 5i64], [3i64, 6i64]] [[1i64, 2i64, 3i64], [4i64, 5i64, 6i64]] 3i64 }
-- input { 1 3 [[7, 8, 9]] }
-- output { [[7i64], [8i64], [9i64]] [[7i64, 8i64, 9i64]] 9i64 }
def main (n: int) (m: int) (xss: [n][m]int) =
  let (yss: [m][n]int) = transpose xss
  let (zss: [n][m]int) = transpose yss
  let (x: int) = yss[2, 0]
  in (yss, zss, x)
