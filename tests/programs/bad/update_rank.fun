-- An update with more indices than the array has dimensions.
-- ==
-- error: update: `xs` has rank 1, but 2 indices are given
def main (n: int) (xs: *[n]int) =
  let (ys: [n]int) = xs with [0, 0] = 1
  in (ys)
