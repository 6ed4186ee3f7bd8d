-- Update root, applied: ys is built in row i of ms (with a check of i
-- before it, since i is not known to be in bounds).
-- ==
-- input { 2 [[1, 2], [3, 4]] [10, 20] 1 }
-- output { [[1i64, 2i64], [11i64, 21i64]] }
-- input { 2 [[1, 2], [3, 4]] [10, 20] 2 }
-- error: out of bounds
-- structure { Alloc 2 copy 1 }
-- structure simplify,coalesce { Alloc 1 copy 1 }
def main (n: int) (ms: *[n][n]int) (ns: [n]int) (i: int) =
  let (ys: [n]int) = kernel j < n do
      let (a: int) = ns[j] + 1
      in (a)
  let (ms2: [n][n]int) = ms with [i] = ys
  in (ms2)
