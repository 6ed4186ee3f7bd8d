-- The condition of a while loop must be one of its parameters.
-- ==
-- error: loop: the condition of `while` must be a loop parameter, and `n` is not one
def main (n: int) =
  let (r: int) = loop (a: int) = (0) while n do
      let (b: int) = a + 1
      in (b)
  in (r)
