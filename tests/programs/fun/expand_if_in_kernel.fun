-- Memory expansion of an `if` inside a kernel whose branches make arrays
-- of different sizes (fig. 2 of the IFL paper, once per iteration): the
-- branches' blocks and the `if`'s own block are expanded as one class.
-- ==
-- input { 3 2 4 }
-- output { [3i64, 2i64, 3i64] }
-- input { 0 2 4 }
-- output { empty([0]i64) }
-- structure gpu-mem { alloc 3 }
def main (n: int) (p: int) (q: int) =
  let (res: [n]int) = kernel i < n do
    let (c: int) = i % 2
    let (m: int) (zs: [m]int) = if c then
        let (xs: [p]int) = iota p
        in (p, xs)
      else
        let (ys: [q]int) = iota q
        in (q, ys)
    let (t: int) = m - 1
    let (z: int) = zs[t]
    let (r: int) = z + c
    in (r)
  in (res)
