-- 64-bit two's complement arithmetic wraps: max + 1 is min, -min is min,
-- and products wrap modulo 2^64.
-- ==
-- input { 9223372036854775807 }
-- output { -9223372036854775808i64 9223372036854775807i64 -2i64 -9223372036854775808i64 -9223372036854775808i64 9223372036854775807i64 -9223372036709301616i64 }
-- input { 0 }
-- output { 1i64 0i64 0i64 -1i64 -9223372036854775808i64 9223372036854775807i64 -9223372036709301616i64 }
def main (a: int) =
  let (b: int) = a + 1
  let (c: int) = b - 1
  let (d: int) = a * 2
  let (e: int) = -b
  let (f: int) = 9223372036854775807 + 1
  let (g: int) = -9223372036854775807 - 2
  let (h: int) = 3037000500 * 3037000500
  in (b, c, d, e, f, g, h)
