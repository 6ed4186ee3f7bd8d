-- Listing 7: Fig. 10's four statements after migration and the merge
-- transformation: one single-threaded kernel reads A[0] and A[1], adds
-- them and builds B = [a, c]; the host takes B as the row B'[0] of the
-- kernel's [1][2] result, a view with no transfer. `gpu e` is written
-- `kernel g < 1 do e`; the literal [a, c] inside it is `replicate 2 a`
-- with `with [1] = c` (all on the device here). The thesis assumes that
-- a, b and c have no other uses, so the kernel returns only B.
-- Thesis: 0 reads (this is the rewritten program; Fig. 10 had 2).
-- ==
-- structure simplify { HostRead 0 }
-- structure simplify,migrate { HostRead 0 }
-- input { 2 [3, 4] }
-- output { [3i64, 7i64] }
-- input { 3 [-1, 1, 9] }
-- output { [-1i64, 0i64] }
def main (n: int) (A: [n]int) =
  let (Bd: [1][2]int) = kernel g < 1 do
      let (a: int) = A[0]
      let (b: int) = A[1]
      let (c: int) = a + b
      let (B0: [2]int) = replicate 2 a
      let (B1: [2]int) = B0 with [1] = c
      in (B1)
  let (B: [2]int) = Bd[0]
  in (B)
