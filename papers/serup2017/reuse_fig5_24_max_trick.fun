-- Fig. 5.24, 5.25 (the max trick): ys has n + 1 elements, one more than
-- xs, so it does not fit in xs's block as allocated. n1 = n + 1 is
-- computed before xs's block is allocated (fig. 5.25's order), so that
-- block can be allocated with max(n, n1) elements and ys can live in it.
-- ==
-- input { 3 [1, 2, 3] 2 }
-- output { [4i64, 4i64, 4i64, 4i64] }
-- input { 1 [-3] 0 }
-- output { [-2i64, -2i64] }
-- input { 2 [5, 6] -1 }
-- error: (?i)out of bounds
-- structure { Alloc 2 copy 0 }
-- structure simplify,coalesce { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 1 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 1 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 1 copy 0 }
def main (n: int) (xs0: [n]int) (i: int) =
  let (n1: int) = n + 1
  let (xs: [n]int) = kernel j < n do
      let (a: int) = xs0[j] + 1
      in (a)
  let (k: int) = xs[i]
  let (ys: [n1]int) = replicate n1 k
  in (ys)
