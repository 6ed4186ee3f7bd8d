-- Fig. 21 (a for loop with a host-only use): n = A[0], a = A[1] and
-- b = A[2] are read before a loop of n iterations that starts from a,
-- adds b and passes the sum y with the counter i to f_host, a host-only
-- function whose result z is the next value. We have no functions; the
-- role of f_host y i is played by statements that need y on the host
-- and compute z from y and i: an in-place update of a carried
-- four-element array G at an index computed from y (the thesis connects
-- the index operands of an update to a sink, so y must be on the host in
-- every iteration), then z = y + i. The loop returns G, a multi-element
-- array that was not made inside the loop, so it may not move as a whole
-- either: its count n is connected to a sink, as in the figure (where
-- that is because f_host is host-only). The loop-isolation step then
-- connects a and b to sinks too (Fig. 26b): moving them, x and y to the
-- device would put a read of y inside the loop. So nothing migrates.
-- Thesis: 3 reads before (n, a, b), 3 after.
-- ==
-- structure simplify { HostRead 3 }
-- structure simplify,migrate { HostRead 3 }
-- input { 3 [3, 1, 2] }
-- output { 10i64 [3i64, 2i64, 0i64, 1i64] }
-- input { 3 [0, 5, 7] }
-- output { 5i64 [0i64, 0i64, 0i64, 0i64] }
def main (k: int) (A: [k]int) =
  let (n: int) = A[0]
  let (a: int) = A[1]
  let (b: int) = A[2]
  let (G0: [4]int) = replicate 4 0
  let (H: [4]int) (c: int) = loop (G: [4]int) (x: int) = (G0, a) for i < n do
      let (y: int) = x + b
      let (q: int) = (y % 4 + 4) % 4
      let (G1: [4]int) = G with [q] = i + 1
      let (z: int) = y + i
      in (G1, z)
  in (c, H)
