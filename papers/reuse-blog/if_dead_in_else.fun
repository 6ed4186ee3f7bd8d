-- Case (a), ifs: xs is read for the last time in the then branch (k) and
-- not at all in the else branch, so whichever branch runs, xs's block is
-- free once the `if` starts its else branch and after the `if`. The else
-- branch's ys and zs, made after the `if`, can both live in xs's block.
-- ==
-- input { 3 [1, 2, 3] 1 }
-- output { [6i64, 6i64, 6i64] }
-- input { 3 [1, 2, 3] 0 }
-- output { [3i64, 3i64, 3i64] }
-- input { 0 empty([0]i64) 0 }
-- output { empty([0]i64) }
-- input { 0 empty([0]i64) 1 }
-- error: (?i)out of bounds
-- structure { Alloc 3 copy 0 }
-- structure simplify,coalesce { Alloc 3 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 1 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 1 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 1 copy 0 }
def main (n: int) (xs0: [n]int) (c: int) =
  let (xs: [n]int) = kernel i < n do
      let (x: int) = xs0[i] * 2
      in (x)
  let (r: int) = if c then
      let (k: int) = xs[n - 1]
      in (k)
    else
      let (ys: [n]int) = iota n
      let (k2: int) = reduce (+) 0 ys
      in (k2)
  let (zs: [n]int) = replicate n r
  in (zs)
