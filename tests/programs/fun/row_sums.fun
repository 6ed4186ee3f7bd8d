-- Rows of a matrix by partial indexing (`xss[i]` is row i, a view in
-- memory), summed with a reduction inside a kernel, in reverse order and
-- clipped: the surface syntax at work (`xss[n - 1 - i]`, `if s < lim`).
-- ==
-- structure gpu-mem { Alloc 1 }
-- input { 3 2 [[1.0f32, 2.0f32], [3.0f32, 4.0f32], [5.0f32, 6.0f32]] 8.0f32 }
-- output { [8.0f32, 7.0f32, 3.0f32] 8.0f32 }
def main (n: int) (m: int) (xss: [n][m]f32) (lim: f32) =
  let (ys: [n]f32) = kernel i < n do
    let (row: [m]f32) = xss[n - 1 - i]
    let (s: f32) = reduce (+) 0 row
    let (r: f32) = if s < lim then in (s) else in (lim)
    in (r)
  let (top: f32) = reduce (max) (-1.0 / 0.0) ys
  in (ys, top)
