-- A slice needs one offset:size pair per dimension.
-- ==
-- error: slice: `xss` has rank 2, but the number of offset:size pairs given is 1
def main (n: int) (m: int) (xss: [n][m]int) (k: int) =
  let (yss: [k][m]int) = xss[0:k]
  in (yss)
