-- Fig. 5.12 (negative, C2): `xs with [i] = ys` where ys is a parameter:
-- ys exists before any block of the body, so it cannot be built in xs
-- (nor is it fresh: C4); the update copies ys. (The thesis's `reshape (n,
-- n) [0..<n*n]` is written as a kernel nest: its rows are built in place,
-- and the result copy of xs2 coalesces: neither concerns ys.)
-- ==
-- input { 2 1 [7, 8] }
-- output { [[0i64, 1i64], [7i64, 8i64]] }
-- input { 3 0 [1, 2, 3] }
-- output { [[1i64, 2i64, 3i64], [3i64, 4i64, 5i64], [6i64, 7i64, 8i64]] }
-- structure { Alloc 3 copy 1 }
-- structure simplify,coalesce { Alloc 1 copy 0 }
def main (n: int) (i: int) (ys: [n]int) =
  let (xs: [n][n]int) = kernel a < n do
      let (row: [n]int) = kernel b < n do
          let (v: int) = a * n + b
          in (v)
      in (row)
  let (xs2: [n][n]int) = xs with [i] = ys
  in (xs2)
