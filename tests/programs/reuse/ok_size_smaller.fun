-- The size check, passed: ys has max(n - 1, 0) elements, proved at least
-- 0 and at most n, so it is built in the unique parameter xs's block and
-- the program allocates nothing. (With plain n - 1 elements the pass
-- refuses: n may be 0, and an allocation of -1 elements is stuck; see
-- size_minus_one.fun.)
-- ==
-- input { 3 [1, 2, 3] }
-- output { [6i64, 7i64] }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) }
-- structure { Alloc 1 }
-- structure simplify,reuse { Alloc 0 }
def main (n: int) (xs: *[n]int) =
  let (s: int) = reduce (+) 0 xs
  let (m: int) = max(n - 1, 0)
  let (ys: [m]int) = kernel i < m do
      let (y: int) = s + i
      in (y)
  in (ys)
