-- Only arrays can be indexed.
-- ==
-- error: index: the operand `x` must have type array, but it is int
def main (x: int) =
  let (y: int) = x[0]
  in (y)
