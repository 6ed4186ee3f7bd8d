-- A kernel may not update an array made outside it.
-- ==
-- error: the update of `c` consumes `c`, which was made outside the enclosing kernel or loop body
def main (n: int) (xs: [n]int) =
  let (c: [n]int) = copy xs
  let (r: [n]int) = kernel i < n do
      let (d: [n]int) = c with [i] = 1
      let (v: int) = d[i]
      in (v)
  in (r)
