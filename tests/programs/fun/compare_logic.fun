-- Comparisons, `&&`, `||` and `!` give 1 or 0 (any non-zero int is true);
-- `min` and `max`; relational operators bind tighter than `==` `!=`, which
-- bind tighter than `&&`, which binds tighter than `||`.
-- ==
-- input { 5 7 }
-- output { 1i64 1i64 0i64 0i64 0i64 1i64 1i64 1i64 0i64 1i64 5i64 7i64 1i64 1i64 1i64 1i64 10i64 0i64 }
-- input { 0 -3 }
-- output { 0i64 0i64 1i64 1i64 0i64 1i64 0i64 1i64 1i64 0i64 -3i64 0i64 1i64 0i64 1i64 2i64 -3i64 0i64 }
-- input { 4 4 }
-- output { 0i64 1i64 0i64 1i64 1i64 0i64 1i64 1i64 0i64 1i64 4i64 4i64 1i64 1i64 1i64 1i64 8i64 1i64 }
def main (a: int) (b: int) =
  let (lt: int) = a < b
  let (le: int) = a <= b
  let (gt: int) = a > b
  let (ge: int) = a >= b
  let (eq: int) = a == b
  let (ne: int) = a != b
  let (and1: int) = a && b
  let (or1: int) = a || b
  let (nota: int) = !a
  let (notnot: int) = !(!a)
  let (mn: int) = min(a, b)
  let (mx: int) = max(a, b)
  let (p1: int) = 1 < 2 == 1
  let (p2: int) = a != 0 || b && 0
  let (p3: int) = 2 + 3 > 4
  let (p4: int) = !a + 1
  let (p5: int) = min(a, b) * 2 + max(a - b, 0)
  let (p6: int) = a < b == b < a
  in (lt, le, gt, ge, eq, ne, and1, or1, nota, notnot, mn, mx, p1, p2, p3, p4, p5, p6)
