-- Fig. 23 (a while loop): the last element of A that is at least the
-- threshold d = B[7], searching from the end. The condition is carried
-- as a loop parameter, as in the thesis's language: its initial value
-- is 1 <= n (A not empty), and each iteration steps i down, reads
-- x = A[i] and goes on unless x is at or above d or i reached 0. The
-- loop returns the condition, the index and the last element read (v:
-- the element found, or A[0] when none is found and n > 0). The figure
-- prints the test as `d <= v''`, a name that is not bound; it must be x
-- (errata.md). Every iteration makes a synchronous read, and so does d.
-- The model migrates the whole loop (Fig. 27d) and lets d's read go into
-- it (Fig. 26d: the loop reads anyway): no read is left before or in the
-- loop, and each result the host uses is read once after it (here i
-- and v).
-- Thesis: n + 1 reads before in the worst case (d, then one per
-- iteration), 2 after (i and v, the results we return).
-- ==
-- structure simplify { HostRead 2 }
-- structure simplify,migrate { HostRead 2 }
-- input { 5 [5, 1, 9, 2, 3] [0, 0, 0, 0, 0, 0, 0, 4] }
-- output { 2i64 9i64 }
-- input { 2 [7, 1] [0, 0, 0, 0, 0, 0, 0, 5] }
-- output { 0i64 7i64 }
-- input { 2 [1, 2] [0, 0, 0, 0, 0, 0, 0, 5] }
-- output { 0i64 1i64 }
-- input { 0 empty([0]i64) [0, 0, 0, 0, 0, 0, 0, 5] }
-- output { 0i64 0i64 }
def main (n: int) (A: [n]int) (B: [8]int) =
  let (d: int) = B[7]
  let (c: bool) = 1 <= n
  let (t: bool) (i: int) (v: int) = loop (c1: bool) (i1: int) (v1: int) = (c, n, 0) while c1 do
      let (i2: int) = i1 + -1
      let (x: int) = A[i2]
      let (a: bool) = d <= x
      let (b: bool) = 1 <= i2
      let (c2: bool) = if a then
          in (false)
        else
          in (b)
      in (c2, i2, x)
  in (i, v)
