-- An array size must be an int in scope: n is not a parameter.
-- ==
-- error: unbound variable `n`
def main (xs: [n]int) =
  in (xs)
