-- C2 alone: ys's block has a size that may be negative (m = n - 1), so
-- hoisting does not move its allocation above the kernel that makes xs;
-- the block does not exist yet when xs is made.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [42i64, 3i64] }
-- structure { Alloc 3 copy 2 }
-- structure simplify,coalesce { Alloc 2 copy 1 }
def main (n: int) (ns: [n]int) =
  let (m: int) = n - 1
  let (xs: [m]int) = kernel i < m do
      let (a: int) = ns[i] + 1
      in (a)
  let (ys: [m]int) = copy xs
  let (ys2: [m]int) = ys with [0] = 42
  in (ys2)
