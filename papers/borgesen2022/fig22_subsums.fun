-- Fig. 22 (a for loop with an update inside): prefix sums in place. Each
-- iteration reads B[i] to the host (a synchronous read), adds it to the
-- running sum x and writes the sum back with `B with [i] = s'` (a
-- synchronous host-to-device write). The graph lets the running sum
-- stay on the device from one iteration to the next; Listing 11
-- (listing11_subsums_migrated.fun) is the rewrite: the read and the
-- addition move into single-threaded kernels, the scalar write becomes a
-- copy of a one-element slice, and no transfer is left in the loop. The
-- final sum s is returned, so it is read once after the loop.
-- Thesis: n reads before (one per iteration), 1 after (s; 0 if s had no
-- use on the host).
-- ==
-- structure simplify { HostRead 1 }
-- structure simplify,migrate { HostRead 1 }
-- input { 3 [1, 2, 3] }
-- output { [1i64, 3i64, 6i64] 6i64 }
-- input { 4 [5, -5, 2, 0] }
-- output { [5i64, 0i64, 2i64, 2i64] 2i64 }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) 0i64 }
def main (n: int) (A: *[n]int) =
  let (S: [n]int) (s: int) = loop (B: [n]int) (x: int) = (A, 0) for i < n do
      let (v: int) = B[i]
      let (s1: int) = x + v
      let (C: [n]int) = B with [i] = s1
      in (C, s1)
  in (S, s)
