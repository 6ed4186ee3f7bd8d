-- Listing 13 (the second array-literal micro-benchmark, Fig. 28): as
-- Listing 12 with the ten-element literal [1, v, 0, 1, 1, 1, 0, 0, 1, 1].
-- Written as `replicate 10 1` and updates of the four elements that
-- differ from 1: one write of the variable v and three of the constant
-- 0 per iteration (Futhark writes all ten elements; under OpenCL the
-- constants asynchronously).
-- Thesis: 0 reads before and after; the writes go.
-- ==
-- structure simplify { HostRead 0 }
-- structure simplify,migrate { HostRead 0 }
-- input { [0, 0, 0, 0, 0, 0, 0, 0, 0, 0] 5 }
-- output { [1i64, 1004i64, 0i64, 1i64, 1i64, 1i64, 0i64, 0i64, 1i64, 1i64] 1005i64 }
def main (A0: [10]int) (v0: int) =
  let (A: [10]int) (v: int) = loop (X: [10]int) (w: int) = (A0, v0) for i < 1000 do
      let (L0: [10]int) = replicate 10 1
      let (L1: [10]int) = L0 with [1] = w
      let (L2: [10]int) = L1 with [2] = 0
      let (L3: [10]int) = L2 with [6] = 0
      let (L: [10]int) = L3 with [7] = 0
      let (w1: int) = w + 1
      in (L, w1)
  in (A, v)
