-- Only unique parameters can be updated in place.
-- ==
-- error: the update of `xs` consumes the parameter `xs`, which is not unique \(T-CONSUME\)
def main (n: int) (xs: [n]int) =
  let (ys: [n]int) = xs with [0] = 1
  in (ys)
