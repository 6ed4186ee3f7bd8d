-- Fig. 5.2 (5.4, 5.5): `t2 = concat t0 t1` of two kernel results. The
-- thesis builds t0 at offset 0 and t1 at offset k of t2's block: one block
-- left, the concat copies nothing.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [2i64, 3i64, 4i64, 2i64, 4i64, 6i64] }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) }
-- structure { Alloc 3 copy 0 }
-- structure simplify,coalesce { Alloc 1 copy 0 }
def main (n: int) (ns: [n]int) =
  let (t0: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (t1: [n]int) = kernel i < n do
      let (b: int) = ns[i] * 2
      in (b)
  let (k: int) = n + n
  let (t2: [k]int) = concat t0 t1
  in (t2)
