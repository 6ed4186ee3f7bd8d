-- FUN has no memory blocks: `alloc` is a syntax error in a .fun file.
-- ==
-- error: `alloc` belongs to FUNMEM
def main (n: int) =
  let (m: int) = alloc n
  in (m)
