-- Fig. 6.4 (several live intervals in a loop): xs0 is a copy of ns and
-- the loop's initial value. In an iteration, xs (xs0's block in the first
-- one) is last read by ys; ts1, the iteration's result, reads only ns.
-- The thesis argues xs0's block is free between ys and ts1, so ts0 can
-- live in it (one block fewer); a conservative analysis keeps xs0's block
-- live through the whole loop.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [54i64, 55i64, 56i64] }
-- input { 1 [5] }
-- output { [22i64] }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) }
-- structure { Alloc 5 copy 2 }
-- structure simplify,coalesce { Alloc 3 copy 1 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 3 copy 1 }
-- structure simplify,coalesce,reuse { Alloc 3 copy 1 }
-- structure simplify,coalesce,reuse-optimal { Alloc 3 copy 1 }
def main (n: int) (ns: [n]int) =
  let (xs0: [n]int) = copy ns
  let (loop_result: [n]int) = loop (xs: [n]int) = (xs0) for i < n do
      let (ys: [n]int) = kernel j < n do
          let (a: int) = xs[j] + 1
          in (a)
      let (k: int) = ys[i]
      let (ts0: [n]int) = kernel j < n do
          let (b: int) = ns[j] + k
          in (b)
      let (k0: int) = ys[n - i - 1] + ts0[i]
      let (ts1: [n]int) = kernel j < n do
          let (c: int) = ns[j] + k0
          in (c)
      in (ts1)
  in (loop_result)
