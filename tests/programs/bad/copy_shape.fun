-- `copy xs` has xs's shape; the pattern declares a 2-D array.
-- ==
-- error: copy produces an array of type \[n\]int, but `ys` is declared \[n\]\[n\]int
def main (n: int) (xs: [n]int) =
  let (ys: [n][n]int) = copy xs
  in (ys)
