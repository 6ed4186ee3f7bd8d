-- Erratum 10 (errata.md): TransformStm has no case for `iota` and `copy`
-- (derived forms) and TransformProgram none for array inputs. We give each
-- a block of its own, row-major, like a kernel's result.
-- ==
-- input { 3 [7, 8, 9] }
-- output { [7i64, 8i64, 9i64] [0i64, 1i64, 2i64] }
def main (n: int) (xs: [n]int) =
  let (ys: [n]int) = copy xs
  let (zs: [n]int) = iota n
  in (ys, zs)
