-- A pattern is `(name : type)`; the colon is missing.
-- ==
-- error: unexpected `int` \(a keyword: an element type\); expected `:`
def main (x: int) =
  let (y int) = x + 1
  in (y)
