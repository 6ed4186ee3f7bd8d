-- The example of the language reference (docs/language.md, Syntax): each element doubled plus its index.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [2i64, 5i64, 8i64] }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) }
def main (n: int) (xs: [n]int) =
  let (ys: [n]int) = kernel i < n do
        let (x: int) = xs[i]
        let (y: int) = x * 2 + i
        in (y)
  in (ys)
