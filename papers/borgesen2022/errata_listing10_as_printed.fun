-- Listing 10 as the thesis prints it: the migrated loop starts from
-- `c = 1`, true, instead of from l = A[0] <= m, which the listing
-- computes (and copies into the kernel) but never uses. The body then
-- always runs at least once and A[0] is never tested: when A[0] is
-- already above the threshold, Fig. 20's loop gives 0, but this one
-- gives the index of the first element above m after A[0] (second and
-- third cases: 1 and 3, where fig20_first_above_threshold.fun gives 0i64
-- for both inputs). With A[0] <= m the two agree (first case). See
-- errata.md.
-- ==
-- structure simplify { HostRead 1 }
-- structure simplify,migrate { HostRead 1 }
-- input { 4 5 [1, 2, 7, 1] }
-- output { 2i64 }
-- input { 3 5 [9, 9, 1] }
-- output { 1i64 }
-- input { 3 5 [9, 1, 1] }
-- output { 3i64 }
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
      let (w: bool) (p: int) = loop (c: bool) (i: int) = (true, 0) while c do
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
