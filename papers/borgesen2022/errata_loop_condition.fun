-- The loop-condition read (errata.md, E1). A while loop whose condition
-- starts from a value read from device memory: c0 = A[0] < m is the
-- condition's initial value (the thesis's o_c), go is the condition
-- parameter (y_c) and go1 the value the body returns for it (z_c). The
-- body adds elements of A (one synchronous read per iteration) until the
-- sum reaches m. A host running this loop tests the condition before
-- every iteration: first c0, then each iteration's go1. Nothing in the
-- body can supply the first test; when A[0] >= m (first case) the body
-- never runs and c0 is the only condition value the host ever sees. So
-- the read that the host cannot avoid unless the whole loop moves to the
-- device is that of c0 (o_c), made once before the loop; go (y_c) itself
-- is never read. The thesis argues about y_c; Futhark connects o_c.
-- Host reads with the loop on the host: 1 + k for k iterations.
-- ==
-- structure simplify { HostRead 2 }
-- structure simplify,migrate { HostRead 2 }
-- input { 3 3 [5, 1, 2] }
-- output { 0i64 5i64 }
-- input { 3 4 [1, 1, 2] }
-- output { 2i64 4i64 }
-- input { 2 10 [1, 2] }
-- output { 6i64 10i64 }
def main (n: int) (m: int) (A: [n]int) =
  let (a0: int) = A[0]
  let (c0: bool) = a0 < m
  let (g: bool) (k: int) (s: int) = loop (go: bool) (i: int) (y: int) = (c0, 0, a0) while go do
      let (i1: int) = i + 1
      let (j: int) = i1 % n
      let (e: int) = A[j]
      let (y1: int) = y + e
      let (go1: bool) = y1 < m
      in (go1, i1, y1)
  in (k, s)
