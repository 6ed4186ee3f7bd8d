-- An update of a row needs an array of the row's shape.
-- ==
-- error: update: the new value must be \[m\]int, but `1` is i64
def main (n: int) (m: int) (xss: *[n][m]int) =
  let (yss: [n][m]int) = xss with [0] = 1
  in (yss)
