-- Listing 1 (vector normalisation; Fig. 1 times it against Listing 2).
-- A map squares the elements, a reduce sums them, the host takes the
-- square root and a second map divides by it. Our `reduce` binds a scalar
-- on the host: a parallel reduction, then one synchronous read of its
-- result, which the thesis wants gone. The square root is the only host
-- work between the two kernels, and it needs that read.
-- Thesis: 1 read before, 0 after (Listing 2 computes the root on the
-- device and the second map reads it from device memory).
-- ==
-- structure simplify { HostRead 1 }
-- structure simplify,migrate { HostRead 0 }
-- input { 2 [3f32, 4f32] }
-- output { [0.6f32, 0.8f32] }
-- input { 4 [1f32, 1f32, 1f32, 1f32] }
-- output { [0.5f32, 0.5f32, 0.5f32, 0.5f32] }
-- input { 3 [0f32, -2f32, 0f32] }
-- output { [0.0f32, -1.0f32, 0.0f32] }
def main (n: int) (A: [n]f32) =
  let (pow2: [n]f32) = kernel i < n do
      let (x: f32) = A[i]
      in (x * x)
  let (sum: f32) = reduce (+) 0 pow2
  let (len: f32) = sqrt(sum)
  let (B: [n]f32) = kernel i < n do
      let (a: f32) = A[i]
      in (a / len)
  in (B)
