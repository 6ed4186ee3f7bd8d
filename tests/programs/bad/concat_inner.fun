-- Concatenated arrays agree in every dimension but the outer one.
-- ==
-- error: concat: `xs` and `ys` must agree in every dimension but the outer one
def main (n: int) (m: int) (xs: [n][m]int) (ys: [n][n]int) =
  let (k: int) = n + n
  let (zs: [k][m]int) = concat xs ys
  in (zs)
