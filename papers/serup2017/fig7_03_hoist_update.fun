-- Fig. 7.3 (7.4, 7.5): `t1 with [i] = t0` with t1 made after t0. Hoisting
-- t1's allocation alone is wrong (fig. 7.4: t1's creation would overwrite
-- t0 in row i; C3 must refuse it); the thesis hoists t1's creation too
-- (fig. 7.5) and then coalesces. Our `r` (iota row) is a block of its own.
-- ==
-- input { 2 0 [1, 2] }
-- output { [[2i64, 3i64], [0i64, 1i64]] }
-- input { 3 2 [1, 2, 3] }
-- output { [[0i64, 1i64, 2i64], [0i64, 1i64, 2i64], [2i64, 3i64, 4i64]] }
-- structure { Alloc 4 copy 1 }
-- structure simplify,coalesce { Alloc 3 copy 0 }
def main (n: int) (i: int) (ns: [n]int) =
  let (t0: [n]int) = kernel j < n do
      let (a: int) = ns[j] + 1
      in (a)
  let (r: [n]int) = iota n
  let (t1: [n][n]int) = replicate n r
  let (t2: [n][n]int) = t1 with [i] = t0
  in (t2)
