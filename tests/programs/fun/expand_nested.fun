-- Memory expansion through three nested kernels: every iteration of the
-- two inner kernels makes arrays of its own (iota, an inner kernel's
-- result); coalescing builds each inner kernel's result in place in the
-- outer result, and expand-gpu hoists what is left (the iota) before the
-- outermost kernel.
-- ==
-- input { 2 3 2 }
-- output { [[[0i64, 1i64], [1i64, 2i64], [2i64, 3i64]], [[1i64, 2i64], [2i64, 3i64], [3i64, 4i64]]] }
-- input { 0 3 2 }
-- output { empty([0][3][2]i64) }
-- structure gpu-mem { alloc 2 }
def main (a: int) (b: int) (c: int) =
  let (xsss: [a][b][c]int) = kernel i < a do
    let (xss: [b][c]int) = kernel j < b do
      let (r: [c]int) = iota c
      let (ys: [c]int) = kernel k < c do
        let (x: int) = r[k]
        let (y: int) = x + i + j
        in (y)
      in (ys)
    in (xss)
  in (xsss)
