-- Fig. 13 (migrating a whole if statement). The branch condition c is
-- read from device memory and chooses between two constant two-element
-- arrays. Moving the whole if into a single-threaded kernel removes the
-- read: its array result x is rebound on the host as a row of the
-- kernel's result, for free, and the literals are migratable (made
-- inside the if, so copyable). The literals [1, 2] and [2, 3] are written
-- as `replicate` followed by an update of the second element.
-- Thesis: 1 read before (c), 0 after.
-- ==
-- structure simplify { HostRead 1 }
-- structure simplify,migrate { HostRead 1 }
-- input { 2 [true, false] }
-- output { [1i64, 2i64] }
-- input { 1 [false] }
-- output { [2i64, 3i64] }
def main (n: int) (A: [n]bool) =
  let (c: bool) = A[0]
  let (x: [2]int) = if c then
      let (t0: [2]int) = replicate 2 1
      let (t1: [2]int) = t0 with [1] = 2
      in (t1)
    else
      let (f0: [2]int) = replicate 2 2
      let (f1: [2]int) = f0 with [1] = 3
      in (f1)
  in (x)
