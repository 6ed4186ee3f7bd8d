-- Fig. 9.4 (a limitation): a loop result a1 as the second part of a
-- concat. Its first iteration reads a0's block, later ones would read
-- x's second half: the thesis disables coalescing a loop into anything but
-- a row-major destination, so nothing is coalesced.
-- ==
-- input { 2 [1, 2] }
-- output { [1i64, 2i64, 3i64, 4i64] }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) }
-- structure { Alloc 2 copy 0 }
-- structure simplify,coalesce { Alloc 2 copy 0 }
def main (n: int) (a0: [n]int) =
  let (a1: [n]int) = loop (b0: [n]int) = (a0) for t < n do
      let (b1: [n]int) = kernel j < n do
          let (v: int) = b0[j] + 1
          in (v)
      in (b1)
  let (n2: int) = n + n
  let (x: [n2]int) = concat a0 a1
  in (x)
