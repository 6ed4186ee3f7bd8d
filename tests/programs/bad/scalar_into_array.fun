-- A scalar expression produces a scalar, not an array.
-- ==
-- error: scalar expression produces int, but `ys` is declared \[n\]int
def main (n: int) =
  let (ys: [n]int) = n + 1
  in (ys)
