-- The condition of an `if` is a bool or an int.
-- ==
-- error: if: the condition `xs` must have type bool or int, but it is \[n\]int
def main (n: int) (xs: [n]int) =
  let (y: int) = if xs then
      let (a: int) = 1
      in (a)
    else
      let (b: int) = 2
      in (b)
  in (y)
