-- An array is used after an update consumed it.
-- ==
-- error: `xs` is used after it was consumed by an in-place update \(T-USE\)
def main (n: int) (xs: *[n]int) =
  let (ys: [n]int) = xs with [0] = 1
  let (v: int) = xs[0]
  in (ys, v)
