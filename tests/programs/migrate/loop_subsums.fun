-- Migration (thesis fig. 22, Listing 11): a for loop that reads an element
-- and writes a running sum into the array each iteration. The read stays
-- on the device; the sum is carried in a one-element array and written
-- into the array from the device.
-- ==
-- input { 4 [1, 2, 3, 4] }
-- output { [1i64, 3i64, 6i64, 10i64] }
-- structure simplify { HostRead 1 }
-- structure simplify,migrate { HostRead 0 }
def main (n: int) (xs: *[n]int) =
  let (s0: int) = 0
  let (ys: [n]int) (s: int) = loop (b: [n]int) (x: int) = (xs, s0) for i < n do
      let (v: int) = b[i]
      let (s2: int) = x + v
      let (c: [n]int) = b with [i] = s2
      in (c, s2)
  in (ys)
