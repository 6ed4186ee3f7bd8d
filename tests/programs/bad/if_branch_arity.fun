-- Each branch of an `if` returns one value per name of the pattern.
-- ==
-- error: if: the then branch returns 1 value, but the pattern binds 2 names
def main (c: int) (n: int) =
  let (k: int) (xs: [k]int) = if c then
      let (ys: [n]int) = iota n
      in (ys)
    else
      let (zs: [n]int) = iota n
      in (n, zs)
  in (k, xs)
