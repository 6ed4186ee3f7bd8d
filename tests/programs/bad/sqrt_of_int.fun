-- The float functions take floats: convert an integer first.
-- ==
-- error: `sqrt` takes a float \(f32 or f64\), but `n` is i64
def main (n: int) =
  let (r: f64) = sqrt(n)
  in (r)
