-- `xs[a:b]` is the b elements of xs from offset a (0-based); a slice of
-- size 0 is empty; a slice reaching past the end is out of bounds. A literal
-- size in the pattern's type (`[2]int`).
-- ==
-- input { 5 [10, 20, 30, 40, 50] 1 3 }
-- output { [20i64, 30i64, 40i64] [10i64, 20i64] }
-- input { 4 [1, 2, 3, 4] 2 0 }
-- output { empty([0]i64) [1i64, 2i64] }
-- input { 3 [1, 2, 3] 2 2 }
-- error: (?i)out of bounds
def main (n: int) (xs: [n]int) (a: int) (b: int) =
  let (ys: [b]int) = xs[a:b]
  let (hd: [2]int) = xs[0:2]
  in (ys, hd)
