-- Migration (thesis fig. 13): the condition of an `if` that does only
-- scalar work is read from the device; the whole `if` moves into a kernel
-- of one iteration, and its result is used only by a kernel.
-- ==
-- input { 3 [2, 5, 7] }
-- output { [12i64, 15i64, 17i64] }
-- input { 3 [0, 5, 7] }
-- output { [-1i64, 4i64, 6i64] }
-- structure simplify { HostRead 1 }
-- structure simplify,migrate { HostRead 0 }
def main (n: int) (xs: [n]int) =
  let (c: int) = xs[0]
  let (d: int) = if c > 0 then
      let (e: int) = c * 5
      in (e)
    else
      let (f: int) = 0 - 1
      in (f)
  let (ys: [n]int) = kernel i < n do
      let (x: int) = xs[i]
      let (y: int) = x + d
      in (y)
  in (ys)
