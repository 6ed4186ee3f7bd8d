-- A scalar expression produces one value; the pattern binds two names.
-- ==
-- error: scalar expression produces one value, but the pattern binds 2
def main (x: int) =
  let (a: int) (b: int) = x + 1
  in (a)
