-- A scalar expression cannot have an array operand.
-- ==
-- error: variable `xs` must be a scalar, but it is \[n\]int
def main (n: int) (xs: [n]int) =
  let (y: int) = xs + 1
  in (y)
