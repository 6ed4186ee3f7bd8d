-- The loop rule: xs is made before the loop and read in every iteration,
-- so its block is alive during the whole loop, and ys, made in each
-- iteration, may not take it. Without the rule xs's block dies at its
-- read in the first iteration, ys is built over it, and the second
-- iteration reads the first one's ys.
-- ==
-- input { 3 [1, 2, 3] }
-- output { 27i64 }
-- input { 2 [5, -1] }
-- output { 18i64 }
-- structure { Alloc 2 }
-- structure simplify,reuse { Alloc 2 }
def main (n: int) (ns: [n]int) =
  let (xs: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (s: int) = loop (acc: int) = (0) for k < 3 do
      let (ys: [n]int) = kernel i < n do
          let (y: int) = xs[i] * k
          in (y)
      let (t: int) = reduce (+) 0 ys
      let (acc2: int) = acc + t
      in (acc2)
  in (s)
