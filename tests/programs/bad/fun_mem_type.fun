-- FUN has no memory blocks: the type `mem` is a syntax error in a .fun file.
-- ==
-- error: type `mem` belongs to FUNMEM
def main (n: int) (m: mem) =
  in (n)
