-- Both operands of an operator have one type: an f32 and an i32 do not
-- add; a conversion says which is meant.
-- ==
-- error: `\+` needs two operands of one type, but `x` is f32 and `k` is i32
def main (x: f32) (k: i32) =
  let (y: f32) = x + k
  in (y)
