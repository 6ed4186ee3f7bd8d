-- A name may not be bound again where it is visible (no shadowing).
-- ==
-- error: `x` is already bound
def main (n: int) =
  let (x: int) = n + 1
  let (x: int) = n + 2
  in (x)
