-- Fig. 5.22 (if): ys0 is made before the if, ys1 inside the else branch,
-- which does not use ys0: both are built in row i of xs. As in fig. 5.21
-- the result copy stays.
-- ==
-- input { 3 [[0, 0, 0], [0, 0, 0], [0, 0, 0]] 1 2 }
-- output { [[0i64, 0i64, 0i64], [0i64, 0i64, 0i64], [0i64, 1i64, 2i64]] }
-- input { 3 [[0, 0, 0], [0, 0, 0], [0, 0, 0]] 0 0 }
-- output { [[1i64, 2i64, 3i64], [0i64, 0i64, 0i64], [0i64, 0i64, 0i64]] }
-- structure { Alloc 3 copy 1 }
-- structure simplify,coalesce { Alloc 1 copy 1 }
def main (n: int) (xs: *[n][n]int) (cond: int) (i: int) =
  let (ys0: [n]int) = iota n
  let (ys: [n]int) = if cond then
      in (ys0)
    else
      let (ys1: [n]int) = kernel j < n do
          let (v: int) = j + 1
          in (v)
      in (ys1)
  let (xs2: [n][n]int) = xs with [i] = ys
  in (xs2)
