-- `iota n` is [0, ..., n-1]; `copy xs` is a fresh array equal to xs; a
-- literal size in a type (`[4]int`).
-- ==
-- input { 3 [5, 6, 7] }
-- output { [0i64, 1i64, 2i64] [5i64, 6i64, 7i64] [0i64, 1i64, 2i64, 3i64] }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) empty([0]i64) [0i64, 1i64, 2i64, 3i64] }
def main (n: int) (xs: [n]int) =
  let (ix: [n]int) = iota n
  let (ys: [n]int) = copy xs
  let (four: [4]int) = iota 4
  in (ix, ys, four)
