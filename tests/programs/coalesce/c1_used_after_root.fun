-- C1 alone: xs is copied into ys, then ys is updated in place and xs is
-- read after it. Built in ys's block, xs would read the update's 42.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [42i64, 3i64, 4i64] 2i64 }
-- structure { Alloc 3 copy 2 }
-- structure simplify,coalesce { Alloc 2 copy 1 }
def main (n: int) (ns: [n]int) =
  let (xs: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (ys: [n]int) = copy xs
  let (ys2: [n]int) = ys with [0] = 42
  let (x0: int) = xs[0]
  in (ys2, x0)
