-- Indexing needs one index per dimension: a 2-D array with one index.
-- ==
-- error: index: `xss` has rank 2, but the number of indices given is 1
def main (n: int) (m: int) (xss: [n][m]int) =
  let (x: int) = xss[0]
  in (x)
