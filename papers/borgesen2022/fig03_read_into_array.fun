-- Fig. 3 (a read feeding an array). x is read from device memory and put
-- into the two-element array B = [1, x], which a kernel then uses (the
-- thesis's B_s; the figure only says that it depends on B, so here it
-- doubles B's elements). Migrating the read and the literal to the
-- device removes the read: B is then the row B'[0] of a kernel's result,
-- which costs the host nothing. In the graph only x has a vertex (fed by
-- the read's source); B is an array, so it has no outgoing edge, and
-- B_s depends on no scalar.
-- The array literal [1, x] is written as `replicate 2 1` followed by the
-- update `with [1] = x`: a kernel and one synchronous host-to-device
-- write, which is how the thesis says the host builds a literal that
-- contains a variable.
-- Thesis: 1 read before (x = A[0]), 0 after (Fig. 3b).
-- ==
-- structure simplify { HostRead 1 }
-- structure simplify,migrate { HostRead 0 }
-- input { 3 [5, 6, 7] }
-- output { [2i64, 10i64] }
-- input { 1 [-4] }
-- output { [2i64, -8i64] }
def main (n: int) (A: [n]int) =
  let (x: int) = A[0]
  let (B0: [2]int) = replicate 2 1
  let (B: [2]int) = B0 with [1] = x
  let (Bs: [2]int) = kernel j < 2 do
      let (b: int) = B[j]
      in (b * 2)
  in (Bs)
