-- The host reads one element of a device array and uses it as a size:
-- a synchronous device-to-host transfer between two kernels.
-- ==
-- input { 4 }
-- output { [0i64, 1i64, 2i64] }
def main (n: int) =
  let (xs: [n]int) = iota n
  let (k: int) = n - 1
  let (m: int) = xs[k]
  let (ys: [m]int) = iota m
  in (ys)
