-- A variable that is never bound.
-- ==
-- error: unbound variable `x`
def main (n: int) =
  let (y: int) = x + 1
  in (y)
