-- Fig. 5.9: a chain of all three roots. t2 goes into row 1 of t3's
-- block, t1 into t2's second half (via t2), t0 into the same place (via t1
-- and t2): only t3's block is left (here: the result's, which t3's chain
-- joins, and our scalar row `zero`). ns is a parameter and is copied.
-- ==
-- input { 2 [5, 6] }
-- output { [[0i64, 0i64, 0i64, 0i64], [5i64, 6i64, 6i64, 7i64]] }
-- input { 1 [3] }
-- output { [[0i64, 0i64], [3i64, 4i64]] }
-- structure { Alloc 6 copy 2 }
-- structure simplify,coalesce { Alloc 3 copy 0 }
def main (n: int) (ns: [n]int) =
  let (t0: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (t1: [n]int) = copy t0
  let (n2: int) = n * 2
  let (t2: [n2]int) = concat ns t1
  let (zero: [n2]int) = replicate n2 0
  let (t3: [2][n2]int) = replicate 2 zero
  let (t4: [2][n2]int) = t3 with [1] = t2
  in (t4)
