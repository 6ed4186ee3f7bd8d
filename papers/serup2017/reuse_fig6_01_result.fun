-- Fig. 6.1 (a last use in the body's result): dst0 is read by k and then
-- returned, so its last use is the result, not k. dst1 must not reuse
-- dst0's block: both are results. Two blocks stay.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [2i64, 3i64, 4i64] [2i64, 4i64, 6i64] }
-- input { 2 [-1, 5] }
-- output { [0i64, 6i64] [0i64, 0i64] }
-- input { 0 empty([0]i64) }
-- error: (?i)out of bounds
-- structure { Alloc 2 copy 0 }
-- structure simplify,coalesce { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 2 copy 0 }
def main (n: int) (src: [n]int) =
  let (dst0: [n]int) = kernel i < n do
      let (a: int) = src[i] + 1
      in (a)
  let (k: int) = dst0[0]
  let (dst1: [n]int) = kernel i < n do
      let (b: int) = src[i] * k
      in (b)
  in (dst0, dst1)
