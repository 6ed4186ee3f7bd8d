-- Fig. 4 (sum_cmp; also the top of Fig. 11): compare every element with
-- the sum of all of them. The reduce's result s is read to the host only
-- to be passed to the map kernel. In the graph s is the only vertex,
-- with an edge from the read's source; the variables inside the kernels
-- (the reduce operator's and the map's) are left out, since they live on
-- the device already.
-- Thesis: 1 read before (s), 0 after (Fig. 11 migrates the read into a
-- single-threaded kernel; Listing 5 lets the map read the reduce's
-- result itself).
-- ==
-- structure simplify { HostRead 1 }
-- structure simplify,migrate { HostRead 0 }
-- input { 3 [1, 2, 3] }
-- output { [true, true, true] }
-- input { 4 [5, -1, -2, -1] }
-- output { [false, true, true, true] }
-- input { 0 empty([0]i64) }
-- output { empty([0]bool) }
def main (n: int) (A: [n]int) =
  let (s: int) = reduce (+) 0 A
  let (B: [n]bool) = kernel i < n do
      let (x: int) = A[i]
      in (x <= s)
  in (B)
