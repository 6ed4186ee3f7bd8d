-- An `if` branch returns an array where the pattern binds an int.
-- ==
-- error: if: the else branch returns `xs` of type \[n\]int for the binding `y`, which needs type int
def main (c: int) (n: int) (xs: [n]int) =
  let (y: int) = if c then
      let (a: int) = 1
      in (a)
    else
      in (xs)
  in (y)
