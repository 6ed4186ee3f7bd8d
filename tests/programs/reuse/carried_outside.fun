-- Carried blocks and the loop's scope: each iteration makes b in a block
-- of its own and returns it, and the next iteration reads it back to front
-- as a. z's block is dead before the loop, yet b may not take it: one
-- block for every iteration's b would be overwritten while the next
-- iteration still reads the previous b.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [27i64, 28i64, 29i64] }
-- input { 2 [5, 7] }
-- output { [55i64, 57i64] }
-- structure simplify,reuse { Alloc 3 }
def main (n: int) (ns: [n]int) =
  let (xs: [n]int) = kernel i < n do
      let (v: int) = ns[i] + 1
      in (v)
  let (z: [n]int) = kernel i < n do
      let (v: int) = ns[i] * 2
      in (v)
  let (zs: int) = reduce (+) 0 z
  let (r: [n]int) = loop (a: [n]int) = (xs) for k < 2 do
      let (b: [n]int) = kernel i < n do
          let (j: int) = n - 1 - i
          let (w: int) = a[j] + k + zs
          in (w)
      in (b)
  in (r)
