-- An allocation whose size is a polynomial of degree 27 in the kernel
-- index. No prover can bound max(se(0), se(n-1)) within its limits (the
-- LMAD procedure refuses the degree, Z3 is killed at its time limit), so
-- memory expansion computes every iteration's size before the kernel and
-- hoists the allocation with their maximum, as for a data-dependent size;
-- the passes must still finish in about a second.
-- ==
-- input { 2 0 -2 }
-- output { [0i64, 1i64] }
-- input { 3 -1 -2 }
-- output { [0i64, 1i64, 2i64] }
-- structure gpu-mem { alloc 3 }
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
