-- An `if` branch must return each array's size with it (T-RESULT's
-- substitution S): the then branch returns the size k but an array ys of
-- size m, so ys is not a [k]int as the pattern needs.
-- ==
-- error: if: the then branch returns `ys` of type \[m\]int for the binding `xs`, which needs type \[k\]int
def main (c: int) (k: int) (m: int) =
  let (n: int) (xs: [n]int) = if c then
      let (ys: [m]int) = iota m
      in (k, ys)
    else
      let (zs: [k]int) = iota k
      in (k, zs)
  in (n, xs)
