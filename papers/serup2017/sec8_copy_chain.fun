-- Ch. 8 (COAL-COPY): `b = copy a`, `c = copy b`: a goes into b's block,
-- then b and a (through CI) into c's. Our simplify already removes both
-- copies.
-- ==
-- input { 3 }
-- output { [0i64, 1i64, 2i64] }
-- structure { Alloc 1 copy 0 }
-- structure simplify,coalesce { Alloc 1 copy 0 }
def main (n: int) =
  let (a: [n]int) = iota n
  let (b: [n]int) = copy a
  let (c: [n]int) = copy b
  in (c)
