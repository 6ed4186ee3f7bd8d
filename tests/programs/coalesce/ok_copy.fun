-- Copy root, applied: xs is built in ys's block and the copy goes.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [2i64, 3i64, 42i64] }
-- structure { Alloc 3 copy 2 }
-- structure simplify,coalesce { Alloc 1 copy 1 }
def main (n: int) (ns: [n]int) =
  let (xs: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (ys: [n]int) = copy xs
  let (ys2: [n]int) = ys with [2] = 42
  in (ys2)
