-- Nested kernels make a 2-D array: element [i, j] is i * m + j
-- (0-based indices). With n = 0 the result is an empty [0][m] array.
-- ==
-- input { 2 3 }
-- output { [[0i64, 1i64, 2i64], [3i64, 4i64, 5i64]] }
-- input { 3 1 }
-- output { [[0i64], [1i64], [2i64]] }
-- input { 0 5 }
-- output { empty([0][5]i64) }
def main (n: int) (m: int) =
  let (xss: [n][m]int) = kernel i < n do
      let (row: [m]int) = kernel j < m do
          let (v: int) = i * m + j
          in (v)
      in (row)
  in (xss)
