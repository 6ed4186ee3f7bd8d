-- An update of a row needs an array of the row's shape.
-- ==
-- error: update: the indices leave a sub-array of shape \[m\], so the new value must be an array of that shape, not an integer
def main (n: int) (m: int) (xss: *[n][m]int) =
  let (yss: [n][m]int) = xss with [0] = 1
  in (yss)
