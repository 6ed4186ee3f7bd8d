-- A kernel's result has the kernel's bound as its outer size.
-- ==
-- error: kernel: the result's outer size must be the kernel's bound `n`, but it is `m`
def main (n: int) (m: int) =
  let (ys: [m]int) = kernel i < n do
      let (y: int) = i
      in (y)
  in (ys)
