-- Fig. 5 (add, of type [2]int -> int -> int): add three integers, two of
-- them read from device memory, and return the sum. The figure's code is
-- drawn with its graph; we follow the caption: a = A[0] and b = A[1]
-- (each fed by a source), c = a + b, d = c + x, and d returned, so d is
-- connected to a sink. A and x have no vertices (no source reaches
-- them). Migrating the statements of a, b, c and d leaves one read, d's.
-- Thesis: 2 reads before, 1 after.
-- ==
-- structure simplify { HostRead 2 }
-- structure simplify,migrate { HostRead 1 }
-- input { [1, 2] 3 }
-- output { 6i64 }
-- input { [10, -4] 0 }
-- output { 6i64 }
def main (A: [2]int) (x: int) =
  let (a: int) = A[0]
  let (b: int) = A[1]
  let (c: int) = a + b
  let (d: int) = c + x
  in (d)
