-- Reductions fold one-dimensional arrays; reduce each row in a kernel.
-- ==
-- error: reduce: `xss` must be a one-dimensional array, but it has rank 2
def main (n: int) (xss: [n][n]int) =
  let (s: int) = reduce (+) 0 xss
  in (s)
