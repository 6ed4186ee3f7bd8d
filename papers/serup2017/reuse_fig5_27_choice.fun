-- Fig. 5.27 (a choice between two reuses): xs and ys are both read for
-- the last time in k's definition; zs, of the same size, may live in
-- either block. The thesis takes the first it finds (xs's); either way
-- two of the three blocks are left.
-- ==
-- input { 3 [1, 2, 3] [4, 5, 6] 1 }
-- output { [19i64, 19i64, 19i64] }
-- input { 2 [0, -1] [2, 2] 0 }
-- output { [6i64, 6i64] }
-- input { 2 [0, -1] [2, 2] 5 }
-- error: (?i)out of bounds
-- structure { Alloc 3 copy 0 }
-- structure simplify,coalesce { Alloc 3 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 2 copy 0 }
def main (n: int) (xs0: [n]int) (ys0: [n]int) (i: int) =
  let (xs: [n]int) = kernel j < n do
      let (a: int) = xs0[j] * 2
      in (a)
  let (ys: [n]int) = kernel j < n do
      let (b: int) = ys0[j] * 3
      in (b)
  let (k: int) = xs[i] + ys[i]
  let (zs: [n]int) = replicate n k
  in (zs)
