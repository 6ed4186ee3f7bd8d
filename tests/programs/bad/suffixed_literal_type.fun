-- A literal with a suffix keeps its type: 0.5f64 is not an f32.
-- ==
-- error: needs two operands of one type, but `x` is f32 and `0.5f64` is f64
def main (x: f32) =
  let (y: f32) = x * 0.5f64
  in (y)
