-- Loop rule: a loop made from a fresh copy, updating its parameter in
-- place, goes to the second part of a concat (a place that is not
-- row-major: the thesis disabled this case; here every iteration's array
-- has the same place, so it is allowed). The copy, the loop and the iota
-- all end up in the concat's block.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [0i64, 1i64, 2i64, 2i64, 4i64, 6i64] }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) }
-- structure { Alloc 3 copy 1 }
-- structure simplify,coalesce { Alloc 1 copy 1 }
def main (n: int) (xs: [n]int) =
  let (z: [n]int) = iota n
  let (a0: [n]int) = copy xs
  let (y: [n]int) = loop (acc: [n]int) = (a0) for i < n do
     let (v: int) = acc[i]
     let (w: int) = v * 2
     let (acc2: [n]int) = acc with [i] = w
     in (acc2)
  let (nn: int) = n + n
  let (c: [nn]int) = concat z y
  in (c)
