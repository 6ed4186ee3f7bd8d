-- Erratum 2 (errata.md): fig. 5's slice(v, k1, k2) lists v_k1 .. v_k1+k2,
-- which is k2 + 1 elements; a slice `x[o : k]` has exactly k elements,
-- x[o] .. x[o+k-1] (docs/language.md, Conventions).
-- ==
-- input { 4 [10, 20, 30, 40] 1 2 }
-- output { [20i64, 30i64] }
-- input { 4 [10, 20, 30, 40] 0 0 }
-- output { empty([0]i64) }
-- input { 4 [10, 20, 30, 40] 3 2 }
-- error: out of bounds
def main (n: int) (xs: [n]int) (o: int) (k: int) =
  let (ys: [k]int) = xs[o : k]
  in (ys)
