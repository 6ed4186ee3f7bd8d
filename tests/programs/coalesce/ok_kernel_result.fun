-- Kernel-result root, applied: each iteration's row is built in its row
-- of yss instead of a block of its own.
-- ==
-- input { 2 3 [1, 2, 3] }
-- output { [[1i64, 2i64, 3i64], [11i64, 12i64, 13i64]] }
-- structure { Alloc 2 copy 0 }
-- structure simplify,coalesce { Alloc 1 copy 0 }
def main (n: int) (m: int) (xs: [m]int) =
  let (yss: [n][m]int) = kernel i < n do
      let (row: [m]int) = kernel j < m do
          let (v: int) = xs[j] + i * 10
          in (v)
      in (row)
  in (yss)
