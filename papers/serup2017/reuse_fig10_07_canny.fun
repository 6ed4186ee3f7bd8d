-- Figs. 10.6-10.9 (canny's interference, as a program): the unique input
-- m0 and nine arrays m1 .. m9, each named after its block in the thesis.
-- Every kernel reads its inputs at a neighbour's index (clamped), so the
-- same-index exception removes no interference. m4 and m5 (one map with
-- two results in canny) are two kernels that both read m3; m7 and m8
-- (canny's scanomap) are two kernels that both read m6. m8 has n + 1
-- elements (n1, computed from the parameter first, so the max trick may
-- grow an earlier block for it); m9's size s is read from m7 late and
-- clamped to 0 .. 4, so no earlier block can be grown for it. The last
-- uses give exactly fig. 10.7's graph:
--   0-1 1-2 2-3 3-4 3-5 4-5 4-6 5-6 6-7 6-8 7-8 7-9 8-9
-- The thesis's linear scan keeps 5 blocks (m0 and 4 allocations), by hand
-- 4 (3 allocations); the graph's chromatic number is 3.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [59i64, 59i64, 59i64, 59i64] }
-- input { 2 [-5, 0] }
-- output { [21i64, 21i64, 21i64, 21i64] }
-- input { 1 [-1] }
-- output { [3i64] }
-- input { 2 [-9, -9] }
-- output { empty([0]i64) }
-- input { 0 empty([0]i64) }
-- error: (?i)out of bounds
-- structure { Alloc 9 copy 0 }
-- structure simplify,coalesce { Alloc 9 copy 0 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 3 copy 0 }
-- structure simplify,coalesce,reuse { Alloc 3 copy 0 }
-- structure simplify,coalesce,reuse-optimal { Alloc 3 copy 0 }
def main (n: int) (m0: *[n]int) =
  let (n1: int) = n + 1
  let (m1: [n]int) = kernel i < n do
      let (a: int) = m0[min(i + 1, n - 1)] + 1
      in (a)
  let (m2: [n]int) = kernel i < n do
      let (b: int) = m1[max(i - 1, 0)] * 2
      in (b)
  let (m3: [n]int) = kernel i < n do
      let (c: int) = m2[min(i + 1, n - 1)] + i
      in (c)
  let (m4: [n]int) = kernel i < n do
      let (d: int) = m3[min(i + 1, n - 1)] + 1
      in (d)
  let (m5: [n]int) = kernel i < n do
      let (e: int) = m3[max(i - 1, 0)] * 3
      in (e)
  let (m6: [n]int) = kernel i < n do
      let (f: int) = m4[min(i + 1, n - 1)] + m5[max(i - 1, 0)]
      in (f)
  let (m7: [n]int) = kernel i < n do
      let (g: int) = m6[max(i - 1, 0)] - i
      in (g)
  let (m8: [n1]int) = kernel i < n1 do
      let (h: int) = m6[min(i + 1, n - 1)] + i
      in (h)
  let (v: int) = m7[0]
  let (s: int) = min(max(v, 0), 4)
  let (m9: [s]int) = kernel i < s do
      let (r: int) = m7[min(i + 1, n - 1)] + m8[min(i + 2, n)]
      in (r)
  in (m9)
