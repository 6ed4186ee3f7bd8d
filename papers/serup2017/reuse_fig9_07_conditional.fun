-- Fig. 9.7 (a conditional last use): if cond holds, xs's last use is
-- k = xs[i] and the then branch's zs_then could live in xs's block; if
-- not, the else branch returns xs itself, so xs is used until the end.
-- The thesis's analysis puts xs's last use at the whole `if` and misses
-- the reuse; an analysis that looks at each branch on its own finds it:
-- in the then branch xs is neither read nor returned, so it is dead there.
-- ==
-- input { 3 [1, 2, 3] 1 2 }
-- output { [4i64, 4i64, 4i64] }
-- input { 3 [1, 2, 3] 0 2 }
-- output { [2i64, 3i64, 4i64] }
-- input { 2 [7, 8] 1 -1 }
-- error: (?i)out of bounds
-- structure { Alloc 2 copy 0 }
-- structure simplify,coalesce { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 2 copy 0 }
def main (n: int) (xs0: [n]int) (cond: int) (i: int) =
  let (xs: [n]int) = kernel j < n do
      let (a: int) = xs0[j] + 1
      in (a)
  let (k: int) = xs[i]
  let (ys: [n]int) = if cond then
      let (zs_then: [n]int) = replicate n k
      in (zs_then)
    else
      in (xs)
  in (ys)
