-- Fig. 5.26 (choice): t0 can go into t1's block (the copy) or t1 into
-- t2's (the concat), not both: t2's size n + k reads k = t0[0], so t2's
-- block cannot exist before t0 (C2). The thesis, top-down, takes the first
-- (t0 into t1); `annoying` goes into t2 either way. Two blocks are left.
-- ==
-- input { 3 [1, 5, 9] }
-- output { [2i64, 6i64, 10i64, 0i64, 1i64] }
-- input { 2 [-5, 1] }
-- error: negative
-- structure { Alloc 4 copy 1 }
-- structure simplify,coalesce { Alloc 2 copy 1 }
def main (n: int) (ns: [n]int) =
  let (t0: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (k: int) = t0[0]
  let (annoying: [k]int) = iota k
  let (t1: [n]int) = copy t0
  let (nk: int) = n + k
  let (t2: [nk]int) = concat t1 annoying
  in (t2)
