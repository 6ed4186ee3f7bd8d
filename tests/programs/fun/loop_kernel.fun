-- A host loop that runs a kernel every iteration, then a kernel whose
-- iterations each run a sequential loop (an exclusive prefix sum).
-- ==
-- input { 3 [1, 2, 3] 2 }
-- output { [5i64, 9i64, 13i64] [0i64, 5i64, 14i64] }
-- input { 3 [1, 2, 3] 0 }
-- output { [1i64, 2i64, 3i64] [0i64, 1i64, 3i64] }
-- structure { loop 2 kernel 2 }
def main (n: int) (xs: [n]int) (t: int) =
  let (r: [n]int) = loop (a: [n]int) = (xs) for k < t do
      let (b: [n]int) = kernel i < n do
          let (v: int) = a[i]
          let (w: int) = v * 2 + k
          in (w)
      in (b)
  let (s: [n]int) = kernel i < n do
      let (acc: int) = loop (u: int) = (0) for j < i do
          let (x: int) = r[j]
          let (u2: int) = u + x
          in (u2)
      in (acc)
  in (r, s)
