-- Each iteration of a kernel returns an array (the window of m elements of
-- xs starting at i), so the kernel makes a [k][m] array.
-- ==
-- input { 4 2 [1, 2, 3, 4] }
-- output { [[1i64, 2i64], [2i64, 3i64], [3i64, 4i64]] }
-- input { 3 3 [7, 8, 9] }
-- output { [[7i64, 8i64, 9i64]] }
def main (l: int) (m: int) (xs: [l]int) =
  let (k: int) = l - m + 1
  let (ws: [k][m]int) = kernel i < k do
      let (w: [m]int) = xs[i:m]
      in (w)
  in (ws)
