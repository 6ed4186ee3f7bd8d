-- A kernel index may not reuse a visible name (here the parameter n).
-- ==
-- error: `n` is already bound
def main (n: int) =
  let (ys: [n]int) = kernel n < n do
      let (y: int) = 1
      in (y)
  in (ys)
