-- `#` is not a character of the language.
-- ==
-- error: unexpected character '#'
def main (x: int) =
  let (y: int) = x # 1
  in (y)
