-- Aliases: xs is an `if`'s array, in as's block or bs's. Its use in zs,
-- after ys is made, is a use of both blocks, so ys may not take either
-- (as takes zs's block instead: zs reads xs[i] before it writes zs[i]). Without spreading the use over the
-- aliases, as and bs die in the branches and ys's kernel overwrites the
-- one xs is in before zs reads it.
-- ==
-- input { 3 true [1, 2, 3] }
-- output { [103i64, 105i64, 107i64] }
-- input { 3 false [1, 2, 3] }
-- output { [103i64, 106i64, 109i64] }
-- structure { Alloc 4 }
-- structure simplify,reuse { Alloc 3 }
def main (n: int) (c: bool) (ns: [n]int) =
  let (as: [n]int) = kernel i < n do
      let (a: int) = ns[i] + 1
      in (a)
  let (bs: [n]int) = kernel i < n do
      let (b: int) = ns[i] * 2
      in (b)
  let (xs: [n]int) = if c then in (as) else in (bs)
  let (ys: [n]int) = kernel i < n do
      let (y: int) = ns[i] + 100
      in (y)
  let (zs: [n]int) = kernel i < n do
      let (z: int) = xs[i] + ys[i]
      in (z)
  in (zs)
