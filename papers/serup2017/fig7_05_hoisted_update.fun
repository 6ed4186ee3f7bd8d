-- Fig. 7.5: fig. 7.3 with t1 made before t0 (what the thesis's hoisting
-- gives): t0 is built in row i of t1's block, with no other write of that
-- block in between.
-- ==
-- input { 2 0 [1, 2] }
-- output { [[2i64, 3i64], [0i64, 1i64]] }
-- input { 3 2 [1, 2, 3] }
-- output { [[0i64, 1i64, 2i64], [0i64, 1i64, 2i64], [2i64, 3i64, 4i64]] }
-- structure { Alloc 4 copy 1 }
-- structure simplify,coalesce { Alloc 2 copy 0 }
def main (n: int) (i: int) (ns: [n]int) =
  let (r: [n]int) = iota n
  let (t1: [n][n]int) = replicate n r
  let (t0: [n]int) = kernel j < n do
      let (a: int) = ns[j] + 1
      in (a)
  let (t2: [n][n]int) = t1 with [i] = t0
  in (t2)
