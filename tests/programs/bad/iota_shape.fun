-- `iota n` is an [n] array; the pattern declares [m].
-- ==
-- error: iota produces an array of type \[n\]int, but `ys` is declared \[m\]int
def main (n: int) (m: int) =
  let (ys: [m]int) = iota n
  in (ys)
