-- A loop parameter initialised with a value of another type.
-- ==
-- error: loop: the initial value `xs` of type \[n\]int does not fit the parameter `a`, which needs type int
def main (n: int) (xs: [n]int) =
  let (r: int) = loop (a: int) = (xs) for i < n do
      let (b: int) = a + i
      in (b)
  in (r)
