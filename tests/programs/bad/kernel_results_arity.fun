-- A kernel with two result arrays needs two values from each iteration.
-- ==
-- error: kernel: the body must return one value per result array \(2\), but it returns 1 value
def main (n: int) =
  let (a: [n]int) (b: [n]int) = kernel i < n do
      in (i)
  in (a, b)
