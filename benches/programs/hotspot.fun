-- HotSpot (Rodinia): the transient thermal simulation of a chip. The
-- temperature grid is advanced `iters` time steps; in each, every cell
-- moves towards its four neighbours (rx horizontally, ry vertically), the
-- ambient temperature (rz) and its own power density, scaled by the step
-- over the cell's heat capacity. The chip constants are Rodinia's (16 mm
-- chip, 0.5 mm thick, silicon, 80 degrees ambient).
--
-- Structure as in the Futhark version: a sequential loop over the time
-- steps around a 2-D map (here two nested kernels) over the grid, the
-- loop carrying the grid.
--
-- What differs: the Futhark version picks one of nine formulas (four
-- corners, four edges, the interior) with a chain of ifs. Our port reads
-- each neighbour with its index clamped to the grid, as Rodinia's OpenCL
-- kernel does, and uses the interior formula everywhere: a missing
-- neighbour then reads the cell itself and its difference is zero, so the
-- nine formulas are the same up to rounding (the test's reference uses
-- the nine cases). The number of iterations is an i64 (Futhark: i32),
-- since our loop bounds are i64; the sizes are explicit parameters.
--
-- Datasets: two small cases for the interpreters and PoCL, and Table 4's
-- HotSpot 1024×1024 with 360 iterations (`compiled`, random temperatures
-- and powers, for funmem bench).
-- ==
-- input { 3i64 4i64 2i64
--   [[320.0f32, 321.5f32, 323.0f32, 324.5f32],
--    [326.0f32, 327.5f32, 329.0f32, 330.5f32],
--    [332.0f32, 333.5f32, 335.0f32, 336.5f32]]
--   [[0.001f32, 0.002f32, 0.0f32, 0.003f32],
--    [0.0005f32, 0.004f32, 0.001f32, 0.0f32],
--    [0.002f32, 0.0f32, 0.0015f32, 0.0025f32]] }
-- output { [[319.96802f32, 321.46783f32, 322.9676f32, 324.4674f32],
--   [325.96722f32, 327.46698f32, 328.9668f32, 330.4666f32],
--   [331.96637f32, 333.4662f32, 334.966f32, 336.46576f32]] }
-- input { 5i64 6i64 4i64 [[432.0f32, 312.5f32, 693.0f32, 573.5f32, 454.0f32, 334.5f32],
--   [715.0f32, 595.5f32, 476.0f32, 356.5f32, 737.0f32, 617.5f32],
--   [498.0f32, 378.5f32, 759.0f32, 639.5f32, 520.0f32, 400.5f32],
--   [781.0f32, 661.5f32, 542.0f32, 422.5f32, 303.0f32, 683.5f32],
--   [564.0f32, 444.5f32, 325.0f32, 705.5f32, 586.0f32, 466.5f32]]
--   [[0.0f32, 0.0f32, 0.0f32, 553.0f32, 0.0f32, 0.0f32],
--   [0.0f32, 597.0f32, 0.0f32, 0.0f32, 0.0f32, 0.0f32],
--   [0.0f32, 0.0f32, 0.0f32, 0.0f32, 0.0f32, 0.0f32],
--   [0.0f32, 0.0f32, 0.0f32, 0.0f32, 0.0f32, 0.0f32],
--   [534.0f32, 0.0f32, 0.0f32, 0.0f32, 578.0f32, 0.0f32]] }
-- output { [[431.9076f32, 312.45105f32, 692.8244f32, 573.4519f32, 453.90393f32, 334.4381f32],
--   [714.822f32, 595.4492f32, 475.90088f32, 356.44214f32, 736.80884f32, 617.3524f32],
--   [497.89282f32, 378.43628f32, 758.803f32, 639.34424f32, 519.88257f32, 400.42334f32],
--   [780.8044f32, 661.3384f32, 541.8767f32, 422.41516f32, 302.95642f32, 683.32544f32],
--   [563.955f32, 444.40564f32, 324.9469f32, 705.32007f32, 585.95166f32, 466.40198f32]] }
-- compiled random input { 1024i64 1024i64 360i64 [1024][1024]f32 [1024][1024]f32 }
def main (row: int) (col: int) (iters: int) (temp: [row][col]f32) (power: [row][col]f32) =
  let (grid_height: f32) = 0.016 / f32(row)
  let (grid_width: f32) = 0.016 / f32(col)
  let (cap: f32) = 0.5 * 1750000.0 * 0.0005 * grid_width * grid_height
  let (rx: f32) = grid_width / (2.0 * 100.0 * 0.0005 * grid_height)
  let (ry: f32) = grid_height / (2.0 * 100.0 * 0.0005 * grid_width)
  let (rz: f32) = 0.0005 / (100.0 * grid_height * grid_width)
  let (max_slope: f32) = 3000000.0 / (0.5 * 0.0005 * 1750000.0)
  let (step: f32) = 0.001 / max_slope
  let (scale: f32) = step / cap
  let (final: [row][col]f32) = loop (t: [row][col]f32) = (temp) for it < iters do
    let (next: [row][col]f32) = kernel r < row do
      let (cells: [col]f32) = kernel c < col do
        let (here: f32) = t[r, c]
        let (north: f32) = t[max(r - 1, 0), c]
        let (south: f32) = t[min(r + 1, row - 1), c]
        let (west: f32) = t[r, max(c - 1, 0)]
        let (east: f32) = t[r, min(c + 1, col - 1)]
        let (p: f32) = power[r, c]
        let (flow: f32) = (east + west - 2.0 * here) / rx + (south + north - 2.0 * here) / ry
        let (delta: f32) = scale * (p + flow + (80.0 - here) / rz)
        in (here + delta)
      in (cells)
    in (next)
  in (final)
