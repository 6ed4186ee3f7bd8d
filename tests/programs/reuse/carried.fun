-- Carried blocks: b is made in each iteration and returned, so the next
-- iteration reads it as a; its block is alive during the whole loop and
-- t, made and summed before a is read, may not take it. Without the rule
-- t is built in b's block. That is harmless: each iteration allocates a
-- new block for b, and the one a is in is the previous iteration's, so
-- the results stay right (see oracle/tests/planted_reuse.rs).
-- ==
-- input { 3 [1, 2, 3] }
-- output { 63i64 }
-- input { 2 [4, -1] }
-- output { 23i64 }
-- structure { Alloc 3 }
-- structure simplify,reuse { Alloc 3 }
def main (n: int) (ns: [n]int) =
  let (xs: [n]int) = kernel i < n do
      let (a0: int) = ns[i] + 1
      in (a0)
  let (r: [n]int) = loop (a: [n]int) = (xs) for k < 3 do
      let (t: [n]int) = kernel i < n do
          let (v: int) = ns[i] * k
          in (v)
      let (s: int) = reduce (+) 0 t
      let (b: [n]int) = kernel i < n do
          let (w: int) = a[i] + s
          in (w)
      in (b)
  let (y: int) = reduce (+) 0 r
  in (y)
