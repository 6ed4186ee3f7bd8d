-- `(&&)` applies to bools (and integers), not to floats.
-- ==
-- error: reduce: `\(&&\)` does not apply to f32
def main (n: int) (xs: [n]f32) =
  let (s: f32) = reduce (&&) 0 xs
  in (s)
