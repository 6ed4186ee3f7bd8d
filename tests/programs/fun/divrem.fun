-- `/` and `%` truncate toward zero as in C: the remainder takes the sign of
-- the dividend, and (a / b) * b + a % b = a. Division by zero is stuck.
-- ==
-- input { -7 2 }
-- output { -3i64 -1i64 -7i64 3i64 -1i64 }
-- input { 7 -2 }
-- output { -3i64 1i64 7i64 3i64 -1i64 }
-- input { 5 0 }
-- error: (?i)division by zero
def main (a: int) (b: int) =
  let (q: int) = a / b
  let (r: int) = a % b
  let (back: int) = q * b + r
  let (c1: int) = -7 / -2
  let (c2: int) = -7 % -2
  in (q, r, back, c1, c2)
