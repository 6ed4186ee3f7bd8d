-- The pattern of a loop must have the parameters' types.
-- ==
-- error: loop: `r` binds the final value of parameter `a`, so it needs type int
def main (n: int) (xs: [n]int) =
  let (r: [n]int) = loop (a: int) = (0) for i < n do
      let (b: int) = a + i
      in (b)
  in (r)
