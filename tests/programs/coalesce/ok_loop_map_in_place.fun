-- Loop rule with a body that makes each iteration's array: a kernel
-- reads cell i of the parameter and makes cell i of the next array. Built
-- at the parameter's own place, each iteration reads only the cell it
-- writes (compared per iteration), so the whole loop runs in the result's
-- block.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [4i64, 5i64, 6i64] }
-- structure { Alloc 3 copy 2 }
-- structure simplify,coalesce { Alloc 1 copy 1 }
def main (n: int) (xs: [n]int) =
  let (a0: [n]int) = copy xs
  let (y: [n]int) = loop (t: [n]int) = (a0) for k < 3 do
     let (nt: [n]int) = kernel i < n do
        let (v: int) = t[i]
        let (r: int) = v + 1
        in (r)
     in (nt)
  in (y)
