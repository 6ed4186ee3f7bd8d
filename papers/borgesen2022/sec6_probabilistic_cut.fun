-- Section 6.1 (future work, probabilistic vertex cuts): a = A[0] and
-- b = A[1] are read and added, d = c + 42, and e is d or the constant 43
-- depending on the host flag x; then f = f_host e, a host-only use of e.
-- We have no functions: returning e plays the part of f_host, since the
-- thesis connects both the operands of host-only statements and the
-- results of the function to sinks, so the graph is the same.
-- The thesis's cut, with the fewest migrated statements, is
-- ({a, b, c}, {d, e, f}): a, b and c move to the device and c is read,
-- always. The cut ({a, b, c, d}, {e, f}) is as small, and also moves d;
-- its read (of d) can then be sunk into the true branch, so it happens
-- only when x is true. The algorithm cannot prefer it: it minimises the
-- device set, not the probability of the read.
-- Thesis: 2 reads before, 1 after (1 when x is true, 0 otherwise, with
-- the second cut).
-- ==
-- structure simplify { HostRead 2 }
-- structure simplify,migrate { HostRead 1 }
-- input { [1, 2] true }
-- output { 45i64 }
-- input { [1, 2] false }
-- output { 43i64 }
def main (A: [2]int) (x: bool) =
  let (a: int) = A[0]
  let (b: int) = A[1]
  let (c: int) = a + b
  let (d: int) = c + 42
  let (e: int) = if x then
      in (d)
    else
      in (43)
  in (e)
