-- Fig. 16 (delaying reads out of two branches). Each of two ifs reads an
-- element in its true branch and gives a constant otherwise; the host
-- needs their sum z (returned). The original makes zero, one or two
-- reads; after migration every branch returns a one-element device
-- array, a single-threaded kernel adds them, and exactly one read (z)
-- is made. Whether that pays depends on how often both a and b are
-- false, when the original read nothing.
-- Thesis: 2 reads before in the worst case (0, 1 or 2), 1 after (always).
-- ==
-- structure simplify { HostRead 2 }
-- structure simplify,migrate { HostRead 1 }
-- input { [1, 2] true true }
-- output { 3i64 }
-- input { [1, 2] true false }
-- output { 43i64 }
-- input { [1, 2] false true }
-- output { 406i64 }
-- input { [1, 2] false false }
-- output { 446i64 }
def main (A: [2]int) (a: bool) (b: bool) =
  let (x: int) = if a then
      let (a0: int) = A[0]
      in (a0)
    else
      in (404)
  let (y: int) = if b then
      let (a1: int) = A[1]
      in (a1)
    else
      in (42)
  let (z: int) = x + y
  in (z)
