-- Indices are i64: a float cannot index an array.
-- ==
-- error: index must be an int \(i64\), but `1.0f32` is f32
def main (n: int) (xs: [n]int) =
  let (y: int) = xs[1.0f32]
  in (y)
