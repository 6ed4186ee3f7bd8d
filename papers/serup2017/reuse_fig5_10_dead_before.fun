-- Fig. 5.10, 5.11 (reuse): xs is read for the last time (k = xs[i])
-- before ys is made, and both have n elements: ys can live in xs's block,
-- and ys's own allocation goes.
-- ==
-- input { 3 [1, 2, 3] 1 }
-- output { [3i64, 3i64, 3i64] }
-- input { 4 [10, -1, 7, 0] 3 }
-- output { [1i64, 1i64, 1i64, 1i64] }
-- input { 2 [5, 6] 2 }
-- error: (?i)out of bounds
-- structure { Alloc 2 copy 0 }
-- structure simplify,coalesce { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 1 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 1 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 1 copy 0 }
def main (n: int) (xs0: [n]int) (i: int) =
  let (xs: [n]int) = kernel j < n do
      let (a: int) = xs0[j] + 1
      in (a)
  let (k: int) = xs[i]
  let (ys: [n]int) = replicate n k
  in (ys)
