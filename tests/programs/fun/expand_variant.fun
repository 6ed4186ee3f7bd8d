-- Memory expansion of a kernel-variant allocation: iteration i makes an
-- array of i + 1 elements. expand-gpu sizes each iteration's part by the
-- maximum, max(0 + 1, (n - 1) + 1), computed before the kernel, after
-- proving that no iteration needs more.
-- ==
-- input { 4 }
-- output { [0i64, 1i64, 2i64, 3i64] }
-- input { 0 }
-- output { empty([0]i64) }
-- structure gpu-mem { alloc 2 }
def main (n: int) =
  let (res: [n]int) = kernel i < n do
    let (k: int) = i + 1
    let (xs: [k]int) = iota k
    let (x: int) = xs[i]
    in (x)
  in (res)
