-- Unique parameter reuse (ch. 5, no figure number): xs is unique (`*`),
-- so the caller never reads it again and its block may be reused. ys is
-- made by a map over xs that reads element i and writes element i (the
-- same-index exception of fig. 6.6), so ys can be built in xs's block and
-- the program allocates nothing. Our lowering gives ys a fresh block and
-- does not copy the result (`funmem lower --to funmem` shows it).
-- ==
-- input { 3 [1, 2, 3] }
-- output { [2i64, 3i64, 4i64] }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) }
-- input { 2 [-1, 9] }
-- output { [0i64, 10i64] }
-- structure { Alloc 1 copy 0 }
-- structure simplify,coalesce { Alloc 1 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 0 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 0 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 0 copy 0 }
def main (n: int) (xs: *[n]int) =
  let (ys: [n]int) = kernel i < n do
      let (y: int) = xs[i] + 1
      in (y)
  in (ys)
