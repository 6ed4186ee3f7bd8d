-- Migration (thesis fig. 20, Listing 10): a while loop whose condition
-- reads the array every iteration moves to the device as a whole, so no
-- read remains in the loop; its result is a program result and is read
-- once after it.
-- ==
-- input { 5 [1, 2, 9, 4, 12] 3 }
-- output { 2i64 }
-- input { 3 [1, 2, 3] 5 }
-- output { 3i64 }
-- structure simplify { HostRead 1 kernel 0 }
-- structure simplify,migrate { HostRead 1 kernel 1 }
def main (n: int) (xs: [n]int) (m: int) =
  let (c0: int) = 0 < n
  let (gone: int) (r: int) = loop (go: int) (i: int) = (c0, 0) while go do
      let (x: int) = xs[i]
      let (small: int) = x <= m
      let (i2: int) = i + small
      let (inb: int) = i2 < n
      let (go2: int) = small && inb
      in (go2, i2)
  in (r)
