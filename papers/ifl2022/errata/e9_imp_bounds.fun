-- Erratum 9 (errata.md): FunMemToImp turns `x[i, j]` into a read of x's
-- block at L(i, j) without a bounds check, so IMP would read [1, 0] for the
-- out-of-bounds index [0, 3] of a 2x3 array. Our translation guards the
-- read, and IMP gets stuck as FUNMEM does.
-- ==
-- input { 2 3 [[1, 2, 3], [4, 5, 6]] 1 2 }
-- output { 6i64 }
-- input { 2 3 [[1, 2, 3], [4, 5, 6]] 0 3 }
-- error: out of bounds
def main (n: int) (m: int) (xss: [n][m]int) (i: int) (j: int) =
  let (x: int) = xss[i, j]
  in (x)
