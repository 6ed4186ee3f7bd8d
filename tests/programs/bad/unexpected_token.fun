-- A pattern is `(name : type)`; the colon is missing.
-- ==
-- error: unexpected `int`; expected `:`
def main (x: int) =
  let (y int) = x + 1
  in (y)
