-- Fig. 14 (delaying reads into a branch). x = A[0] and y = A[1] are only
-- added up in the false branch. The caption assumes that some kernel not
-- shown also uses x and y, so that they are migrated rather than sunk
-- into the branch; here that kernel is K, which adds x * y to every
-- element. After migration the two reads become single-threaded kernels,
-- and the false branch computes s = x + y on the device and reads that
-- one value: two reads become one, or none when c is true. The if's
-- result z is returned, so it is needed on the host.
-- Thesis: 2 reads before, 1 after in the worst case (0 when c is true).
-- ==
-- structure simplify { HostRead 2 }
-- structure simplify,migrate { HostRead 1 }
-- input { 2 [3, 4] true }
-- output { 42i64 [15i64, 16i64] }
-- input { 2 [3, 4] false }
-- output { 7i64 [15i64, 16i64] }
def main (n: int) (A: [n]int) (c: bool) =
  let (x: int) = A[0]
  let (y: int) = A[1]
  let (K: [n]int) = kernel j < n do
      let (e: int) = A[j]
      in (e + x * y)
  let (z: int) = if c then
      in (42)
    else
      let (s: int) = x + y
      in (s)
  in (z, K)
