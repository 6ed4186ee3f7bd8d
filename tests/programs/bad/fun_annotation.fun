-- FUN array types carry no memory annotation `@ m -> L`.
-- ==
-- error: memory annotation `@ m -> L` belongs to FUNMEM
def main (n: int) (xs: [n]int @ m -> R(n)) =
  in (xs)
