-- Listing 2 (the hand-migrated vector normalisation of Fig. 1). The
-- thesis's `reduce'` leaves the sum in a one-element device array and
-- `gpu { f32.sqrt S[0] }` takes the root in a single-threaded kernel; the
-- last map reads the length from device memory, so no value travels to
-- the host. `gpu e` is a kernel of one iteration, `kernel g < 1 do e`,
-- whose result is a one-element array, and `reduce'` is a reduce inside
-- such a kernel (the parallel reduce whose result stays on the device;
-- the OpenCL backend runs this shape as one).
-- Thesis: 0 reads (this is the rewritten program; Listing 1 had 1).
-- ==
-- structure simplify { HostRead 0 }
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
  let (S: [1]f32) = kernel t < 1 do
      let (s: f32) = reduce (+) 0 pow2
      in (s)
  let (L: [1]f32) = kernel g < 1 do
      let (s: f32) = S[0]
      in (sqrt(s))
  let (B: [n]f32) = kernel i < n do
      let (a: f32) = A[i]
      let (len: f32) = L[0]
      in (a / len)
  in (B)
