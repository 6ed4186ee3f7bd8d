-- An allocation whose size is read from an input array inside the kernel
-- cannot be bounded before the kernel without a reduction, so memory
-- expansion leaves it where it is (docs/expansion.md).
-- ==
-- input { 3 [2, 1, 3] }
-- output { [1i64, 0i64, 2i64] }
-- structure gpu-mem { alloc 2 }
def main (n: int) (ks: [n]int) =
  let (res: [n]int) = kernel i < n do
    let (k: int) = ks[i]
    let (xs: [k]int) = iota k
    let (t: int) = k - 1
    let (x: int) = xs[t]
    in (x)
  in (res)
