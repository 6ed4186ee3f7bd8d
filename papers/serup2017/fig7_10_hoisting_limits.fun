-- Fig. 7.10 (7.11): xs cannot go into row j of vss (vss is written, by its
-- creation, after xs is made: C3); vss can go into row i of wsss (wsss's
-- last read, use_wsss, comes before vss is made). Hoisting vss's creation
-- above use_wsss would lose that one coalescing too (fig. 7.11). Kernel
-- nest rows are built in place; the result copy coalesces.
-- ==
-- input { 2 [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] [10, 20] 1 0 }
-- output { [[[2i64, 3i64], [4i64, 5i64]], [[11i64, 21i64], [2i64, 2i64]]] [[[13i64, 14i64], [15i64, 16i64]], [[17i64, 18i64], [19i64, 20i64]]] }
-- structure { Alloc 10 copy 1 }
-- structure simplify,coalesce { Alloc 4 copy 0 }
def main (n: int) (wsss0: [n][n][n]int) (ns: [n]int) (i: int) (j: int) =
  let (wsss: [n][n][n]int) = kernel a < n do
      let (wss: [n][n]int) = kernel b < n do
          let (ws: [n]int) = kernel c < n do
              let (w: int) = wsss0[a, b, c]
              let (w1: int) = w + 1
              in (w1)
          in (ws)
      in (wss)
  let (xs: [n]int) = kernel a < n do
      let (x: int) = ns[a] + 1
      in (x)
  let (k: int) = xs[0]
  let (use_wsss: [n][n][n]int) = kernel a < n do
      let (uss: [n][n]int) = kernel b < n do
          let (us: [n]int) = kernel c < n do
              let (w: int) = wsss[a, b, c]
              let (u: int) = w + k
              in (u)
          in (us)
      in (uss)
  let (two: [n]int) = replicate n 2
  let (vss: [n][n]int) = replicate n two
  let (vss2: [n][n]int) = vss with [j] = xs
  let (wsss2: [n][n][n]int) = wsss with [i] = vss2
  in (wsss2, use_wsss)
