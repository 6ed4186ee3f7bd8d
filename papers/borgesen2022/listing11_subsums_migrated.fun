-- Listing 11: Fig. 22 rewritten. The running sum is carried as a
-- one-element device array (its initial value, the literal [0], is
-- `replicate 1 0`); each iteration reads B[i] and adds it in
-- single-threaded kernels (`gpu e` is `kernel g < 1 do e`; the merge
-- transformation would join the two and drop v'), and writes the sum
-- into B by copying the one-element array into the one-element slice
-- B[i : 1] (our slices are offset : size). No host transfer is left in
-- the loop; the final sum is read once because the program returns it.
-- Thesis: 1 read (s), this being the rewritten program (Fig. 22 had n).
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
  let (x0: [1]int) = replicate 1 0
  let (S: [n]int) (sd: [1]int) = loop (B: [n]int) (xd: [1]int) = (A, x0) for i < n do
      let (vd: [1]int) = kernel g < 1 do
          let (v: int) = B[i]
          in (v)
      let (s2: [1]int) = kernel g < 1 do
          let (x: int) = xd[0]
          let (v: int) = vd[0]
          in (x + v)
      let (C: [n]int) = B with [i : 1] = s2
      in (C, s2)
  let (s: int) = sd[0]
  in (S, s)
