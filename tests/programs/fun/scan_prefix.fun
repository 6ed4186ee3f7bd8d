-- Inclusive scans: each element is the reduction of the prefix up to it.
-- ==
-- input { 6 [1i32, 2i32, 3i32, 4i32, 5i32, 6i32] [true, true, false, true, true, true] }
-- output { [1i32, 3i32, 6i32, 10i32, 15i32, 21i32] [1i32, 2i32, 6i32, 24i32, 120i32, 720i32] [true, true, false, false, false, false] }
-- input { 0 empty([0]i32) empty([0]bool) }
-- output { empty([0]i32) empty([0]i32) empty([0]bool) }
def main (n: int) (xs: [n]i32) (bs: [n]bool) =
  let (sums: [n]i32) = scan (+) 0 xs
  let (prods: [n]i32) = scan (*) 1 xs
  let (alls: [n]bool) = scan (&&) true bs
  in (sums, prods, alls)
