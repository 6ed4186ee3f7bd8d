-- Fig. 5.24 as printed: the same as reuse_fig5_24_max_trick.fun, but
-- n1 = n + 1 is bound after xs is made. Its definition reads only the
-- parameter n, so the thesis hoists the size computation above xs's
-- allocation to apply the max trick; a pass that only looks at the names
-- in scope at that allocation cannot.
-- ==
-- input { 3 [1, 2, 3] 2 }
-- output { [4i64, 4i64, 4i64, 4i64] }
-- input { 1 [-3] 0 }
-- output { [-2i64, -2i64] }
-- input { 2 [5, 6] 2 }
-- error: (?i)out of bounds
-- structure { Alloc 2 copy 0 }
-- structure simplify,coalesce { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 2 copy 0 }
def main (n: int) (xs0: [n]int) (i: int) =
  let (xs: [n]int) = kernel j < n do
      let (a: int) = xs0[j] + 1
      in (a)
  let (k: int) = xs[i]
  let (n1: int) = n + 1
  let (ys: [n1]int) = replicate n1 k
  in (ys)
