-- Body results are uses (the thesis's fig. 6.1): xs and ys are both
-- returned, so both blocks are alive at the program's result and ys may
-- not take xs's block. Without the rule xs's block dies when xs is made,
-- ys is built over it, and the program returns ys twice.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [2i64, 3i64, 4i64] [10i64, 20i64, 30i64] }
-- input { 1 [7] }
-- output { [8i64] [70i64] }
-- structure { Alloc 2 }
-- structure simplify,reuse { Alloc 2 }
def main (n: int) (ns: [n]int) =
  let (xs: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (ys: [n]int) = kernel i < n do
      let (y: int) = ns[i] * 10
      in (y)
  in (xs, ys)
