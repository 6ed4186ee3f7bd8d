-- Listing 10: Fig. 20 rewritten. The read v, the comparison l and the
-- whole while loop are migrated, each into a single-threaded kernel
-- (`gpu e` is `kernel g < 1 do e`); the merge transformation would join
-- the three kernels and drop the copies v' and l'. The loop runs on the
-- device and reads A[i'] from device memory; only the index p is read
-- back, because the program returns it.
-- The loop starts from c = l here. The thesis prints `c = 1` (true),
-- which leaves l unused and would run the body once even when A[0] > m;
-- errata.md and errata_listing10_as_printed.fun have the details.
-- Thesis: 1 read (p), this being the rewritten program (Fig. 20 had n).
-- ==
-- structure simplify { HostRead 1 }
-- structure simplify,migrate { HostRead 1 }
-- input { 4 5 [1, 2, 7, 1] }
-- output { 2i64 }
-- input { 3 5 [9, 1, 1] }
-- output { 0i64 }
-- input { 3 5 [1, 2, 3] }
-- output { 3i64 }
-- input { 1 0 [0] }
-- output { 1i64 }
def main (n: int) (m: int) (A: [n]int) =
  let (e: int) = n + -1
  let (vd: [1]int) = kernel g < 1 do
      let (v: int) = A[0]
      in (v)
  let (ld: [1]bool) = kernel g < 1 do
      let (v: int) = vd[0]
      in (v <= m)
  let (wd: [1]bool) (pd: [1]int) = kernel g < 1 do
      let (v: int) = vd[0]
      let (l: bool) = ld[0]
      let (w: bool) (p: int) = loop (c: bool) (i: int) = (l, 0) while c do
          let (i1: int) = i + 1
          let (a: bool) = i1 <= e
          let (c1: bool) = if a then
              let (v1: int) = A[i1]
              let (l1: bool) = v1 <= m
              in (l1)
            else
              in (false)
          in (c1, i1)
      in (w, p)
  let (p: int) = pd[0]
  in (p)
