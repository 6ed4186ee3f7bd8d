-- k-means clustering (Rodinia kmeans, after the Futhark version that the
-- theses measured). Points are `n` rows of `d` f32 features. The first `k`
-- points are the initial centres and point i starts in cluster i % k. Each
-- round of a `while` loop:
--   1. assigns every point to its nearest centre (a kernel over the points;
--      per point a sequential fold over the centres, each distance a
--      sequential sum over the features; the first nearest centre wins);
--   2. recomputes the centres as the means of their points;
--   3. counts the points whose cluster changed (a kernel and a `reduce`).
-- It stops when at most `threshold` points changed or after
-- `max_iterations` rounds. The results are the centres and the number of
-- rounds.
--
-- What differs from the Futhark version: our FUN has no `hist`, so step 2
-- is a two-stage reduction per bin of the k x d centres. The points are
-- split into at most 256 runs; a kernel over (cluster, feature, run) sums
-- the feature over the run's points of the cluster (and one over (cluster,
-- run) counts them), then a kernel over the bins adds up the runs' sums
-- (k * n * d work, where Futhark's histogram does n * d). An empty
-- cluster's centre becomes 0, as in Futhark (its sum over a count of 1).
-- No tuples or records: the fold over the centres carries the best index
-- and distance as two loop parameters. `n`, `d` and `k` are i64 inputs (sizes
-- are i64); the threshold, the iteration limit and the rounds are i32 as in
-- Futhark.
--
-- Table 4 (the last case, for `funmem bench`): k-means on kdd_cup-sized
-- random data, 494019 points of 34 features, 5 clusters (Rodinia's k),
-- threshold 1, at most 500 rounds (Rodinia's iteration limit).
-- ==
-- input { 6i64 2i64 0i32 2i64 10i32
--   [[1.0f32, 1.0f32], [1.5f32, 2.0f32], [9.0f32, 8.0f32],
--    [8.0f32, 8.0f32], [0.5f32, 1.5f32], [9.5f32, 9.0f32]] }
-- output { [[1.0f32, 1.5f32], [8.833333f32, 8.333333f32]] 3i32 }
-- input { 8i64 3i64 0i32 3i64 20i32
--   [[0.0f32, 0.0f32, 1.0f32], [5.0f32, 5.0f32, 5.0f32], [-4.0f32, 2.0f32, 0.0f32],
--    [0.5f32, -0.5f32, 1.5f32], [5.5f32, 4.0f32, 6.0f32], [-3.0f32, 3.0f32, 0.5f32],
--    [4.0f32, 6.0f32, 4.5f32], [-5.0f32, 1.0f32, -1.0f32]] }
-- output { [[0.25f32, -0.25f32, 1.25f32], [4.833333f32, 5.0f32, 5.166667f32],
--           [-4.0f32, 2.0f32, -0.166667f32]] 2i32 }
-- compiled random input { 494019i64 34i64 1i32 5i64 500i32 [494019][34]f32 }
def main (n: int) (d: int) (threshold: i32) (k: int) (max_iterations: i32) (points: [n][d]f32) =
  let (init_centres: [k][d]f32) = points[0:k, 0:d]
  let (centres0: [k][d]f32) = copy init_centres
  let (membership0: [n]i32) = kernel i < n do
    in (i32(i % k))
  -- Step 2's points are split into `chunks` runs of `run` points each.
  let (chunks: int) = min(n, 256)
  let (run: int) = (n + chunks - 1) / max(chunks, 1)
  let (go0: bool) = 0i32 < max_iterations
  let (membership: [n]i32) (centres: [k][d]f32) (rounds: i32) (go: bool) = loop (old: [n]i32) (cs: [k][d]f32) (r: i32) (g: bool) = (membership0, centres0, 0i32, go0) while g do
    -- 1. The nearest centre of each point.
    let (new: [n]i32) = kernel i < n do
      let (p: [d]f32) = points[i]
      let (bi: i64) (bd: f32) = loop (ci: i64) (cd: f32) = (0, f32.inf) for c < k do
        let (dist: f32) = loop (s: f32) = (0.0f32) for j < d do
          let (t: f32) = p[j] - cs[c, j]
          in (s + t * t)
        let (closer: bool) = dist < cd
        let (ni: i64) (nd: f32) = if closer then in (c, dist) else in (ci, cd)
        in (ni, nd)
      in (i32(bi))
    -- 2. The new centres: the mean of each cluster's points, summed in two
    --    stages: partial sums and counts over `chunks` runs of points, then
    --    the runs' totals.
    let (sums: [k][d][chunks]f32) = kernel c < k do
      let (cl: [d][chunks]f32) = kernel j < d do
        let (part: [chunks]f32) = kernel b < chunks do
          let (s: f32) = loop (acc: f32) = (0.0f32) for t < run do
            let (i: i64) = b * run + t
            let (mine: bool) = i < n && i64(new[min(i, n - 1)]) == c
            let (x: f32) = if mine then in (points[i, j]) else in (0.0f32)
            in (acc + x)
          in (s)
        in (part)
      in (cl)
    let (counts: [k][chunks]i32) = kernel c < k do
      let (part: [chunks]i32) = kernel b < chunks do
        let (m: i32) = loop (acc: i32) = (0i32) for t < run do
          let (i: i64) = b * run + t
          let (mine: bool) = i < n && i64(new[min(i, n - 1)]) == c
          in (acc + i32(mine))
        in (m)
      in (part)
    let (new_cs: [k][d]f32) = kernel c < k do
      let (cc: [chunks]i32) = counts[c]
      let (count: i32) = reduce (+) 0i32 cc
      let (den: i32) = if count == 0i32 then in (1i32) else in (count)
      let (row: [d]f32) = kernel j < d do
        let (sc: [chunks]f32) = sums[c, j]
        let (sum: f32) = reduce (+) 0.0f32 sc
        in (sum / f32(den))
      in (row)
    -- 3. How many points changed cluster.
    let (changed: [n]i32) = kernel i < n do
      let (diff: bool) = old[i] != new[i]
      in (i32(diff))
    let (delta: i32) = reduce (+) 0i32 changed
    let (r2: i32) = r + 1i32
    let (g2: bool) = delta > threshold && r2 < max_iterations
    in (new, new_cs, r2, g2)
  in (centres, rounds)
