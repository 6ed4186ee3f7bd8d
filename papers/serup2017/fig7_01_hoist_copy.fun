-- Fig. 7.1 (7.2): `res = copy arr` where res's block is allocated after
-- arr is made; hoisting the allocation (C2) lets arr be built in res's
-- block. Our simplify already returns arr as it is.
-- ==
-- input { 4 }
-- output { [0i64, 1i64, 2i64, 3i64] }
-- input { 0 }
-- output { empty([0]i64) }
-- structure { Alloc 1 copy 0 }
-- structure simplify,coalesce { Alloc 1 copy 0 }
def main (n: int) =
  let (arr: [n]int) = iota n
  let (res: [n]int) = copy arr
  in (res)
