-- A scalar expression produces an int, not an array.
-- ==
-- error: scalar expression produces an int, but `ys` is declared \[n\]int
def main (n: int) =
  let (ys: [n]int) = n + 1
  in (ys)
