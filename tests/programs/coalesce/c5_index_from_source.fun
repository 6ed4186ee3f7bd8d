-- C5 alone: the row ys goes to is read from ys itself, so ys's place in
-- ms is not known where ys is made.
-- ==
-- input { 3 [0, 1, 5] [[0, 0, 0], [0, 0, 0], [0, 0, 0]] }
-- output { [[0i64, 0i64, 0i64], [1i64, 2i64, 6i64], [0i64, 0i64, 0i64]] }
-- input { 3 [2, 1, 5] [[0, 0, 0], [0, 0, 0], [0, 0, 0]] }
-- error: out of bounds
-- structure { Alloc 2 copy 1 }
-- structure simplify,coalesce { Alloc 2 copy 1 }
def main (n: int) (ns: [n]int) (ms: *[n][n]int) =
  let (ys: [n]int) = kernel j < n do
      let (a: int) = ns[j] + 1
      in (a)
  let (r: int) = ys[0]
  let (ms2: [n][n]int) = ms with [r] = ys
  in (ms2)
