-- A reduction and a scan with lambdas: the largest absolute value, and a
-- running maximum. The operators are associative with the neutral elements
-- given, as parallel backends need. A lambda that gets stuck makes the
-- reduction stuck (here it divides by xs[1]: E-REDUCE in FUN, E-MEM-REDUCE
-- in FUNMEM, the division's own rule in IMP).
-- ==
-- input { 5 [3, -7, 2, 6, -1] }
-- output { 7i64 [3i64, 3i64, 3i64, 6i64, 6i64] }
-- input { 2 [4, 0] }
-- error: division by zero
def main (n: int) (xs: [n]int) =
  let (m: int) = reduce (\(a: int) (b: int) ->
      let (x: int) = abs(a)
      let (y: int) = abs(b)
      let (k: int) = 10 / xs[1]
      let (r: int) = max(x, y) + k * 0
      in (r)) 0 xs
  let (run: [n]int) = scan (\(a: int) (b: int) -> let (c: int) = max(a, b) in (c)) (-9223372036854775807 - 1) xs
  in (m, run)
