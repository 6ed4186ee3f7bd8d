-- replicate n v has shape [n] followed by v's shape.
-- ==
-- error: replicate produces an array of type \[3\]\[n\]int, but `r` is declared
def main (n: int) (xs: [n]int) =
  let (r: [3]int) = replicate 3 xs
  in (r)
