-- Errata 7 and 8 (errata.md): an `if` whose branches return arrays with
-- different strides (a matrix or its transpose) and different offsets (two
-- row slices). The FUNMEM translation returns each array's block, offset
-- and strides from the branches (Support); `funmem lower --to funmem
-- --passes none` shows all of them, and the simplifier keeps exactly those
-- that differ between the branches.
-- ==
-- input { 1 2 [[1, 2], [3, 4]] }
-- output { [[1i64, 2i64], [3i64, 4i64]] [3i64, 4i64] }
-- input { 0 2 [[1, 2], [3, 4]] }
-- output { [[1i64, 3i64], [2i64, 4i64]] [1i64, 2i64] }
def main (c: int) (n: int) (xss: [n][n]int) =
  let (ys: [n][n]int) = if c then
    in (xss)
  else
    let (t: [n][n]int) = transpose xss
    in (t)
  let (one: int) = 1
  let (r: [1][n]int) = if c then
    let (a: [1][n]int) = xss[one : 1, 0 : n]
    in (a)
  else
    let (b: [1][n]int) = xss[0 : 1, 0 : n]
    in (b)
  let (zero: int) = 0
  let (row: [n]int) = kernel j < n do
    let (v: int) = r[zero, j]
    in (v)
  in (ys, row)
