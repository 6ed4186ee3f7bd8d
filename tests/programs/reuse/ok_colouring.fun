-- Colouring against the linear scan (after the thesis's fig. 9.6): e, a
-- and c have m = 2h elements, b and d have h. The allocations of a to d
-- cannot move above e's kernel (their sizes are not evidently counts), so
-- the pass sees them in the order e, d, c, b, a. The linear scan puts d
-- and then b with e (the first group that takes them), c apart (it meets
-- d), and then a, which meets b and c, needs a third block. Colouring
-- places the large blocks first: e with c, a apart, then d with a and b
-- with e: two blocks; the exact search proves two least.
-- ==
-- input { 3 [1, 2, 3] }
-- output { 78i64 }
-- input { 2 [5, 5] }
-- output { 50i64 }
-- structure { Alloc 5 }
-- structure simplify,reuse-first-fit { Alloc 3 }
-- structure simplify,reuse { Alloc 2 }
-- structure simplify,reuse-optimal { Alloc 2 }
def main (n: int) (xs: [n]int) =
  let (h: int) = (n + n) / 2
  let (m: int) = h + h
  let (e: [m]int) = kernel i < m do
      let (v: int) = i * 2
      in (v)
  let (se: int) = reduce (+) 0 e
  let (a: [m]int) = replicate m 1
  let (b: [h]int) = replicate h 2
  let (sb: int) = reduce (+) 0 b
  let (c: [m]int) = replicate m 3
  let (sa: int) = reduce (+) 0 a
  let (d: [h]int) = replicate h 4
  let (sc: int) = reduce (+) 0 c
  let (sd: int) = reduce (+) 0 d
  let (sx: int) = reduce (+) 0 xs
  let (s1: int) = sa + sb
  let (s2: int) = sc + sd
  let (s3: int) = se + sx
  let (s4: int) = s1 + s2
  let (s: int) = s3 + s4
  in (s)
