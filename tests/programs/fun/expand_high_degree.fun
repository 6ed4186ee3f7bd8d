-- An allocation whose size is a polynomial of degree 27 in the kernel
-- index. No prover can bound it within its limits (the LMAD procedure
-- refuses the degree, Z3 is killed at its time limit), so the obligation
-- is unknown and memory expansion leaves the allocation in the kernel;
-- the passes must still finish in about a second.
-- ==
-- input { 2 0 -2 }
-- output { [0i64, 1i64] }
-- input { 3 -1 -2 }
-- output { [0i64, 1i64, 2i64] }
-- structure gpu-mem { alloc 2 }
def main (n: int) (m: int) (h: int) =
  let (res: [n]int) = kernel i < n do
    let (a: int) = i + m
    let (b: int) = a * a * a
    let (c: int) = b * b * b
    let (d: int) = c * c * c
    let (k: int) = d - h + i
    let (xs: [k]int) = iota k
    let (x: int) = xs[i]
    in (x)
  in (res)
