-- An `if` whose branches return arrays of different sizes, each with its
-- size: a slice of the input (size k) or a fresh iota (size 2n). Only the
-- branch taken is evaluated.
-- ==
-- input { 4 [1, 2, 3, 4] 1 2 }
-- output { 2i64 [2i64, 3i64] }
-- input { 2 [5, 6] 0 7 }
-- output { 4i64 [0i64, 1i64, 2i64, 3i64] }
-- input { 2 [5, 6] 1 2 }
-- error: (?i)out of bounds
def main (n: int) (xs: [n]int) (c: int) (k: int) =
  let (r: int) (ys: [r]int) = if c then
      let (a: [k]int) = xs[1:k]
      in (k, a)
    else
      let (n2: int) = n * 2
      let (b: [n2]int) = iota n2
      in (n2, b)
  in (r, ys)
