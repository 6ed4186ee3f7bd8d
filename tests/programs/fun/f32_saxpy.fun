-- a * x + y on f32 arrays: a kernel over elements of type f32. Every value
-- here is exact in binary, so the result is the same on every device.
-- ==
-- input { 3 2.0f32 [1.0f32, 2.5f32, -4.0f32] [0.5f32, 0.25f32, 8.0f32] }
-- output { [2.5f32, 5.25f32, 0.0f32] }
-- input { 0 1.0f32 empty([0]f32) empty([0]f32) }
-- output { empty([0]f32) }
def main (n: int) (a: f32) (xs: [n]f32) (ys: [n]f32) =
  let (zs: [n]f32) = kernel i < n do
    let (x: f32) = xs[i]
    let (y: f32) = ys[i]
    let (z: f32) = a * x + y
    in (z)
  in (zs)
