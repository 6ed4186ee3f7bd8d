-- Case (d), kernels, with two element types: as kernel_body.fun, but b
-- holds i32s (4 bytes) where a holds i64s (8 bytes). Their lifetimes do
-- not overlap, yet they must not share a block: after expansion
-- interleaves the iterations by element index, iteration i's a would sit
-- at bytes 8 (i + j n) and another iteration's b at bytes 4 (i' + j' n),
-- so one iteration's b would overwrite another's a while it is live.
-- ==
-- input { 2 3 }
-- output { [9i64, 12i64] }
-- input { 3 1 }
-- output { [0i64, 1i64, 2i64] }
-- input { 0 2 }
-- output { empty([0]i64) }
-- input { 2 -1 }
-- error: (?i)negative
-- structure { Alloc 3 copy 0 }
-- structure simplify,coalesce { Alloc 3 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 3 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 3 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 3 copy 0 }
-- structure simplify,expand-gpu { Alloc 3 kernel 1 }
-- structure simplify,coalesce,reuse,expand-gpu { Alloc 3 kernel 1 }
def main (n: int) (m: int) =
  let (r: [n]int) = kernel i < n do
      let (a: [m]int) = iota m
      let (s: int) = reduce (+) i a
      let (b: [m]i32) = replicate m (i32(s))
      let (t: i32) = reduce (+) 0i32 b
      let (u: int) = i64(t)
      in (u)
  in (r)
