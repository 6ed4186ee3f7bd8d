-- Case (c), loops: t is made before the loop and read in every
-- iteration, so it interferes with every array of the body. In one
-- iteration, u is read for the last time (s = u[0]) before y is made, so
-- y can use u's block; v, the iteration's result, is made after y's last
-- use (s2). w is dead before the loop starts (its last use is h), so an
-- array of the body may use w's block, but not one that is the body's
-- result: that is acc in the next iteration, and the next u, written into
-- w's block, reads acc at another index.
-- ==
-- input { 3 [1, 2, 3] 2 }
-- output { [145i64, 144i64, 143i64] }
-- input { 3 [1, 2, 3] 0 }
-- output { [1i64, 2i64, 3i64] }
-- input { 1 [5] 3 }
-- output { [3531i64] }
-- input { 0 empty([0]i64) 1 }
-- error: (?i)out of bounds
-- structure { Alloc 6 copy 1 }
-- structure simplify,coalesce { Alloc 6 copy 1 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 3 copy 1 }
-- structure simplify,coalesce,reuse { Alloc 3 copy 1 }
-- structure simplify,coalesce,reuse-optimal { Alloc 3 copy 1 }
def main (n: int) (xs0: [n]int) (k: int) =
  let (t: [n]int) = kernel i < n do
      let (a: int) = xs0[i] + 1
      in (a)
  let (w: [n]int) = kernel i < n do
      let (b: int) = xs0[i] * 3
      in (b)
  let (h: int) = w[n - 1]
  let (res: [n]int) = loop (acc: [n]int) = (xs0) for j < k do
      let (u: [n]int) = kernel i < n do
          let (c: int) = acc[n - 1 - i] + t[i]
          in (c)
      let (s: int) = u[0]
      let (y: [n]int) = kernel i < n do
          let (e: int) = t[n - 1 - i] * s
          in (e)
      let (s2: int) = y[0]
      let (v: [n]int) = kernel i < n do
          let (d: int) = t[n - 1 - i] + s2 + h
          in (d)
      in (v)
  in (res)
