-- Prefix sums in place: a `for` loop carries a running sum and an array it
-- updates one element per iteration (the array is the loop's own copy).
-- ==
-- input { 3 [1, 2, 3] }
-- output { 6i64 [1i64, 3i64, 6i64] }
-- input { 5 [5, -1, 0, 2, 10] }
-- output { 16i64 [5i64, 4i64, 4i64, 6i64, 16i64] }
-- input { 0 empty([0]i64) }
-- output { 0i64 empty([0]i64) }
-- structure { loop 1 update 1 }
def main (n: int) (xs: [n]int) =
  let (ys: [n]int) = copy xs
  let (acc: int) (zs: [n]int) = loop (s: int) (a: [n]int) = (0, ys) for i < n do
      let (x: int) = a[i]
      let (s2: int) = s + x
      let (a2: [n]int) = a with [i] = s2
      in (s2, a2)
  in (acc, zs)
