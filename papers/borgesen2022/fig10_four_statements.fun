-- Fig. 10 (top): four host statements, a = A[0], b = A[1], c = a + b and
-- the literal B = [a, c]. All four are in the device set: migrating them
-- turns each into a single-threaded gpu kernel (Fig. 10, bottom), the
-- merge transformation joins the four kernels into one (Listing 7,
-- listing07_merged_kernel.fun), and B is rebound on the host as the row
-- B'[0] of that kernel's result, with no transfer. The literal [a, c] is
-- written as `replicate 2 a` followed by `with [1] = c` (we have no array
-- literals); on the host that is a kernel and a synchronous write of c.
-- Thesis: 2 reads before (a, b; besides the host-to-device writes that
-- build B), 0 after.
-- ==
-- structure simplify { HostRead 2 }
-- structure simplify,migrate { HostRead 0 }
-- input { 2 [3, 4] }
-- output { [3i64, 7i64] }
-- input { 3 [-1, 1, 9] }
-- output { [-1i64, 0i64] }
def main (n: int) (A: [n]int) =
  let (a: int) = A[0]
  let (b: int) = A[1]
  let (c: int) = a + b
  let (B0: [2]int) = replicate 2 a
  let (B: [2]int) = B0 with [1] = c
  in (B)
