-- Conversions: float to integer truncates toward zero and saturates (NaN
-- gives 0); integer to float rounds to nearest; bool to a number is 0 or 1
-- and a number to bool is "not zero". Literals take the type their context
-- asks for.
-- ==
-- input { -2.75f32 3000000000.0f32 }
-- output { -2i32 2147483647i32 0i32 -3.0f32 1i64 0i64 true false 7.0f64 16777216.0f32 }
def main (x: f32) (big: f32) =
  let (a: i32) = i32(x)
  let (b: i32) = i32(big)
  let (nan: f32) = 0.0 / 0.0
  let (c: i32) = i32(nan)
  let (d: f32) = floor(x)
  let (e: int) = x < 0
  let (f: int) = i64(big < 0)
  let (g: bool) = bool(x)
  let (h: bool) = bool(0)
  let (k: f64) = f64(7)
  let (m: f32) = f32(16777217)
  in (a, b, c, d, e, f, g, h, k, m)
