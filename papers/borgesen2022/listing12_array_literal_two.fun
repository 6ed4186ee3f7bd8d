-- Listing 12 (the array-literal micro-benchmark, Fig. 28): a loop of 1000
-- iterations that builds the literal [1, v] in each one and counts v up
-- (so that the loop cannot be removed). We have no array literals; the
-- host builds [1, v] as the thesis says a literal with a variable is
-- built, an array and then one write per element: `replicate 2 1` (a
-- kernel, so the constant costs no transfer here) and the update
-- `with [1] = v`, one synchronous host-to-device write per iteration.
-- Migrating the literal makes it a kernel of its own, for instance
-- `kernel j < 2 do if j == 0 then 1 else v`, with no write. The
-- benchmark is about writes, not reads.
-- Thesis: 0 reads before and after; the writes (2 per iteration in
-- Futhark, one of them a constant) go.
-- ==
-- structure simplify { HostRead 0 }
-- structure simplify,migrate { HostRead 0 }
-- input { [0, 0] 5 }
-- output { [1i64, 1004i64] 1005i64 }
-- input { [7, 7] -1000 }
-- output { [1i64, -1i64] 0i64 }
def main (A0: [2]int) (v0: int) =
  let (A: [2]int) (v: int) = loop (X: [2]int) (w: int) = (A0, v0) for i < 1000 do
      let (L0: [2]int) = replicate 2 1
      let (L: [2]int) = L0 with [1] = w
      let (w1: int) = w + 1
      in (L, w1)
  in (A, v)
