-- An array size must be an int, not an array.
-- ==
-- error: array size `xs` must have type int
def main (n: int) (xs: [n]int) (ys: [xs]int) =
  in (ys)
