-- IFL 2022 paper, fig. 2: an `if` whose branches make arrays of different
-- sizes, so each branch returns the size along with the array. (The paper's
-- else-branch returns `y`, which it never binds; we name the array `y`.)
-- ==
-- input { 1 3 2 }
-- output { 3i64 [0i64, 1i64, 2i64] }
-- input { 0 3 2 }
-- output { 2i64 [0i64, 1i64] }
-- input { 7 0 2 }
-- output { 0i64 empty([0]i64) }
def main (z_cond: int) (x_size: int) (y_size: int) =
  let (z_size: int) (z_arr: [z_size]int) = if z_cond then
    let (x: [x_size]int) = iota x_size
    in (x_size, x)
  else
    let (y: [y_size]int) = iota y_size
    in (y_size, y)
  in (z_size, z_arr)
