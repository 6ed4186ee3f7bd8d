-- Arithmetic operators with C precedence (`*` `/` `%` bind tighter than
-- `+` `-`), left associativity, unary minus and parentheses.
-- ==
-- input { 7 3 }
-- output { 10i64 4i64 21i64 2i64 1i64 7i64 3i64 7i64 9i64 2i64 -13i64 4i64 -8i64 7i64 }
-- input { -5 4 }
-- output { -1i64 -9i64 -20i64 -1i64 -1i64 7i64 -10i64 -5i64 9i64 2i64 -3i64 -13i64 18i64 -5i64 }
def main (a: int) (b: int) =
  let (s: int) = a + b
  let (d: int) = a - b
  let (p: int) = a * b
  let (q: int) = a / b
  let (r: int) = a % b
  let (prec: int) = 1 + 2 * 3
  let (lassoc: int) = a - b - 1
  let (divmod: int) = a / b * b + a % b
  let (paren: int) = (1 + 2) * 3
  let (divdiv: int) = 100 / 10 / 5
  let (neg: int) = -a + b * -2
  let (mix: int) = a - b * 2 + 10 % a
  let (negparen: int) = -(a - b) * 2
  let (negneg: int) = -(-a)
  in (s, d, p, q, r, prec, lassoc, divmod, paren, divdiv, neg, mix, negparen, negneg)
