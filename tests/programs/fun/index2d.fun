-- Indexing a 2-D array with one index per dimension, 0-based. An index
-- past the end of its dimension is out of bounds even when the flat offset
-- would exist; so is a negative index.
-- ==
-- input { 2 3 [[1, 2, 3], [4, 5, 6]] 1 2 }
-- output { 6i64 1i64 }
-- input { 2 3 [[1, 2, 3], [4, 5, 6]] 0 3 }
-- error: (?i)out of bounds
-- input { 2 3 [[1, 2, 3], [4, 5, 6]] -1 0 }
-- error: (?i)out of bounds
def main (n: int) (m: int) (xss: [n][m]int) (i: int) (j: int) =
  let (x: int) = xss[i, j]
  let (y: int) = xss[0, 0]
  in (x, y)
