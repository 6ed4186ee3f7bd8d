-- Fig. 9.6 (the linear scan's limits): four arrays of n elements.
-- `interfering_map` (xs2) reads xs1 reversed and `interfering_map2` (xs3)
-- reads xs0 and xs2 reversed, so the same-index exception of fig. 6.6
-- removes no interference. The thesis lists xs2-xs1, xs2-xs3 and xs3-xs0
-- only, and says the linear scan keeps 3 blocks (xs1 into xs0) where 2
-- suffice (xs2 into xs0, xs3 into xs1). With lifetimes as written, xs0
-- is live from its creation to xs3's, so it interferes with xs1 and xs2
-- too: xs0, xs1, xs2 are pairwise live at once and 3 blocks are needed.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [16i64, 17i64, 18i64] }
-- input { 1 [4] }
-- output { [85i64] }
-- input { 0 empty([0]i64) }
-- error: (?i)out of bounds
-- structure { Alloc 4 copy 0 }
-- structure simplify,coalesce { Alloc 4 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 3 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 3 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 3 copy 0 }
def main (n: int) (ns: [n]int) =
  let (k0: int) = 1
  let (xs0: [n]int) = kernel i < n do
      let (a: int) = ns[i] + k0
      in (a)
  let (k1: int) = xs0[0]
  let (xs1: [n]int) = kernel i < n do
      let (b: int) = ns[i] * k1
      in (b)
  let (k2: int) = xs1[0]
  let (xs2: [n]int) = kernel i < n do
      let (c: int) = xs1[n - 1 - i] + k2
      in (c)
  let (k3: int) = xs2[0]
  let (xs3: [n]int) = kernel i < n do
      let (d: int) = xs0[n - 1 - i] + xs2[n - 1 - i] + k3
      in (d)
  in (xs3)
