-- Every iteration of the outer kernel builds two arrays of m elements of
-- its own, then sums a few of their elements. Memory expansion hoists
-- both allocations out of the kernel; expand-cpu gives each iteration a
-- contiguous part (iteration i at i*m + j), expand-gpu interleaves the
-- iterations (iteration i at j*n + i), so that neighbouring work-items
-- touch neighbouring addresses. Before that, reuse builds b in a's block
-- (iteration j of the inner kernel reads a[j] before writing b[j]), so
-- the GPU pipeline hoists one block of the kernel's instead of two.
-- ==
-- input { 3 4 }
-- output { [6i64, 10i64, 14i64] }
-- structure gpu-mem { Alloc 2 }
def main (n: int) (m: int) =
  let (rs: [n]int) = kernel i < n do
        let (a: [m]int) = kernel j < m do
              let (v: int) = i + j
              in (v)
        let (b: [m]int) = kernel j < m do
              let (x: int) = a[j]
              let (y: int) = x * 2
              in (y)
        let (k: int) = m - 1
        let (first: int) = b[0]
        let (last: int) = b[k]
        let (s: int) = first + last
        in (s)
  in (rs)
