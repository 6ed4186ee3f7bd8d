-- Each iteration must return the result's element type: an int for an
-- [n]int result, not an array.
-- ==
-- error: kernel: each iteration must return int to make `\[n\]int`, but `r` is \[m\]int
def main (n: int) (m: int) =
  let (ys: [n]int) = kernel i < n do
      let (r: [m]int) = iota m
      in (r)
  in (ys)
