-- A kernel's element type may not depend on a name bound inside the kernel:
-- every row would have a different size k.
-- ==
-- error: unbound variable `k`
def main (n: int) =
  let (yss: [n][k]int) = kernel i < n do
      let (k: int) = i + 1
      let (r: [k]int) = iota k
      in (r)
  in (yss)
