-- An `if` inside a kernel body (the Collatz step): odd elements become
-- 3x + 1, even ones x / 2. The two branches reuse the name `t`. Note
-- -3 % 2 = -1, which is non-zero, so -3 is odd.
-- ==
-- input { 5 [1, 2, 3, 4, -3] }
-- output { [4i64, 1i64, 10i64, 2i64, -8i64] }
-- input { 0 empty([0]i64) }
-- output { empty([0]i64) }
def main (n: int) (xs: [n]int) =
  let (ys: [n]int) = kernel i < n do
      let (x: int) = xs[i]
      let (odd: int) = x % 2 != 0
      let (y: int) = if odd then
          let (t: int) = x * 3 + 1
          in (t)
        else
          let (t: int) = x / 2
          in (t)
      in (y)
  in (ys)
