-- Fig. 11 and Listing 5: sum_cmp (Fig. 4) after migration. Fig. 11
-- migrates the read s = S[0] into a single-threaded kernel (s' = gpu
-- S[0]) and rewrites the map to take s from s'[0]; Listing 5 drops that
-- copy and lets every map iteration read S[0], the reduce's one-element
-- result, directly. The thesis's reduce gives that one-element device
-- array; ours reads its result to the host, so the reduce goes inside a
-- kernel of one iteration, `kernel t < 1 do reduce ...` (the parallel
-- reduce with its result left on the device), and every map iteration
-- reads S[0] from device memory, as in Listing 5.
-- Thesis: 0 reads (this is the rewritten program; Fig. 4 had 1).
-- ==
-- structure simplify { HostRead 0 }
-- structure simplify,migrate { HostRead 0 }
-- input { 3 [1, 2, 3] }
-- output { [true, true, true] }
-- input { 4 [5, -1, -2, -1] }
-- output { [false, true, true, true] }
-- input { 0 empty([0]i64) }
-- output { empty([0]bool) }
def main (n: int) (A: [n]int) =
  let (S: [1]int) = kernel t < 1 do
      let (r: int) = reduce (+) 0 A
      in (r)
  let (B: [n]bool) = kernel i < n do
      let (s: int) = S[0]
      let (x: int) = A[i]
      in (x <= s)
  in (B)
