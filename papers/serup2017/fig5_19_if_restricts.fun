-- Fig. 5.19 (negative, if): y is y0 (made in the then branch) or b (made
-- before the if). Coalescing y into row 0 of x would put y0 and b in one
-- place, but the then branch reads b after making y0. No coalescing.
-- ==
-- input { 2 1 [[1, 2], [3, 4]] [5, 6] }
-- output { [[6i64, 7i64], [3i64, 4i64]] 6i64 }
-- input { 2 0 [[1, 2], [3, 4]] [5, 6] }
-- output { [[6i64, 7i64], [3i64, 4i64]] 0i64 }
-- structure { Alloc 3 copy 1 }
-- structure simplify,coalesce { Alloc 3 copy 1 }
def main (n: int) (cond: int) (x: *[n][n]int) (a: [n]int) =
  let (b: [n]int) = kernel j < n do
      let (v: int) = a[j] + 1
      in (v)
  let (y: [n]int) (r: int) = if cond then
      let (y0: [n]int) = kernel j < n do
          let (w: int) = a[j] + 1
          in (w)
      let (b0: int) = b[0]
      in (y0, b0)
    else
      let (zero: int) = 0
      in (b, zero)
  let (x2: [n][n]int) = x with [0] = y
  in (x2, r)
