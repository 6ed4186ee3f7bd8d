-- With fewer indices than dimensions an index is the sub-array they
-- select: one index into a 2-D array is a row, not an element.
-- ==
-- error: index produces an array of type \[m\]int, but `x` is declared int
def main (n: int) (m: int) (xss: [n][m]int) =
  let (x: int) = xss[0]
  in (x)
