-- Fig. 5.21 (if): both branches make their result inside; only one
-- exists at a time, so both are built in row i of xs (a unique parameter):
-- the thesis ends with no allocation. Ours keeps the copy of the result,
-- which lives in the parameter's block, to a fresh block.
-- ==
-- input { 3 [[0, 0, 0], [0, 0, 0], [0, 0, 0]] 1 2 }
-- output { [[0i64, 0i64, 0i64], [0i64, 0i64, 0i64], [0i64, 1i64, 2i64]] }
-- input { 3 [[0, 0, 0], [0, 0, 0], [0, 0, 0]] 0 0 }
-- output { [[1i64, 2i64, 3i64], [0i64, 0i64, 0i64], [0i64, 0i64, 0i64]] }
-- structure { Alloc 3 copy 1 }
-- structure simplify,coalesce { Alloc 1 copy 1 }
def main (n: int) (xs: *[n][n]int) (cond: int) (i: int) =
  let (ys: [n]int) = if cond then
      let (ys0: [n]int) = iota n
      in (ys0)
    else
      let (ys1: [n]int) = kernel j < n do
          let (v: int) = j + 1
          in (v)
      in (ys1)
  let (xs2: [n][n]int) = xs with [i] = ys
  in (xs2)
