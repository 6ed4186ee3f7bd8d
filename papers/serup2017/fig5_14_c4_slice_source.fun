-- Fig. 5.14 (negative, C4): ys is a row of zs, not a fresh array; it
-- cannot live both in zs's block and in xs's. The update copies it. (The
-- kernel nest's rows are built in place, as a map nest is in Futhark.)
-- ==
-- input { 2 [[1, 2], [3, 4]] [[1, 2], [3, 4]] 0 1 }
-- output { [[1i64, 2i64], [3i64, 6i64]] }
-- input { 2 [[1, 2], [3, 4]] [[1, 2], [3, 4]] 1 0 }
-- output { [[9i64, 12i64], [3i64, 4i64]] }
-- structure { Alloc 3 copy 1 }
-- structure simplify,coalesce { Alloc 2 copy 1 }
def main (n: int) (xs: *[n][n]int) (zs0: [n][n]int) (i: int) (j: int) =
  let (zs: [n][n]int) = kernel a < n do
      let (row: [n]int) = kernel b < n do
          let (z: int) = zs0[a, b]
          let (z3: int) = z * 3
          in (z3)
      in (row)
  let (ys: [n]int) = zs[i]
  let (xs2: [n][n]int) = xs with [j] = ys
  in (xs2)
