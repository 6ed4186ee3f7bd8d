-- The interference exception, applied (the thesis's fig. 6.6): ys's
-- iteration i reads xs[i] and then writes ys[i], and no other iteration
-- touches cell i, so ys is built in xs's block although both are alive
-- during ys's kernel (one obligation, proved).
-- ==
-- input { 3 [1, 2, 3] }
-- output { [4i64, 6i64, 8i64] }
-- input { 2 [-5, 0] }
-- output { [-8i64, 2i64] }
-- structure { Alloc 2 }
-- structure simplify,reuse { Alloc 1 }
def main (n: int) (ns: [n]int) =
  let (xs: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (ys: [n]int) = kernel i < n do
      let (y: int) = xs[i] * 2
      in (y)
  in (ys)
