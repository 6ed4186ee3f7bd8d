-- i32 arithmetic wraps at 32 bits, and conversions between integer widths
-- wrap (to i32) or sign-extend (to i64).
-- ==
-- input { 2147483647i32 3i32 }
-- output { -2147483648i32 2147483645i32 715827882i32 1i32 -1i32 4294967295i64 2147483647i64 }
def main (a: i32) (b: i32) =
  let (s: i32) = a + 1
  let (p: i32) = a * b
  let (q: i32) = a / b
  let (r: i32) = a % b
  let (big: int) = 4294967295
  let (w: i32) = i32(big)
  let (e: int) = big
  let (x: int) = i64(a)
  in (s, p, q, r, w, e, x)
