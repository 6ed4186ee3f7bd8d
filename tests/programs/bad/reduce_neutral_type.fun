-- A reduction's neutral element has the array's element type.
-- ==
-- error: reduce: the neutral element must be f32, the element type of `xs`, but `true` is bool
def main (n: int) (xs: [n]f32) =
  let (s: f32) = reduce (+) true xs
  in (s)
