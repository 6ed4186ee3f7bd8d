-- An operator's parameters have the array's element type.
-- ==
-- error: scan: the operator's parameters must be i32, the element type of `xs`, but `a` is declared int
def main (n: int) (xs: [n]i32) =
  let (s: [n]i32) = scan (\(a: int) (b: int) -> let (c: int) = a + b in (c)) 0 xs
  in (s)
