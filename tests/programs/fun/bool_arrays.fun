-- Arrays of bools: a kernel computes a predicate per element, reductions
-- with (&&) and (||) combine them, and a count converts bools to ints.
-- ==
-- input { 4 [2, 4, 7, 8] }
-- output { [true, true, false, true] false true 3i64 }
def main (n: int) (xs: [n]int) =
  let (even: [n]bool) = kernel i < n do
    let (x: int) = xs[i]
    let (e: bool) = x % 2 == 0
    in (e)
  let (all: bool) = reduce (&&) true even
  let (any: bool) = reduce (||) false even
  let (ones: [n]int) = kernel j < n do
    let (b: bool) = even[j]
    let (k: int) = i64(b)
    in (k)
  let (count: int) = reduce (+) 0 ones
  in (even, all, any, count)
