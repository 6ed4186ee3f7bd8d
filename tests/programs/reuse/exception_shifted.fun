-- The exception's proof, refused: ys's iteration i reads xs[(i + 1) % n],
-- the cell iteration i + 1 writes, so the obligation that two iterations'
-- places do not meet is refuted and ys keeps its own block. Taken without
-- the proof, ys is built in xs's block and iteration i + 1's write races
-- with iteration i's read.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [30i64, 40i64, 20i64] }
-- input { 4 [0, 1, 2, 3] }
-- output { [20i64, 30i64, 40i64, 10i64] }
-- structure { Alloc 2 }
-- structure simplify,reuse { Alloc 2 }
def main (n: int) (ns: [n]int) =
  let (xs: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (ys: [n]int) = kernel i < n do
      let (y: int) = xs[(i + 1) % n] * 10
      in (y)
  in (ys)
