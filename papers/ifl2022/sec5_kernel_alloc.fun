-- IFL 2022 paper, §5: the situation memory expansion addresses. Each
-- iteration of the outer kernel makes an array of its own (`row`), so the
-- FUNMEM translation allocates inside the kernel (sec5_kernel_alloc.funmem),
-- which a GPU kernel cannot do efficiently. The allocation's size, m, is the
-- same in every iteration (kernel-invariant), the case the paper treats.
-- ==
-- input { 2 3 }
-- output { [[0i64, 1i64, 2i64], [1i64, 2i64, 3i64]] }
-- input { 0 4 }
-- output { empty([0][4]i64) }
-- structure { alloc 3 kernel 2 iota 1 }
def main (n: int) (m: int) =
  let (xss: [n][m]int) = kernel i < n do
    let (row: [m]int) = iota m
    let (ys: [m]int) = kernel j < m do
      let (x: int) = row[j]
      let (y: int) = x + i
      in (y)
    in (ys)
  in (xss)
