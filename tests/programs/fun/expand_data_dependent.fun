-- An allocation whose size is read from an input array inside the kernel:
-- memory expansion computes every iteration's size in a kernel before it,
-- takes their maximum with `reduce (max)` and hoists the allocation
-- (docs/expansion.md): the sizes' block and the hoisted one.
-- ==
-- input { 3 [2, 1, 3] }
-- output { [1i64, 0i64, 2i64] }
-- structure gpu-mem { alloc 3 }
def main (n: int) (ks: [n]int) =
  let (res: [n]int) = kernel i < n do
    let (k: int) = ks[i]
    let (xs: [k]int) = iota k
    let (t: int) = k - 1
    let (x: int) = xs[t]
    in (x)
  in (res)
