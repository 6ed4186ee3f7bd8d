-- A slice's shape is its sizes: xs[0:k] is a [k] array, not an [n] one.
-- ==
-- error: slice produces an array of type \[k\]int, but `ys` is declared \[n\]int
def main (n: int) (xs: [n]int) (k: int) =
  let (ys: [n]int) = xs[0:k]
  in (ys)
