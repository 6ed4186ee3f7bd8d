-- An array parameter whose size changes must name its size as a parameter:
-- here the body returns an array of size k for a parameter of size n.
-- ==
-- error: loop: the body returns `ys` of type \[k\]int for the binding `a`, which needs type \[n\]int
def main (n: int) (k: int) (xs: [n]int) (ys: [k]int) =
  let (r: [n]int) = loop (a: [n]int) = (xs) for i < n do
      in (ys)
  in (r)
