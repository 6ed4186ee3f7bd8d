-- Concat root, applied: both parts are built in their rows of zs.
-- ==
-- input { 2 3 [1, 2] [1, 2, 3] }
-- output { [2i64, 3i64, 2i64, 4i64, 6i64] }
-- input { 0 1 empty([0]i64) [5] }
-- output { [10i64] }
-- structure { Alloc 3 copy 0 }
-- structure simplify,coalesce { Alloc 1 copy 0 }
def main (n: int) (m: int) (as: [n]int) (bs: [m]int) =
  let (xs: [n]int) = kernel i < n do
      let (a: int) = as[i] + 1
      in (a)
  let (ys: [m]int) = kernel i < m do
      let (b: int) = bs[i] * 2
      in (b)
  let (k: int) = n + m
  let (zs: [k]int) = concat xs ys
  in (zs)
