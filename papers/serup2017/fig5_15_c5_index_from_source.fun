-- Fig. 5.15 (negative, C5): `t1 with [i1] = t0` where i1 = t0[i0] is read
-- from t0 itself: t0's new index function (row i1 of t1) would use a name
-- that does not exist where t0 is created. Nothing is coalesced.
-- ==
-- input { 3 [0, 1, 5] [[0, 0, 0], [0, 0, 0], [0, 0, 0]] 0 }
-- output { [[0i64, 0i64, 0i64], [1i64, 2i64, 6i64], [0i64, 0i64, 0i64]] }
-- input { 3 [0, 1, 5] [[0, 0, 0], [0, 0, 0], [0, 0, 0]] 2 }
-- error: out of bounds
-- structure { Alloc 2 copy 1 }
-- structure simplify,coalesce { Alloc 2 copy 1 }
def main (n: int) (ns: [n]int) (t1: *[n][n]int) (i0: int) =
  let (t0: [n]int) = kernel j < n do
      let (a: int) = ns[j] + 1
      in (a)
  let (i1: int) = t0[i0]
  let (t2: [n][n]int) = t1 with [i1] = t0
  in (t2)
