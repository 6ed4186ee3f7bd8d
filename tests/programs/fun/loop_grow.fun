-- An array loop parameter whose size changes every iteration: the size is
-- a loop parameter too, and `concat` doubles the array.
-- ==
-- input { 2 [1, 2] 2 }
-- output { 8i64 [1i64, 2i64, 1i64, 2i64, 1i64, 2i64, 1i64, 2i64] }
-- input { 2 [1, 2] 0 }
-- output { 2i64 [1i64, 2i64] }
-- structure { loop 1 concat 1 }
def main (n: int) (xs: [n]int) (t: int) =
  let (k: int) (r: [k]int) = loop (m: int) (a: [m]int) = (n, xs) for i < t do
      let (m2: int) = m + m
      let (b: [m2]int) = concat a a
      in (m2, b)
  in (k, r)
