-- The if rule with a branch returning an array made before the `if` by a
-- loop (found by the fuzzer, seed 24): the loop's result lives in the
-- block the loop binds, not in one it can be given, so the `if` cannot go
-- to the result copy's block with it (the `else` branch would return the
-- loop's block where the destination is expected: an ill-typed program).
-- The coalescing is refused by the if rule.
-- ==
-- input { 0 0 empty([0]i64) }
-- output { empty([0]i64) }
-- input { 2 1 [5, 6] }
-- output { [0i64, 1i64] }
-- input { 3 0 [5, 6, 7] }
-- output { [0i64, 1i64, 2i64] }
-- structure simplify,coalesce { Alloc 5 }
def main (n0: int) (n1: int) (xs4: [n0]int) =
  let (sc15: [n0]int) = iota n0
  let (l25: int) (la26: [l25]int) (la27: [n0]int) = loop (ks19: int) (ps18: [ks19]int) (ps20: [n0]int) = (n0, xs4, sc15) for i21 < 0 do
    let (a23: [i21]int) = iota i21
    let (y24: [n0]int) = iota n0
    in (i21, a23, y24)
  let (z36: [n0]int) = if n1 then
    let (k34: [n0]int) = iota n0
    in (k34)
  else
    in (la27)
  in (z36)
