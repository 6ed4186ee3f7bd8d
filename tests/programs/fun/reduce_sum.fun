-- Reductions with the built-in operators on several element types: the
-- neutral element's literal takes the array's element type.
-- ==
-- input { 5 [3, -1, 4, 1, -5] [0.5f32, 1.25f32, -2.0f32, 4.0f32, 0.25f32] }
-- output { 2i64 60i64 -5i64 4i64 4.0f32 4.0f32 -2.0f32 }
-- input { 0 empty([0]i64) empty([0]f32) }
-- output { 0i64 1i64 9223372036854775807i64 -9223372036854775808i64 0.0f32 -f32.inf f32.inf }
def main (n: int) (xs: [n]int) (fs: [n]f32) =
  let (s: int) = reduce (+) 0 xs
  let (p: int) = reduce (*) 1 xs
  let (lo: int) = reduce (min) 9223372036854775807 xs
  let (hi: int) = reduce (max) (-9223372036854775807 - 1) xs
  let (fsum: f32) = reduce (+) 0 fs
  let (fhi: f32) = reduce (max) (-1.0 / 0.0) fs
  let (flo: f32) = reduce (min) (1.0 / 0.0) fs
  in (s, p, lo, hi, fsum, fhi, flo)
