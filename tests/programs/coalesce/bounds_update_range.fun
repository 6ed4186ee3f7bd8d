-- Errors stay errors: ys goes to columns o, o+1 of row 0 of ms. When o + 2
-- > n the update goes wrong; built in place unchecked, ys would first
-- spill into row 1. The inserted check (a slice of ms) goes wrong first.
-- ==
-- input { 3 [1, 2, 3] [[0, 0, 0], [0, 0, 0], [0, 0, 0]] 1 }
-- output { [[0i64, 2i64, 3i64], [0i64, 0i64, 0i64], [0i64, 0i64, 0i64]] }
-- input { 3 [1, 2, 3] [[0, 0, 0], [0, 0, 0], [0, 0, 0]] 2 }
-- error: out of bounds
-- structure { Alloc 2 copy 1 }
-- structure simplify,coalesce { Alloc 1 copy 1 }
def main (n: int) (ns: [n]int) (ms: *[n][n]int) (o: int) =
  let (ys: [2]int) = kernel j < 2 do
      let (a: int) = ns[j] + 1
      in (a)
  let (ms2: [n][n]int) = ms with [0, o : 2] = ys
  in (ms2)
