-- A kernel whose iterations each make a row (an inner kernel): not one of
-- the thesis's roots (copy, concat, update), since Futhark writes a map
-- nest's rows in place from the start; here the row's block per iteration
-- is the kernel-result root's to remove.
-- ==
-- input { 2 3 [1, 2, 3] }
-- output { [[1i64, 2i64, 3i64], [2i64, 3i64, 4i64]] }
-- input { 0 2 [4, 5] }
-- output { empty([0][2]i64) }
-- structure { Alloc 2 copy 0 }
-- structure simplify,coalesce { Alloc 1 copy 0 }
def main (n: int) (m: int) (xs: [m]int) =
  let (yss: [n][m]int) = kernel i < n do
      let (row: [m]int) = kernel j < m do
          let (v: int) = xs[j] + i
          in (v)
      in (row)
  in (yss)
