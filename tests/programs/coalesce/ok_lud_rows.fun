-- LUD-like, per iteration: each step i makes row i from row i of dst and
-- the row above, then puts it back in row i. The kernel's reads of row i
-- come before its writes in every iteration, so the row is built in place.
-- ==
-- input { 3 [[1, 1, 1], [1, 1, 1], [1, 1, 1]] }
-- output { [[2i64, 2i64, 2i64], [4i64, 4i64, 4i64], [8i64, 8i64, 8i64]] }
-- structure { Alloc 2 copy 1 }
-- structure simplify,coalesce { Alloc 1 copy 1 }
def main (n: int) (m: *[n][n]int) =
  let (final: [n][n]int) = loop (dst: [n][n]int) = (m) for i < n do
      let (res: [n]int) = kernel j < n do
          let (x: int) = dst[i, j]
          let (p: int) = if i then
              let (k: int) = i - 1
              let (u: int) = dst[k, j]
              in (u)
            else
              let (u0: int) = 1
              in (u0)
          let (y: int) = x * p + p
          in (y)
      let (dst2: [n][n]int) = dst with [i] = res
      in (dst2)
  in (final)
