-- Case (d), kernels: each iteration of the kernel makes a and then b,
-- both of m elements of one type, and reads a for the last time (s)
-- before b is made. Inside the body, before memory expansion, b can use
-- a's block. Expansion (`funmem opt FILE --passes simplify,expand-gpu`)
-- hoists every block of the body out of the kernel, one slot per
-- iteration, interleaved; a shared block stays one block there. Reuse
-- after expansion finds the two hoisted blocks apart too (each iteration
-- is done with a before b, and iteration i's interleaved places are
-- proved apart from every other iteration's: `--explain` says so), and
-- their sizes are one value under two names (max(m, -1) * n, kept
-- negative for a negative m so that the program still goes wrong), so one
-- block holds both.
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
-- structure simplify,coalesce,reuse-first-fit { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 2 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 2 copy 0 }
-- structure simplify,expand-gpu { Alloc 3 kernel 1 }
-- structure simplify,coalesce,reuse,expand-gpu { Alloc 2 kernel 1 }
-- structure simplify,expand-gpu,reuse { Alloc 2 kernel 1 }
def main (n: int) (m: int) =
  let (r: [n]int) = kernel i < n do
      let (a: [m]int) = iota m
      let (s: int) = reduce (+) i a
      let (b: [m]int) = replicate m s
      let (t: int) = reduce (+) 0 b
      in (t)
  in (r)
