-- `replicate` of a scalar and of an array; `concat` along the outer
-- dimension, its size bound first.
-- ==
-- input { 2 [1, 2] }
-- output { [1i64, 2i64, 5i64, 5i64, 5i64] [[1i64, 2i64], [1i64, 2i64], [1i64, 2i64], [1i64, 2i64]] }
-- input { 0 empty([0]i64) }
-- output { [5i64, 5i64, 5i64] empty([4][0]i64) }
-- structure { concat 2 replicate 2 }
def main (n: int) (xs: [n]int) =
  let (r: [2][n]int) = replicate 2 xs
  let (z: [3]int) = replicate 3 5
  let (k: int) = n + 3
  let (c: [k]int) = concat xs z
  let (k2: int) = 2 + 2
  let (rr: [k2][n]int) = concat r r
  in (c, rr)
