-- Fig. 5.23 (reuse, a smaller array): ys has n - 1 elements, one fewer
-- than xs, whose last use is before ys is made. ys fits in xs's block; the
-- thesis makes the sizes agree by allocating max(n, n - 1) for xs (the max
-- trick), which needs n1's definition (n - 1, from the parameter n) where
-- xs's block is allocated. n1 is bound after that point, as in the thesis.
-- ==
-- input { 3 [1, 2, 3] 0 }
-- output { [2i64, 2i64] }
-- input { 4 [7, 8, 9, 10] 3 }
-- output { [11i64, 11i64, 11i64] }
-- input { 3 [1, 2, 3] 3 }
-- error: (?i)out of bounds
-- structure { Alloc 2 copy 0 }
-- structure simplify,coalesce { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 2 copy 0 }
def main (n: int) (xs0: [n]int) (i: int) =
  let (xs: [n]int) = kernel j < n do
      let (a: int) = xs0[j] + 1
      in (a)
  let (k: int) = xs[i]
  let (n1: int) = n - 1
  let (ys: [n1]int) = replicate n1 k
  in (ys)
