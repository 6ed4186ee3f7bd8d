-- A branch of an `if` may not bind a name that is visible outside it.
-- ==
-- error: `y` is already bound
def main (c: int) =
  let (y: int) = c + 1
  let (z: int) = if c then
      let (y: int) = 2
      in (y)
    else
      let (w: int) = 3
      in (w)
  in (z)
