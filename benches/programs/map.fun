-- A map over n elements: each element read once and written once, the
-- pattern a copy kernel sets the bar for. iota builds the input on the
-- device, so that large n needs no input file.
-- ==
-- input { 5 }
-- output { [1i64, 4i64, 7i64, 10i64, 13i64] }
def main (n: int) =
  let (xs: [n]int) = iota n
  let (ys: [n]int) = kernel i < n do
        let (x: int) = xs[i]
        let (y: int) = x * 3 + 1
        in (y)
  in (ys)
