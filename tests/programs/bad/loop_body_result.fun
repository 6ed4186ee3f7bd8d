-- A loop body returns an array where its parameter is an int.
-- ==
-- error: loop: the body returns `xs` of type \[n\]int for the binding `a`, which needs type int
def main (n: int) (xs: [n]int) =
  let (r: int) = loop (a: int) = (0) for i < n do
      in (xs)
  in (r)
