-- A body ends with `in (results)`; here the `in` is missing.
-- ==
-- error: unexpected `\(`; expected .*`in`
def main (x: int) =
  let (y: int) = x + 1
  (y)
