-- Fig. 6.6, 6.7 (an interference exception): ys is a map over xs whose
-- iteration i reads xs[i] and then writes ys[i]. xs's last use is ys's
-- own statement, so their lifetimes touch, but no iteration reads an
-- element another one has overwritten: ys can live in xs's block.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [4i64, 5i64, 6i64] }
-- input { 2 [-1, 4] }
-- output { [0i64, 5i64] }
-- input { 0 empty([0]i64) }
-- error: (?i)out of bounds
-- structure { Alloc 2 copy 0 }
-- structure simplify,coalesce { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 1 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 1 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 1 copy 0 }
def main (n: int) (ns: [n]int) =
  let (xs: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (k0: int) = xs[0]
  let (ys: [n]int) = kernel i < n do
      let (b: int) = xs[i] + k0
      in (b)
  in (ys)
