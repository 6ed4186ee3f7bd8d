-- A kernel with two results: each iteration returns an int and a row.
-- ==
-- input { 2 [3, 4] }
-- output { [3i64, 4i64] [[9i64, 0i64], [16i64, 1i64]] }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) empty([0][2]i64) }
def main (n: int) (xs: [n]int) =
  let (a: [n]int) (b: [n][2]int) = kernel i < n do
      let (x: int) = xs[i]
      let (y: int) = x * x
      let (p: [2]int) = replicate 2 y
      let (q: [2]int) = p with [1] = i
      in (x, q)
  in (a, b)
