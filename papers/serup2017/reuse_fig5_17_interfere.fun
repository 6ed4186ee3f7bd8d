-- Fig. 5.17 (reuse refused): a and b are both made before either is read
-- for the last time (a_end, b_end), so their lifetimes overlap: b cannot
-- live in a's block (a_end would read b's values). Two blocks stay.
-- ==
-- input { 3 [1, 2, 3] }
-- output { 13i64 }
-- input { 1 [-4] }
-- output { 3i64 }
-- input { 0 empty([0]i64) }
-- error: (?i)out of bounds
-- structure { Alloc 2 copy 0 }
-- structure simplify,coalesce { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 2 copy 0 }
def main (n: int) (xs: [n]int) =
  let (a: [n]int) = kernel i < n do
      let (x: int) = xs[i] + 1
      in (x)
  let (b: [n]int) = kernel i < n do
      let (y: int) = xs[i] + 10
      in (y)
  let (a_end: int) = a[0]
  let (b_end: int) = b[0]
  let (r: int) = a_end + b_end
  in (r)
