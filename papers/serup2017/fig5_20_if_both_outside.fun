-- Fig. 5.20 (negative, if): both branches return arrays made before the
-- if; both would have to live in row i of xs at once, the second
-- overwriting the first. Never coalesced (the if rule: some branch must
-- make its result inside).
-- ==
-- input { 3 [[0, 0, 0], [0, 0, 0], [0, 0, 0]] 1 2 }
-- output { [[0i64, 0i64, 0i64], [0i64, 0i64, 0i64], [0i64, 1i64, 2i64]] }
-- input { 3 [[0, 0, 0], [0, 0, 0], [0, 0, 0]] 0 0 }
-- output { [[1i64, 2i64, 3i64], [0i64, 0i64, 0i64], [0i64, 0i64, 0i64]] }
-- structure { Alloc 3 copy 1 }
-- structure simplify,coalesce { Alloc 3 copy 1 }
def main (n: int) (xs: *[n][n]int) (cond: int) (i: int) =
  let (ys0: [n]int) = iota n
  let (ys1: [n]int) = kernel j < n do
      let (v: int) = j + 1
      in (v)
  let (ys: [n]int) = if cond then
      in (ys0)
    else
      in (ys1)
  let (xs2: [n][n]int) = xs with [i] = ys
  in (xs2)
