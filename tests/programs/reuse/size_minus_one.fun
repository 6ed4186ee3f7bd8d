-- The size check's other half: ys has n - 1 elements, which fits xs's
-- block whenever the program runs, but n may be 0, where ys's allocation
-- (-1 elements) goes wrong; the pass cannot prove `0 <= n - 1` and keeps
-- the allocation, so that an error stays an error.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [6i64, 7i64] }
-- input { 0 empty([0]i64) }
-- error: negative
-- structure { Alloc 1 }
-- structure simplify,reuse { Alloc 1 }
def main (n: int) (xs: *[n]int) =
  let (s: int) = reduce (+) 0 xs
  let (m: int) = n - 1
  let (ys: [m]int) = kernel i < m do
      let (y: int) = s + i
      in (y)
  in (ys)
