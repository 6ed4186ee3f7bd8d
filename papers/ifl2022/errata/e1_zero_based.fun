-- Erratum 1 (errata.md): indices are 0-based. The paper's figures index
-- arrays from 1 while its LMADs, R(n) included, address from 0. Here the
-- first element is xs[0] and xs[n] is out of bounds.
-- ==
-- input { 3 [10, 20, 30] 0 }
-- output { 10i64 }
-- input { 3 [10, 20, 30] 2 }
-- output { 30i64 }
-- input { 3 [10, 20, 30] 3 }
-- error: out of bounds
def main (n: int) (xs: [n]int) (k: int) =
  let (x: int) = xs[k]
  in (x)
