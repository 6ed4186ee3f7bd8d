-- A slice of an array is used after an update consumed the array.
-- ==
-- error: `s`, which may alias `xs`, is used after it was consumed
def main (n: int) (xs: *[n]int) =
  let (s: [1]int) = xs[0 : 1]
  let (ys: [n]int) = xs with [0] = 1
  let (v: int) = s[0]
  in (ys, v)
