-- A loop with two parameters and one initial value.
-- ==
-- error: loop: 2 parameters declared, but 1 initial value given
def main (n: int) =
  let (r: int) (s: int) = loop (a: int) (b: int) = (0) for i < n do
      in (a, b)
  in (r)
