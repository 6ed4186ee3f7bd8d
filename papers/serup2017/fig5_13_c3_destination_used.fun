-- Fig. 5.13 (negative, C3): xs is read (zs) between the creation of ys
-- and `xs with [i] = ys`; building ys in row i of xs would make zs read ys.
-- Nothing is coalesced (the result copy's source is the parameter's block:
-- not fresh, C4).
-- ==
-- input { 2 [[1, 2], [3, 4]] [10, 20] 1 }
-- output { [[1i64, 2i64], [11i64, 21i64]] 15i64 }
-- input { 2 [[1, 2], [3, 4]] [10, 20] 0 }
-- output { [[11i64, 21i64], [3i64, 4i64]] 12i64 }
-- structure { Alloc 3 copy 1 }
-- structure simplify,coalesce { Alloc 3 copy 1 }
def main (n: int) (xs: *[n][n]int) (ys0: [n]int) (i: int) =
  let (ys: [n]int) = kernel j < n do
      let (a: int) = ys0[j] + 1
      in (a)
  let (y0: int) = ys[0]
  let (zs: [n]int) = kernel j < n do
      let (x: int) = xs[i, j]
      let (z: int) = x + y0
      in (z)
  let (xs2: [n][n]int) = xs with [i] = ys
  let (zi: int) = zs[i]
  in (xs2, zi)
