-- Fig. 15 (delaying a read out of a branch). x = A[0] is always read and
-- y = A[1] only when c is true, and the host needs z = x + y (returned).
-- After migration the true branch returns A[1] in a one-element device
-- array, the false branch stores the constant 42 in one too, and a
-- single-threaded kernel adds them: the one or two reads become exactly
-- one, that of z.
-- Thesis: 2 reads before in the worst case (1 or 2), 1 after.
-- ==
-- structure simplify { HostRead 2 }
-- structure simplify,migrate { HostRead 1 }
-- input { 2 [3, 4] true }
-- output { 7i64 }
-- input { 2 [3, 4] false }
-- output { 45i64 }
def main (n: int) (A: [n]int) (c: bool) =
  let (x: int) = A[0]
  let (y: int) = if c then
      let (a1: int) = A[1]
      in (a1)
    else
      in (42)
  let (z: int) = x + y
  in (z)
