-- Case (b), ifs: as if_dead_in_else.fun, but zs, made after the `if`,
-- reads xs (reversed). xs is live across the whole `if`, so the else
-- branch's ys cannot use its block, and neither can zs (it reads xs at
-- another index than it writes). ys's block is the else branch's own and
-- is gone after the `if`. No reuse.
-- ==
-- input { 3 [1, 2, 3] 1 }
-- output { [12i64, 10i64, 8i64] }
-- input { 3 [1, 2, 3] 0 }
-- output { [9i64, 7i64, 5i64] }
-- input { 0 empty([0]i64) 0 }
-- output { empty([0]i64) }
-- input { 0 empty([0]i64) 1 }
-- error: (?i)out of bounds
-- structure { Alloc 3 copy 0 }
-- structure simplify,coalesce { Alloc 3 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 2 copy 0 }
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
  let (zs: [n]int) = kernel i < n do
      let (z: int) = xs[n - 1 - i] + r
      in (z)
  in (zs)
