-- Fig. 5.6 (5.7, 5.8): `t2 = t1 with [i] = t0`. The thesis builds t0 in
-- row i of t1's block (offset n * i). t1 is created after t0, so its
-- creation must move above t0 too (ch. 7, fig. 7.5), or C3 refuses. Our
-- replicate of a scalar row is a block of its own (`zero`); the program
-- result, an update's, is copied to a fresh block and that copy coalesces
-- too (t1, t2 and t0 with it). An index out of bounds must stay an error.
-- ==
-- input { 3 1 [1, 2, 3] }
-- output { [[0i64, 0i64, 0i64], [2i64, 3i64, 4i64], [0i64, 0i64, 0i64]] }
-- input { 3 3 [1, 2, 3] }
-- error: out of bounds
-- structure { Alloc 4 copy 1 }
-- structure simplify,coalesce { Alloc 3 copy 0 }
def main (n: int) (i: int) (ns: [n]int) =
  let (t0: [n]int) = kernel j < n do
      let (a: int) = ns[j] + 1
      in (a)
  let (zero: [n]int) = replicate n 0
  let (t1: [n][n]int) = replicate n zero
  let (t2: [n][n]int) = t1 with [i] = t0
  in (t2)
