-- A partial index gives the sub-array: a row of a [n][m]f32 is a [m]f32.
-- ==
-- error: index produces an array of type \[m\]f32, but `r` is declared \[n\]f32
def main (n: int) (m: int) (xss: [n][m]f32) =
  let (r: [n]f32) = xss[0]
  in (r)
