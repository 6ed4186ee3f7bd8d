-- IEEE floats: division by zero gives an infinity, 0/0 and sqrt of a
-- negative number a NaN, and min/max ignore a NaN operand. Printed as
-- Futhark prints them.
-- ==
-- input { 1.0f64 -4.0f64 }
-- output { f64.inf -f64.inf f64.nan 2.0f64 1.0f64 0.5f64 2.718281828459045f64 0.0f64 }
def main (a: f64) (b: f64) =
  let (pinf: f64) = a / 0.0
  let (ninf: f64) = b / 0.0
  let (nan: f64) = sqrt(b)
  let (s: f64) = sqrt(-b)
  let (m: f64) = max(nan, a)
  let (h: f64) = min(a / 2, nan)
  let (e: f64) = exp(a)
  let (l: f64) = log(a)
  in (pinf, ninf, nan, s, m, h, e, l)
