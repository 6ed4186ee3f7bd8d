-- A slice needs one offset:size pair per dimension.
-- ==
-- error: slice: `xss` has rank 2, but 1 offset:size pairs are given
def main (n: int) (m: int) (xss: [n][m]int) (k: int) =
  let (yss: [k][m]int) = xss[0:k]
  in (yss)
