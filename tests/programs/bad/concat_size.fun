-- The size of a concatenation is the sum of its operands' sizes.
-- ==
-- error: concat: the result's outer size `n` must be `n \+ m`
def main (n: int) (m: int) (xs: [n]int) (ys: [m]int) =
  let (zs: [n]int) = concat xs ys
  in (zs)
