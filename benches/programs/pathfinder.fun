-- Pathfinder (Rodinia): dynamic programming over a grid of `rows` rows
-- and `cols` columns of wall costs. Going down one row at a time, each
-- column's cheapest path so far is its own cost in the new row plus the
-- least of the cheapest paths of the column itself and its left and right
-- neighbours (those that exist). The result is the last row's costs.
--
-- Structure as in the Futhark version: the walls are built by a map over
-- every cell (here two nested kernels), each computing a Sobol number of
-- the cell's index + 1 (row-major) modulo 10; then a sequential loop over
-- the rows carries the row of path costs, each step a map over the
-- columns.
--
-- What differs: our language has no bitwise operators, so the Sobol
-- number is computed with division and remainder: bit b of the Gray code
-- (n >> 1) ^ n is (n / 2^b + n / 2^(b+1)) % 2, and since the thirty
-- direction vectors 2^29, 2^28, ..., 1 have one bit each, the exclusive or
-- of those selected is their sum. The Futhark version rotates the row to
-- read the neighbours; we index them, under the same tests (i > 0,
-- i < cols - 1).
--
-- Datasets: two small grids for the interpreters and PoCL, and Table 4's
-- array of size 10^5 (Futhark's medium dataset: 10^5 columns, 100 rows)
-- as a `compiled input`: the walls are made in the program, so the input
-- is the two sizes.
-- ==
-- input { 10i64 5i64 }
-- output { [8i32, 12i32, 10i32, 12i32, 8i32, 12i32, 10i32, 6i32, 2i32, 8i32] }
-- input { 37i64 9i64 }
-- output { [22i32, 18i32, 14i32, 16i32, 10i32, 4i32, 12i32, 16i32, 18i32, 12i32,
--   8i32, 6i32, 8i32, 14i32, 12i32, 8i32, 14i32, 16i32, 12i32, 14i32,
--   6i32, 18i32, 16i32, 10i32, 12i32, 12i32, 10i32, 8i32, 14i32, 6i32,
--   14i32, 8i32, 10i32, 10i32, 14i32, 6i32, 8i32] }
-- compiled input { 100000i64 100i64 }
def main (cols: int) (rows: int) =
  let (wall: [rows][cols]i32) = kernel r < rows do
    let (wrow: [cols]i32) = kernel c < cols do
      let (n: int) = r * cols + c + 1
      let (sobol: int) (pow: int) = loop (acc: int) (p: int) = (0, 1) for b < 30 do
        let (bit: int) = (n / p % 2 + n / (2 * p) % 2) % 2
        in (acc + bit * (536870912 / p), 2 * p)
      in (i32(sobol % 10))
    in (wrow)
  let (top: [cols]i32) = wall[0]
  let (first: [cols]i32) = copy top
  let (last: [cols]i32) = loop (cost: [cols]i32) = (first) for t < rows - 1 do
    let (next: [cols]i32) = kernel i < cols do
      let (own: i32) = cost[i]
      let (m1: i32) = if i > 0 then
          let (left: i32) = cost[i - 1]
          in (min(own, left))
        else in (own)
      let (m2: i32) = if i < cols - 1 then
          let (right: i32) = cost[i + 1]
          in (min(m1, right))
        else in (m1)
      let (w: i32) = wall[t + 1, i]
      in (w + m2)
    in (next)
  in (last)
