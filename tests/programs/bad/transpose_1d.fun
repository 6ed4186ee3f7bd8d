-- Only 2-D arrays can be transposed.
-- ==
-- error: transpose: `xs` must have rank 2, but it has rank 1
def main (n: int) (xs: [n]int) =
  let (ys: [n]int) = transpose xs
  in (ys)
