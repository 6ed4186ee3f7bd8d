-- The size check: xs is a unique parameter, dead once summed, so ys may
-- take its block only if it fits. ys has n + 1 elements, one more than
-- the caller's block holds: the obligation `(n + 1) * 8 <= n * 8` is
-- refuted and ys keeps its own block. Without the check ys is built in
-- xs's block and its last element is written past the block's end.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [6i64, 7i64, 8i64, 9i64] }
-- input { 0 empty([0]i64) }
-- output { [0i64] }
-- structure { Alloc 1 }
-- structure simplify,reuse { Alloc 1 }
def main (n: int) (xs: *[n]int) =
  let (s: int) = reduce (+) 0 xs
  let (m: int) = n + 1
  let (ys: [m]int) = kernel i < m do
      let (y: int) = s + i
      in (y)
  in (ys)
