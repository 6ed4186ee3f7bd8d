-- Integer literals are 64-bit: 2^63 does not fit (only -9223372036854775808,
-- the minimum, may be written with it).
-- ==
-- error: integer literal does not fit in 64 bits
def main (x: int) =
  let (y: int) = 9223372036854775808
  in (y)
