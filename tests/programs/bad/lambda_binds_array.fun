-- An operator's body binds only scalars (it allocates nothing).
-- ==
-- error: reduce: an operator's body binds only scalars, but `t` is \[2\]int
def main (n: int) (xs: [n]int) =
  let (s: int) = reduce (\(a: int) (b: int) ->
      let (t: [2]int) = iota 2
      let (c: int) = a + b
      in (c)) 0 xs
  in (s)
