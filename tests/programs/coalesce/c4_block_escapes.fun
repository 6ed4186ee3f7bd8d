-- C4 alone: xs's block is also passed on by the `if` (ws may be xs), so
-- xs cannot leave it for ys's.
-- ==
-- input { 3 [1, 2, 3] 1 }
-- output { [42i64, 3i64, 4i64] [2i64, 3i64, 4i64] }
-- input { 3 [1, 2, 3] 0 }
-- output { [42i64, 3i64, 4i64] [1i64, 2i64, 3i64] }
-- structure { Alloc 3 copy 2 }
-- structure simplify,coalesce { Alloc 2 copy 1 }
def main (n: int) (ns: [n]int) (c: int) =
  let (xs: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (ws: [n]int) = if c then
      in (xs)
    else
      in (ns)
  let (ys: [n]int) = copy xs
  let (ys2: [n]int) = ys with [0] = 42
  in (ys2, ws)
