-- The kernel rule: ys's iteration i reads xs[n - 1 - i], another
-- iteration's cell of xs, so xs's block is alive during all of the kernel
-- and ys, the kernel's result, may not take it (the exception cannot
-- separate them either: iteration n - 1 - i writes the cell iteration i
-- reads). Without the rule xs's block dies at the read, ys is built over
-- it, and iterations overwrite cells others still read (a race).
-- ==
-- input { 3 [1, 2, 3] }
-- output { [40i64, 30i64, 20i64] }
-- input { 4 [0, 1, 2, 3] }
-- output { [40i64, 30i64, 20i64, 10i64] }
-- structure { Alloc 2 }
-- structure simplify,reuse { Alloc 2 }
def main (n: int) (ns: [n]int) =
  let (xs: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (ys: [n]int) = kernel i < n do
      let (y: int) = xs[n - 1 - i] * 10
      in (y)
  in (ys)
