-- Fig. 5.1: `dst = copy src` of a parameter. The thesis lets dst use src's
-- block; here src is a parameter (not fresh: C4; there before any block of
-- the body: C2), so this is not a coalescing: simplify already returns src
-- as it is (no copy, no block).
-- ==
-- input { 3 [1, 2, 3] }
-- output { [1i64, 2i64, 3i64] }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) }
-- structure { Alloc 0 copy 0 }
-- structure simplify,coalesce { Alloc 0 copy 0 }
def main (n: int) (src: [n]int) =
  let (dst: [n]int) = copy src
  in (dst)
