-- A `while` loop: the number of Collatz steps from x down to 1. The loop
-- runs while its parameter `go` is not 0.
-- ==
-- input { 6 }
-- output { 8i64 }
-- input { 7 }
-- output { 16i64 }
-- input { 1 }
-- output { 0i64 }
-- structure { loop 1 }
def main (x: int) =
  let (go0: int) = x > 1
  let (g: int) (v: int) (steps: int) = loop (go: int) (y: int) (k: int) = (go0, x, 0) while go do
      let (r: int) = y % 2
      let (h: int) = y / 2
      let (t: int) = 3 * y + 1
      let (y2: int) = if r then in (t) else in (h)
      let (k2: int) = k + 1
      let (go2: int) = y2 > 1
      in (go2, y2, k2)
  in (steps)
